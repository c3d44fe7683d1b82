"""Lesson 03_saving_intermediates: reusing forward intermediates in backward while keeping double backward."""

import torch
from torch.autograd.function import FunctionCtx


class Sinh(torch.autograd.Function):
    """sinh(x) that also returns exp(x) and exp(-x), so the intermediates it reuses are tracked outputs."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(
        ctx: FunctionCtx, grad_out: torch.Tensor, grad_expx: torch.Tensor, grad_expnegx: torch.Tensor
    ) -> torch.Tensor:
        expx, expnegx = ctx.saved_tensors
        # grad_expx and grad_expnegx are zero when only sinh(x) is used, but in a double backward they carry
        # what flows back into the saved exp(x) and exp(-x); dropping them loses that part of the gradient.
        return grad_out * (expx + expnegx) / 2 + grad_expx * expx - grad_expnegx * expnegx


def sinh(x: torch.Tensor) -> torch.Tensor:
    """Apply Sinh and return only sinh(x), hiding the extra outputs from callers."""
    return Sinh.apply(x)[0]


class SinhBad(torch.autograd.Function):
    """sinh(x) keeping its intermediates as ctx attributes, kept to demonstrate how double backward fails."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        expx = torch.exp(x)
        expnegx = torch.exp(-x)
        ctx.expx = expx
        ctx.expnegx = expnegx
        return (expx - expnegx) / 2

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        return grad_out * (ctx.expx + ctx.expnegx) / 2
