"""Lesson 03_saving_intermediates: the reference Sinh, sinh and SinhBad, checked in float64."""

import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Fn, Shape, make_grad, make_x
from torch import autograd
from torch.autograd.gradcheck import GradcheckError

from solutions.saving_intermediates import Sinh, SinhBad, sinh

SINH = Case(sinh, torch.sinh, torch.cosh, torch.sinh)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_sinh_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(SINH, shape)


def test_sinh_bad_is_right_to_first_order() -> None:
    assert autograd.gradcheck(SinhBad.apply, make_x((3,)))


def test_gradgradcheck_fails_when_intermediates_kept_on_ctx() -> None:
    x = make_x((3,))
    assert autograd.gradgradcheck(SinhBad.apply, x, raise_exception=False) is False
    with pytest.raises(
        GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"
    ) as info:
        autograd.gradgradcheck(SinhBad.apply, x)
    # The analytical Jacobian of grad_x with respect to x comes out as all zeros.
    assert "analytical:tensor([[0., 0., 0.],\n        [0., 0., 0.],\n        [0., 0., 0.]]" in str(info.value)


@pytest.mark.parametrize(
    ("fn", "tracked"),
    [pytest.param(sinh, True, id="sinh"), pytest.param(SinhBad.apply, False, id="sinh_bad")],
)
def test_grad_x_is_tracked_only_when_intermediates_are_outputs(fn: Fn, tracked: bool) -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(fn(x), x, make_grad((3,), seed=1), create_graph=True)
    assert grad_x.requires_grad is tracked
    assert (grad_x.grad_fn is not None) is tracked


def test_sinh_bad_grad_x_depends_on_x_only_through_grad_out() -> None:
    x = make_x((3,))
    grad_out = make_grad((3,), seed=1).requires_grad_()
    (grad_x,) = autograd.grad(SinhBad.apply(x), x, grad_out, create_graph=True)
    # grad_x now requires grad, but only via grad_out: the path back to x was never recorded.
    grad_wrt_x, grad_wrt_grad_out = autograd.grad(grad_x.sum(), (x, grad_out), allow_unused=True)
    assert grad_wrt_x is None
    assert grad_wrt_grad_out is not None


def test_sinh_returns_its_intermediates() -> None:
    x = make_x((2, 3))
    out, expx, expnegx = Sinh.apply(x)
    torch.testing.assert_close(out, torch.sinh(x.detach()))
    torch.testing.assert_close(expx, torch.exp(x.detach()))
    torch.testing.assert_close(expnegx, torch.exp(-x.detach()))


def test_sinh_backward_adds_the_extra_outputs_gradients() -> None:
    x = make_x((2, 3))
    grad_expx, grad_expnegx = make_grad((2, 3), seed=1), make_grad((2, 3), seed=2)
    outputs = Sinh.apply(x)
    (grad_x,) = autograd.grad(outputs, x, (torch.zeros_like(x), grad_expx, grad_expnegx))
    torch.testing.assert_close(
        grad_x, grad_expx * torch.exp(x.detach()) - grad_expnegx * torch.exp(-x.detach())
    )


def test_sinh_apply_passes_gradcheck_and_gradgradcheck_with_all_three_outputs() -> None:
    # The lesson grades Sinh.apply itself, so gradients flow into every output, not only sinh(x).
    x = make_x((2, 3))
    assert autograd.gradcheck(Sinh.apply, x)
    assert autograd.gradgradcheck(Sinh.apply, x)
