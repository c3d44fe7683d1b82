"""Lesson 04_untracked_backward: the reference Cube, CubeBackward and NumPy kernels, checked in float64."""

import numpy as np
import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Fn, Shape, make_grad, make_x
from torch import autograd

from solutions.saving_inputs import Square
from solutions.untracked_backward import Cube, CubeBackward, cube_backward, cube_forward

CUBE = Case(Cube.apply, lambda x: x**3, lambda x: 3 * x**2, lambda x: 6 * x)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_cube_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(CUBE, shape)


def test_numpy_kernels_compute_the_cube_derivatives() -> None:
    x = np.array([-2.0, 0.5, 3.0])
    grad_out = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(cube_forward(x), [-8.0, 0.125, 27.0])
    np.testing.assert_allclose(cube_backward(grad_out, x), [12.0, -1.5, 13.5])


def test_cube_backward_forward_is_the_numpy_kernel() -> None:
    x = make_x((2, 3))
    grad_out = make_grad((2, 3), seed=1)
    expected = torch.from_numpy(cube_backward(grad_out.numpy(), x.detach().numpy()))
    torch.testing.assert_close(CubeBackward.apply(grad_out, x), expected, rtol=0, atol=0)


@pytest.mark.parametrize(
    "apply",
    [
        pytest.param(Cube.apply, id="cube"),
        pytest.param(lambda t: CubeBackward.apply(t, t), id="cube_backward"),
    ],
)
def test_cube_computes_through_numpy(apply: Fn) -> None:
    # Meta tensors carry no data: torch operators accept them (Square is the control), NumPy cannot.
    meta = torch.empty(3, device="meta")
    assert Square.apply(meta).shape == (3,)
    with pytest.raises(TypeError, match="can't convert meta device type tensor to numpy"):
        apply(meta)


@pytest.mark.parametrize(
    "dtype", [pytest.param(torch.float32, id="float32"), pytest.param(torch.float64, id="float64")]
)
def test_cube_keeps_dtype_through_numpy(dtype: torch.dtype) -> None:
    x = torch.tensor([-1.0, 2.0], dtype=dtype, requires_grad=True)
    out = Cube.apply(x)
    (grad_x,) = autograd.grad(out, x, torch.ones_like(out), create_graph=True)
    (second,) = autograd.grad(grad_x, x, torch.ones_like(grad_x))
    assert (out.dtype, grad_x.dtype, second.dtype) == (dtype, dtype, dtype)


def test_cube_grad_x_is_recorded_as_cube_backward() -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert grad_x.grad_fn.name() == "CubeBackwardBackward"


def test_cube_grad_x_is_untracked_without_create_graph() -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(Cube.apply(x).sum(), x)
    assert grad_x.grad_fn is None


def test_cube_backward_gives_gradients_for_grad_out_and_x() -> None:
    grad_out = make_grad((2, 3), seed=1).requires_grad_()
    x = make_x((2, 3))
    grad_grad_x = make_grad((2, 3), seed=2)
    got = autograd.grad(CubeBackward.apply(grad_out, x), (grad_out, x), grad_grad_x)
    x, grad_out = x.detach(), grad_out.detach()
    torch.testing.assert_close(got, (grad_grad_x * 3 * x**2, grad_grad_x * 6 * grad_out * x))


def test_cube_backward_passes_gradcheck_and_gradgradcheck_in_both_inputs() -> None:
    inputs = (make_grad((2, 3), seed=1).requires_grad_(), make_x((2, 3)))
    assert autograd.gradcheck(CubeBackward.apply, inputs)
    assert autograd.gradgradcheck(CubeBackward.apply, inputs)


def test_second_derivative_of_a_composite_includes_the_path_through_grad_out() -> None:
    # In sin(x**3), Cube's grad_out is cos(x**3): the second derivative is right only if CubeBackward
    # passes a gradient back to grad_out as well as to x.
    x = make_x((3,))
    (grad_x,) = autograd.grad(torch.sin(Cube.apply(x)).sum(), x, create_graph=True)
    (second,) = autograd.grad(grad_x.sum(), x)
    x = x.detach()
    torch.testing.assert_close(second, 6 * x * torch.cos(x**3) - 9 * x**4 * torch.sin(x**3))


def test_cube_has_a_third_derivative() -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (second,) = autograd.grad(grad_x.sum(), x, create_graph=True)
    (third,) = autograd.grad(second.sum(), x)
    torch.testing.assert_close(third, torch.full_like(third, 6.0))
