"""How lesson 08's tests name what a wrong inner_step or meta_loss did.

A failed comparison says only that the numbers are wrong. The usual mistakes are written as the
references (learning_to_learn_references) called with the arguments each slip changes, so that a wrong
result equal to one of them is named. The functions that run the answer translate what autograd or the
numbers show into what the answer did, where the numbers alone would blame the wrong line.
"""

import copy
from collections.abc import Callable

import torch
from torch.func import functional_call
from torch.overrides import TorchFunctionMode

from autograder.learning_to_learn_references import (
    half_params,
    meta_loss_by_torch_func,
    mse,
    own_params,
    pooled_points,
    query_loss_by_torch_func,
    query_loss_from_by_torch_func,
    query_points,
    query_points_with_y_squeezed,
    step_by_torch_func,
    step_from_half_params_by_torch_func,
    stepped_by_torch_func,
    support_points,
    support_points_with_y_squeezed,
    task_losses,
)
from autograder.probe.refused import AnswerRefusedError

# Running inner_step: what autograd refuses, told as what the answer did.


class _GradInputsSeen(TorchFunctionMode):
    """Notes the tensors each torch.autograd.grad call differentiates with respect to."""

    def __init__(self):
        super().__init__()
        self.inputs = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is torch.autograd.grad:
            inputs = args[1] if len(args) > 1 else kwargs.get("inputs", ())
            self.inputs += [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        return func(*args, **kwargs)


def _what_is_left_out(inner_step: Callable, net: torch.nn.Module, params: dict, x, y, lr) -> str:
    """Which of params and the network's own the step mixes up, from what inner_step, run again,
    differentiates: the network's own parameters, or params, which then its support loss does not reach."""
    seen = _GradInputsSeen()
    try:
        with seen:
            inner_step(net, params, x, y, lr)
    except Exception:  # noqa: BLE001 - the first run's error is the one reported
        pass
    own = {id(param) for param in net.parameters()}
    given = {id(param) for param in params.values()}
    if seen.inputs and any(id(tensor) in own for tensor in seen.inputs):
        return (
            "it differentiates the network's own parameters, where its support loss is computed from params: "
            "differentiate with respect to params.values(), not net.parameters()"
        )
    if seen.inputs and all(id(tensor) in given for tensor in seen.inputs):
        return (
            "it differentiates params, which its support loss does not reach: run the network on params "
            "with functional_call(net, params, (x,)), not on its own parameters with net(x)"
        )
    return (
        "run the network on params with functional_call(net, params, (x,)), not on its own parameters with "
        "net(x), and differentiate with respect to params.values(), not net.parameters()"
    )


def stepped(inner_step: Callable, net: torch.nn.Module, params: dict, x, y, lr) -> dict:
    """inner_step(net, params, x, y, lr), where autograd's refusal of a tensor the support loss does not
    depend on (or the None that allow_unused=True gives for it) is told as the params left out."""
    try:
        return inner_step(net, params, x, y, lr)
    except (RuntimeError, TypeError) as error:
        if "appears to not have been used in the graph" not in str(error) and "NoneType" not in str(error):
            raise
        raise AnswerRefusedError(
            "inner_step differentiates tensors its support loss does not depend on (torch.autograd.grad "
            "refuses them, or gives None for them with allow_unused=True): "
            + _what_is_left_out(inner_step, net, params, x, y, lr)
        ) from None


def by_name(adapted, params: dict) -> dict:
    """The adapted parameters, in params' order, by the names params has."""
    return {name: adapted[name] for name in params}


def adapted_leaving_the_network_alone(inner_step: Callable, net: torch.nn.Module, x, y, lr) -> dict:
    """inner_step's adapted parameters from the network's own, refused if the call changed them or the
    dict it was given: meta_loss hands every task the same one."""
    params = dict(net.named_parameters())
    given = dict(params)
    before = [param.detach().clone() for param in params.values()]
    adapted = inner_step(net, params, x, y, lr)
    if not all(torch.equal(param, old) for param, old in zip(net.parameters(), before, strict=True)):
        raise AnswerRefusedError(
            "inner_step changed the network's own parameters in place (.data, or -= under torch.no_grad()): "
            "leave params as they are, and return new tensors, params - lr * gradient"
        )
    if adapted is params or params.keys() != given.keys() or any(params[n] is not given[n] for n in given):
        raise AnswerRefusedError(
            "inner_step changed the dict params it was given (params[name] = ...) or returned it: return a "
            "new dict and leave params as it was, since meta_loss hands every task the same one"
        )
    return by_name(adapted, params)


def stepped_from_half_params(inner_step: Callable, net: torch.nn.Module, x, y, lr) -> dict:
    """inner_step from half the network's parameters, as every step of adaptation after the first starts
    from parameters that are not the network's own."""
    params = {name: param.requires_grad_() for name, param in half_params(net).items()}
    return by_name(stepped(inner_step, net, params, x, y, lr), params)


def query_loss_after(inner_step: Callable, net, start, x, y, x_query, y_query, lr) -> torch.Tensor:
    """The query loss at the parameters inner_step adapts from start's on (x, y): its gradient is the
    meta-gradient, and must reach start's parameters, not net's unless they are the same."""
    adapted = stepped(inner_step, net, dict(start.named_parameters()), x, y, lr)
    return mse(adapted, net, x_query, y_query)


# The usual mistakes of inner_step: each is the reference, called on a task whose y and lr it changes.

# A learning rate a step may have written in: the lesson's own, and a usual default.
_WRITTEN_IN = (0.1, 0.01)
_SLIPS = {
    "the step climbs the support loss (params + lr * gradient); step down it: params - lr * gradient.": (
        lambda x, y, lr: (y, -lr)
    ),
    "the step leaves out lr (params - gradient); scale the gradient: params - lr * gradient.": (
        lambda x, y, lr: (y, 1.0)
    ),
    "the support loss adds the squared errors up (.sum()), which multiplies the step by the number of "
    "points; it is their mean (.mean()).": lambda x, y, lr: (y, lr * len(x)),
    "the step is half its size: the support loss is halved (0.5 * ...) or lr is (lr / 2); the support loss "
    "is the mean squared error itself, and the step params - lr * gradient.": lambda x, y, lr: (y, lr / 2),
    "the support loss mixes a vector of shape (K,), a squeezed y or prediction, with a column of shape "
    "(K, 1), and the two broadcast into a K-by-K table of every prediction minus every target; keep both "
    "columns, (K, 1).": lambda x, y, lr: (y.squeeze(-1), lr),
} | {
    f"the learning rate is written in as {rate}, not lr; step by the lr given: params - lr * gradient.": (
        lambda x, y, lr, rate=rate: (y, rate)
    )
    for rate in _WRITTEN_IN
}


# Steps other than the reference's, each a stepped_by_torch_func(net, x, y, lr, start) that slips.


def _mae(params: dict, net: torch.nn.Module, x, y) -> torch.Tensor:
    return (functional_call(net, params, (x,)) - y).abs().mean()


def _stepped_down_the_mean_absolute_error(net, x, y, lr, start: dict) -> dict:
    grads = torch.func.grad(_mae)(start, net, x, y)
    return {name: start[name] - lr * grads[name] for name in start}


def _stepped_weights_only(net, x, y, lr, start: dict) -> dict:
    adapted = stepped_by_torch_func(net, x, y, lr, start)
    return {name: adapted[name] if name.endswith("weight") else start[name] for name in start}


_WRONG_STEPS = {
    "the support loss is the mean absolute error (.abs().mean()); it is the mean squared error, "
    "((functional_call(net, params, (x,)) - y) ** 2).mean().": _stepped_down_the_mean_absolute_error,
    "only the weights take the step; every entry of params takes it, the biases too: "
    "{name: params[name] - lr * gradient} for every name.": _stepped_weights_only,
}


def _wrong_steps(reference: Callable) -> dict[str, Callable]:
    """The wrong steps, each made into a mistake by reference, which calls the step it is given."""
    return {cause: reference(step) for cause, step in _WRONG_STEPS.items()}


def _slipped(reference: Callable, slip: Callable) -> Callable:
    """reference, called on (net, [start,] x, y, x_query, y_query, lr) with the y and lr slip makes."""

    def wrong(*args):
        *head, x, y, x_query, y_query, lr = args
        y, lr = slip(x, y, lr)
        return reference(*head, x, y, x_query, y_query, lr)

    return wrong


def _slips_of(reference: Callable) -> dict[str, Callable]:
    return {cause: _slipped(reference, slip) for cause, slip in _SLIPS.items()}


# The step from the network's own parameters, and from half of them, where params are mixed up with the
# network's own.
STEP_MISTAKES = _slips_of(step_by_torch_func) | _wrong_steps(
    lambda step: lambda net, x, y, x_query, y_query, lr: step(net, x, y, lr, own_params(net))
)


def _from_half_params(start: Callable, gradient_at: Callable) -> Callable:
    """The step from half the parameters, when it steps start(net) by the gradient at gradient_at(net)."""
    return lambda net, x, y, x_query, y_query, lr: stepped_by_torch_func(
        net, x, y, lr, start(net), gradient_at(net)
    )


FROM_HALF_PARAMS_MISTAKES = _slips_of(step_from_half_params_by_torch_func) | {
    "the gradient is taken at the network's own parameters, not at params: run the network on params, "
    "functional_call(net, params, (x,)), and differentiate with respect to them.": (
        _from_half_params(half_params, own_params)
    ),
    "the step starts from the network's own parameters, not from params (net.named_parameters() where "
    "params.items() belongs): return {name: params[name] - lr * gradient}.": (
        _from_half_params(own_params, half_params)
    ),
    "inner_step leaves params out: it runs, differentiates and steps the network's own parameters. Run "
    "the network on params, functional_call(net, params, (x,)), differentiate with respect to "
    "params.values() and return {name: params[name] - lr * gradient}.": (
        _from_half_params(own_params, own_params)
    ),
}
# With allow_unused=True, a support loss that does not reach params (net(x)) gives None gradients, which an
# answer that takes None for zero steps by nothing.
_PARAMS_UNCHANGED = (
    "inner_step returns params unchanged: every gradient it takes of params is None (allow_unused=True) or "
    "zero, as when its support loss does not reach params: run the network on params with "
    "functional_call(net, params, (x,)), not on its own parameters with net(x)."
)
FROM_HALF_PARAMS_MISTAKES[_PARAMS_UNCHANGED] = lambda net, x, y, x_query, y_query, lr: half_params(net)
FROM_HALF_PARAMS_MISTAKES |= _wrong_steps(
    lambda step: lambda net, x, y, x_query, y_query, lr: step(net, x, y, lr, half_params(net))
)

# The query loss after the step, from the network's own parameters and from start's, where params are
# mixed up with the network's own: then the meta-gradient reaches the network's weights, not params.
QUERY_LOSS_MISTAKES = _slips_of(query_loss_by_torch_func) | _wrong_steps(
    lambda step: (
        lambda net, x, y, x_query, y_query, lr: mse(
            step(net, x, y, lr, dict(net.named_parameters())), net, x_query, y_query
        )
    )
)


def _query_loss_from(start: Callable, gradient_at: Callable) -> Callable:
    """The query loss after a step from start(net, other)'s parameters by the gradient at gradient_at's."""
    return lambda net, other, x, y, x_query, y_query, lr: mse(
        stepped_by_torch_func(net, x, y, lr, start(net, other), gradient_at(net, other)),
        net,
        x_query,
        y_query,
    )


def _the_networks(net, other) -> dict:
    return dict(net.named_parameters())


def _the_others(net, other) -> dict:
    return dict(other.named_parameters())


QUERY_LOSS_FROM_OTHER_PARAMS_MISTAKES = _slips_of(query_loss_from_by_torch_func) | {
    "the gradient is taken at the network's own parameters, not at params, so it flows to the network's "
    "weights and not to params: run the network with functional_call(net, params, (x,)) and differentiate "
    "with respect to params.values().": _query_loss_from(_the_others, _the_networks),
    "the step starts from the network's own parameters, not from params (net.named_parameters() where "
    "params.items() belongs), so the meta-gradient flows to the network's weights where it should reach "
    "params: return {name: params[name] - lr * gradient}.": _query_loss_from(_the_networks, _the_others),
    "inner_step leaves params out: it runs, differentiates and steps the network's own parameters, so no "
    "gradient reaches params. Run the network on params, functional_call(net, params, (x,)), differentiate "
    "with respect to params.values() and return {name: params[name] - lr * gradient}.": (
        _query_loss_from(_the_networks, _the_networks)
    ),
}
QUERY_LOSS_FROM_OTHER_PARAMS_MISTAKES[_PARAMS_UNCHANGED] = lambda net, other, x, y, x_query, y_query, lr: mse(
    _the_others(net, other), net, x_query, y_query
)
QUERY_LOSS_FROM_OTHER_PARAMS_MISTAKES |= _wrong_steps(
    lambda step: (
        lambda net, start, x, y, x_query, y_query, lr: mse(
            step(net, x, y, lr, dict(start.named_parameters())), net, x_query, y_query
        )
    )
)


# The usual mistakes of meta_loss.

_FIX_INNER_STEP_FIRST = (
    "If inner_step passes its own tests, the slip is in meta_loss; otherwise fix inner_step first, as its "
    "own test cells say."
)
META_LOSS_MISTAKES = {
    "each task is judged on its support points, which the step just fitted; judge the adapted network on "
    "the query points: functional_call(net, adapted, (x_query,)) against y_query.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, judge_on=support_points).mean()
    ),
    "each task is judged on its support and query points together; judge the adapted network on the "
    "query points alone: functional_call(net, adapted, (x_query,)) against y_query.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, judge_on=pooled_points).mean()
    ),
    "the step adapts on the query points (inner_step(net, params, x_query, y_query, lr)); adapt on the "
    "support points, inner_step(net, params, x, y, lr), and judge on the query points.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, adapt_on=query_points).mean()
    ),
    "the step adapts on the support and query points together; adapt on the support points alone, "
    "inner_step(net, params, x, y, lr).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, adapt_on=pooled_points).mean()
    ),
    "the query loss runs the network on its own parameters; run it on the adapted ones: "
    "functional_call(net, adapted, (x_query,)).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, steps=0).mean()
    ),
    "each task takes two inner steps; the meta-loss is judged after one: "
    "adapted = inner_step(net, params, x, y, lr).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, steps=2).mean()
    ),
    "the step's learning rate is 0.01 written in, not lr; pass lr on: inner_step(net, params, x, y, lr).": (
        lambda net, tasks, lr: task_losses(net, tasks, 0.01).mean()
    ),
    "the learning rate is written in as 0.1, not lr: in inner_step (params - lr * gradient) or where "
    "meta_loss calls it, inner_step(net, params, x, y, lr).": (
        lambda net, tasks, lr: task_losses(net, tasks, 0.1).mean()
    ),
    "each task starts from the parameters the previous task's step left. Either inner_step changes the "
    "parameters or the dict it is given (.data, -= under torch.no_grad(), params[name] = ...): fix "
    "inner_step first, as its own test cell says; or meta_loss hands the next task the adapted ones, "
    "where every task starts from the network's own, dict(net.named_parameters()).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, chained=True).mean()
    ),
    "the step's gradient is a constant to autograd, taken without create_graph=True or cut from the graph "
    f"(.detach(), .data), so the meta-gradient misses the Hessian term. {_FIX_INNER_STEP_FIRST}": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, first_order=True).mean()
    ),
    "the tasks' losses are added up (.sum()); the meta-loss is their mean.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr).sum()
    ),
    "each task's query loss adds the squared errors up (.sum()); it is their mean (.mean()).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr).mean() * len(tasks[0][2])
    ),
    "each task's query loss is divided by the number of support points (len(x)); it is the mean over the "
    "query points, .mean(), or a division by len(x_query).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr).mean() * len(tasks[0][2]) / len(tasks[0][0])
    ),
    "each task's query loss mixes a vector of shape (n,), a squeezed y_query or prediction, with a "
    "column of shape (n, 1), and the two broadcast into an n-by-n table of every prediction minus every "
    "target; keep both columns, (n, 1).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, judge_on=query_points_with_y_squeezed).mean()
    ),
    "the step's support loss mixes a vector of shape (K,), a squeezed y or prediction, with a column of "
    "shape (K, 1), and the two broadcast into a K-by-K table of every prediction minus every target; keep "
    f"both columns, (K, 1). {_FIX_INNER_STEP_FIRST}": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, adapt_on=support_points_with_y_squeezed).mean()
    ),
    "each task's query loss is halved (0.5 * ...); it is the mean squared error itself.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr).mean() / 2
    ),
    # meta_loss_checked names a loss that stays the same whichever order the tasks come in first: these
    # two fit only a result that changes with the order.
    "only the last task's loss is returned; the meta-loss is the mean over every task.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr)[-1]
    ),
    "only the first task's loss is returned (is the return inside the loop over the tasks?); the "
    "meta-loss is the mean over every task, returned after the loop.": (
        lambda net, tasks, lr: task_losses(net, tasks, lr)[0]
    ),
    "each task adapts on its query points and is judged on its support points, the two swapped; adapt on "
    "(x, y) and judge on (x_query, y_query).": (
        lambda net, tasks, lr: task_losses(
            net, tasks, lr, adapt_on=query_points, judge_on=support_points
        ).mean()
    ),
    "the losses are divided by 5 written in, not by the number of tasks; take their mean, "
    "torch.stack(losses).mean(), or divide by len(tasks).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr).sum() / 5
    ),
}


