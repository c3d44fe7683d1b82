"""Lesson 06_beyond_the_basics: the reference ScaledSquare and TanhInPlace in float64, and the PyTorch
behaviour the lesson shows (so that a PyTorch release that changes it fails here before it misleads a
student)."""

import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Shape, make_grad, make_x
from torch import autograd
from torch.autograd.function import FunctionCtx, once_differentiable
from torch.func import grad, vmap

from solutions.beyond_the_basics import ScaledSquare, TanhInPlace

W = torch.tensor(1.5, dtype=torch.float64)
# w is a constant here, so these also run the path where backward skips grad_w.
SCALED_SQUARE_IN_X = Case(
    lambda x: ScaledSquare.apply(x, W),
    lambda x: W * x**2,
    lambda x: 2 * W * x,
    lambda x: torch.full_like(x, 2 * W.item()),
)


def make_pair(shape: Shape = (4,)) -> tuple[torch.Tensor, torch.Tensor]:
    """x and w, float64 leaves that require grad, different from each other."""
    return make_x(shape), make_grad(shape, seed=3).requires_grad_()


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_scaled_square_matches_closed_forms_in_x(check: Check, shape: Shape) -> None:
    check(SCALED_SQUARE_IN_X, shape)


def test_scaled_square_passes_gradcheck_and_gradgradcheck_in_both_inputs() -> None:
    x, w = make_pair()
    assert autograd.gradcheck(ScaledSquare.apply, (x, w))
    assert autograd.gradgradcheck(ScaledSquare.apply, (x, w))


def test_scaled_square_mixed_second_derivatives() -> None:
    x, w = make_pair()
    grad_out = make_grad((4,), seed=1)
    grad_x, grad_w = autograd.grad(ScaledSquare.apply(x, w), (x, w), grad_out, create_graph=True)
    (w_of_grad_x,) = autograd.grad(grad_x.sum(), w)
    (x_of_grad_w,) = autograd.grad(grad_w.sum(), x)
    torch.testing.assert_close(w_of_grad_x, 2 * grad_out * x.detach())
    torch.testing.assert_close(x_of_grad_w, 2 * grad_out * x.detach())


@pytest.mark.parametrize("needed", [0, 1], ids=["only_x", "only_w"])
def test_backward_returns_none_for_the_input_that_does_not_require_grad(needed: int) -> None:
    x, w = make_pair()
    inputs = [x, w]
    inputs[1 - needed] = inputs[1 - needed].detach()
    out = ScaledSquare.apply(*inputs)
    grad_out = make_grad((4,), seed=1)
    # grad_fn is the ctx that setup_context filled; calling backward on it shows what it returns.
    grads = ScaledSquare.backward(out.grad_fn, grad_out)
    expected = (grad_out * 2 * w * x, grad_out * x**2)
    assert grads[1 - needed] is None
    torch.testing.assert_close(grads[needed], expected[needed])


@pytest.mark.parametrize("changed", [0, 1], ids=["x", "w"])
def test_scaled_square_refuses_backward_after_an_input_changed_in_place(changed: int) -> None:
    x, w = make_pair()
    inputs = [x.clone(), w.clone()]
    out = ScaledSquare.apply(*inputs)
    inputs[changed].add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        autograd.grad(out.sum(), x)


