"""Why torch.func's second derivative through a custom Function comes out 0.

torch.func's grad takes a missing path back to an input as a function that does not use it, and returns
0 without a word (PyTorch issue #90224). So a first derivative cut from x gives a second derivative of 0,
not autograd's error. The tests that run grad(grad(...)) through a student's Function ask plain autograd
first: it sees the cut, and the judge's hints name where it is, as the second-derivative checks do.
"""

import torch

from autograder.probe import diagnose
from autograder.probe.refused import AnswerRefusedError

# What autograd says when a second derivative finds no graph to follow.
_CUT = ("does not require grad and does not have a grad_fn", "trying to differentiate twice")


def refuse_a_first_derivative_cut_from_x(output: torch.Tensor, x: torch.Tensor, name: str) -> None:
    """Refuse a first derivative of `output`, a Function's output, that has no path back to `x`, a leaf
    that requires grad: torch.func would make its second derivative a silent 0. The message says why,
    read off the Function's node: None returned for x, a decorator, a call that leaves the graph, a
    tensor kept without its history."""
    (first,) = torch.autograd.grad(output.sum(), x, create_graph=True, allow_unused=True)
    if first is None:
        raise AnswerRefusedError(
            f"{name}'s backward returned None for x, which requires grad: torch.func's grad then finds no "
            "gradient for x, and its second derivative is 0. Return grad_out times the derivative wherever "
            "x requires grad (its flag is ctx.needs_input_grad[0])"
        )
    if _derivative_along_the_graph(first, x) is None:
        raise AnswerRefusedError(
            f"the first derivative in x that {name}'s backward returns has no path back to x, so torch.func, "
            f"which this test uses, gives 0 for the second derivative through it, silently.\n"
            f"{diagnose.cut_from_graph(output)}"
        )


def refuse_a_first_derivative_in_x_cut_from_w(
    output: torch.Tensor, x: torch.Tensor, w: torch.Tensor, name: str
) -> None:
    """Refuse a first derivative in x of `output`, a Function's output of leaves `x` and `w`, that has a
    path back to x but none to w: torch.func would make the mixed second derivative d/dw of d/dx a silent
    0, while the second derivative in x stays right."""
    (first,) = torch.autograd.grad(output.sum(), x, create_graph=True, allow_unused=True)
    # None returned for x is the d²/dx² check's to name: here torch.func's value tells.
    if first is not None and _derivative_along_the_graph(first, w) is None:
        raise AnswerRefusedError(
            f"grad_x, the first derivative in x that {name}'s backward returns, has no path back to w (as "
            "when it is computed from w.detach() or w.data), so torch.func, which this test uses, gives 0 "
            f"for the mixed second derivative through it, d/dw of d/dx, silently.\n"
            f"{diagnose.cut_from_graph(output)}"
        )


def _derivative_along_the_graph(first: torch.Tensor, leaf: torch.Tensor) -> torch.Tensor | None:
    """The gradient of `first` with respect to `leaf`, or None where autograd finds no path to it."""
    try:
        (second,) = torch.autograd.grad(first.sum(), leaf, allow_unused=True)
    except RuntimeError as error:
        # No graph at all, or the error node @once_differentiable leaves, is a cut; anything else (a
        # saved tensor changed in place) is autograd's to tell, with its own hint.
        if not any(symptom in str(error) for symptom in _CUT):
            raise
        return None
    return second
