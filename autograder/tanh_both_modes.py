"""What the tests of lesson 07's Tanh, the Function with both rules, backward and jvp, share.

Each slip in writing tanh's derivative is kept here once, as the derivative it gives, so that every test
cell names it by the same cause, whichever way of differentiating meets it first: a first derivative,
forward mode, forward over reverse or reverse over forward. What a slip makes of each is derived here from
that derivative. What the checks refuse on the student's side, reading the answer's own Tanh, is in
tanh_code_reading.
"""

from collections.abc import Callable

import torch

# How either rule may write tanh's derivative wrong, as what it gives at x ({rule}: backward or jvp;
# {what}: what that rule returns).
_SLOPES: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "{rule} reads the saved input as if it were the output: save the output, tanh(x), and read it as "
    "result": lambda x: 1 - x**2,
    "{rule} squares 1 - result; tanh's derivative is 1 - result**2": lambda x: (1 - torch.tanh(x)) ** 2,
    "{rule} multiplies by the output itself, exp's rule; tanh's derivative is 1 - result**2": torch.tanh,
    "{rule} uses tanh's second derivative, -2 result (1 - result**2); the {what} needs the first": (
        lambda x: -2 * torch.tanh(x) * (1 - torch.tanh(x) ** 2)
    ),
    "{rule}'s {what} has the wrong sign: tanh's derivative is 1 - result**2, not result**2 - 1": (
        lambda x: torch.tanh(x) ** 2 - 1
    ),
    "{rule} applies tanh (or cosh) to the saved output as if it were x: 1 - tanh(result)**2 equals "
    "1 / cosh(result)**2; written with the output, the derivative is 1 - result**2": (
        lambda x: 1 / torch.cosh(torch.tanh(x)) ** 2
    ),
    "{rule} uses 1 + result**2, a wrong sign inside: tanh's derivative is 1 - result**2": (
        lambda x: 1 + torch.tanh(x) ** 2
    ),
    "{rule} uses 1 - result, not 1 - result**2: tanh's derivative squares the output": (
        lambda x: 1 - torch.tanh(x)
    ),
    "{rule} drops the 1 - of tanh's derivative: it is 1 - result**2, not result**2": (
        lambda x: torch.tanh(x) ** 2
    ),
    "{rule}'s {what} is twice the right one: tanh's derivative is 1 - result**2, with no factor 2": (
        lambda x: 2 * (1 - torch.tanh(x) ** 2)
    ),
}

# backward's slips: the derivative it multiplies grad_out by, at x.
BACKWARD_SLIPS = {cause.format(rule="backward", what="gradient"): slope for cause, slope in _SLOPES.items()}


def _times_the_tangent(slope: Callable) -> Callable:
    return lambda x, x_t: x_t * slope(x)


# What every slip that sums or reshapes jvp's tangent is told to do instead.
SHAPED_LIKE_THE_OUTPUT = (
    "jvp must return one tangent shaped like the output: x_t * (1 - result**2), element by element, no sum"
)
# jvp's slips: the tangent it returns for x and the input's tangent x_t.
JVP_SLIPS = {
    cause.format(rule="jvp", what="tangent"): _times_the_tangent(slope) for cause, slope in _SLOPES.items()
} | {
    "jvp returns the derivative without multiplying by the tangent: the output moves by tanh's derivative "
    "times how far the input moves, x_t": lambda x, x_t: 1 - torch.tanh(x) ** 2,
    "jvp returns the tangent x_t as it came: the output moves by tanh's derivative times how far the input "
    "moves, x_t": lambda x, x_t: x_t,
    "jvp's formula misses its parentheses: x_t * 1 - result**2 subtracts result**2 from the tangent; the "
    "tangent multiplies the whole derivative": lambda x, x_t: x_t - torch.tanh(x) ** 2,
    "jvp adds the tangent to the derivative; it multiplies them": (
        lambda x, x_t: x_t + 1 - torch.tanh(x) ** 2
    ),
    "jvp applies tanh to the tangent x_t: the derivative is read from the saved output tanh(x), and the "
    "tangent only multiplies it": lambda x, x_t: x_t * (1 - torch.tanh(x_t) ** 2),
    "jvp returns tanh's derivative at the tangent, 1 - tanh(x_t)**2: the derivative is read from the saved "
    "output tanh(x), and the tangent multiplies it, x_t * (1 - result**2)": (
        lambda x, x_t: 1 - torch.tanh(x_t) ** 2
    ),
    f"jvp sums the derivative ((1 - result**2).sum()): {SHAPED_LIKE_THE_OUTPUT}": (
        lambda x, x_t: x_t * (1 - torch.tanh(x) ** 2).sum()
    ),
    "jvp sums the tangent it returns and spreads that one number over the output: "
    f"{SHAPED_LIKE_THE_OUTPUT}": (
        lambda x, x_t: (x_t * (1 - torch.tanh(x) ** 2)).sum() * torch.ones_like(x_t)
    ),
}
# Slips a Jacobian's or a Hessian's unit tangents hide or mistake for another (e_j * e_j = e_j, and e_j sums
# to 1, as if jvp ignored it): only a tangent along a v whose entries differ and do not sum to 1 shows them.
JVP_SLIPS_UNIT_TANGENTS_HIDE = {
    "jvp multiplies by the tangent twice: the output's tangent is linear in x_t, one factor of it": (
        lambda x, x_t: x_t * x_t * (1 - torch.tanh(x) ** 2)
    ),
    "jvp sums the tangent (x_t.sum()): each output moves with its own input only, so the tangent multiplies "
    "the derivative element by element, with no sum": lambda x, x_t: x_t.sum() * (1 - torch.tanh(x) ** 2),
}

