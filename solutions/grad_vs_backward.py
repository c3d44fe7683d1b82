"""Lesson 00_grad_vs_backward: gradients of a network that returns (l, y), by autograd.grad and backward."""

import torch
from torch import nn


def hidden_second_derivative(net: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """d²y/dl² at the hidden value l, recorded (create_graph=True twice) so that it can be differentiated."""
    hidden, y = net(x)
    # Recorded, so that the second call can differentiate it; this also keeps the forward graph.
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    # Recorded too: the result itself must come with a graph.
    (curvature,) = torch.autograd.grad(f, hidden, create_graph=True)
    return curvature


def derivatives_at(net: nn.Module, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """dy/db2 and d²y/(db2 dw1) for b2 = net.linear2.bias, w1 = net.linear1.weight; .grad stays None."""
    w1, b2 = net.linear1.weight, net.linear2.bias
    _, y = net(x)
    # Recorded, so that the second call can differentiate it by another parameter.
    (first,) = torch.autograd.grad(y, b2, create_graph=True)
    (second,) = torch.autograd.grad(first, w1)
    return first, second


def accumulate_three(net: nn.Module, x: torch.Tensor) -> None:
    """Add the gradients of y, g = dy/dw2 and h = dy/db2 to every parameter's .grad, by backward calls."""
    _, y = net(x)
    g, h = torch.autograd.grad(y, [net.linear2.weight, net.linear2.bias], create_graph=True)
    # g's and h's graphs are built on y's nodes and their saved tensors: keep them for the later calls.
    g.backward(retain_graph=True)
    h.backward(retain_graph=True)
    y.backward()
