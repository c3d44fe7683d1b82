"""Lesson 05_applications: losses that contain a gradient, built with one double backward each."""

from collections.abc import Callable

import torch
from torch import nn


def hvp(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """H(x)·v for the Hessian H of the scalar function f, from one double backward.

    Differentiating the gradient with `v` as its incoming gradient gives sum_j v_j d(grad_j)/dx_i,
    that is (H·v)_i: the Hessian itself, one backward pass per row, is never built.
    """
    # A leaf of our own: the caller's x keeps its requires_grad and its .grad.
    x = x.detach().requires_grad_()
    (grad_x,) = torch.autograd.grad(f(x), x, create_graph=True)
    (product,) = torch.autograd.grad(grad_x, x, grad_outputs=v)
    return product


def gradient_penalty(critic: nn.Module, points: torch.Tensor) -> torch.Tensor:
    """WGAN-GP's penalty: the batch mean of (‖∇ critic(x)‖₂ - 1)², differentiable in the critic's weights.

    Each score depends on its own point only, so the gradient of their sum holds every point's own
    gradient, one row each. create_graph=True records that gradient, so that the penalty's gradient
    reaches the critic's parameters.
    """
    points = points.detach().requires_grad_()
    (gradients,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return ((gradients.norm(dim=1) - 1) ** 2).mean()


def loss_with_gradient(f: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """z = f'(x) - 2x + 1, whose own derivative dz/dx = f''(x) - 2 autograd can take: f' is recorded."""
    (slope,) = torch.autograd.grad(f(x), x, create_graph=True)
    return slope - 2 * x + 1