# A jvp that changes the saved output in place, which is the caller's output and what backward reads: each
# changes the tensor it is given, tanh(x), as that jvp does, and returns it. The tangent jvp returns is right.
OUTPUT_CHANGED_BY_JVP = "jvp changes the saved output in place (result.square_(), result **= 2)"
CHANGED_OUTPUTS = {
    OUTPUT_CHANGED_BY_JVP: lambda result: result.square_(),
    "jvp changes the saved output in place into its slope (result.square_().neg_().add_(1))": (
        lambda result: result.square_().neg_().add_(1)
    ),
}
# What to do instead, said after each of those slips.
INTO_A_NEW_TENSOR = "compute into a new tensor, 1 - result**2."
# Where a changed output shows when the tangent is right: in what the caller gets.
THE_CALLER_GETS_IT = f"and the caller gets that changed output: {INTO_A_NEW_TENSOR}"


def differentiated_as(slope: Callable) -> Callable:
    """x -> tanh(x), differentiated once as slope(x): what a backward that returns grad_out * slope(x)
    gives autograd."""
    return lambda x: torch.tanh(x).detach() + (x - x.detach()) * slope(x.detach())


def _derivative(slope: Callable, x: torch.Tensor) -> torch.Tensor:
    """slope'(x), element by element."""
    leaf = x.detach().requires_grad_()
    return torch.autograd.grad(slope(leaf).sum(), leaf)[0]


def hvp_when_jvp_gives(tangent: Callable) -> Callable:
    """H·v by forward over reverse when jvp returns tangent(x, x_t): backward's 1 - result**2 moves by
    -2 result times the tangent jvp gave the saved output."""
    return lambda x, v: -2 * torch.tanh(x) * tangent(x, v)


def hessian_when_jvp_gives(tangent: Callable) -> Callable:
    """The Hessian of Tanh's sum by forward over reverse when jvp returns tangent(x, x_t): a column per
    unit x_t."""

    def hessian(x, v):
        units = torch.eye(len(x), dtype=x.dtype)
        return torch.stack([hvp_when_jvp_gives(tangent)(x, unit) for unit in units], dim=1)

    return hessian


def hvp_when_backward_gives(slope: Callable) -> Callable:
    """H·v by forward over reverse when backward returns grad_out * slope(x) and jvp is right: the
    tangent of that gradient along v."""
    return lambda x, v: _derivative(slope, x) * v


def hessian_when_backward_gives(slope: Callable) -> Callable:
    """The Hessian of Tanh's sum by forward over reverse when backward returns grad_out * slope(x)."""
    return lambda x, v: torch.diag(_derivative(slope, x))


