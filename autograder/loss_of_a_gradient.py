"""What the tests of lesson 05's loss_with_gradient(f, x), a loss that contains f'(x), share.

Every exact way to f'(x), reverse mode or forward, evaluates f at x alone; a finite difference evaluates
it at x ± h and only approximates f'(x), closely enough with a well-chosen h to pass a comparison of
values. Watching where f is evaluated tells the two apart whatever h is. It also tells a copy of x, the
slip hvp's pattern invites: f evaluated at a new leaf whose gradient never reaches the parameter.
"""

from collections.abc import Callable

import torch

from autograder.probe.diagnose import leads_back_to
from autograder.probe.refused import AnswerRefusedError

_ELSEWHERE = (
    "f was evaluated away from x, as a finite difference does: that only approximates f'(x). Take the "
    "exact derivative from autograd: torch.autograd.grad(f(x), x, create_graph=True)."
)

_ITSELF = (
    "Here x is the parameter being optimized: differentiate with respect to x itself, with no copy (unlike "
    "hvp and gradient_penalty)."
)
_COPY = (
    "No gradient flows from the result back to x: f was differentiated at a copy of x, a new leaf "
    f"(`.detach().requires_grad_()`) with no path back to it. {_ITSELF}"
)
_COPY_FOR_THE_SLOPE = (
    "f' was taken at a copy of x, a new leaf (`.detach().requires_grad_()`): the result reaches x only "
    f"through its other terms, so the loss's gradient misses the derivative of f'(x), f''(x). {_ITSELF}"
)


def evaluating_f_at_x_only(loss_with_gradient: Callable, f: Callable, x: torch.Tensor) -> torch.Tensor:
    """loss_with_gradient(f, x), refused if it evaluates f anywhere but at x, or at a leaf copy of x
    that the result's graph leads back to instead of x, or beside it."""
    at = x.detach().clone()
    elsewhere, copies = [], []

    def watched(point):
        if point.shape != at.shape or not torch.equal(point.detach(), at):
            elsewhere.append(point.shape)
        elif point is not x and point.is_leaf and point.requires_grad:
            copies.append(point)
        return f(point)

    loss = loss_with_gradient(watched, x)
    if elsewhere:
        raise AnswerRefusedError(_ELSEWHERE)
    if copies and x.requires_grad and isinstance(loss, torch.Tensor) and loss.requires_grad:
        if not leads_back_to(loss, x):
            raise AnswerRefusedError(_COPY)
        if any(leads_back_to(loss, copy) for copy in copies):
            raise AnswerRefusedError(_COPY_FOR_THE_SLOPE)
    return loss
