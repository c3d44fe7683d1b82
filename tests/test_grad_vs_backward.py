"""Lesson 00_grad_vs_backward: TinyNet pinned to the numbers the lesson quotes (float32), and the
exercises' references checked against closed forms in float64, on the lesson's weights and random ones."""

from collections.abc import Callable

import pytest
import torch
from torch import autograd

from autograder.models import TinyNet, lesson_net, make_input, random_net
from solutions.grad_vs_backward import accumulate_three, derivatives_at, hidden_second_derivative

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
    assert (x.shape, hidden.item(), y.item(), y.dtype) == ((1, 1), 12.0, 1296.0, torch.float32)


def test_tiny_net_uses_its_constructor_arguments() -> None:
    hidden, y = TinyNet(w1=1.0, w2=1.0, b2=0.0)(make_input(5.0))
    assert (hidden.item(), y.item()) == (5.0, 25.0)


def test_grad_reaches_a_non_leaf(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    assert autograd.grad(y, hidden)[0].item() == 180.0


def test_backward_fills_leaf_grads_except_the_input(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    y.backward()
    assert leaf_grads(net) == (720.0, 864.0, 72.0)
    assert x.grad is None


def test_grad_returns_without_filling_dot_grad(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    assert autograd.grad(y, net.linear1.weight)[0].item() == 720.0
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
    assert autograd.grad(y, net.linear1.weight, retain_graph=True)[0].item() == 720.0
    assert autograd.grad(y, net.linear2.weight, retain_graph=True)[0].item() == 864.0
    assert leaf_grads(net) == (None, None, None)
    y.backward()
    assert leaf_grads(net) == (720.0, 864.0, 72.0)


def test_backward_through_a_gradient(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (f,) = autograd.grad(y, hidden, create_graph=True)
    assert f.item() == 180.0
    assert f.requires_grad
    f.backward()
    assert leaf_grads(net) == (50.0, 132.0, 5.0)


def test_second_derivative_wrt_weight(net: TinyNet, x: torch.Tensor) -> None:
    _, y = net(x)
    (first,) = autograd.grad(y, net.linear1.weight, create_graph=True)
    (second,) = autograd.grad(first, net.linear1.weight)
    assert (first.item(), second.item()) == (720.0, 200.0)


def test_backward_calls_accumulate(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (f,) = autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    y.backward()
    assert leaf_grads(net) == (50.0 + 720.0, 132.0 + 864.0, 5.0 + 72.0)


def test_backward_through_gradient_frees_the_shared_graph(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (f,) = autograd.grad(y, hidden, create_graph=True)
    # f's graph runs through y's nodes and their saved tensors, so freeing it frees them too.
    f.backward()
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        y.backward()


def test_autograd_grad_keeps_the_forward_graph_only_when_asked(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    # retain_graph defaults to create_graph; without it f's graph points at freed saved tensors.
    (f,) = autograd.grad(y, hidden, create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match=SECOND_TIME):
        f.backward()


def _nodes(root: torch.autograd.graph.Node | None) -> set[torch.autograd.graph.Node]:
    seen, pending = set(), [root]
    while pending:
        node = pending.pop()
        if node is not None and node not in seen:
            seen.add(node)
            pending.extend(child for child, _ in node.next_functions)
    return seen


def test_a_recorded_gradient_is_built_on_the_forward_nodes(net: TinyNet, x: torch.Tensor) -> None:
    hidden, y = net(x)
    (constant,) = autograd.grad(y, hidden, retain_graph=True)
    assert constant.grad_fn is None
    (f,) = autograd.grad(y, hidden, create_graph=True)
    below_y = y.grad_fn.next_functions[0][0]  # linear2's node, which saved l and w2
    assert below_y.name() == "AddmmBackward0"
    assert {below_y, hidden.grad_fn} <= _nodes(f.grad_fn)
    assert y.grad_fn not in _nodes(f.grad_fn)


# The exercises' references, in float64: on the networks the lesson's test cells build, the lesson's own
# and random ones.
BUILDS = [pytest.param((lesson_net, 0), id="lesson")] + [
    pytest.param((random_net, seed), id=f"random{seed}") for seed in range(4)
]


class ClosedForms:
    """TinyNet's derivatives by hand, from the float64 values the network really holds."""

    def __init__(self, net: TinyNet, x: torch.Tensor) -> None:
        w1, w2, b2 = (p.detach().item() for p in net.parameters())
        self.x = x.item()
        self.hidden = w1 * self.x
        self.u = w2 * self.hidden + b2  # the value inside the square
        self.dy = (2 * self.u * w2 * self.x, 2 * self.u * self.hidden, 2 * self.u)
        # f = dy/dl = 2u·w2, differentiated by l: u = w2·l + b2 brings another w2.
        self.d2y_dl2 = 2 * w2**2
        # ... and by w1, w2 and b2.
        self.d2y_dl2_by_parameter = (0.0, 4 * w2, 0.0)
        # dy/db2 = 2u, differentiated by w1 through u = w2·w1·x + b2.
        self.d2y_db2_dw1 = 2 * w2 * self.x
        # g = dy/dw2 = 2u·l, differentiated by w1, w2 and b2.
        self.dg = (2 * self.x * (w2 * self.hidden + self.u), 2 * self.hidden**2, 2 * self.hidden)
        # h = dy/db2 = 2u, differentiated by w1, w2 and b2.
        self.dh = (2 * w2 * self.x, 2 * self.hidden, 2.0)


@pytest.fixture(params=BUILDS)
def case(request: pytest.FixtureRequest) -> tuple[TinyNet, torch.Tensor, ClosedForms]:
    build, seed = request.param
    net, x = build(torch.Generator().manual_seed(seed))
    return net, x, ClosedForms(net, x)


def _close(tensor: torch.Tensor, value: float) -> None:
    assert tensor.dtype == torch.float64
    torch.testing.assert_close(tensor.detach(), torch.full_like(tensor, value).detach())


def test_hidden_second_derivative_is_a_differentiable_d2y_dl2(case) -> None:
    net, x, by_hand = case
    curvature = hidden_second_derivative(net, x)
    assert curvature.shape == (1, 1)
    _close(curvature, by_hand.d2y_dl2)
    assert leaf_grads(net) == (None, None, None)
    gradients = autograd.grad(curvature, list(net.parameters()), allow_unused=True, materialize_grads=True)
    for got, want in zip(gradients, by_hand.d2y_dl2_by_parameter, strict=True):
        _close(got, want)


def test_derivatives_at_gives_dy_db2_and_its_derivative_by_w1(case) -> None:
    net, x, by_hand = case
    first, second = derivatives_at(net, x)
    assert (first.shape, second.shape) == (net.linear2.bias.shape, net.linear1.weight.shape)
    _close(first, by_hand.dy[2])
    _close(second, by_hand.d2y_db2_dw1)
    assert leaf_grads(net) == (None, None, None)


def test_accumulate_three_adds_the_gradients_of_y_g_and_h(case) -> None:
    net, x, by_hand = case
    assert accumulate_three(net, x) is None
    sums = [sum(parts) for parts in zip(by_hand.dy, by_hand.dg, by_hand.dh, strict=True)]
    for parameter, total in zip(net.parameters(), sums, strict=True):
        _close(parameter.grad, total)
    accumulate_three(net, x)  # a second call adds the same again
    for parameter, total in zip(net.parameters(), sums, strict=True):
        _close(parameter.grad, 2 * total)
