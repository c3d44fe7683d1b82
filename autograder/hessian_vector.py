"""What the tests of lesson 05's hvp(f, x, v), the Hessian-vector product, share.

Both test cells compare the answer with torch's own product and name the usual mistakes by what they
return. The second also hands hvp an `f` that counts the backward passes through its gradient (double
backwards): one H·v needs one, with grad_outputs=v, and building the Hessian, row by row or in one batch,
one per row. Only custom Functions can count that, in reverse and in forward mode and under vmap, which
is why `f` is built here rather than written as ordinary torch code.
"""

import torch

from autograder.probe.refused import AnswerRefusedError
from autograder.wire.tensors import ATOL, RTOL, mismatch


def vhp_by_torch(f, x, v):
    """torch's vector-Hessian product vᵀH, which is H·v because H is symmetric."""
    return torch.autograd.functional.vhp(f, x, v)[1]


def gradient_by_torch(f, x, v):
    """∇f(x), which .grad holds after a first .backward()."""
    return torch.autograd.functional.vjp(f, x)[1]


# What the usual mistakes return, so that a wrong result equal to one of them is named.
GRAD_ADDS_UP = (
    "hvp returns x.grad after two .backward() calls, and .grad adds up: it holds ∇f(x) + H·v. "
    "torch.autograd.grad returns the second derivative without storing anything."
)
WEIGHTED_BY_ONES = (
    "the gradient is differentiated with grad_outputs of ones (or summed), which gives H·(1, ..., 1); "
    "weight it by v: grad_outputs=v."
)
THE_GRADIENT = (
    "the result is ∇f(x), the gradient, which is also the derivative of ∇f·v with respect to v: "
    "differentiate the gradient once more, with respect to x, with grad_outputs=v."
)
WEIGHTED_BY_X = (
    "the gradient is differentiated with grad_outputs=x, which gives H·x; weight it by v: grad_outputs=v."
)
WEIGHTED_AFTERWARDS = (
    "the result is H·(1, ..., 1) multiplied by v element by element: v weighs the product afterwards, not "
    "the gradient inside the double backward. Pass it there: grad_outputs=v."
)
TIMES_V = (
    "the result is ∇f(x) multiplied by v element by element, which uses first derivatives only: H·v needs "
    "the gradient differentiated once more, with grad_outputs=v."
)
GRADIENT_SQUARED = (
    "the result is ∇f (∇f·v), the gradient's outer product with itself applied to v, which uses first "
    "derivatives only (Gauss-Newton and Fisher approximations do): H·v needs the gradient differentiated "
    "once more, with grad_outputs=v."
)
TIMES_V_AGAIN = (
    "the result is a number, vᵀHv: H·v multiplied by v once more. Return the vector H·v, the double "
    "backward's result as it is."
)
SWAPPED = (
    "x and v are swapped: the result is H(v)·x, the Hessian at v applied to x. Differentiate at x (a copy "
    "that requires grad, x.detach().requires_grad_()) and weight by v: grad_outputs=v."
)
DOTTED_WITH_X = (
    "the gradient is dotted with x, not v: the derivative of ∇f·x is H·x + ∇f (x is in both factors). Dot "
    "it with v, (grad_x * v).sum(), or pass grad_outputs=v."
)
DOT_SQUARED = (
    "the dot product ∇f·v is squared before it is differentiated, which multiplies H·v by 2(∇f·v). "
    "Differentiate the dot product itself, (grad_x * v).sum(), or pass grad_outputs=v."
)
DIAGONAL_ONLY = (
    "the result is diag(H)·v: element i weighs only H[i, i] by v[i], where (H·v)_i = Σ_j H[i, j] v_j adds "
    "every j. One double backward with grad_outputs=v computes that sum."
)
# What usual slips return, for the value's test cell. The cell that counts backward passes refuses a wrong
# value without naming why, since this one does.
HVP_VALUE_MISTAKES = {
    GRAD_ADDS_UP: lambda f, x, v: gradient_by_torch(f, x, v) + vhp_by_torch(f, x, v),
    WEIGHTED_BY_ONES: lambda f, x, v: vhp_by_torch(f, x, torch.ones_like(v)),
    WEIGHTED_AFTERWARDS: lambda f, x, v: vhp_by_torch(f, x, torch.ones_like(v)) * v,
    THE_GRADIENT: gradient_by_torch,
    WEIGHTED_BY_X: lambda f, x, v: vhp_by_torch(f, x, x),
    TIMES_V: lambda f, x, v: gradient_by_torch(f, x, v) * v,
    GRADIENT_SQUARED: lambda f, x, v: gradient_by_torch(f, x, v) * (gradient_by_torch(f, x, v) @ v),
    TIMES_V_AGAIN: lambda f, x, v: vhp_by_torch(f, x, v) @ v,
    SWAPPED: lambda f, x, v: vhp_by_torch(f, v, x),
    DOTTED_WITH_X: lambda f, x, v: vhp_by_torch(f, x, x) + gradient_by_torch(f, x, v),
    DOT_SQUARED: lambda f, x, v: 2 * (gradient_by_torch(f, x, v) @ v) * vhp_by_torch(f, x, v),
    DIAGONAL_ONLY: lambda f, x, v: torch.autograd.functional.hessian(f, x).diagonal() * v,
}


# Said when hvp runs a second backward through f's gradient, or one for a batch of vectors at once.
_MORE_THAN_ONCE = (
    "your code ran the backward through f's gradient for more than one vector (a second pass, or a batch of "
    "vectors at once), where one H·v needs one double backward, with grad_outputs=v. Building the Hessian is "
    "the usual cause: it runs one per row of H, row by row or in one batch "
    "(torch.autograd.functional.hessian, with or without vectorize=True, or torch.func.hessian)."
)

