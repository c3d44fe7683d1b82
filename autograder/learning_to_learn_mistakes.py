"""How lesson 08's tests name what a wrong inner_step or meta_loss did.

A failed comparison says only that the numbers are wrong. The usual mistakes are written as the
references (learning_to_learn_references) called with the arguments each slip changes, so that a wrong
result equal to one of them is named. The functions that run the answer translate what autograd or the
numbers show into what the answer did, where the numbers alone would blame the wrong line.
"""

import copy
import traceback
from collections.abc import Callable, Mapping

import torch
from torch.func import functional_call
from torch.overrides import TorchFunctionMode

from autograder.learning_to_learn_references import (
    half_params,
    mse,
    one_task_of_all,
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
    swapped_support_points,
    task_losses,
)
from autograder.models import few_shot_tasks
from autograder.probe.refused import AnswerRefusedError

# Running inner_step: what autograd refuses, told as what the answer did.


class _GradInputsSeen(TorchFunctionMode):
    """Notes the losses each torch.autograd.grad call differentiates, the tensors it differentiates them
    with respect to, and whether any gradient it gave was None (allow_unused=True, for a tensor the loss
    does not reach)."""

    def __init__(self):
        super().__init__()
        self.losses = []
        self.inputs = []
        self.gave_none = False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is not torch.autograd.grad:
            return func(*args, **kwargs)
        outputs = args[0] if args else kwargs.get("outputs", ())
        outputs = [outputs] if isinstance(outputs, torch.Tensor) else list(outputs)
        self.losses += [
            loss.detach() for loss in outputs if isinstance(loss, torch.Tensor) and loss.numel() == 1
        ]
        inputs = args[1] if len(args) > 1 else kwargs.get("inputs", ())
        self.inputs += [inputs] if isinstance(inputs, torch.Tensor) else list(inputs)
        result = func(*args, **kwargs)
        self.gave_none = self.gave_none or any(grad is None for grad in result)
        return result


def _seen_running(inner_step: Callable, net: torch.nn.Module, params: dict, x, y, lr) -> _GradInputsSeen:
    """What inner_step, run again, differentiates; an error it raises is the first run's to report."""
    seen = _GradInputsSeen()
    try:
        with seen:
            inner_step(net, params, x, y, lr)
    except Exception:  # noqa: BLE001 - the first run's error is the one reported
        pass
    return seen


def _what_is_left_out(seen: _GradInputsSeen, net: torch.nn.Module, params: dict) -> tuple[str, str]:
    """What to do, and which of params and the network's own the step mixes up, from what it
    differentiates: the network's own parameters, or params, which then its support loss (run by net(x))
    does not reach."""
    own = {id(param) for param in net.parameters()}
    given = {id(param) for param in params.values()}
    nones = "; allow_unused=True gives None for each" if seen.gave_none else ""
    if seen.inputs and any(id(tensor) in own and id(tensor) not in given for tensor in seen.inputs):
        return (
            "differentiate with respect to list(params.values())",
            "inner_step differentiates net.parameters(), but its support loss is computed from params and "
            f"does not depend on them{nones}",
        )
    if seen.inputs and all(id(tensor) in given for tensor in seen.inputs):
        return (
            "run the network on params, functional_call(net, params, (x,))",
            "inner_step runs the network on its own parameters (net(x)), so its support loss does not reach "
            f"params{nones}",
        )
    return (
        "run the network on params, functional_call(net, params, (x,)), and differentiate with respect to "
        "list(params.values())",
        "inner_step differentiates tensors its support loss does not depend on",
    )


def _refuse_params_unchanged(inner_step: Callable, net: torch.nn.Module, given: dict, x, y, lr, adapted):
    """Refuse params handed back with the values given had, because every gradient autograd gave was None
    (allow_unused=True, taken for zero): the numbers alone cannot tell which tensors it mixed up. given
    is a copy of params from before the call, which inner_step may have changed."""
    unchanged = (
        isinstance(adapted, dict)
        and adapted.keys() == given.keys()
        and all(
            isinstance(adapted[name], torch.Tensor) and torch.equal(adapted[name], given[name].detach())
            for name in given
        )
    )
    if not unchanged:
        return
    params = {name: param.clone().requires_grad_() for name, param in given.items()}
    seen = _seen_running(inner_step, net, params, x, y, lr)
    if seen.gave_none:
        fix, cause = _what_is_left_out(seen, net, params)
        raise AnswerRefusedError(f"{cause}, so it returns params unchanged. To fix it, {fix}.")