# Running meta_loss: what the numbers alone would blame on the wrong line.


class _GradOffSeen(TorchFunctionMode):
    """Notes whether any torch function ran with gradients off, as under torch.no_grad()."""

    off = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.off = self.off or not torch.is_grad_enabled()
        return func(*args, **(kwargs or {}))


def _called_with_grad(meta_loss: Callable, net, tasks, lr, untouched) -> torch.Tensor:
    """meta_loss(net, tasks, lr), where autograd's "does not require grad" error, raised because the step
    ran with gradients off, is told as the torch.no_grad() around it: meta_loss runs again, on a copy of
    the network as it was, untouched, to see it."""
    try:
        return meta_loss(net, tasks, lr)
    except RuntimeError as error:
        if "does not require grad" not in str(error):
            raise
        seen = _GradOffSeen()
        try:
            with seen:
                meta_loss(copy.deepcopy(untouched), tasks, lr)
        except RuntimeError:
            pass
        if not seen.off:
            raise
        raise AnswerRefusedError(
            "it runs the inner step with gradients off (under torch.no_grad()), so inner_step's support "
            "loss has no graph to differentiate, and autograd refuses ('element 0 of tensors does not "
            "require grad'). The step must stay in the graph, for the meta-gradient to flow back through it: "
            "call inner_step with gradients on"
        ) from None