_ONCE_MORE = "Take the gradient with create_graph=True and differentiate it once more, with grad_outputs=v."

# Said when the values come close to H·v with no backward through the gradient: only an approximation does.
_APPROXIMATED = (
    "your code ran no backward through f's gradient, as a finite difference of gradients (forward or "
    f"central) does: that only approximates H·v, whatever the step. {_ONCE_MORE}"
)

_NEVER = (
    "your code ran no backward through f's gradient: it was not differentiated again with respect to x. "
    + _ONCE_MORE
)


# Said when the one backward through f's gradient ran, as it should, but gave a wrong H·v: the value's own
# check names why, so this one does not cost the same slip twice in words.
_WRONG_ONCE = (
    "your code ran exactly one backward through f's gradient, as it should, but its H·v is wrong: {wrong}. "
    "Where the hvp_value check fails too, it names why."
)


def applying_the_second_derivative_once(hvp, f, x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """hvp(f, x, v) for an f from second_derivative_once, refused if it ran no backward through f's
    gradient (named as a finite difference only where the values come close to H·v), or more than one,
    which f stops by raising from inside hvp's own call, or if its one backward gave a wrong H·v: the
    value's test cell names that slip, so one slip is not told twice."""
    try:
        product = hvp(f, x, v)
    except RuntimeError:
        if f.applied_more_than_once():
            raise AnswerRefusedError(_MORE_THAN_ONCE) from None
        raise
    applied, expected = f.second_derivatives_applied(), f.hessian_times_uncounted(x.detach(), v)
    if applied == 0:
        raise AnswerRefusedError(_APPROXIMATED if _close_to(product, expected) else _NEVER)
    if not _close_to(product, expected, rtol=RTOL, atol=ATOL):
        got = product.detach().to(expected.dtype) if isinstance(product, torch.Tensor) else product
        raise AnswerRefusedError(_WRONG_ONCE.format(wrong=mismatch(expected, got, [], [])))
    return product


def _close_to(product, expected: torch.Tensor, rtol: float = 1e-3, atol: float = 1e-6) -> bool:
    """Whether hvp's result is H·v to within the tolerances, by default what a finite difference's step
    leaves (loosely: that only picks which cause to name)."""
    if not isinstance(product, torch.Tensor) or product.shape != expected.shape:
        return False
    return torch.allclose(product.detach().to(expected.dtype), expected, rtol=rtol, atol=atol)


def second_derivative_once(s: torch.Tensor, c: torch.Tensor):
    """f(x) = ½ xᵀSx + Σ c x³ (S symmetric), which raises if its second derivative is applied to more
    than one vector: f is a Function whose derivative, Slope, is a Function whose derivative, in reverse
    and in forward mode, is HessianTimes, which counts the vectors it is applied to."""
    products, stopped = 0, False

    def hessian_times(x, w, count):
        """H(x)·w = Sw + 6c x w (S is symmetric) for `count` vectors w, one or a batch."""
        nonlocal products, stopped
        products += count
        # vectorize=True and is_grads_batched=True hand forward a whole batch of w as one tensor.
        if products > 1 or torch._C._functorch.is_legacy_batchedtensor(w):
            stopped = True
            raise RuntimeError(_MORE_THAN_ONCE)
        return w @ s + 6 * c * x * w

    class HessianTimes(torch.autograd.Function):
        """H(x)·w, f's second derivative applied to w."""

        @staticmethod
        def forward(x, w):
            return hessian_times(x, w, 1)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)

        @staticmethod
        def backward(ctx, grad):
            # H is symmetric: its transpose, which torch.autograd.functional.hvp uses, costs nothing more.
            x, w = ctx.saved_tensors
            return 6 * c * w * grad, grad @ s + 6 * c * x * grad

        @staticmethod
        def vmap(info, in_dims, x, w):
            # torch.func.hessian's vmap counts as a batch of info.batch_size vectors.
            x, w = (
                t.expand(info.batch_size, *t.shape) if dim is None else t.movedim(dim, 0)
                for t, dim in zip((x, w), in_dims, strict=True)
            )
            return hessian_times(x, w, info.batch_size), 0

    class Slope(torch.autograd.Function):
        """∇f(x) = Sx + 3c x²: its backward and its jvp both apply f's second derivative once."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return s @ x + 3 * c * x**2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, w):
            (x,) = ctx.saved_tensors
            return HessianTimes.apply(x, w)

        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return HessianTimes.apply(x, x_t)

    class QuadraticPlusCubic(torch.autograd.Function):
        """f itself, whose derivative, in reverse and in forward mode, is Slope."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x):
            return x @ s @ x / 2 + (c * x**3).sum()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(*inputs)
            ctx.save_for_forward(*inputs)

        @staticmethod
        def backward(ctx, grad_out):
            (x,) = ctx.saved_tensors
            return grad_out * Slope.apply(x)

        @staticmethod
        def jvp(ctx, x_t):
            (x,) = ctx.saved_tensors
            return Slope.apply(x) @ x_t

    def f(x):
        return QuadraticPlusCubic.apply(x)

    f.second_derivatives_applied = lambda: products
    # H·v by its formula, outside the count: what the answer's one application must give.
    f.hessian_times_uncounted = lambda x, w: w @ s + 6 * c * x * w
    f.applied_more_than_once = lambda: stopped
    return f
