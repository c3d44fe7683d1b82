"""Lesson 00_grad_vs_backward: the reference TinyNet, pinned to the numbers the lesson quotes in float32."""

from collections.abc import Callable

import pytest
import torch
from torch import autograd

from autograder.models import TinyNet, make_input

SECOND_TIME = "Trying to backward through the graph a second time"


def leaf_grads(net: TinyNet) -> tuple[float | None, ...]:
    params = (net.linear1.weight, net.linear2.weight, net.linear2.bias)
    return tuple(None if p.grad is None else p.grad.item() for p in params)


@pytest.fixture
def net() -> TinyNet:
    return TinyNet()


@pytest.fixture
def x() -> torch.Tensor:
    return make_input()


def test_tiny_net_forward_gives_intermediate_and_output(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    assert (x.shape, hidden.item(), y.item(), y.dtype) == ((1, 1), 12.0, 900.0, torch.float32)


def test_tiny_net_uses_its_constructor_arguments() -> None:
    hidden, y = TinyNet(w1=1.0, w2=1.0, b2=0.0)(make_input(5.0))
    assert (hidden.item(), y.item()) == (5.0, 25.0)


def test_grad_reaches_a_non_leaf(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    assert autograd.grad(y, hidden)[0].item() == 120.0


def test_backward_fills_leaf_grads_except_the_input(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    y.backward()
    assert leaf_grads(net) == (480.0, 720.0, 60.0)
    assert x.grad is None


def test_grad_returns_without_filling_dot_grad(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    assert autograd.grad(y, net.linear1.weight)[0].item() == 480.0
    assert leaf_grads(net) == (None, None, None)


@pytest.mark.parametrize(
    "again",
    [
        pytest.param(lambda net, y: autograd.grad(y, net.linear2.weight), id="grad"),
        pytest.param(lambda net, y: y.backward(), id="backward"),
    ],
)
def test_second_pass_without_retain_graph_raises(
    net: TinyNet, x: torch.Tensor, again: Callable[[TinyNet, torch.Tensor], object]
) -> None:
    _, y = net(x)
    autograd.grad(y, net.linear1.weight)
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        again(net, y)


def test_retain_graph_allows_further_passes(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    assert autograd.grad(y, net.linear1.weight, retain_graph=True)[0].item() == 480.0
    assert autograd.grad(y, net.linear2.weight, retain_graph=True)[0].item() == 720.0
    assert leaf_grads(net) == (None, None, None)
    y.backward()
    assert leaf_grads(net) == (480.0, 720.0, 60.0)


def test_backward_through_a_gradient(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (f,) = autograd.grad(y, hidden, create_graph=True)
    assert f.item() == 120.0
    assert f.requires_grad
    f.backward()
    assert leaf_grads(net) == (32.0, 108.0, 4.0)


def test_second_derivative_wrt_weight(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    (first,) = autograd.grad(y, net.linear1.weight, create_graph=True)
    (second,) = autograd.grad(first, net.linear1.weight)
    assert (first.item(), second.item()) == (480.0, 128.0)


def test_backward_calls_accumulate(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (f,) = autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    y.backward()
    assert leaf_grads(net) == (32.0 + 480.0, 108.0 + 720.0, 4.0 + 60.0)


def test_backward_through_gradient_frees_the_shared_graph(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (f,) = autograd.grad(y, hidden, create_graph=True)
    # f's graph runs through y's nodes and their saved tensors, so freeing it frees them too.
    f.backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        y.backward()
