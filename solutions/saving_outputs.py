"""Lesson 02_saving_outputs: a Function that saves its output, which autograd tracks just like an input."""

import torch
from torch.autograd.function import FunctionCtx


class Exp(torch.autograd.Function):
    """exp(x), whose backward reuses the saved result instead of recomputing it."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        result = torch.exp(x)
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        (result,) = ctx.saved_tensors
        return grad_out * result
