"""Lesson 06_beyond_the_basics: a new-style Function that skips unneeded gradients, for torch.func too, and
one that works in place."""

import torch
from torch.autograd.function import FunctionCtx


class ScaledSquare(torch.autograd.Function):
    """w * x**2: forward apart from setup_context, as torch.func needs; backward skips unneeded gradients."""

    # forward and backward are plain torch operations, so PyTorch can batch them itself under vmap.
    generate_vmap_rule = True

    @staticmethod
    def forward(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return w * x**2

    @staticmethod
    def setup_context(
        ctx: FunctionCtx, inputs: tuple[torch.Tensor, torch.Tensor], output: torch.Tensor
    ) -> None:
        x, w = inputs
        ctx.save_for_backward(x, w)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        x, w = ctx.saved_tensors
        grad_x = grad_out * 2 * w * x if ctx.needs_input_grad[0] else None
        grad_w = grad_out * x**2 if ctx.needs_input_grad[1] else None
        return grad_x, grad_w


class TanhInPlace(torch.autograd.Function):
    """tanh(x) written into x itself; mark_dirty gives x the new history along with the new values."""

    @staticmethod
    def forward(x: torch.Tensor) -> torch.Tensor:
        return x.tanh_()

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[torch.Tensor], output: torch.Tensor) -> None:
        (x,) = inputs
        ctx.mark_dirty(x)
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        (result,) = ctx.saved_tensors
        return grad_out * (1 - result**2)
