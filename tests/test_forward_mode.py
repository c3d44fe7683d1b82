"""Lesson 07_forward_mode: the reference Tanh in float64, and the PyTorch behaviour the lesson
shows (so that a PyTorch release that changes it fails here before it misleads a student)."""

import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Shape, make_grad, make_x
from torch import autograd
from torch.autograd import forward_ad
from torch.autograd.function import FunctionCtx
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp

from autograder.probe.refused import AnswerRefusedError
from autograder.tanh_code_reading import refuse_a_zero_second_derivative
from solutions.forward_mode import Tanh

# Forward mode's first use loads PyTorch's own decompositions through torch.jit.script, which warns.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def _first(x: torch.Tensor) -> torch.Tensor:
    return 1 - torch.tanh(x) ** 2


def _second(x: torch.Tensor) -> torch.Tensor:
    return -2 * torch.tanh(x) * _first(x)


TANH = Case(Tanh.apply, torch.tanh, _first, _second)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_tanh_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(TANH, shape)


def test_tanh_passes_every_mode_of_gradcheck_and_gradgradcheck() -> None:
    x = make_x((2, 3))
    assert autograd.gradcheck(Tanh.apply, x, check_forward_ad=True, check_backward_ad=True)
    assert autograd.gradgradcheck(Tanh.apply, x, check_fwd_over_rev=True, check_rev_over_rev=True)


@pytest.mark.parametrize("shape", SHAPES)
def test_tanh_jvp_is_the_tangent_times_one_minus_tanh_squared(shape: Shape) -> None:
    x, v = make_x(shape).detach(), make_grad(shape, seed=1)
    out, tangent = jvp(Tanh.apply, (x,), (v,))
    torch.testing.assert_close(out, torch.tanh(x))
    torch.testing.assert_close(tangent, v * _first(x))
    with forward_ad.dual_level():
        dual_tangent = forward_ad.unpack_dual(Tanh.apply(forward_ad.make_dual(x, v))).tangent
    torch.testing.assert_close(dual_tangent, v * _first(x))


def test_tanh_jacobians_by_jacfwd_and_jacrev_are_diagonal() -> None:
    x = make_x((4,)).detach()
    torch.testing.assert_close(jacfwd(Tanh.apply)(x), torch.diag(_first(x)))
    torch.testing.assert_close(jacrev(Tanh.apply)(x), torch.diag(_first(x)))


def test_tanh_hessian_by_torch_func_is_forward_over_reverse() -> None:
    x, v = make_x((4,)).detach(), make_grad((4,), seed=1)
    torch.testing.assert_close(hessian(lambda y: Tanh.apply(y).sum())(x), torch.diag(_second(x)))
    _, product = jvp(grad(lambda y: Tanh.apply(y).sum()), (x,), (v,))
    torch.testing.assert_close(product, _second(x) * v)


def test_tanh_tangent_is_differentiable_in_reverse_mode() -> None:
    x, v = make_x((4,)), make_grad((4,), seed=1)
    with forward_ad.dual_level():
        tangent = forward_ad.unpack_dual(Tanh.apply(forward_ad.make_dual(x, v))).tangent
    (grad_x,) = autograd.grad(tangent.sum(), x)
    torch.testing.assert_close(grad_x, v * _second(x.detach()))
    torch.testing.assert_close(
        jacrev(jacfwd(lambda y: Tanh.apply(y).sum()))(x.detach()), torch.diag(_second(x.detach()))
    )


def test_jvp_and_vjp_give_a_column_and_a_row_of_the_jacobian() -> None:
    a = make_grad((3, 5), seed=4)

    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a @ x)

    x = make_x((5,)).detach()
    jacobian = jacrev(f)(x)
    e1, u = torch.eye(5, dtype=torch.float64)[1], torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)
    torch.testing.assert_close(jvp(f, (x,), (e1,))[1], jacobian[:, 1])
    _, vjp_fn = vjp(f, x)
    torch.testing.assert_close(vjp_fn(u)[0], jacobian[2])
    torch.testing.assert_close(jacfwd(f)(x), jacobian)


def _tanh_variant(jvp_rule=None, save_for_forward: bool = True, vmap_rule: bool = True) -> type:
    """A Tanh whose jvp is `jvp_rule(result, x_t)` (absent if None), with or without save_for_forward."""

    class Variant(Tanh):
        generate_vmap_rule = vmap_rule

        @staticmethod
        def setup_context(ctx: FunctionCtx, inputs: tuple, output: torch.Tensor) -> None:
            ctx.save_for_backward(output)
            if save_for_forward:
                ctx.save_for_forward(output)

    if jvp_rule is None:
        Variant.jvp = torch.autograd.Function.jvp
    else:
        Variant.jvp = staticmethod(lambda ctx, x_t: jvp_rule(ctx.saved_tensors[0], x_t))
    return Variant


