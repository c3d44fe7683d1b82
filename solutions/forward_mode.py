"""Lesson 07_forward_mode: a Function with both rules, backward (reverse mode) and jvp (forward mode)."""

import torch
from torch.autograd.function import FunctionCtx


class Tanh(torch.autograd.Function):
    """tanh(x), saving its output for both rules: backward (reverse mode) and jvp (forward mode)."""

    # forward, backward and jvp are plain torch operations, so PyTorch batches them itself (jacfwd, hessian).
    generate_vmap_rule = True

    @staticmethod
    def forward(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[torch.Tensor], output: torch.Tensor) -> None:
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        (result,) = ctx.saved_tensors
        return grad_out * (1 - result**2)

    @staticmethod
    def jvp(ctx: FunctionCtx, x_t: torch.Tensor) -> torch.Tensor:
        # Torch operations on the saved output: recorded, so reverse mode can differentiate the tangent.
        (result,) = ctx.saved_tensors
        return x_t * (1 - result**2)