def _around_inner_step(inner_step: Callable, net, tasks, lr) -> torch.Tensor:
    """What a right meta_loss returns around inner_step: the mean of the query losses after it."""
    params = dict(net.named_parameters())
    return torch.stack([mse(inner_step(net, params, x, y, lr), net, xq, yq) for x, y, xq, yq in tasks]).mean()


def _refuse_a_slip_of_inner_step(inner_step: Callable, net, tasks, lr, result) -> None:
    """Refuse a result that is what a right meta_loss returns around an inner_step whose values are wrong,
    or that changes the parameters it is given: the slip is then inner_step's, which its own tests refuse.
    That inner_step runs on a copy of the network."""
    try:
        around = _around_inner_step(inner_step, net, tasks, lr)
    except Exception:  # noqa: BLE001 - an inner_step that fails is its own cells' to report
        return
    right = meta_loss_by_torch_func(net, tasks, lr).detach()
    if (
        around.shape == right.shape
        and not torch.allclose(around.detach(), right)
        and _equal(result, around.detach())
    ):
        raise AnswerRefusedError(
            "its result is what a right meta_loss returns around your inner_step, which fails its own tests: "
            "fix inner_step first"
        )


def _meta_gradient(loss, net) -> list | None:
    """The gradient of loss with respect to net's parameters, zero where it does not reach one, or None
    where autograd cannot take it. The graph is kept, for the check to differentiate it again."""
    params = list(net.parameters())
    try:
        grads = torch.autograd.grad(loss, params, retain_graph=True, allow_unused=True)
    except (RuntimeError, TypeError):
        return None
    return [
        torch.zeros_like(param) if grad is None else grad for param, grad in zip(params, grads, strict=True)
    ]


