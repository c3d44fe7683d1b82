"""Lesson 05_applications: the reference hvp, gradient_penalty and loss_with_gradient, by closed forms, and
the PyTorch behaviour its sections 2 and 12 show (so that a PyTorch release that changes it fails here
before it misleads a student)."""

import ast
import gc
import math
import subprocess
import sys
import warnings
import weakref

import pytest
import torch
from closed_forms import make_x
from torch import autograd, nn
from torch.utils.checkpoint import checkpoint

from autograder.models import tanh_network
from solutions.applications import gradient_penalty, hvp, loss_with_gradient

DIMENSIONS = [1, 3, 8]


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


@pytest.mark.parametrize("n", DIMENSIONS)
def test_hvp_of_a_quadratic_is_a_times_v(n: int) -> None:
    gen = generator(n)
    b = randn(n, n, gen=gen)
    a = b + b.T
    x, v = randn(n, gen=gen), randn(n, gen=gen)
    torch.testing.assert_close(hvp(lambda y: y @ a @ y / 2, x, v), a @ v)


@pytest.mark.parametrize("n", DIMENSIONS)
def test_hvp_of_an_unsymmetric_quadratic_uses_the_symmetric_part(n: int) -> None:
    gen = generator(10 + n)
    a = randn(n, n, gen=gen)
    x, v = randn(n, gen=gen), randn(n, gen=gen)
    torch.testing.assert_close(hvp(lambda y: y @ a @ y / 2, x, v), (a + a.T) / 2 @ v)


@pytest.mark.parametrize("n", DIMENSIONS)
def test_hvp_of_quadratic_plus_cubic_matches_its_closed_form_hessian(n: int) -> None:
    gen = generator(20 + n)
    b = randn(n, n, gen=gen)
    s, c = b + b.T, randn(n, gen=gen)
    x, v = randn(n, gen=gen), randn(n, gen=gen)
    hessian = s + torch.diag(6 * c * x)
    torch.testing.assert_close(hvp(lambda y: y @ s @ y / 2 + (c * y**3).sum(), x, v), hessian @ v)


def _random_functions(gen: torch.Generator):
    w = randn(5, 4, gen=gen)
    return [
        lambda y: torch.logsumexp(w @ y, dim=0),
        lambda y: torch.tanh(w @ y).pow(2).sum(),
        lambda y: (y**4).sum() * torch.sin(y).prod(),
    ]


@pytest.mark.parametrize("seed", range(3))
def test_hvp_matches_torch_hvp_and_the_full_hessian(seed: int) -> None:
    gen = generator(30 + seed)
    for f in _random_functions(gen):
        x, v = randn(4, gen=gen), randn(4, gen=gen)
        product = hvp(f, x, v)
        torch.testing.assert_close(product, autograd.functional.hvp(f, x, v)[1])
        torch.testing.assert_close(product, autograd.functional.hessian(f, x) @ v)


def test_hvp_with_a_unit_vector_is_a_row_of_the_hessian() -> None:
    gen = generator(40)
    f = _random_functions(gen)[1]
    x = randn(4, gen=gen)
    hessian = autograd.functional.hessian(f, x)
    rows = torch.stack([hvp(f, x, e) for e in torch.eye(4, dtype=torch.float64)])
    torch.testing.assert_close(rows, hessian)


@pytest.mark.parametrize("requires_grad", [False, True])
def test_hvp_leaves_the_callers_x_alone_and_returns_a_plain_tensor(requires_grad: bool) -> None:
    x = torch.tensor([1.0, -2.0], dtype=torch.float64, requires_grad=requires_grad)
    product = hvp(lambda y: (y**3).sum(), x, torch.ones(2, dtype=torch.float64))
    torch.testing.assert_close(product, 6 * x.detach())
    assert (x.requires_grad, x.grad, product.requires_grad) == (requires_grad, None, False)


class _OnceOnly(torch.autograd.Function):
    """x ↦ x³ elementwise, whose backward is itself a Function that refuses to run twice."""

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, grad_out: torch.Tensor) -> torch.Tensor:
        (x,) = ctx.saved_tensors
        return grad_out * _OnceOnlyGradient.apply(x)


class _OnceOnlyGradient(torch.autograd.Function):
    """x ↦ 3x², counting how often its backward (the second derivative of x³) runs."""

    calls = 0

    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x)
        return 3 * x**2

    @staticmethod
    def backward(ctx, w: torch.Tensor) -> torch.Tensor:
        _OnceOnlyGradient.calls += 1
        if _OnceOnlyGradient.calls > 1:
            raise RuntimeError("second derivative taken twice")
        (x,) = ctx.saved_tensors
        return 6 * x * w


