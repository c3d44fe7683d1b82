"""Lesson 04_untracked_backward: double backward when the derivative is computed outside autograd's sight."""

from collections.abc import Callable

import numpy as np
import torch
from torch.autograd.function import FunctionCtx


def cube_forward(x: np.ndarray) -> np.ndarray:
    """x**3 on NumPy arrays."""
    return x**3


def cube_backward(grad_out: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Vector-Jacobian product of cube_forward: grad_out * 3x**2."""
    return grad_out * 3 * x**2


def _through_numpy(kernel: Callable[..., np.ndarray], *tensors: torch.Tensor) -> torch.Tensor:
    # detach() because NumPy refuses tensors that require grad, which inputs do during a double backward;
    # asarray() because NumPy turns 0-d results into scalars, which from_numpy rejects.
    return torch.from_numpy(np.asarray(kernel(*(t.detach().numpy() for t in tensors))))


class Cube(torch.autograd.Function):
    """x**3 computed by NumPy, whose backward is another Function so that autograd can record it."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return _through_numpy(cube_forward, x)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return CubeBackward.apply(grad_out, x)


class CubeBackward(torch.autograd.Function):
    """Cube's backward as a Function of (grad_out, x), with a hand-written backward since NumPy is opaque."""

    @staticmethod
    def forward(ctx: FunctionCtx, grad_out: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(grad_out, x)
        return _through_numpy(cube_backward, grad_out, x)

    # Torch operations on the saved inputs, which carry their history: autograd records this backward in
    # turn, so derivatives of third and higher order need no further Function.
    @staticmethod
    def backward(ctx: FunctionCtx, grad_grad_x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        grad_out, x = ctx.saved_tensors
        return grad_grad_x * 3 * x**2, grad_grad_x * grad_out * 6 * x