def _same(grads: list | None, others: list | None) -> bool:
    return (
        grads is not None
        and others is not None
        and all(torch.allclose(grad, other) for grad, other in zip(grads, others, strict=True))
    )


def _refuse_a_meta_gradient_of_inner_step(inner_step: Callable, untouched, net, tasks, lr, result, right):
    """Refuse a result of the right value whose gradient is wrong, and what a right meta_loss gives around
    an inner_step whose meta-gradient is wrong (its gradient a constant, or the parameters cut from the
    graph): the slip is then inner_step's, which its own tests refuse, where the numbers alone would blame
    meta_loss. right is the right meta-gradient; that inner_step runs on a copy of the network."""
    got = _meta_gradient(result, net)
    if got is None or _same(got, right):
        return
    copied = copy.deepcopy(untouched)
    try:
        around = _meta_gradient(_around_inner_step(inner_step, copied, tasks, lr), copied)
    except Exception:  # noqa: BLE001 - an inner_step that fails is its own cells' to report
        return
    if around is not None and not _same(around, right) and _same(got, around):
        raise AnswerRefusedError(
            "its result, and its gradient, are what a right meta_loss gives around your inner_step, whose "
            "meta-gradient fails its own tests: fix inner_step first"
        )


def _equal(result, value: torch.Tensor) -> bool:
    """Whether result is a tensor of value's shape and dtype, and close to it, as the check compares."""
    return (
        isinstance(result, torch.Tensor)
        and result.shape == value.shape
        and result.dtype == value.dtype
        and torch.allclose(result.detach(), value)
    )