def test_hvp_takes_a_single_second_derivative_where_the_hessian_takes_one_per_row() -> None:
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    v = torch.tensor([1.0, 0.0, -1.0], dtype=torch.float64)
    _OnceOnlyGradient.calls = 0
    torch.testing.assert_close(hvp(lambda y: _OnceOnly.apply(y).sum(), x, v), 6 * x * v)
    _OnceOnlyGradient.calls = 0
    with pytest.raises(RuntimeError, match="twice"):
        autograd.functional.hessian(lambda y: _OnceOnly.apply(y).sum(), x)


def _linear_critic(weight: list[float], bias: float = 0.5) -> nn.Linear:
    critic = nn.Linear(len(weight), 1).double()
    with torch.no_grad():
        critic.weight.copy_(torch.tensor([weight]))
        critic.bias.fill_(bias)
    return critic


@pytest.mark.parametrize("weight", [[0.3, 0.4], [3.0, 4.0], [-1.0, 2.0, 2.0]])
def test_penalty_of_a_linear_critic_is_norm_of_w_minus_one_squared(weight: list[float]) -> None:
    critic = _linear_critic(weight)
    points = randn(6, len(weight), gen=generator(50))
    penalty = gradient_penalty(critic, points)
    norm = torch.tensor(weight, dtype=torch.float64).norm()
    torch.testing.assert_close(penalty, (norm - 1) ** 2)
    (grad_w,) = autograd.grad(penalty, critic.weight)
    torch.testing.assert_close(grad_w, 2 * (norm - 1) * critic.weight.detach() / norm)


def test_penalty_of_a_unit_slope_critic_is_zero_and_ignores_the_bias() -> None:
    critic = _linear_critic([0.6, 0.8])
    penalty = gradient_penalty(critic, randn(4, 2, gen=generator(60)))
    assert penalty.item() == pytest.approx(0.0, abs=1e-15)
    grad_w, grad_b = autograd.grad(penalty, [critic.weight, critic.bias], allow_unused=True)
    assert grad_b is None
    torch.testing.assert_close(grad_w, torch.zeros_like(grad_w))


def _penalty_point_by_point(critic: nn.Module, points: torch.Tensor) -> torch.Tensor:
    terms = []
    for point in points:
        point = point.detach().requires_grad_()
        (gradient,) = autograd.grad(critic(point).squeeze(), point, create_graph=True)
        terms.append((gradient.norm() - 1) ** 2)
    return torch.stack(terms).mean()


@pytest.mark.parametrize("seed", range(3))
def test_penalty_matches_a_loop_over_the_points_in_value_and_gradient(seed: int) -> None:
    critic = tanh_network(generator(70 + seed), [5], features=2)
    points = randn(7, 2, gen=generator(80 + seed))
    penalty, expected = gradient_penalty(critic, points), _penalty_point_by_point(critic, points)
    torch.testing.assert_close(penalty, expected)
    weights = list(critic.parameters())[:-1]  # the last bias does not change any input gradient
    for got, want in zip(autograd.grad(penalty, weights), autograd.grad(expected, weights), strict=True):
        torch.testing.assert_close(got, want)


def test_penalty_fills_no_grad_and_leaves_the_points_alone() -> None:
    critic = tanh_network(generator(90), [5], features=2)
    points = randn(3, 2, gen=generator(91))
    penalty = gradient_penalty(critic, points)
    assert penalty.requires_grad
    assert not points.requires_grad
    assert all(parameter.grad is None for parameter in critic.parameters())


def _third_of_cube(x: torch.Tensor) -> torch.Tensor:
    return x**3 / 3


@pytest.mark.parametrize("x0", [-2.0, 0.25, 1.0, 3.5])
def test_loss_with_gradient_of_a_third_of_the_cube_is_x_minus_one_squared_with_slope_two_x_minus_two(
    x0: float,
) -> None:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    z = loss_with_gradient(_third_of_cube, x)
    torch.testing.assert_close(z, torch.tensor((x0 - 1) ** 2, dtype=torch.float64))
    assert x.grad is None
    (slope,) = autograd.grad(z, x)
    torch.testing.assert_close(slope, torch.tensor(2 * (x0 - 1), dtype=torch.float64))


@pytest.mark.parametrize("x0", [-2.0, 0.25, 1.0])
def test_loss_with_gradient_of_sine_is_cos_minus_two_x_plus_one_with_slope_minus_sin_minus_two(
    x0: float,
) -> None:
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    z = loss_with_gradient(torch.sin, x)
    torch.testing.assert_close(z, torch.tensor(math.cos(x0) - 2 * x0 + 1, dtype=torch.float64))
    (slope,) = autograd.grad(z, x)
    torch.testing.assert_close(slope, torch.tensor(-math.sin(x0) - 2, dtype=torch.float64))


