"""What the tests of a Function of x and w computing w * x**2 (lesson 06's ScaledSquare) share.

Each takes the student's Function and runs it as one test cell needs, telling a mistake the numbers
reveal as what the answer did; the values of the derivatives are the checks' to compare.
"""

import math

import torch

from autograder.first_derivative_cut import (
    refuse_a_first_derivative_cut_from_x,
    refuse_a_first_derivative_in_x_cut_from_w,
)
from autograder.probe import diagnose
from autograder.probe.refused import AnswerRefusedError

# What every check says of a backward returning (grad_w, grad_x): the order, not a formula, is wrong.
IN_ORDER = (
    "backward returns (grad_w, grad_x), in the wrong order: backward returns one gradient per forward "
    "input, in forward's order. Return grad_x, grad_w"
)

# What to do, and what went wrong, when backward reads each input's flag at the other's index.
_FLAGS_IN_ORDER = "read x's flag at index 0 of ctx.needs_input_grad and w's at index 1"
_FLAGS_SWAPPED = (
    "it reads the flags swapped, needs_input_grad[1] (w's flag) for x and needs_input_grad[0] for w"
)


def leaving_the_inputs_alone(function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor):
    """function.apply(x, w), refusing a forward that changed x or w in place (their values or ._version,
    which counts changes in place), even if it returns a new tensor."""
    before = {"x": (x.detach().clone(), x._version), "w": (w.detach().clone(), w._version)}
    out = function.apply(x, w)
    for name, tensor in (("x", x), ("w", w)):
        values, version = before[name]
        if tensor._version != version or not torch.equal(tensor.detach(), values):
            raise AnswerRefusedError(
                f"forward changed {name} in place (as {name}.pow_(2) or {name}.mul_(1) do), which the caller "
                f"still holds: build a new tensor (w * x**2) and leave x and w alone"
            )
    return out


def refuse_gradients_out_of_place(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor
) -> None:
    """Refuse a backward that, under torch.func's grad, which differentiates x alone and so sets
    ctx.needs_input_grad to (True, False), returns None for x: with grad_w's x**2 for w, the flags read
    swapped; with grad_x's 2 * w * x, the gradients returned in the wrong order. Either way torch.func
    finds no gradient for x, and its second derivative in x is 0."""
    out = function.apply(x.detach().requires_grad_(), w.detach())
    with torch.no_grad():
        grads = function.backward(out.grad_fn, torch.ones_like(out))
    if not (isinstance(grads, tuple) and len(grads) == 2 and grads[0] is None):
        return
    for_w = grads[1] if isinstance(grads[1], torch.Tensor) and grads[1].shape == x.shape else None
    if for_w is not None and torch.allclose(for_w, x**2):
        raise AnswerRefusedError(
            f"{_FLAGS_IN_ORDER}: with ctx.needs_input_grad (True, False), as torch.func's grad sets it, "
            f"backward returned None for x and grad_w for w, so {_FLAGS_SWAPPED}."
        )
    if for_w is not None and torch.allclose(for_w, 2 * w * x):
        raise AnswerRefusedError(
            f"{IN_ORDER}. Under torch.func's grad, which sets ctx.needs_input_grad to (True, False), the "
            "swap returned None for x, so torch.func found no gradient for x"
        )
    raise AnswerRefusedError(
        "return grad_x whenever needs_input_grad[0], x's flag, is True: with ctx.needs_input_grad "
        "(True, False), as torch.func's grad sets it, backward returned None for x, so torch.func finds no "
        "gradient for x and its second derivative in x is 0."
    )


