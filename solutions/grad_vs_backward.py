"""Lesson 00_grad_vs_backward: gradients of a network that returns (l, y), by autograd.grad and backward."""

import torch
from torch import nn


def hidden_gradient(net: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """f = dy/dl at the hidden value l, recorded (create_graph=True) so that it can be differentiated."""
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    return f


def derivatives_at(net: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """dy/dw1 and d²y/dw1² for w1 = net.linear1.weight; autograd.grad leaves every .grad None."""
    w1 = net.linear1.weight
    _, y = net(x)
    # Recorded, so that the second call can differentiate it; this also keeps the forward graph.
    (first,) = torch.autograd.grad(y, w1, create_graph=True)
    (second,) = torch.autograd.grad(first, w1)
    return first, second


def accumulate_both(net: nn.Module, x: torch.Tensor) -> None:
    """Add the gradients of y and of f = dy/dl to every parameter's .grad, by two backward calls."""
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    # f's graph is built on y's nodes and their saved tensors: keep them for y.backward().
    f.backward(retain_graph=True)
    y.backward()