def _under_no_grad(result: torch.Tensor, x_t: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return x_t * (1 - result**2)


def test_a_jvp_under_no_grad_serves_forward_over_reverse_but_not_reverse_over_forward() -> None:
    variant = _tanh_variant(_under_no_grad)
    x = make_x((4,))
    assert autograd.gradgradcheck(variant.apply, x, check_fwd_over_rev=True)
    torch.testing.assert_close(
        hessian(lambda y: variant.apply(y).sum())(x.detach()), torch.diag(_second(x.detach()))
    )
    reverse_over_forward = jacrev(jacfwd(lambda y: variant.apply(y).sum()))(x.detach())
    torch.testing.assert_close(reverse_over_forward, torch.zeros(4, 4, dtype=torch.float64))
    with forward_ad.dual_level():
        tangent = forward_ad.unpack_dual(variant.apply(forward_ad.make_dual(x, torch.ones_like(x)))).tangent
    assert not tangent.requires_grad


def test_an_ignored_tangent_passes_reverse_mode_checks_only() -> None:
    variant = _tanh_variant(lambda result, x_t: 1 - result**2)
    x = make_x((4,))
    assert autograd.gradgradcheck(variant.apply, x)
    assert not autograd.gradcheck(variant.apply, x, check_forward_ad=True, raise_exception=False)
    assert not autograd.gradgradcheck(variant.apply, x, check_fwd_over_rev=True, raise_exception=False)


def test_forward_over_forward_through_a_custom_function_is_silently_zero() -> None:
    x = make_x((4,)).detach()
    one = torch.ones_like(x)
    _, builtin = jvp(lambda y: jvp(torch.tanh, (y,), (one,))[1], (x,), (one,))
    _, custom = jvp(lambda y: jvp(Tanh.apply, (y,), (one,))[1], (x,), (one,))
    torch.testing.assert_close(builtin, _second(x))
    torch.testing.assert_close(custom, torch.zeros_like(x))
    torch.testing.assert_close(
        jacfwd(jacfwd(lambda y: Tanh.apply(y).sum()))(x), torch.zeros(4, 4, dtype=torch.float64)
    )


def test_jvp_without_save_for_forward_finds_no_saved_tensor() -> None:
    variant = _tanh_variant(lambda result, x_t: x_t * (1 - result**2), save_for_forward=False)
    x = make_x((3,)).detach()
    torch.testing.assert_close(jacrev(variant.apply)(x), torch.diag(_first(x)))
    with pytest.raises(IndexError):
        jvp(variant.apply, (x,), (torch.ones_like(x),))


def test_forward_mode_needs_a_jvp_staticmethod() -> None:
    variant = _tanh_variant(None)
    x = make_x((3,)).detach()
    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        jvp(variant.apply, (x,), (torch.ones_like(x),))


def test_jacfwd_needs_a_vmap_rule_and_jacrev_does_not() -> None:
    variant = _tanh_variant(lambda result, x_t: x_t * (1 - result**2), vmap_rule=False)
    x = make_x((3,)).detach()
    torch.testing.assert_close(jacrev(variant.apply)(x), torch.diag(_first(x)))
    with pytest.raises(RuntimeError, match="does not have vmap support"):
        jacfwd(variant.apply)(x)


def _tanh_written(setup_context, backward, jvp) -> type:
    """A Tanh with the given rules, as a student's cell would define it."""
    return type(
        "Tanh",
        (torch.autograd.Function,),
        {
            "forward": staticmethod(lambda x: torch.tanh(x)),
            "setup_context": staticmethod(setup_context),
            "backward": staticmethod(backward),
            "jvp": staticmethod(jvp),
        },
    )


def _saves_output(ctx, inputs, output):
    ctx.save_for_backward(output)
    ctx.save_for_forward(output)


def _saves_a_clone(ctx, inputs, output):
    ctx.save_for_backward(output.clone())
    ctx.save_for_forward(output.clone())


def _saves_a_tanh_of_a_detached_input(ctx, inputs, output):
    ctx.save_for_backward(torch.tanh(inputs[0].detach()))
    ctx.save_for_forward(torch.tanh(inputs[0].detach()))


def _backward(ctx, grad_out):
    (result,) = ctx.saved_tensors
    return grad_out * (1 - result**2)


def _backward_through_data(ctx, grad_out):
    (result,) = ctx.saved_tensors
    return grad_out * (1 - result.data**2)


def _backward_through_numpy(ctx, grad_out):
    (result,) = ctx.saved_tensors
    return grad_out * torch.as_tensor(1 - result.detach().numpy() ** 2)


def _jvp(ctx, x_t):
    (result,) = ctx.saved_tensors
    return x_t * (1 - result**2)


def _jvp_without_its_tangent(ctx, x_t):
    (result,) = ctx.saved_tensors
    return torch.zeros_like(result)


@pytest.mark.parametrize(
    ("rules", "rule", "cause"),
    [
        (
            (_saves_a_clone, _backward, _jvp),
            "backward",
            "setup_context saves a copy of the output (`.clone()`",
        ),
        (
            (_saves_a_tanh_of_a_detached_input, _backward, _jvp),
            "jvp",
            "setup_context saves a tanh it computed itself of a detached input",
        ),
        ((_saves_output, _backward_through_data, _jvp), "backward", "backward uses `.data`"),
        (
            (_saves_output, _backward_through_numpy, _jvp),
            "backward",
            "backward uses `.detach()` and `.numpy()`",
        ),
        ((_saves_output, _backward, _jvp_without_its_tangent), "backward", "jvp never reads its tangent x_t"),
    ],
)
def test_a_zero_second_derivative_is_refused_with_the_cause_its_code_shows(
    rules, rule: str, cause: str
) -> None:
    function = _tanh_written(*rules)
    with pytest.raises(
        AnswerRefusedError, match="the Hessian is 0 though the first derivative is right"
    ) as refused:
        refuse_a_zero_second_derivative(
            function, rule, "the Hessian", torch.ones(3), torch.ones(3), torch.zeros(3, 3)
        )
    assert cause in str(refused.value)


def test_a_nonzero_second_derivative_or_a_wrong_first_one_is_not_refused() -> None:
    function = _tanh_written(_saves_a_clone, _backward, _jvp)
    refuse_a_zero_second_derivative(function, "backward", "H·v", torch.ones(3), torch.ones(3), torch.ones(3))
    refuse_a_zero_second_derivative(
        function, "backward", "H·v", torch.zeros(3), torch.ones(3), torch.zeros(3)
    )
    refuse_a_zero_second_derivative(
        function, "backward", "H·v", torch.ones(()), torch.ones(3), torch.zeros(3)
    )
