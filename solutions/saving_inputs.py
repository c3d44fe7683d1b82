"""Lesson 01_saving_inputs: a Function that saves its input, so double backward works as is."""

import torch
from torch.autograd.function import FunctionCtx


class Square(torch.autograd.Function):
    """x**2, whose backward uses only the saved input and so is recorded when create_graph=True."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x**2

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x