def hvp_when_backward_reads(changed: Callable) -> Callable:
    """H·v by forward over reverse when jvp changed the saved output into changed(tanh(x)) in place: the
    right tangent, times backward's -2 result, of the changed output."""
    return lambda x, v: -2 * changed(torch.tanh(x)) * (1 - torch.tanh(x) ** 2) * v


def hessian_when_backward_reads(changed: Callable) -> Callable:
    """The Hessian of Tanh's sum by forward over reverse when jvp changed the saved output in place."""
    return lambda x, v: torch.diag(hvp_when_backward_reads(changed)(x, torch.ones_like(x)))


def tangent_when_backward_gives(slope: Callable) -> Callable:
    """The right tangent v (1 - tanh²(x)), differentiated by reverse mode through a backward that returns
    grad_out * slope(x)."""

    def tangent(x, v):
        return v * (1 - differentiated_as(slope)(x) ** 2)

    return tangent


def _right_slope(x: torch.Tensor) -> torch.Tensor:
    """tanh's derivative at x: the gradient of Tanh's sum where backward is right."""
    return 1 - torch.tanh(x) ** 2


def _by_columns(tangent: Callable) -> Callable:
    """x -> the matrix whose column j is tangent(x, e_j): a Jacobian by forward mode, one unit tangent per
    input."""

    def columns(x):
        return torch.stack([tangent(x, unit) for unit in torch.eye(len(x), dtype=x.dtype)], dim=1)

    return columns


def jacobian_slips() -> dict[str, Callable]:
    """What each slip of jvp makes of Tanh's Jacobian by jacfwd, one unit tangent per input."""
    return {f"{slip}.": (lambda x, v, t=tangent: _by_columns(t)(x)) for slip, tangent in JVP_SLIPS.items()}


def _with_gradient(gradient: Callable, second: Callable) -> Callable:
    """(x, v) -> (the gradient of Tanh's sum, a second derivative): the gradient tells a slip of backward
    from one of jvp where both give the same second derivative."""
    return lambda x, v: (gradient(x), second(x, v))


