"""How lesson 07's test cells run the answer's Tanh in each mode, the points they run it at, and the slips
each comparison names.

Each run takes the answer's Function as its first argument and refuses, with its cause read from that
Function's code, what the comparison alone would report less clearly: a forward that is not tanh, a
tangent or output that jvp changed, a second derivative of 0. What a slip gives in each mode comes from
tanh_both_modes; what is read from the answer's code, from tanh_code_reading.
"""

import torch

from autograder.tanh_both_modes import (
    CHANGED_OUTPUTS,
    JVP_SLIPS,
    JVP_SLIPS_UNIT_TANGENTS_HIDE,
    THE_CALLER_GETS_IT,
)
from autograder.tanh_code_reading import (
    refuse_a_tangent_changed_by_jvp,
    refuse_a_tangent_without_history,
    refuse_a_wrong_forward,
    refuse_a_zero_second_derivative,
    refuse_an_output_changed_by_jvp,
    refuse_an_output_kept_on_ctx,
    refuse_an_unnamed_wrong_first_derivative,
)


def five_points(gen):
    """x from -2 to 2 and a direction v whose entries differ and do not sum to 0, so a jvp that sums
    or drops the tangent shows."""
    return torch.linspace(-2, 2, 5, dtype=torch.float64), torch.linspace(2, -1, 5, dtype=torch.float64)


def weighted_points(gen):
    """x from -2 to 2, a direction v and weights w, none of them 1."""
    x, v = five_points(gen)
    return x, v, torch.linspace(0.5, 2, 5, dtype=torch.float64)


def x_and_v_require_grad(gen):
    """x from -2 to 2 and a direction v, both requiring grad."""
    x, v = five_points(gen)
    return x.requires_grad_(), v.requires_grad_()


def tanh_slope(x, v):
    """v (1 - tanh²(x)): the tangent of tanh at x along v."""
    return v * (1 - torch.tanh(x) ** 2)


def tanh_value_and_slope(x, v):
    """tanh(x) and its tangent along v, as torch.func.jvp returns them."""
    return torch.tanh(x), tanh_slope(x, v)


def tanh_jacobian(x, v):
    """The diagonal matrix of 1 - tanh²(x) (v is unused)."""
    return torch.diag(1 - torch.tanh(x) ** 2)


def gradient_and_hessian_by_formula(x, v):
    """1 - tanh² and the diagonal matrix of -2 tanh (1 - tanh²), at x (v is unused)."""
    t = torch.tanh(x.detach())
    return 1 - t**2, torch.diag(-2 * t * (1 - t**2))


def gradient_and_hvp_by_formula(x, v):
    """1 - tanh² and -2 tanh (1 - tanh²) v."""
    return 1 - torch.tanh(x) ** 2, -2 * torch.tanh(x) * (1 - torch.tanh(x) ** 2) * v


def weighted_gradient_and_hvp_by_formula(x, v, w):
    """w (1 - tanh²) and w (-2 tanh (1 - tanh²)) v."""
    return tuple(w * part for part in gradient_and_hvp_by_formula(x, v))


# What jvp's usual slips return, so that a wrong tangent equal to one of them is named. The later tests
# name the same slips by the same words.
TANGENT_MISTAKES = {
    f"{slip}.": tangent for slip, tangent in (JVP_SLIPS | JVP_SLIPS_UNIT_TANGENTS_HIDE).items()
}
# An output changed with a right tangent: jvp changed the saved output, the caller's, in place. A right
# output with a wrong tangent: one of jvp's slips.
VALUE_MISTAKES = {
    cause: (lambda x, v, tangent=tangent: (torch.tanh(x), tangent(x, v)))
    for cause, tangent in TANGENT_MISTAKES.items()
} | {
    f"{slip}, {THE_CALLER_GETS_IT}": (
        lambda x, v, changed=changed: (changed(torch.tanh(x)), tanh_slope(x, v))
    )
    for slip, changed in CHANGED_OUTPUTS.items()
}


def tangent_by_dual_numbers(function: type[torch.autograd.Function], x, v):
    """The tangent of function.apply(x) along v, by torch.autograd.forward_ad, with v left as it was."""
    refuse_a_wrong_forward(function, x)
    given = v.clone()
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(x, v)
        tangent = torch.autograd.forward_ad.unpack_dual(function.apply(dual)).tangent
    refuse_a_tangent_changed_by_jvp(v, given)
    return tangent