def _refuse_a_half_step(inner_step: Callable, net: torch.nn.Module, given: dict, x, y, lr, adapted) -> None:
    """Refuse a step half its size, named by the loss inner_step differentiates: half the support loss,
    or the whole one, where lr is then halved. The numbers alone cannot tell the two apart. given is a
    copy of params from before the call."""
    if not isinstance(adapted, dict) or adapted.keys() != given.keys():
        return
    params = {name: param.clone().requires_grad_() for name, param in given.items()}
    support = mse(params, net, x, y)
    grads = torch.autograd.grad(support, list(params.values()))
    half = {name: given[name] - lr / 2 * grad for name, grad in zip(given, grads, strict=True)}
    if not all(_equal(adapted[name], half[name]) for name in given):
        return
    losses = _seen_running(inner_step, net, params, x, y, lr).losses
    if any(torch.allclose(loss, support.detach() / 2) for loss in losses):
        raise AnswerRefusedError(
            "its support loss is halved (0.5 * ... or ... / 2), which halves the step: the support loss is "
            "the mean squared error itself"
        )
    if any(torch.allclose(loss, support.detach()) for loss in losses):
        raise AnswerRefusedError(
            "it halves lr (lr / 2), which halves the step: step by params - lr * gradient"
        )


# What a step computed from the names of a dict of gradients did.
_NAMES_FOR_GRADIENTS = (
    "use grads[name], or pass list(params.values()): given the dict params, torch.autograd.grad returns a "
    "dict of gradients under the same names, and zipping or iterating that dict gives the names (strings), "
    "not the gradients"
)


def _names_taken_for_gradients(error: TypeError, params: dict) -> bool:
    """Whether the step multiplied a name of params where a gradient belongs: a frame of the error holds
    a dict of tensors under params' names other than params' own (the gradients torch.autograd.grad
    returns for the dict), and the frame that raised holds one of those names."""
    frames = [frame for frame, _ in traceback.walk_tb(error.__traceback__)]
    own = {id(param) for param in params.values()}

    def gradients(value) -> bool:
        return (
            isinstance(value, dict)
            and value.keys() == params.keys()
            and all(isinstance(v, torch.Tensor) and id(v) not in own for v in value.values())
        )

    return (
        "can't multiply sequence" in str(error)
        and any(gradients(value) for frame in frames for value in frame.f_locals.values())
        and any(isinstance(value, str) and value in params for value in frames[-1].f_locals.values())
    )


def stepped(inner_step: Callable, net: torch.nn.Module, params: dict, x, y, lr) -> dict:
    """inner_step(net, params, x, y, lr), refused with the cause where the numbers alone would not say it:
    a step not taken, or half of one."""
    given = {name: param.detach().clone() for name, param in params.items()}
    tensors = list(params.values())  # the step may put other tensors in the dict: these are the caller's
    versions = [tensor._version for tensor in tensors]
    empty = [tensor for tensor in tensors if tensor.grad is None]
    adapted = _called(inner_step, net, params, x, y, lr)
    _refuse_changes_in_place(tensors, list(given.values()), versions, "the tensors of params")
    _refuse_grads_filled(empty)
    _refuse_params_unchanged(inner_step, net, given, x, y, lr, adapted)
    _refuse_a_half_step(inner_step, net, given, x, y, lr, adapted)
    return adapted


