"""What the tests of lesson 05's loss_with_gradient(f, x), a loss that contains f'(x), share.

Every exact way to f'(x), reverse mode or forward, evaluates f at x alone; a finite difference evaluates
it at x ± h and only approximates f'(x), closely enough with a well-chosen h to pass a comparison of
values. Watching where f is evaluated tells the two apart whatever h is.
"""

from collections.abc import Callable

import torch

from autograder.probe.refused import AnswerRefusedError

_ELSEWHERE = (
    "f was evaluated away from x, as a finite difference does: that only approximates f'(x). Take the "
    "exact derivative from autograd: torch.autograd.grad(f(x), x, create_graph=True)."
)


def evaluating_f_at_x_only(loss_with_gradient: Callable, f: Callable, x: torch.Tensor) -> torch.Tensor:
    """loss_with_gradient(f, x), refused if it evaluates f anywhere but at x."""
    at = x.detach().clone()
    elsewhere = []

    def watched(point):
        if point.shape != at.shape or not torch.equal(point.detach(), at):
            elsewhere.append(point.shape)
        return f(point)

    loss = loss_with_gradient(watched, x)
    if elsewhere:
        raise AnswerRefusedError(_ELSEWHERE)
    return loss