def _refuse_a_loss_cut_into_numbers(result, right: torch.Tensor) -> None:
    """Refuse a result near the right one, with no history and in float32: a tensor rebuilt from the
    numbers .item() gave, which torch.tensor(...) makes float32, torch's default dtype."""
    if (
        isinstance(result, torch.Tensor)
        and result.grad_fn is None
        and result.dtype != right.dtype
        and result.shape == right.shape
        and torch.allclose(result.detach().double(), right.double(), rtol=1e-3)
    ):
        raise AnswerRefusedError(
            f"its result has no history (and is {result.dtype}). Likely cause: .item() turns each loss into "
            "a Python number, cutting it from the graph, and torch.tensor(...) of such numbers is a new "
            "tensor, in float32, torch's default dtype: no meta-gradient reaches the network. Keep each loss "
            "a tensor and return torch.stack(losses).mean()"
        )


# Statistics that pick one task's loss whichever order the tasks come in, each with how it is written.
_PICKS = {
    "the median of the tasks' losses (torch.stack(losses).median())": torch.median,
    "the smallest of the tasks' losses (.min())": torch.min,
    "the largest of the tasks' losses (.max())": torch.max,
}


def _refuse_a_pick_of_one_loss(meta_loss: Callable, net, tasks, lr, result, losses: torch.Tensor) -> None:
    """Refuse a result equal to one task's loss that stays the same with the tasks rotated, every task in
    another place: a statistic picking one loss, such as the median. The first or last task's loss alone
    moves with the rotation; on a few fixed tasks it may be the median by chance, so the numbers of one
    order cannot tell them apart. meta_loss runs again, on a copy of the network as it was."""
    if len(tasks) < 2 or not any(_equal(result, loss) for loss in losses):
        return
    try:
        rotated = meta_loss(copy.deepcopy(net), [*tasks[1:], tasks[0]], lr)
    except Exception:  # noqa: BLE001 - the check of the tasks in their order reports what fails
        return
    if not _equal(rotated, result.detach()):
        return
    picked = next((what for what, pick in _PICKS.items() if _equal(result, pick(losses))), "one task's loss")
    raise AnswerRefusedError(
        f"it returns {picked}, the same whichever order the tasks come in, where the meta-loss is the mean "
        "over every task: torch.stack(losses).mean()"
    )


def meta_loss_checked(meta_loss: Callable, inner_step: Callable, net, tasks, lr):
    """meta_loss(net, tasks, lr), refused with its cause where the numbers alone would name the wrong one:
    a slip of inner_step's (in its values or its meta-gradient), the step run with gradients off, the
    losses cut into Python numbers, or a loss picked from the tasks' whatever their order."""
    before = copy.deepcopy(net)
    result = _called_with_grad(meta_loss, net, tasks, lr, before)
    losses = task_losses(before, tasks, lr)
    if _equal(result, losses.mean()):
        right = _meta_gradient(losses.mean(), before)
        _refuse_a_meta_gradient_of_inner_step(inner_step, before, net, tasks, lr, result, right)
        return result
    losses = losses.detach()
    _refuse_a_slip_of_inner_step(inner_step, copy.deepcopy(before), tasks, lr, result)
    _refuse_a_loss_cut_into_numbers(result, losses.mean())
    _refuse_a_pick_of_one_loss(meta_loss, before, tasks, lr, result, losses)
    return result
