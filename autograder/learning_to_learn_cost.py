"""What lesson 08's section 8 measures the meta-gradient's cost with: the networks it widens, first-order
MAML's step written for itself, and the clock and the memory count.

They are measuring tools, not the lesson's topic, so the section's cell imports them and keeps only the
calls and what they print.
"""

import time
from collections.abc import Callable

import torch
from torch import nn
from torch.func import functional_call

from autograder.graphs import saved_bytes


def wide_net(width: int) -> nn.Sequential:
    """Finn et al.'s regressor with `width` units in each hidden layer, so that the cost can be followed as
    the layers widen."""
    return nn.Sequential(
        nn.Linear(1, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 1)
    )


def unrecorded_step(net: nn.Module, params: dict, x, y, lr) -> dict:
    """First-order MAML's step, timed in place of section 6's wrapper: that wrapper records the support
    gradient's graph in the student's inner_step and then drops it, time first-order MAML need not spend.
    Here the gradient is taken at detached copies of params without create_graph, so autograd records none
    of it, and is subtracted from params as a constant."""
    copies = {name: param.detach().requires_grad_() for name, param in params.items()}
    support_loss = ((functional_call(net, copies, (x,)) - y) ** 2).mean()
    grads = dict(zip(copies, torch.autograd.grad(support_loss, list(copies.values())), strict=True))
    return {name: param - lr * grads[name] for name, param in params.items()}


def run_times(runs: list[Callable], warmup: int = 2, rounds: int = 25) -> list[list[float]]:
    """Seconds each of the functions `runs` takes in each of `rounds` rounds, after `warmup` untimed calls.

    Each is timed by the processor time its thread used (time.thread_time), which leaves out other programs
    on a busy machine. Within a round the functions run one after the other, a moment apart, so that a burst
    of other work slows them alike and a ratio taken within a round cancels most of it.
    """
    for run in runs:
        for _ in range(warmup):
            run()
    times = [[] for _ in runs]
    for _ in range(rounds):
        for run, seconds in zip(runs, times, strict=True):
            start = time.thread_time()
            run()
            seconds.append(time.thread_time() - start)
    return times


def meta_gradient_of(net: nn.Module, loss_of: Callable, tasks: list, lr: float) -> Callable[[], None]:
    """A function that computes loss_of's gradient for `tasks` into net's .grad: one meta-gradient, as a
    training step takes it, the thing run_times times."""

    def run():
        net.zero_grad()
        loss_of(net, tasks, lr).backward()

    return run


def kept_bytes(net: nn.Module, loss_of: Callable, tasks: list, lr: float) -> int:
    """Bytes autograd keeps for the meta-gradient of loss_of: what the nodes of the loss's graph saved for
    its backward (saved_bytes), the memory a training step holds until its backward has run."""
    return saved_bytes(loss_of(net, tasks, lr))


def weight_bytes(net: nn.Module) -> int:
    """Bytes of the network's weight matrices: each task's inner step makes a copy of them, the part of
    what MAML keeps that grows with the square of the width."""
    return sum(param.nbytes for name, param in net.named_parameters() if name.endswith("weight"))