def _called(inner_step: Callable, net: torch.nn.Module, params: dict, x, y, lr) -> dict:
    """inner_step(net, params, x, y, lr), where autograd's refusal of a tensor the support loss does not
    depend on (or the None that allow_unused=True gives for it) is told as the params left out, and a
    name of params multiplied in place of its gradient as the dict torch.autograd.grad returned, and
    parameters handed back in a list (or anything but a dict) as that."""
    try:
        adapted = inner_step(net, params, x, y, lr)
    except (TypeError, RuntimeError) as error:
        if isinstance(error, TypeError) and _names_taken_for_gradients(error, params):
            raise AnswerRefusedError(_NAMES_FOR_GRADIENTS) from None
        left_out = (
            "NoneType" if isinstance(error, TypeError) else "appears to not have been used in the graph"
        )
        if left_out not in str(error):
            raise
        fix, cause = _what_is_left_out(_seen_running(inner_step, net, params, x, y, lr), net, params)
        raise AnswerRefusedError(f"{cause}: {fix}.") from None
    if not isinstance(adapted, Mapping):
        raise AnswerRefusedError(
            "return a new dict with the same names as params, {name: params[name] - lr * gradient}: "
            f"inner_step returned a {type(adapted).__name__}, and a network is run on its parameters by name."
        )
    return adapted


def by_name(adapted, params: dict) -> dict:
    """The adapted parameters, in params' order, by the names params has."""
    return {name: adapted[name] for name in params}


def _refuse_changes_in_place(tensors: list, before: list, versions: list, whose: str) -> None:
    """Refuse a step that changed `tensors` (whose, in words) in place: their values differ from `before`.
    Writing through .data leaves a tensor's version counter as it was (`versions`); an in-place operation
    on it (-=, under torch.no_grad() to be allowed) counts one."""
    if all(torch.equal(tensor, old) for tensor, old in zip(tensors, before, strict=True)):
        return
    counted = any(tensor._version != old for tensor, old in zip(tensors, versions, strict=True))
    how = "with -= under torch.no_grad()" if counted else "through .data"
    raise AnswerRefusedError(
        f"inner_step changed {whose} in place, {how}: leave params as they are, and return new tensors, "
        "params - lr * gradient"
    )


def _refuse_grads_filled(empty: list) -> None:
    """Refuse a step that filled the .grad of tensors of params that had none (`empty`), named as params:
    the test's name for them (the network it copied them from) means nothing to the answer."""
    if all(tensor.grad is None for tensor in empty):
        return
    for tensor in empty:
        tensor.grad = None  # a graph left there would hold these tensors in a cycle
    raise AnswerRefusedError(
        "inner_step filled the .grad of the entries of params, which should stay None: .backward() stores "
        "gradients in the .grad of every leaf it reaches. Take them with torch.autograd.grad(..., "
        "create_graph=True), which returns them and leaves .grad alone"
    )


def _refuse_a_changed_dict(params: dict, given: dict) -> None:
    """Refuse a step that put other tensors in the dict it was handed (given is a copy of it from before the
    call): meta_loss hands every task that dict, so the next task would start from this one's step."""
    if params.keys() != given.keys() or any(params[n] is not given[n] for n in given):
        raise AnswerRefusedError(
            "inner_step changed the dict params it was given (params[name] = ...): return a new dict and "
            "leave params as it was, since meta_loss hands every task the same one"
        )


def adapted_leaving_the_network_alone(inner_step: Callable, net: torch.nn.Module, x, y, lr) -> dict:
    """inner_step's adapted parameters from the network's own, refused if the call changed them or the
    dict it was given: meta_loss hands every task the same one."""
    params = dict(net.named_parameters())
    given = dict(params)
    before = [param.detach().clone() for param in params.values()]
    versions = [param._version for param in net.parameters()]
    adapted = _called(inner_step, net, params, x, y, lr)
    _refuse_changes_in_place(list(net.parameters()), before, versions, "the network's own parameters")
    _refuse_a_changed_dict(params, given)
    if adapted is params:
        raise AnswerRefusedError(
            "inner_step returns the dict params it was given: return a new dict, "
            "{name: params[name] - lr * gradient}"
        )
    _refuse_a_half_step(inner_step, net, dict(zip(params, before, strict=True)), x, y, lr, adapted)
    return by_name(adapted, params)