def test_thirty_steps_of_gradient_descent_shrink_the_distance_to_one_by_point_eight_each() -> None:
    x = torch.tensor(0.25, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.SGD([x], lr=0.1)
    for _ in range(30):
        optimizer.zero_grad()
        loss_with_gradient(_third_of_cube, x).backward()
        optimizer.step()
    assert x.item() == pytest.approx(1 - 0.75 * 0.8**30, rel=1e-12)


def _block(x: torch.Tensor) -> torch.Tensor:
    return torch.sin(x) * x


def test_reentrant_checkpoint_refuses_autograd_grad() -> None:
    x = make_x((3,))
    out = checkpoint(_block, x, use_reentrant=True)
    with pytest.raises(RuntimeError, match=r"incompatible with \.grad\(\)"):
        autograd.grad(out.sum(), x, create_graph=True)


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_backward_with_create_graph_keeps_a_graph_only_when_non_reentrant(reentrant: bool) -> None:
    x = make_x((3,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # backward(create_graph=True) warns about the cycle it makes
        checkpoint(_block, x, use_reentrant=reentrant).sum().backward(create_graph=True)
    assert (x.grad.grad_fn is None) == reentrant
    assert x.grad.requires_grad != reentrant


def test_non_reentrant_checkpoint_gives_second_derivatives() -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(checkpoint(_block, x, use_reentrant=False).sum(), x, create_graph=True)
    (second,) = autograd.grad(grad_x.sum(), x)
    (expected,) = autograd.grad(autograd.grad(_block(x).sum(), x, create_graph=True)[0].sum(), x)
    torch.testing.assert_close(second, expected)


def _leaf_after_a_gradient_penalty(use_backward: bool, reset_grad: bool) -> weakref.ref:
    w = make_x((3,))
    loss = (w**3).sum()
    if use_backward:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss.backward(create_graph=True)
    else:
        autograd.grad(loss, w, create_graph=True)
    if reset_grad:
        w.grad = None
    return weakref.ref(w)


@pytest.mark.parametrize(
    ("use_backward", "reset_grad", "kept_alive"),
    [(True, False, True), (True, True, False), (False, False, False)],
    ids=["backward", "backward_then_reset", "autograd_grad"],
)
def test_backward_with_create_graph_keeps_the_leaf_alive_until_grad_is_reset(
    use_backward: bool, reset_grad: bool, kept_alive: bool
) -> None:
    leaf = _leaf_after_a_gradient_penalty(use_backward, reset_grad)
    gc.collect()
    assert (leaf() is not None) == kept_alive


# PyTorch warns once per process, as section 2.1 says, so a fresh interpreter (about 2 s) is the only place
# where the first call is sure to be the first.
FIRST_AND_SECOND_WARNINGS = """
import warnings
import torch
for _ in range(2):
    w = torch.ones(3, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (w**3).sum().backward(create_graph=True)
    print(repr([str(warning.message) for warning in caught]))
"""


def test_backward_with_create_graph_warns_about_the_cycle_once_per_process() -> None:
    run = subprocess.run(
        [sys.executable, "-c", FIRST_AND_SECOND_WARNINGS], capture_output=True, text=True, check=True
    )
    first, second = map(ast.literal_eval, run.stdout.splitlines())
    assert len(first) == 1
    assert first[0].startswith(
        "Using backward() with create_graph=True will create a reference cycle between the parameter and its "
        "gradient which can cause a memory leak"
    )
    assert second == []


def test_compiled_function_refuses_double_backward() -> None:
    x = torch.tensor([-1.5, 0.5, 1.2], dtype=torch.float64, requires_grad=True)
    compiled = torch.compile(_block, backend="aot_eager")
    (grad_x,) = autograd.grad(compiled(x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match="does not currently support double backward"):
        autograd.grad(grad_x.sum(), x)


def test_zero_grad_set_to_none_breaks_the_cycle() -> None:
    def weak_weight_after_a_step() -> weakref.ref:
        layer = torch.nn.Linear(2, 1).double()
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            (layer(torch.ones(1, 2, dtype=torch.float64)) ** 3).sum().backward(create_graph=True)
        optimizer.zero_grad(set_to_none=True)
        return weakref.ref(layer.weight)

    weight = weak_weight_after_a_step()
    gc.collect()
    assert weight() is None
