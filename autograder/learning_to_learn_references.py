"""What lesson 08's tests of inner_step and meta_loss compare the answer with: the tasks they call it
on, and the right results, computed without it.

The references take the inner step's gradient with torch.func.grad, which autograd then differentiates
again: they never call the answer's inner_step, so a slip there cannot hide in the reference. Some tasks
change the lesson's (another lr, parameters that are not the network's own) so that a slip the lesson's
own task would hide shows. The mistakes (learning_to_learn_mistakes) are these references, called
with the arguments a slip changes.
"""

import copy

import torch
from torch.func import functional_call

from autograder.models import FEW_SHOT_NET, ONE_SINE, THREE_SINES, few_shot_task, few_shot_tasks

# What the answers are called with.


def mse(params: dict, net: torch.nn.Module, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Mean squared error of the network on (x, y) with the given parameters."""
    return ((functional_call(net, params, (x,)) - y) ** 2).mean()


def own_params(net: torch.nn.Module) -> dict:
    """The network's own parameters, detached: torch.func.grad differentiates them itself."""
    return {name: param.detach() for name, param in net.named_parameters()}


def half_params(net: torch.nn.Module) -> dict:
    """Half the network's parameters, detached: parameters that are not the network's own, as every step
    of adaptation after the first starts from."""
    return {name: param.detach() / 2 for name, param in net.named_parameters()}


def moved_copy(net: torch.nn.Module, gen: torch.Generator) -> torch.nn.Module:
    """A copy of net, each weight moved a little at random: parameters that are not the network's own,
    which still require grad, so that the meta-gradient must reach them."""
    start = copy.deepcopy(net)
    with torch.no_grad():
        for param in start.parameters():
            param.add_(0.1 * torch.randn(param.shape, generator=gen, dtype=param.dtype))
    return start


def few_shot_task_at_another_lr(gen: torch.Generator) -> tuple:
    """few_shot_task with lr = 0.3 in place of its 0.1, so that a step by 0.1 written in shows."""
    *task, _ = few_shot_task(gen)
    return *task, 0.3


def few_shot_task_from_other_params(gen: torch.Generator) -> tuple:
    """net, start, x, y, x_query, y_query, lr: few_shot_task, and a moved copy of its network to step from."""
    net, *task = few_shot_task(gen)
    return net, moved_copy(net, gen), *task


def few_shot_tasks_at_another_lr(gen: torch.Generator) -> tuple:
    """few_shot_tasks with lr = 0.3 in place of its 0.1, so that a step by 0.1 written in shows."""
    net, tasks, _ = few_shot_tasks(gen)
    return net, tasks, 0.3


few_shot_task_at_another_lr.in_words = f"{FEW_SHOT_NET}, {ONE_SINE}, and lr = 0.3"
few_shot_task_from_other_params.in_words = (
    f"{FEW_SHOT_NET}, start: a copy of it with each parameter moved by 0.1 times a standard normal draw, "
    f"{ONE_SINE}, and lr = 0.1"
)
few_shot_tasks_at_another_lr.in_words = f"{FEW_SHOT_NET}, {THREE_SINES}, and lr = 0.3"

# The references: the step's gradient taken by torch.func.grad, which autograd differentiates again.


def stepped_by_torch_func(net, x, y, lr, start: dict, gradient_at: dict | None = None) -> dict:
    """start - lr · ∇(support loss), the gradient taken at start (or at gradient_at) by torch.func.grad."""
    grads = torch.func.grad(mse)(start if gradient_at is None else gradient_at, net, x, y)
    return {name: start[name] - lr * grads[name] for name in start}


def step_by_torch_func(net, x, y, x_query, y_query, lr) -> dict:
    """The step from the network's own parameters (values only)."""
    return stepped_by_torch_func(net, x, y, lr, own_params(net))


def step_from_half_params_by_torch_func(net, x, y, x_query, y_query, lr) -> dict:
    """The same step from half the parameters."""
    return stepped_by_torch_func(net, x, y, lr, half_params(net))


def query_loss_by_torch_func(net, x, y, x_query, y_query, lr) -> torch.Tensor:
    """The query loss after the step from the network's own parameters."""
    return mse(stepped_by_torch_func(net, x, y, lr, dict(net.named_parameters())), net, x_query, y_query)


def query_loss_from_by_torch_func(net, start, x, y, x_query, y_query, lr) -> torch.Tensor:
    """The query loss after the step from start's parameters."""
    return mse(stepped_by_torch_func(net, x, y, lr, dict(start.named_parameters())), net, x_query, y_query)


def support_points(task: tuple) -> tuple:
    return task[:2]


def query_points(task: tuple) -> tuple:
    return task[2:]


def support_points_with_y_squeezed(task: tuple) -> tuple:
    """The support points, y squeezed to a vector, which broadcasts against the column of outputs."""
    return task[0], task[1].squeeze(-1)


def swapped_support_points(task: tuple) -> tuple:
    """The support points with inputs and targets swapped, (y, x)."""
    return task[1], task[0]


def query_points_with_y_squeezed(task: tuple) -> tuple:
    """The query points, y_query squeezed to a vector, which broadcasts against the column of outputs."""
    return task[2], task[3].squeeze(-1)


def one_task_of_all(tasks: list) -> list:
    """Every task's points pooled into one task, support with support and query with query: what a meta-loss
    that adapts once to all the tasks sees."""
    return [tuple(torch.cat(parts) for parts in zip(*tasks, strict=True))]


def pooled_points(task: tuple) -> tuple:
    """A task's support and query points together."""
    x, y, x_query, y_query = task
    return torch.cat([x, x_query]), torch.cat([y, y_query])


def task_losses(
    net,
    tasks,
    lr,
    steps=1,
    adapt_on=support_points,
    judge_on=query_points,
    chained=False,
    step=stepped_by_torch_func,
) -> torch.Tensor:
    """Each task's query loss after one step from the network's own parameters; the other arguments make
    the usual mistakes: another count of steps, other points to adapt on or to judge, the tasks adapted
    one after another, a step of another kind."""
    own = dict(net.named_parameters())
    start, losses = own, []
    for task in tasks:
        params = start
        for _ in range(steps):
            params = step(net, *adapt_on(task), lr, params)
        losses.append(mse(params, net, *judge_on(task)))
        start = params if chained else own
    return torch.stack(losses)


def meta_loss_by_torch_func(net, tasks, lr) -> torch.Tensor:
    """The mean of the tasks' query losses."""
    return task_losses(net, tasks, lr).mean()