def stepped_from_half_params(inner_step: Callable, net: torch.nn.Module, x, y, lr) -> dict:
    """inner_step from half the network's parameters, as every step of adaptation after the first starts
    from parameters that are not the network's own."""
    params = {name: param.requires_grad_() for name, param in half_params(net).items()}
    return by_name(stepped(inner_step, net, params, x, y, lr), params)


def query_loss_after(inner_step: Callable, net, start, x, y, x_query, y_query, lr) -> torch.Tensor:
    """The query loss at the parameters inner_step adapts from start's on (x, y): its gradient is the
    meta-gradient, and must reach start's parameters, not net's unless they are the same. A step that
    changed the dict it was given is refused: meta_loss would chain every task from the previous one's."""
    params = dict(start.named_parameters())
    given = dict(params)
    adapted = stepped(inner_step, net, params, x, y, lr)
    _refuse_a_changed_dict(params, given)
    return mse(adapted, net, x_query, y_query)


# The usual mistakes of inner_step: each is the reference, called on a task whose x, y and lr it changes.

# A learning rate a step may have written in: the lesson's own, and a usual default.
_WRITTEN_IN = (0.1, 0.01)
_SLIPS = {
    "the step climbs the support loss (params + lr * gradient); step down it: params - lr * gradient.": (
        lambda x, y, lr: (x, y, -lr)
    ),
    "the step leaves out lr (params - gradient); scale the gradient: params - lr * gradient.": (
        lambda x, y, lr: (x, y, 1.0)
    ),
    "the support loss adds the squared errors up (.sum()), which multiplies the step by the number of "
    "points; it is their mean (.mean()).": lambda x, y, lr: (x, y, lr * len(x)),
    "the step is half its size: the support loss is halved (0.5 * ...) or lr is (lr / 2); the support loss "
    "is the mean squared error itself, and the step params - lr * gradient.": lambda x, y, lr: (x, y, lr / 2),
    "the support loss mixes a vector of shape (K,), a squeezed y or prediction, with a column of shape "
    "(K, 1), and the two broadcast into a K-by-K table of every prediction minus every target; keep both "
    "columns, (K, 1).": lambda x, y, lr: (x, y.squeeze(-1), lr),
    "the support loss runs the network on the targets y and compares its outputs with the inputs x, the two "
    "swapped: ((functional_call(net, params, (x,)) - y) ** 2).mean().": lambda x, y, lr: (y, x, lr),
} | {
    f"the learning rate is written in as {rate}, not lr; step by the lr given: params - lr * gradient.": (
        lambda x, y, lr, rate=rate: (x, y, rate)
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


def _stepped_from_detached(net, x, y, lr, start: dict) -> dict:
    adapted = stepped_by_torch_func(net, x, y, lr, start)
    return {name: adapted[name] - start[name] + start[name].detach() for name in start}


def _the_step_alone(net, x, y, lr, start: dict) -> dict:
    adapted = stepped_by_torch_func(net, x, y, lr, start)
    return {name: adapted[name] - start[name] for name in start}


_WRONG_STEPS = {
    "inner_step returns the step alone, -lr * gradient, without params: the adapted parameters are params "
    "moved by that step, {name: params[name] - lr * gradient}.": _the_step_alone,
    "the support loss is the mean absolute error (.abs().mean()); it is the mean squared error, "
    "((functional_call(net, params, (x,)) - y) ** 2).mean().": _stepped_down_the_mean_absolute_error,
    "only the weights take the step; every entry of params takes it, the biases too: "
    "{name: params[name] - lr * gradient} for every name.": _stepped_weights_only,
    "the step starts from detached parameters (param.detach() or param.data), which cuts the direct path "
    "from the adapted parameters back to params: only section 3's Hessian term reaches them. Detach "
    "nothing: params[name] - lr * gradient.": _stepped_from_detached,
}


def _wrong_steps(reference: Callable) -> dict[str, Callable]:
    """The wrong steps, each made into a mistake by reference, which calls the step it is given."""
    return {cause: reference(step) for cause, step in _WRONG_STEPS.items()}


def _stepped_first_order(net, x, y, lr, start: dict) -> dict:
    """The step whose gradient is a constant to autograd, as one taken without create_graph=True: right in
    value, it differentiates as start alone."""
    grads = torch.func.grad(mse)({name: param.detach() for name, param in start.items()}, net, x, y)
    return {name: start[name] - lr * grads[name] for name in start}


# What the meta-gradient through that step lacks, in section 3's terms. The numbers cannot tell a gradient
# taken without create_graph=True from one cut after: each is named.
_FIRST_ORDER = (
    "the meta-gradient is first-order MAML's: the query gradient alone, without section 3's Hessian term "
    "-lr · H_S · (query gradient), which autograd finds only by differentiating the step's gradient. Here "
    "that gradient is a constant to autograd: take it with create_graph=True (retain_graph=True is no "
    "substitute), and do not cut it with `.detach()` or `.data`, nor step in place under torch.no_grad()."
)


def _slipped(reference: Callable, slip: Callable) -> Callable:
    """reference, called on (net, [start,] x, y, x_query, y_query, lr) with the x, y and lr slip makes."""

    def wrong(*args):
        *head, x, y, x_query, y_query, lr = args
        x, y, lr = slip(x, y, lr)
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
# Params returned as they were: where autograd gave None gradients (allow_unused=True), stepped names which
# tensors the step mixed up; what is left is a step not taken, or one by zero gradients (materialize_grads).
_PARAMS_UNCHANGED = (
    "inner_step returns params unchanged: either it takes no step, or the step's gradient is all zeros "
    "because the support loss does not depend on params (materialize_grads=True turns autograd's error "
    "into those zeros). Compute the loss from params, functional_call(net, params, (x,)), differentiate "
    "list(params.values()) and return {name: params[name] - lr * gradient}."
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
QUERY_LOSS_MISTAKES[_FIRST_ORDER] = lambda net, x, y, x_query, y_query, lr: mse(
    _stepped_first_order(net, x, y, lr, dict(net.named_parameters())), net, x_query, y_query
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
QUERY_LOSS_FROM_OTHER_PARAMS_MISTAKES[_FIRST_ORDER] = lambda net, start, x, y, x_query, y_query, lr: mse(
    _stepped_first_order(net, x, y, lr, dict(start.named_parameters())), net, x_query, y_query
)


# The usual mistakes of meta_loss.

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
    "the tasks are pooled into one: a single step on every task's support points, judged on all their "
    "query points. MAML adapts to each task apart: one inner_step per task, then the mean of their query "
    "losses.": (lambda net, tasks, lr: task_losses(net, one_task_of_all(tasks), lr).mean()),
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
    "the step's learning rate is 0.1 written in, not lr; pass lr on: inner_step(net, params, x, y, lr).": (
        lambda net, tasks, lr: task_losses(net, tasks, 0.1).mean()
    ),
    "meta_loss hands each task the parameters the previous task's step left; every task starts from the "
    "network's own, dict(net.named_parameters()).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, chained=True).mean()
    ),
    "the tasks' losses are added up, not averaged; the meta-loss is their mean, "
    "torch.stack(losses).mean().": (lambda net, tasks, lr: task_losses(net, tasks, lr).sum()),
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
    "both columns, (K, 1).": (
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
    "the step adapts on the support points with inputs and targets swapped, inner_step(net, params, y, x, "
    "lr); pass them in order: inner_step(net, params, x, y, lr).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr, adapt_on=swapped_support_points).mean()
    ),
    "the losses are divided by 5 written in, not by the number of tasks; take their mean, "
    "torch.stack(losses).mean(), or divide by len(tasks).": (
        lambda net, tasks, lr: task_losses(net, tasks, lr).sum() / 5
    ),
}

# A step written again in meta_loss, its gradient a constant: right in value, but first-order MAML's
# meta-gradient. The test runs meta_loss with a right inner_step, so only a step of meta_loss's own fits.
META_LOSS_MISTAKES[
    "the meta-gradient is first-order MAML's: meta_loss takes each task's support gradient as a constant "
    "(without create_graph=True, or cut with `.detach()` or `.data`), so section 3's Hessian term is lost. "
    "Call inner_step(net, params, x, y, lr) rather than writing the step again."
] = lambda net, tasks, lr: task_losses(net, tasks, lr, step=_stepped_first_order).mean()


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
            "its result has no history: .item() cut each loss from the graph, and torch.tensor(...) of the "
            "numbers it gives is a new tensor, so no meta-gradient reaches the network. Keep each loss a "
            "tensor and return torch.stack(losses).mean()"
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


def inner_step_by_autograd(net: torch.nn.Module, params, x, y, lr) -> dict:
    """A right inner_step, which meta_loss's check calls in place of the answer's: meta_loss keeps or
    loses its point for its own code, whatever inner_step does (inner_step's cells judge that). It takes
    what the exercise gives inner_step, a dict: anything else would fail the answer's own inner_step in
    section 6, where no test cell would say why."""
    if not isinstance(params, dict):
        raise AnswerRefusedError(
            f"meta_loss hands inner_step a {type(params).__name__}, where inner_step takes a dict of the "
            "parameters: pass dict(net.named_parameters())"
        )
    grads = torch.autograd.grad(mse(params, net, x, y), list(params.values()), create_graph=True)
    return {name: param - lr * grad for (name, param), grad in zip(params.items(), grads, strict=True)}


def calling_instead(meta_loss: Callable, step: Callable) -> Callable:
    """meta_loss, calling step wherever it (or a function of its cells) calls inner_step, by that name or
    another bound to it, for the call: the names are bound back after it. Section 6 makes first-order MAML
    this way, and the test of meta_loss runs it with a right inner_step."""
    names = getattr(meta_loss, "__globals__", None)
    if not isinstance(names, dict):
        return meta_loss

    def called(*args):
        answer = names.get("inner_step")
        bound = {"inner_step"} | {
            name for name, value in names.items() if answer is not None and value is answer
        }
        saved = {name: names[name] for name in bound if name in names}
        names.update(dict.fromkeys(bound, step))
        try:
            return meta_loss(*args)
        finally:
            for name in bound:
                names.pop(name, None)
            names.update(saved)

    return called


def meta_loss_checked(meta_loss: Callable, net, tasks, lr):
    """meta_loss(net, tasks, lr) with a right inner_step in place of the answer's, refused with its cause
    where the numbers alone would name the wrong one: the step run with gradients off, the losses cut
    into Python numbers, or a loss picked from the tasks' whatever their order."""
    meta_loss = calling_instead(meta_loss, inner_step_by_autograd)
    before = copy.deepcopy(net)
    result = _called_with_grad(meta_loss, net, tasks, lr, before)
    losses = task_losses(before, tasks, lr).detach()
    if _equal(result, losses.mean()):
        return result
    _refuse_a_loss_cut_into_numbers(result, losses.mean())
    _refuse_a_pick_of_one_loss(meta_loss, before, tasks, lr, result, losses)
    return result


NEVER_CALLS_INNER_STEP = (
    "meta_loss never calls inner_step by that name, so section 6's first-order MAML would be MAML again, "
    "and sections 7 and 8 would compare MAML with itself: call inner_step(...) in meta_loss (its marks "
    "stay the same)"
)


def note_if_inner_step_never_called(meta_loss: Callable) -> None:
    """Print NEVER_CALLS_INNER_STEP if meta_loss, run on few_shot_tasks, never calls inner_step: a note,
    not a failure, since its loss can be right, and only section 6, which stops on it, needs the call.
    The checks run the answer in a process whose printing is not shown, so the test cell calls this in
    the notebook itself. The class grader's judge, which never runs student code, passes a stand-in with
    no __globals__: there is nothing to note."""
    if not isinstance(getattr(meta_loss, "__globals__", None), dict):
        return
    calls = []

    def counted(*args):
        calls.append(1)
        return inner_step_by_autograd(*args)

    calling_instead(meta_loss, counted)(*few_shot_tasks(torch.Generator().manual_seed(0)))
    if not calls:
        print(f"Note: {NEVER_CALLS_INNER_STEP}.")