def test_needs_input_grad_follows_requires_grad_not_the_gradients_asked_for() -> None:
    seen = []

    class Spy(torch.autograd.Function):
        @staticmethod
        def forward(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return x * w

        @staticmethod
        def setup_context(ctx: FunctionCtx, inputs: tuple, output: torch.Tensor) -> None:
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> tuple:
            seen.append(ctx.needs_input_grad)
            x, w = ctx.saved_tensors
            return grad_out * w, grad_out * x

    x, w = make_pair()
    autograd.grad(Spy.apply(x, w).sum(), x)
    autograd.grad(Spy.apply(x, w.detach()).sum(), x)
    assert seen == [(True, True), (True, False)]


def test_torch_func_differentiates_scaled_square_twice() -> None:
    x, w = (t.detach() for t in make_pair())
    second_in_x = vmap(grad(grad(ScaledSquare.apply)))(x, w)
    mixed = vmap(grad(grad(ScaledSquare.apply), argnums=1))(x, w)
    second_in_w = vmap(grad(grad(ScaledSquare.apply, argnums=1), argnums=1))(x, w)
    torch.testing.assert_close(second_in_x, 2 * w)
    torch.testing.assert_close(mixed, 2 * x)
    torch.testing.assert_close(second_in_w, torch.zeros_like(w))


def test_vmap_batches_scaled_square_with_a_shared_w() -> None:
    x = make_x((5, 3)).detach()
    w = torch.tensor(-0.5, dtype=torch.float64)
    torch.testing.assert_close(vmap(ScaledSquare.apply, in_dims=(0, None))(x, w), w * x**2)


class _OldStyleScaledSquare(torch.autograd.Function):
    """ScaledSquare with forward(ctx, ...): fine for autograd, refused by torch.func."""

    generate_vmap_rule = True

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x, w)
        return w * x**2

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, w = ctx.saved_tensors
        return grad_out * 2 * w * x, grad_out * x**2


def test_torch_func_refuses_a_forward_that_takes_ctx() -> None:
    assert autograd.gradgradcheck(_OldStyleScaledSquare.apply, make_pair())
    x, w = (t.detach() for t in make_pair())
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        grad(_OldStyleScaledSquare.apply)(x[0], w[0])
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        vmap(_OldStyleScaledSquare.apply)(x, w)


def test_grad_needs_no_vmap_rule_but_vmap_does() -> None:
    class NoVmapRule(ScaledSquare):
        generate_vmap_rule = False

    x, w = (t.detach() for t in make_pair())
    assert grad(grad(NoVmapRule.apply))(x[0], w[0]).item() == pytest.approx(2 * w[0].item())
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        vmap(NoVmapRule.apply)(x, w)


class _OnceScaledSquare(ScaledSquare):
    """ScaledSquare whose backward is marked once_differentiable."""

    @staticmethod
    @once_differentiable
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, w = ctx.saved_tensors
        return grad_out * 2 * w * x, grad_out * x**2


def _once_grad_x() -> tuple[torch.Tensor, torch.Tensor]:
    """x and a grad_x of _OnceScaledSquare whose incoming gradient requires grad (a loss after it)."""
    x = make_x((3,))
    (grad_x,) = autograd.grad(_OnceScaledSquare.apply(x, W).sin().sum(), x, create_graph=True)
    return x, grad_x


def test_once_differentiable_raises_its_error_on_backward() -> None:
    _, grad_x = _once_grad_x()
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked"):
        grad_x.sum().backward()


def test_once_differentiable_gradient_is_unconnected_for_autograd_grad() -> None:
    x, grad_x = _once_grad_x()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        autograd.grad(grad_x.sum(), x)


def test_once_differentiable_without_a_downstream_loss_gives_a_constant_gradient() -> None:
    x = make_x((3,))
    (grad_x,) = autograd.grad(_OnceScaledSquare.apply(x, W).sum(), x, create_graph=True)
    assert not grad_x.requires_grad


def test_once_differentiable_second_derivative_is_silently_zero_under_torch_func() -> None:
    x = make_x((3,)).detach()
    second = vmap(grad(grad(_OnceScaledSquare.apply)), in_dims=(0, None))(x, W)
    torch.testing.assert_close(second, torch.zeros_like(x))
    assert not autograd.gradgradcheck(_OnceScaledSquare.apply, (make_x((3,)), W), raise_exception=False)


def test_once_differentiable_composed_is_silently_wrong_for_autograd_grad_and_raises_on_backward() -> None:
    """x * f(x): autograd.grad finds a path to x around the Error node, which hangs from a fresh leaf, and
    skips it; backward runs every node and raises; gradgradcheck catches the wrong value."""
    x = make_x((3,))
    seconds = []
    for function in (ScaledSquare, _OnceScaledSquare):
        (slope,) = autograd.grad((function.apply(x, W) * x).sum(), x, create_graph=True)
        seconds.append(autograd.grad(slope.sum(), x, retain_graph=True)[0])
    right, through_once = seconds
    torch.testing.assert_close(right, 6 * W * x)
    assert not torch.allclose(through_once, right)
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that was marked"):
        slope.sum().backward()
    assert not autograd.gradgradcheck(
        lambda t: _OnceScaledSquare.apply(t, W) * t, (x,), raise_exception=False
    )


