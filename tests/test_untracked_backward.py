"""Lesson 04_untracked_backward: the reference Cube, CubeBackward and NumPy kernels, checked in float64."""

import numpy as np
import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Fn, Shape, make_grad, make_x
from torch import autograd

from solutions.saving_inputs import Square
from solutions.untracked_backward import (
    Cube,
    CubeBackward,
    cube_backward,
    cube_backward_backward,
    cube_backward_backward_grad_out,
    cube_forward,
)

CUBE = Case(Cube.apply, lambda x: x**3, lambda x: 3 * x**2, lambda x: 6 * x)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_cube_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(CUBE, shape)


def test_numpy_kernels_compute_the_cube_derivatives() -> None:
    x = np.array([-2.0, 0.5, 3.0])
    grad_out = np.array([1.0, -2.0, 0.5])
    saved_grad_out = np.array([3.0, 1.0, -1.0])
    np.testing.assert_allclose(cube_forward(x), [-8.0, 0.125, 27.0])
    np.testing.assert_allclose(cube_backward(grad_out, x), [12.0, -1.5, 13.5])
    np.testing.assert_allclose(cube_backward_backward(grad_out, saved_grad_out, x), [-36.0, -6.0, -9.0])
    np.testing.assert_allclose(cube_backward_backward_grad_out(grad_out, x), [12.0, -1.5, 13.5])


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


def test_cube_refuses_a_third_derivative() -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    grad_grad_x = torch.ones_like(grad_x, requires_grad=True)
    (second,) = autograd.grad(grad_x, x, grad_grad_x, create_graph=True)
    with pytest.raises(RuntimeError, match="marked with @once_differentiable"):
        second.sum().backward()