def jacobian_by_jacfwd(function: type[torch.autograd.Function], x):
    """The Jacobian of function at x by forward mode, one pass per input."""
    refuse_a_wrong_forward(function, x)
    return torch.func.jacfwd(function.apply)(x)


def output_left_alone_by_jvp(function: type[torch.autograd.Function], x, v):
    """0, once jvp is seen to leave function's output as forward made it: the output jvp reads is the one
    the caller gets, so a jvp that changes it in place changes it for the caller too."""
    refuse_a_wrong_forward(function, x)
    refuse_an_output_changed_by_jvp(function, x, v)
    return torch.tensor(0.0, dtype=torch.float64)


def output_not_kept_on_ctx(function: type[torch.autograd.Function], x, v):
    """0, once no attribute of function's ctx is seen to hold its output (v is unused): an output kept so
    forms a reference cycle with its node, freed only by Python's garbage collector."""
    refuse_a_wrong_forward(function, x)
    refuse_an_output_kept_on_ctx(function, x)
    return torch.tensor(0.0, dtype=torch.float64)


def value_and_tangent(function: type[torch.autograd.Function], x, v):
    """What torch.func.jvp returns for function at x along v: the output and its tangent."""
    refuse_a_wrong_forward(function, x)
    return torch.func.jvp(function.apply, (x,), (v,))


def gradient_and_hessian(function: type[torch.autograd.Function], x):
    """torch.func.grad and torch.func.hessian (jacfwd over jacrev) of function's sum: the gradient tells a
    slip of backward from one of jvp where both give the same Hessian."""
    refuse_a_wrong_forward(function, x)
    refuse_an_unnamed_wrong_first_derivative(function, x)

    def total(y):
        return function.apply(y).sum()

    gradient, hessian = torch.func.grad(total)(x), torch.func.hessian(total)(x)
    refuse_a_zero_second_derivative(
        function, "backward", "the Hessian", gradient, 1 - torch.tanh(x) ** 2, hessian
    )
    return gradient, hessian


def weighted_gradient_and_hvp(function: type[torch.autograd.Function], x, v, w):
    """The gradient of (w * function(x)).sum() and H·v, its tangent along v, by torch.func: a weight other
    than ones hands backward a grad_out other than ones, which backward must multiply by."""
    refuse_a_wrong_forward(function, x)
    refuse_an_unnamed_wrong_first_derivative(function, x)
    gradient, hvp = torch.func.jvp(torch.func.grad(lambda y: (w * function.apply(y)).sum()), (x,), (v,))
    refuse_a_zero_second_derivative(function, "backward", "H·v", gradient, w * (1 - torch.tanh(x) ** 2), hvp)
    return gradient, hvp


def hvp_by_dual_numbers(function: type[torch.autograd.Function], x, v):
    """The gradient of function's sum by torch.autograd.grad and H·v, the tangent forward_ad carries along
    v through function's backward."""
    refuse_a_wrong_forward(function, x)
    refuse_an_unnamed_wrong_first_derivative(function, x)
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(x.detach().requires_grad_(), v)
        (gradient,) = torch.autograd.grad(function.apply(dual).sum(), dual)
        primal, tangent = torch.autograd.forward_ad.unpack_dual(gradient)
    hvp = torch.zeros_like(x) if tangent is None else tangent
    refuse_a_zero_second_derivative(function, "backward", "H·v", primal.detach(), 1 - torch.tanh(x) ** 2, hvp)
    return primal.detach(), hvp


def tangent_with_history(function: type[torch.autograd.Function], x, v):
    """The tangent of function.apply(x) along v; x and v require grad, so the tangent must carry a graph to
    both."""
    refuse_a_wrong_forward(function, x)
    with torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(x, v)
        tangent = torch.autograd.forward_ad.unpack_dual(function.apply(dual)).tangent
    refuse_a_tangent_without_history(function, x, v, tangent)
    return tangent


def jacfwd_and_jacrev_of_jacfwd(function: type[torch.autograd.Function], x):
    """jacfwd of function's sum and jacrev over it, the Hessian by reverse over forward: the gradient tells
    a slip of jvp from another with the same Hessian."""
    refuse_a_wrong_forward(function, x)

    def total(y):
        return function.apply(y).sum()

    first = torch.func.jacfwd(total)(x.detach())
    hessian = torch.func.jacrev(torch.func.jacfwd(total))(x.detach())
    refuse_a_zero_second_derivative(
        function, "jvp", "the Hessian", first, 1 - torch.tanh(x.detach()) ** 2, hessian
    )
    return first, hessian