class _TanhSavingItsOutput(torch.autograd.Function):
    """tanh saving its output for both rules, as the lesson's answer does: the base of the slipped Tanh
    Functions whose results the slip tables take by running them."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return torch.tanh(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)


def _tanh_whose_jvp_changes_its_output(changed: Callable) -> type[torch.autograd.Function]:
    """tanh whose jvp, right otherwise, changes the saved output in place into changed(output)."""

    class TanhChangingItsOutput(_TanhSavingItsOutput):
        @staticmethod
        def backward(ctx, grad_out):
            (result,) = ctx.saved_tensors
            return grad_out * (1 - result**2)

        @staticmethod
        def jvp(ctx, x_t):
            (result,) = ctx.saved_tensors
            tangent = x_t * (1 - result**2)
            changed(result)
            return tangent

    return TanhChangingItsOutput


def _gradient_and_hvp_by_dual_numbers(function: type[torch.autograd.Function]) -> Callable:
    """(x, v) -> the gradient of function's sum by torch.autograd.grad under forward_ad, and its tangent
    along v, H·v: what forward_ad makes of a jvp that changes the saved output, found by running one."""

    def gradient_and_hvp(x, v):
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(x.detach().requires_grad_(), v)
            (gradient,) = torch.autograd.grad(function.apply(dual).sum(), dual)
            primal, tangent = torch.autograd.forward_ad.unpack_dual(gradient)
        return primal.detach(), tangent

    return gradient_and_hvp


def forward_over_reverse_slips(whole_hessian: bool, dual_numbers: bool = False) -> dict[str, Callable]:
    """What each slip makes of the gradient of Tanh's sum and its Hessian (or, not `whole_hessian`, its H·v)
    by forward over reverse, which differentiates backward's gradient from the tangent jvp gave the saved
    output. `dual_numbers`: H·v by torch.autograd.forward_ad, which carries the tangent through a change of
    the saved output in place, where torch.func does not."""
    what, by_jvp, by_backward, by_change = (
        ("the Hessian", hessian_when_jvp_gives, hessian_when_backward_gives, hessian_when_backward_reads)
        if whole_hessian
        else ("H·v", hvp_when_jvp_gives, hvp_when_backward_gives, hvp_when_backward_reads)
    )
    jvp_slips = JVP_SLIPS if whole_hessian else JVP_SLIPS | JVP_SLIPS_UNIT_TANGENTS_HIDE
    return (
        {
            f"{slip}. Forward over reverse starts from that tangent, so {what} is off too.": _with_gradient(
                _right_slope, by_jvp(tangent)
            )
            for slip, tangent in jvp_slips.items()
        }
        | {
            f"{slip}. Forward over reverse differentiates backward's gradient, so {what} is off too.": (
                _with_gradient(slope, by_backward(slope))
            )
            for slip, slope in BACKWARD_SLIPS.items()
        }
        | {
            # torch.func.hessian's gradient comes from a separate torch.func.grad, which runs no jvp.
            f"{slip}, and backward, which forward over reverse differentiates, reads that changed output: "
            f"{INTO_A_NEW_TENSOR}": (
                _gradient_and_hvp_by_dual_numbers(_tanh_whose_jvp_changes_its_output(changed))
                if dual_numbers
                else _with_gradient(
                    _right_slope if whole_hessian else (lambda x, c=changed: 1 - c(torch.tanh(x)) ** 2),
                    by_change(changed),
                )
            )
            for slip, changed in CHANGED_OUTPUTS.items()
        }
    )


class _TanhIgnoringGradOut(_TanhSavingItsOutput):
    """tanh whose backward returns the derivative without multiplying by grad_out; jvp is right."""

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return 1 - result**2

    @staticmethod
    def jvp(ctx, x_t):
        (result,) = ctx.saved_tensors
        return x_t * (1 - result**2)


class _TanhWithoutParentheses(_TanhIgnoringGradOut):
    """tanh whose backward returns grad_out * 1 - result**2, grad_out - result**2; jvp is right."""

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * 1 - result**2


class _TanhSummingGradOut(_TanhIgnoringGradOut):
    """tanh whose backward multiplies by grad_out.sum(), one number; jvp is right."""

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out.sum() * (1 - result**2)


# backward's slips that are no derivative times grad_out, by the Function that makes each: the tests take
# what they give by running it.
BACKWARDS_NOT_TIMES_GRAD_OUT = {
    "backward returns grad_out * 1 - result**2, which subtracts result**2 from grad_out: grad_out "
    "multiplies the whole derivative, so the derivative needs parentheses": _TanhWithoutParentheses,
    "backward multiplies by grad_out reduced to one number (.sum()): each element of grad_out weighs its own "
    "element's derivative": _TanhSummingGradOut,
}


def _tangent_through(function: type[torch.autograd.Function]) -> Callable:
    """(x, v) -> the right tangent along v, whose gradients run back through function's backward."""

    def tangent(x, v):
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(x, v)
            return torch.autograd.forward_ad.unpack_dual(function.apply(dual)).tangent

    return tangent


_FIX_THE_TANGENT = (
    "Reverse over forward differentiates that tangent: fix it first (see the forward-mode check)."
)
_THROUGH_BACKWARD = (
    "Reverse over forward differentiates the tangent back through backward, so the tangent's gradient is off."
)
_DROPS_GRAD_OUT = (
    "backward returns tanh's derivative without multiplying by grad_out (backward's argument after ctx)"
)
# Only a random grad_out shows a backward that drops it: the tangent's gradients are weighted by one.
_IGNORES_GRAD_OUT = f"{_DROPS_GRAD_OUT}. {_THROUGH_BACKWARD}"


def _weighted(slip: Callable) -> Callable:
    """(x, v, w) -> a slip's gradient and H·v for the sum of Tanh weighted by w: backward's gradient, and so
    its tangent, scale with grad_out, here w."""
    return lambda x, v, w: tuple(w * part for part in slip(x, v))


def weighted_forward_over_reverse_slips() -> dict[str, Callable]:
    """What each slip makes of the gradient of (w * Tanh(x)).sum() and of H·v, its tangent along v, by
    forward over reverse: the slips of forward_over_reverse_slips, scaled by w, and a backward that drops
    grad_out, found by running one. A sum weighted by ones, as the other checks differentiate, hands
    backward a grad_out of ones and hides that slip."""

    def running(function):
        return lambda x, v, w: torch.func.jvp(
            torch.func.grad(lambda y: (w * function.apply(y)).sum()), (x,), (v,)
        )

    return (
        {slip: _weighted(result) for slip, result in forward_over_reverse_slips(whole_hessian=False).items()}
        | {
            f"{_DROPS_GRAD_OUT}: the gradient of a sum weighted by w is w * (1 - result**2), and forward "
            "over reverse differentiates that gradient, so H·v is off too.": running(_TanhIgnoringGradOut)
        }
        | {
            f"{slip}. Forward over reverse differentiates backward's gradient, so H·v is off too.": running(
                function
            )
            for slip, function in BACKWARDS_NOT_TIMES_GRAD_OUT.items()
        }
    )


