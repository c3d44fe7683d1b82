"""Lesson 08_learning_to_learn: MAML's differentiable inner step and its meta-loss, on few-shot regression."""

import torch
from torch import nn
from torch.func import functional_call


def mse(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean squared error, the loss of every regression in the lesson."""
    return ((prediction - target) ** 2).mean()


def inner_step(
    net: nn.Module, params: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor, lr: float
) -> dict[str, torch.Tensor]:
    """params - lr · ∇ mse(net(x; params), y), as new tensors whose graph reaches params.

    create_graph=True records the gradient itself, so that a loss at the adapted parameters can be
    differentiated back through the step: the meta-gradient then carries the Hessian term -lr · H · v.
    The network's own parameters are never changed; `functional_call` runs it on `params` instead.
    """
    loss = mse(functional_call(net, params, (x,)), y)
    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
    return {name: param - lr * grad for (name, param), grad in zip(params.items(), grads, strict=True)}


def meta_loss(net: nn.Module, tasks: list[tuple[torch.Tensor, ...]], lr: float) -> torch.Tensor:
    """Mean over the tasks (x, y, x_query, y_query) of the query loss after one inner step on (x, y)."""
    params = dict(net.named_parameters())
    losses = [
        mse(functional_call(net, inner_step(net, params, x, y, lr), (x_query,)), y_query)
        for x, y, x_query, y_query in tasks
    ]
    return torch.stack(losses).mean()