def _gradient_in_w_taken_in_x(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A function whose gradients are 2 * w * x in x, right, and 2 * x in w: the derivative of x**2 in x,
    what a backward returning grad_w = grad_out * 2 * x gives."""
    return w.detach() * x**2 + 2 * x.detach() * w


def _gradient_in_w_taken_from_grad_x(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A function whose gradients are 2 * w * x in x, right, and 2 * w * x in w too: what a backward
    returning grad_x's formula as grad_w gives."""
    return w.detach() * x**2 + w**2 * x.detach()


# The tests of ScaledSquare's derivatives name a gradient in w taken as the derivative of x**2 in x, or
# as grad_x's formula.
WRONG_GRADIENT_IN_W = {
    "grad_w is grad_out * 2 * x, the derivative of x**2 in x; in w, ∂(w·x²)/∂w = x², so grad_w = "
    "grad_out * x**2.": _gradient_in_w_taken_in_x,
    "grad_w is grad_out * 2 * w * x, grad_x's formula; in w, ∂(w·x²)/∂w = x², so grad_w = "
    "grad_out * x**2.": _gradient_in_w_taken_from_grad_x,
}


def random_pair_through_zero(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """x, w and grad_out of 3 to 8 elements, random in [-2, 2), x exactly 0 at one element and w at
    another: a gradient written as a division by x or by w (out / w) is nan there, while at the other
    elements, at least one, neither is 0, so a gradient with a factor x * w is not 0 everywhere."""
    count = int(torch.randint(3, 9, (), generator=gen))
    x, w = (4 * torch.rand(count, generator=gen, dtype=torch.float64) - 2 for _ in range(2))
    at_x, at_w = torch.randperm(count, generator=gen)[:2].tolist()
    x[at_x], w[at_w] = 0.0, 0.0
    return x, w, torch.randn(count, generator=gen, dtype=torch.float64)


def gradients_given(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor, grad_out: torch.Tensor
) -> dict[str, torch.Tensor]:
    """grad_x and grad_w that function's backward gives for grad_out, by name, so that a wrong one is
    named; gradients returned in the wrong order are refused with that cause, which values alone would
    blame on a formula."""
    x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
    grad_x, grad_w = torch.autograd.grad(function.apply(x, w), (x, w), grad_out)
    right = exact_gradients(x.detach(), w.detach(), grad_out)
    swapped = (right["grad_w"], right["grad_x"])
    if not torch.allclose(grad_x, right["grad_x"]) and all(
        torch.allclose(got, want, equal_nan=True) for got, want in zip((grad_x, grad_w), swapped, strict=True)
    ):
        raise AnswerRefusedError(IN_ORDER)
    return {"grad_x": grad_x, "grad_w": grad_w}


def exact_gradients(x: torch.Tensor, w: torch.Tensor, grad_out: torch.Tensor) -> dict[str, torch.Tensor]:
    """grad_out times each partial derivative of w * x**2: 2 * w * x in x, x**2 in w."""
    return {"grad_x": grad_out * 2 * w * x, "grad_w": grad_out * x**2}


def second_derivatives_given(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor, grad_out: torch.Tensor
) -> dict[str, torch.Tensor]:
    """d/dx and d/dw of grad_x, weighted by grad_out, by double backward through function, by name: on x
    and w through 0, where gradgradcheck's random points do not go, a grad_x special-cased at x == 0 (a
    constant 0 there) has the wrong derivative."""
    x, w = x.detach().requires_grad_(), w.detach().requires_grad_()
    (grad_x,) = torch.autograd.grad(function.apply(x, w), x, grad_out, create_graph=True)
    in_x, in_w = torch.autograd.grad(grad_x.sum(), (x, w), allow_unused=True, materialize_grads=True)
    return {"d/dx of grad_x": in_x, "d/dw of grad_x": in_w}


def exact_second_derivatives(
    x: torch.Tensor, w: torch.Tensor, grad_out: torch.Tensor
) -> dict[str, torch.Tensor]:
    """d/dx and d/dw of grad_x = grad_out * 2 * w * x: grad_out * 2 * w and grad_out * 2 * x."""
    return {"d/dx of grad_x": grad_out * 2 * w, "d/dw of grad_x": grad_out * 2 * x}


def _first_derivative_is_right(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor
) -> bool:
    """Whether torch.func's grad of function in x is 2 * w * x: only then does a first derivative with no
    path back to x or w mean the silent 0 torch.func makes of a cut graph, not a formula that rightly
    does not depend on it."""
    first = torch.func.vmap(torch.func.grad(function.apply))(x, w)
    return first.shape == x.shape and torch.allclose(first, 2 * w * x)


def torch_func_second_derivative_in_x(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor
) -> torch.Tensor:
    """1.0 once torch.func's vmap(grad(grad(...))) gives, at every element, the d²/dx² torch.autograd's
    double backward gives through the same Function: a wrong formula is the derivative tests' to name.
    What makes the two differ is named: None returned for x under torch.func's flags, or a right first
    derivative cut from x, which torch.func turns into a silent 0."""
    leaf, other = _leaves_for_torch_func(function, x, w)
    if _first_derivative_is_right(function, x, w):
        refuse_a_first_derivative_cut_from_x(function.apply(leaf, other), leaf, function.__name__)
    by_torch_func = torch.func.vmap(torch.func.grad(torch.func.grad(function.apply)))(x, w)
    return _agreeing(function, x, w, by_torch_func, in_w=False)


def torch_func_mixed_second_derivative(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor
) -> torch.Tensor:
    """1.0 once torch.func's vmap(grad(grad(...), argnums=1)) gives the d/dw of d/dx torch.autograd's
    double backward gives, what would make them differ named as for d²/dx²: there a right first
    derivative in x cut from w (w.detach() in grad_x) is the silent 0."""
    leaf, other = _leaves_for_torch_func(function, x, w)
    if _first_derivative_is_right(function, x, w):
        refuse_a_first_derivative_in_x_cut_from_w(function.apply(leaf, other), leaf, other, function.__name__)
    by_torch_func = torch.func.vmap(torch.func.grad(torch.func.grad(function.apply), argnums=1))(x, w)
    return _agreeing(function, x, w, by_torch_func, in_w=True)


def _leaves_for_torch_func(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Leaves of x and w to differentiate twice through, once a first derivative in x that torch.func
    cannot use is refused. Both require grad, so that a w kept as data is not taken for a tensor saved
    without its history."""
    refuse_gradients_out_of_place(function, x, w)
    return x.detach().requires_grad_(), w.detach().requires_grad_()


def _by_autograd(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor, in_w: bool
) -> torch.Tensor:
    """d/dx, or d/dw if in_w, of the first derivative in x, by torch.autograd's double backward through
    function one element at a time, as vmap runs it, with w requiring grad only when differentiated in,
    so that backward gets torch.func's flags; 0 where autograd finds no path, as torch.func gives."""
    seconds = []
    for x_at, w_at in zip(x.detach().reshape(-1), w.detach().reshape(-1), strict=True):
        x_at, w_at = x_at.clone().requires_grad_(), w_at.clone().requires_grad_(in_w)
        (first,) = torch.autograd.grad(function.apply(x_at, w_at), x_at, create_graph=True)
        other = w_at if in_w else x_at
        (second,) = torch.autograd.grad(first, other, allow_unused=True, materialize_grads=True)
        seconds.append(second)
    return torch.stack(seconds).reshape(x.shape)


def _agreeing(
    function: type[torch.autograd.Function],
    x: torch.Tensor,
    w: torch.Tensor,
    by_torch_func: torch.Tensor,
    in_w: bool,
) -> torch.Tensor:
    """1.0 if torch.func's second derivative is torch.autograd's, nan where it is nan; otherwise the answer
    is refused with the first element where they differ and, where backward's code shows one, the call that
    torch.func's transforms treat otherwise than autograd."""
    by_autograd = _by_autograd(function, x, w, in_w)
    if by_torch_func.shape == x.shape and torch.allclose(by_torch_func, by_autograd, equal_nan=True):
        return torch.tensor(1.0, dtype=torch.float64)
    same = by_torch_func.shape == x.shape
    at = (
        int((~torch.isclose(by_torch_func, by_autograd, equal_nan=True)).reshape(-1).nonzero()[0])
        if same
        else 0
    )
    leaf = x.detach().requires_grad_()
    hint = diagnose.untracked_in_backward(function.apply(leaf, w.detach()))
    why = f"\n{hint}" if hint else ""
    raise AnswerRefusedError(
        f"torch.func's {'d/dw of d/dx' if in_w else 'd²/dx²'} through {function.__name__} is "
        f"{by_torch_func.reshape(-1)[at].item():.6g} at x = {x.reshape(-1)[at].item():g}, w = "
        f"{w.reshape(-1)[at].item():g}, where torch.autograd's double backward through the same backward "
        f"gives {by_autograd.reshape(-1)[at].item():.6g}: backward computes something torch.func's "
        f"transforms do not see as autograd does.{why}"
    )


def gradients_returned(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor, grad_out: torch.Tensor
) -> torch.Tensor:
    """Which gradients function's backward returns on the node autograd recorded: 1.0 for a tensor, 0.0
    for None, in the order of the inputs. A gradient nobody needs, computed or returned, or one returned
    in the wrong place, is refused with what the answer did; the values are left to the derivative checks.

    Backward is called here, in this thread, where a torch function mode sees every tensor it computes,
    to catch a gradient computed for nothing, the waste section 2 of the lesson measures: a tensor that is
    a multiple of the gradient of an input that needs none, grad_out * 2 * w * x or grad_out * x**2, or of
    grad_x's partial derivative 2 * w * x, whatever operations made it and whatever backward then
    returned."""
    out = function.apply(x, w)
    node = out.grad_fn  # the ctx that setup_context filled in
    with torch.no_grad(), diagnose.TensorsMade() as computed:  # as autograd runs a first backward
        grads = function.backward(node, grad_out)
    if isinstance(grads, tuple) and len(grads) > 2 and all(extra is None for extra in grads[2:]):
        grads = grads[:2]  # autograd ignores a None returned beyond the inputs
    with torch.no_grad():
        swapped = (
            grad_out * x**2 if node.needs_input_grad[1] else None,
            grad_out * 2 * w * x if node.needs_input_grad[0] else None,
        )
    if not isinstance(grads, tuple) or len(grads) != 2:
        returned = (
            "one tensor"
            if isinstance(grads, torch.Tensor)
            else f"a {type(grads).__name__} of {len(grads)}"
            if isinstance(grads, list | tuple)
            else f"a {type(grads).__name__}"
        )
        raise AnswerRefusedError(
            f"backward returned {returned} where autograd wants one gradient per input, a tuple of two: "
            "return grad_x, grad_w, with None in the place of an input that needs no gradient"
        )
    for name, gradient in zip(("x", "w"), grads, strict=True):
        if gradient is not None and not isinstance(gradient, torch.Tensor):
            raise AnswerRefusedError(
                f"backward returned the {type(gradient).__name__} {gradient!r:.40} in {name}'s place, where "
                "autograd takes a tensor or None: return None for an input that needs no gradient "
                "(ctx.needs_input_grad says which), its gradient as a tensor otherwise"
            )
    if all(
        (got is None) == (want is None) and (got is None or torch.allclose(got, want))
        for got, want in zip(grads, swapped, strict=True)
    ):
        raise AnswerRefusedError(IN_ORDER)
    given = tuple(gradient is not None for gradient in grads)
    if sum(node.needs_input_grad) == 1 and given == tuple(not needed for needed in node.needs_input_grad):
        raise AnswerRefusedError(
            f"{_FLAGS_IN_ORDER}: backward returned {'a tensor' if given[0] else 'None'} in x's place and "
            f"{'a tensor' if given[1] else 'None'} in w's, the reverse of ctx.needs_input_grad "
            f"{tuple(node.needs_input_grad)}, so {_FLAGS_SWAPPED}."
        )
    places = zip(("x", "w"), node.needs_input_grad, grads, strict=True)
    for index, (name, needed, gradient) in enumerate(places):
        if needed != (gradient is not None):
            why = "" if needed else " A tensor there, even of zeros, is work done and passed on for nothing."
            raise AnswerRefusedError(
                f"return {'its gradient' if needed else 'None'} in {name}'s place: "
                f"ctx.needs_input_grad[{index}] says {name} {'requires' if needed else 'does not require'} "
                f"grad, and backward returned {'None' if gradient is None else 'a tensor'} there.{why}"
            )
    with torch.no_grad():
        # Each gradient, computed for an input that needs none, is work thrown away, and so is any multiple
        # of grad_x's partial derivative w * x (2 * w * x, or half of grad_x shared as grad_out * w * x).
        # Where w is one number throughout, multiples of w * x are multiples of x, and where grad_out is a
        # multiple of w, of grad_out * x, which grad_w may share: there only the exact gradient counts.
        # grad_w's partial, x**2, is no sign of waste: a backward that recovers w from the output as
        # out / x**2 computes it for grad_x.
        w_is_uniform = _multiple_of(w, torch.ones_like(w)) is not None
        candidates = [
            ("the gradient for x", 0, grad_out * 2 * w * x, not w_is_uniform),
            ("the gradient for w", 1, grad_out * x**2, True),
        ]
        if not w_is_uniform and _multiple_of(grad_out, w) is None:
            candidates.append(("the partial derivative in x, 2wx, without grad_out", 0, 2 * w * x, True))
        for what, index, value, multiples in candidates:
            if node.needs_input_grad[index]:
                continue
            for t in computed.tensors:
                if any(_same_tensor(t, gradient) for gradient in grads):
                    continue  # what backward returns for an input that needs it, whatever its formula
                factor = _multiple_of(t, value) if t.dtype == value.dtype else None
                exact = factor is not None and math.isclose(factor, 1.0, rel_tol=1e-6)
                if factor is None or (not multiples and not exact):
                    continue
                times, name = "" if exact else f"{factor:g} times ", "xw"[index]
                raise AnswerRefusedError(
                    f"backward computed a tensor equal to {times}{what}, then returned None for {name}, as "
                    f"ctx.needs_input_grad[{index}] says {name} does not require grad: compute a gradient "
                    "only when its input's flag is True, and skip the work otherwise"
                )
    return torch.tensor([float(gradient is not None) for gradient in grads], dtype=torch.float64)


def _same_tensor(tensor: torch.Tensor, gradient: torch.Tensor | None) -> bool:
    """Whether `tensor` holds the values of a gradient backward returned: a wrong formula there (grad_w
    written as grad_x's) is the derivative checks' to name, not work done for nothing."""
    return gradient is not None and tensor.shape == gradient.shape and torch.equal(tensor, gradient)


def _multiple_of(tensor: torch.Tensor, value: torch.Tensor) -> float | None:
    """The nonzero number that `tensor` is `value` times, element by element, or None. With fewer than
    two nonzero elements every tensor would be a multiple: there only `value` itself counts, as 1."""
    if tensor.shape != value.shape:
        return None
    nonzero = value.abs() > 1e-12
    if int(nonzero.sum()) < 2:
        return 1.0 if torch.allclose(tensor, value) else None
    ratios = tensor[nonzero] / value[nonzero]
    factor = ratios[0]
    if bool(factor.abs() <= 1e-12) or not torch.allclose(ratios, factor.expand_as(ratios)):
        return None
    if not torch.allclose(tensor[~nonzero], torch.zeros_like(tensor[~nonzero])):
        return None
    return float(factor)


def gradients_needed(x: torch.Tensor, w: torch.Tensor, grad_out: torch.Tensor) -> torch.Tensor:
    """1.0 for each input that requires grad, 0.0 for one that does not: where backward returns a
    gradient, and where None."""
    return torch.tensor([float(x.requires_grad), float(w.requires_grad)], dtype=torch.float64)


def refuses_inputs_changed_in_place(
    function: type[torch.autograd.Function], x: torch.Tensor, w: torch.Tensor
) -> torch.Tensor:
    """1.0 if backward refuses to run after the caller changes x, and after it changes w, in place, as
    autograd's version check makes it do for tensors saved with ctx.save_for_backward."""
    for name in ("x", "w"):
        inputs = {"x": x.clone(), "w": w.clone()}
        out = function.apply(inputs["x"], inputs["w"])
        saved = getattr(out.grad_fn, "saved_tensors", ())  # what ctx.save_for_backward was given
        inputs[name].add_(1)  # the caller changes one input in place between forward and backward
        try:
            torch.autograd.grad(out.sum(), x)
        except RuntimeError as error:
            if "modified by an inplace operation" not in str(error):
                raise
            continue
        original = {"x": x, "w": w}[name]
        where = diagnose.where_it_saves(function)
        attribute = diagnose.attribute_holding(out.grad_fn, inputs[name])
        if attribute is not None:
            raise AnswerRefusedError(
                f"pass {name} itself to ctx.save_for_backward, not as ctx.{attribute}. After the caller "
                f"changed {name} in place, backward still ran: autograd's version check, which makes "
                "backward refuse, watches only the tensors ctx.save_for_backward saved."
            )
        if any(
            kept.untyped_storage().data_ptr() == inputs[name].untyped_storage().data_ptr() for kept in saved
        ):
            raise AnswerRefusedError(
                f"pass {name} itself to ctx.save_for_backward. After the caller changed {name} in place, "
                f"backward still ran: {where} saved a tensor that shares {name}'s memory, as {name}.data "
                f"does, but not the count of {name}'s changes in place that autograd's version check reads."
            )
        if any(torch.equal(kept.detach(), original.detach()) for kept in saved):
            raise AnswerRefusedError(
                f"pass {name} itself to ctx.save_for_backward. After the caller changed {name} in place, "
                f"backward still ran: {where} saved a copy of {name} (as {name}.clone() makes), not {name} "
                "itself. Autograd's version check, which makes backward refuse, watches the copy, which the "
                "caller never changes; and the copy takes as much memory again."
            )
        raise AnswerRefusedError(
            f"pass {name} itself to ctx.save_for_backward. After the caller changed {name} in place, "
            f"backward still ran, so {name} itself was not saved that way, whose version check makes "
            "backward refuse: it may be kept as an attribute of ctx, saved as a copy, or recomputed from "
            "other saved tensors."
        )
    return torch.tensor(1.0, dtype=torch.float64)


def random_pair(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """x and w of a random length, with random values in [-2, 2)."""
    count = int(torch.randint(1, 9, (), generator=gen))
    return tuple(4 * torch.rand(count, generator=gen, dtype=torch.float64) - 2 for _ in range(2))


def only_w_requires_grad(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random x, w and grad_out, where only w requires grad."""
    count = int(torch.randint(1, 9, (), generator=gen))
    x, w, grad_out = (torch.randn(count, generator=gen, dtype=torch.float64) for _ in range(3))
    return x, w.requires_grad_(), grad_out


def only_x_requires_grad(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random x, w and grad_out, where only x requires grad."""
    x, w, grad_out = only_w_requires_grad(gen)
    return x.requires_grad_(), w.detach(), grad_out


def both_require_grad(gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """x and w of a random length, both requiring grad."""
    count = int(torch.randint(1, 9, (), generator=gen))
    x, w = (torch.randn(count, generator=gen, dtype=torch.float64) for _ in range(2))
    return x.requires_grad_(), w.requires_grad_()