def reverse_over_forward_slips() -> dict[str, Callable]:
    """What each slip makes of Tanh's tangent along v, or of its gradients, by reverse over forward, which
    differentiates the tangent jvp returned, back through backward."""
    return (
        {
            f"{slip}. {_FIX_THE_TANGENT}": tangent
            for slip, tangent in (JVP_SLIPS | JVP_SLIPS_UNIT_TANGENTS_HIDE).items()
        }
        | {
            f"{slip}. {_THROUGH_BACKWARD}": tangent_when_backward_gives(slope)
            for slip, slope in BACKWARD_SLIPS.items()
        }
        | {_IGNORES_GRAD_OUT: _tangent_through(_TanhIgnoringGradOut)}
        | {
            f"{slip}. {_THROUGH_BACKWARD}": _tangent_through(function)
            for slip, function in BACKWARDS_NOT_TIMES_GRAD_OUT.items()
        }
        | {
            f"{slip}, and backward, which reverse mode runs through to differentiate the tangent, reads that "
            f"changed output: {INTO_A_NEW_TENSOR}": tangent_when_backward_gives(
                lambda x, changed=changed: 1 - changed(torch.tanh(x)) ** 2
            )
            for slip, changed in CHANGED_OUTPUTS.items()
        }
    )


def _jacfwd_then_jacrev_when_jvp_gives(tangent: Callable) -> Callable:
    """(jacfwd, jacrev over jacfwd) of Tanh's sum when jvp returns tangent(x, x_t): jacfwd's entry j sums
    the tangent along e_j, and jacrev differentiates those entries."""

    def gradient(y):
        return _by_columns(tangent)(y).sum(dim=0)

    return lambda x, v: (gradient(x.detach()), torch.func.jacrev(gradient)(x.detach()))


def _jacfwd_then_jacrev_when_backward_gives(slope: Callable) -> Callable:
    """(jacfwd, jacrev over jacfwd) of Tanh's sum when backward returns grad_out * slope(x): jvp's right
    1 - result**2, differentiated back through that backward."""
    return lambda x, v: (
        _right_slope(x.detach()),
        torch.diag(-2 * torch.tanh(x.detach()) * slope(x.detach())),
    )


def _jacfwd_then_jacrev_running(function: type[torch.autograd.Function]) -> Callable:
    """(x, v) -> (jacfwd, jacrev over jacfwd) of function's sum, found by running it."""

    def total(y):
        return function.apply(y).sum()

    return lambda x, v: (
        torch.func.jacfwd(total)(x.detach()),
        torch.func.jacrev(torch.func.jacfwd(total))(x.detach()),
    )


def jacrev_of_jacfwd_slips() -> dict[str, Callable]:
    """What each slip makes of jacfwd of Tanh's sum and of jacrev over it, the Hessian by reverse over
    forward: the first derivative tells jvp's slips apart where their Hessians agree. Named by the words
    the tangent check before it uses."""
    return (
        {
            f"{slip}. {_FIX_THE_TANGENT}": _jacfwd_then_jacrev_when_jvp_gives(tangent)
            for slip, tangent in JVP_SLIPS.items()
        }
        | {
            f"{slip}. {_THROUGH_BACKWARD}": _jacfwd_then_jacrev_when_backward_gives(slope)
            for slip, slope in BACKWARD_SLIPS.items()
        }
        | {
            _IGNORES_GRAD_OUT: _jacfwd_then_jacrev_running(_TanhIgnoringGradOut),
        }
        | {
            f"{slip}. {_THROUGH_BACKWARD}": _jacfwd_then_jacrev_running(function)
            for slip, function in BACKWARDS_NOT_TIMES_GRAD_OUT.items()
        }
    )