@pytest.mark.parametrize("marked", [False, True], ids=["unmarked", "marked"])
def test_a_float_output_without_derivative_needs_the_mark_to_refuse_differentiation(marked: bool) -> None:
    class ClipWithMask(torch.autograd.Function):
        @staticmethod
        def forward(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            inside = (x.abs() < 1).to(x.dtype)
            return x * inside, inside

        @staticmethod
        def setup_context(ctx: FunctionCtx, inputs: tuple, output: tuple) -> None:
            _, inside = output
            if marked:
                ctx.mark_non_differentiable(inside)
            ctx.save_for_backward(inside)

        @staticmethod
        def backward(ctx: FunctionCtx, grad_out: torch.Tensor, grad_inside: torch.Tensor) -> torch.Tensor:
            (inside,) = ctx.saved_tensors
            return grad_out * inside

    x = make_x((3,))
    _, inside = ClipWithMask.apply(x)
    assert inside.requires_grad != marked
    if marked:
        with pytest.raises(RuntimeError, match="does not require grad"):
            autograd.grad(inside.sum(), x)
    else:
        torch.testing.assert_close(autograd.grad(inside.sum(), x)[0], torch.zeros_like(x))


def test_an_integer_output_has_no_grad_fn_without_the_mark() -> None:
    class MaxWithIndex(torch.autograd.Function):
        @staticmethod
        def forward(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return x.max(dim=-1)

        @staticmethod
        def setup_context(ctx: FunctionCtx, inputs: tuple, output: tuple) -> None:
            ctx.save_for_backward(output[1])
            ctx.input_shape = inputs[0].shape

        @staticmethod
        def backward(ctx: FunctionCtx, grad_values: torch.Tensor, grad_index: torch.Tensor) -> torch.Tensor:
            (index,) = ctx.saved_tensors
            grad_x = grad_values.new_zeros(ctx.input_shape)
            return grad_x.scatter(-1, index.unsqueeze(-1), grad_values.unsqueeze(-1))

    x = make_x((2, 3))
    values, index = MaxWithIndex.apply(x)
    assert values.requires_grad
    assert not index.requires_grad
    assert index.grad_fn is None
    assert autograd.gradgradcheck(MaxWithIndex.apply, (x,))


def _tanh_slope(x: torch.Tensor) -> torch.Tensor:
    return 1 - torch.tanh(x) ** 2


# In place on a leaf that requires grad is refused, as for torch.tanh_: the Function gets a copy.
TANH_IN_PLACE = Case(
    lambda x: TanhInPlace.apply(x.clone()),
    torch.tanh,
    _tanh_slope,
    lambda x: -2 * torch.tanh(x) * _tanh_slope(x),
)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_tanh_in_place_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(TANH_IN_PLACE, shape)


def test_tanh_in_place_gives_the_callers_tensor_the_new_history() -> None:
    x = make_x((4,))
    y = x * 1.0
    out = TanhInPlace.apply(y)
    assert out is y
    torch.testing.assert_close(y, torch.tanh(x))
    torch.testing.assert_close(autograd.grad(y.sum(), x)[0], _tanh_slope(x.detach()))


class _ExpInPlace(torch.autograd.Function):
    """exp written into x, with forward(ctx, x) so that it may skip mark_dirty."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: torch.Tensor) -> torch.Tensor:
        ctx.save_for_backward(x.exp_())
        return x

    @staticmethod
    def backward(ctx: FunctionCtx, grad_out: torch.Tensor) -> torch.Tensor:
        (result,) = ctx.saved_tensors
        return grad_out * result


def test_without_mark_dirty_the_callers_tensor_keeps_its_old_history() -> None:
    x = make_x((3,))
    y = x * 2
    out = _ExpInPlace.apply(y)
    assert out is not y
    torch.testing.assert_close(y, torch.exp(2 * x))
    torch.testing.assert_close(
        autograd.grad(out.sum(), x, retain_graph=True)[0], 2 * torch.exp(2 * x.detach())
    )
    torch.testing.assert_close(autograd.grad(y.sum(), x)[0], torch.full_like(x, 2.0))


def test_torch_func_differentiates_tanh_in_place_of_a_copy_twice() -> None:
    second = grad(grad(lambda point: TanhInPlace.apply(point.clone())))
    x = make_x((4,)).detach()
    got = torch.stack([second(point) for point in x])
    torch.testing.assert_close(got, -2 * torch.tanh(x) * _tanh_slope(x))


def test_torch_func_refuses_an_in_place_function_whose_forward_takes_ctx() -> None:
    with pytest.raises(RuntimeError, match="it must override the setup_context staticmethod"):
        grad(lambda point: _ExpInPlace.apply(point.clone()))(make_x(()).detach())


def test_new_style_refuses_to_save_an_unmarked_input_returned_as_output() -> None:
    class Unmarked(TanhInPlace):
        @staticmethod
        def setup_context(ctx: FunctionCtx, inputs: tuple, output: torch.Tensor) -> None:
            ctx.save_for_backward(output)

    with pytest.raises(RuntimeError, match="returned as-is as output is being saved for backward"):
        Unmarked.apply(make_x((3,)) * 1.0)


@pytest.mark.parametrize("materialize", [True, False])
def test_set_materialize_grads_false_hands_backward_none(materialize: bool) -> None:
    received = []

    class SinCos(torch.autograd.Function):
        @staticmethod
        def forward(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            return torch.sin(x), torch.cos(x)

        @staticmethod
        def setup_context(ctx: FunctionCtx, inputs: tuple, output: tuple) -> None:
            ctx.set_materialize_grads(materialize)
            ctx.save_for_backward(inputs[0])

        @staticmethod
        def backward(ctx: FunctionCtx, grad_sin: torch.Tensor, grad_cos: torch.Tensor | None) -> torch.Tensor:
            received.append(grad_cos)
            (x,) = ctx.saved_tensors
            return grad_sin * torch.cos(x)

    x = make_x((3,))
    sin, _ = SinCos.apply(x)
    autograd.grad(sin.sum(), x)
    if materialize:
        torch.testing.assert_close(received[0], torch.zeros_like(x))
    else:
        assert received == [None]


@pytest.mark.parametrize("seed", range(20))
def test_pairs_through_zero_put_a_zero_in_x_and_another_in_w(seed: int) -> None:
    """A division by x or by w is nan where it is 0, and a factor x * w is 0 at no more than two elements."""
    from autograder.two_inputs import random_pair_through_zero

    x, w, grad_out = random_pair_through_zero(torch.Generator().manual_seed(seed))
    assert x.numel() >= 3
    assert x.shape == w.shape == grad_out.shape
    assert int((x == 0).sum()) == 1
    assert int((w == 0).sum()) == 1
    assert bool(((x * w) != 0).any())
    assert not bool(((x == 0) & (w == 0)).any())


def test_grad_w_with_grad_xs_formula_is_not_taken_for_a_grad_x_thrown_away() -> None:
    """Where only w requires grad, a grad_w written with grad_x's formula is returned, not computed for
    nothing: which gradients backward returns is right, and the derivative checks name the formula."""
    from autograder.two_inputs import gradients_returned

    class GradWWithGradXsFormula(ScaledSquare):
        @staticmethod
        def backward(ctx, grad_out):
            x, w = ctx.saved_tensors
            grad_x = grad_out * 2 * w * x if ctx.needs_input_grad[0] else None
            grad_w = grad_out * 2 * w * x if ctx.needs_input_grad[1] else None
            return grad_x, grad_w

    x = torch.linspace(-2, 2, 5, dtype=torch.float64)
    w = torch.linspace(0.5, 1.5, 5, dtype=torch.float64, requires_grad=True)
    grad_out = torch.linspace(1, 2, 5, dtype=torch.float64)
    returned = gradients_returned(GradWWithGradXsFormula, x, w, grad_out)
    assert returned.tolist() == [0.0, 1.0]
