"""What the tests of a Function meant to write tanh(x) into x (lesson 06's TanhInPlace) share.

Its test cells apply the answer through these, so that what autograd refuses and what a wrong backward
gives are told as what they mean for a Function that is meant to change its input: the hints shared by
every lesson cannot know that it is meant to.
"""

import torch

from autograder.first_derivative_cut import refuse_a_first_derivative_cut_from_x
from autograder.probe.diagnose import attribute_holding, untracked_in_backward, where_it_saves
from autograder.probe.refused import AnswerRefusedError


def applied(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """function.apply(x), telling autograd's refusal to save an unmarked input returned as the output as
    the ctx.mark_dirty(x) it lacks, and refusing more than one output: the caller holds one tensor."""
    try:
        out = function.apply(x)
    except RuntimeError as error:
        if "returned as-is as output is being saved" not in str(error):
            raise
        raise AnswerRefusedError(
            "autograd refuses to save the output: it is x, which forward changed in place and returns "
            "unmarked.\nLikely cause: setup_context does not call ctx.mark_dirty(x). Call it there (a view "
            "of x, as autograd's error suggests, hides the mistake)."
        ) from None
    if not isinstance(out, torch.Tensor):
        count = f"a {type(out).__name__}" + (f" of {len(out)}" if isinstance(out, tuple | list) else "")
        raise AnswerRefusedError(
            f"forward returns {count}; it should return one tensor, x itself, changed in place and marked "
            "with ctx.mark_dirty"
        )
    return out


def returns_an_unmarked_input(function: type[torch.autograd.Function], x: torch.Tensor) -> bool:
    """Whether forward wrote into x and returns x, or a view of it, with x not marked dirty: autograd then
    hands the caller a view of x, and x keeps its old history."""
    y = x.detach().clone().requires_grad_(x.requires_grad) * 1
    out = applied(function, y)
    return out is not y and out._base is y


UNMARKED = (
    "forward changed x in place and returns it, or a view of it, but setup_context does not call "
    "ctx.mark_dirty(x): autograd then hands the caller a view of x, and x keeps its old history. Call "
    "ctx.mark_dirty(x) in setup_context and return x itself (a view, as autograd's error suggests, hides "
    "the mistake)"
)


def _differentiates_right(function: type[torch.autograd.Function]) -> bool:
    """Whether function, applied to a copy, passes torch's gradcheck and gradgradcheck."""
    points = torch.linspace(-2, 2, 5, dtype=torch.float64, requires_grad=True)
    try:
        return all(
            check(lambda t: on_a_copy(function, t), (points,), raise_exception=False)
            for check in (torch.autograd.gradcheck, torch.autograd.gradgradcheck)
        )
    except (RuntimeError, AnswerRefusedError):
        return False


# A first derivative of tanh taken of a tensor that holds tanh(x) already, and why it is.
_TANH_OF_TANH = (
    "is 1 - tanh(tanh(x))**2: the derivative of tanh at x (1 - tanh(x)**2, or 1 / cosh(x)**2) was taken "
    "of a tensor that already holds tanh(x), in backward or where a tensor was saved: save the output itself "
    "and use it as it is, grad_out * (1 - result**2)"
)
# The same, where the code shows backward took it: what was saved, output or input, is tanh(x) already.
_TANH_OF_TANH_IN_BACKWARD = (
    "is 1 - tanh(tanh(x))**2: the derivative of tanh at x (1 - tanh(x)**2, or 1 / cosh(x)**2) was taken "
    "of a tensor that already holds tanh(x): use the saved result as it is, grad_out * (1 - result**2)"
)
# The names of the calls that take tanh's derivative at x, rather than from tanh(x).
_TANH_AGAIN = {"tanh", "cosh"}


def refuse_tanh_of_tanh(
    function: type[torch.autograd.Function], slope: torch.Tensor, x: torch.Tensor, what: str
) -> None:
    """Name a first derivative equal to 1 - tanh(tanh(x))**2: tanh was taken of a tensor that already holds
    tanh(x), in backward or when saving one (after forward, x holds tanh(x)). Input and output are one
    tensor, so this holds whichever of them was saved; where only backward calls tanh, it took it."""
    x = x.detach()
    expected = 1 - torch.tanh(x) ** 2
    if not torch.allclose(slope, expected) and torch.allclose(slope, 1 - torch.tanh(torch.tanh(x)) ** 2):
        cause = _TANH_OF_TANH_IN_BACKWARD if _takes_tanh_in_backward_only(function) else _TANH_OF_TANH
        worst = int((slope - expected).abs().reshape(-1).argmax())
        at = f" at x = {x.reshape(-1)[worst].item():g}" if x.numel() > 1 else ""
        raise AnswerRefusedError(
            f"{what} is wrong: expected {expected.reshape(-1)[worst].item():.6g}, got "
            f"{slope.reshape(-1)[worst].item():.6g}{at}.\nLikely cause: its first derivative {cause}"
        )


def _takes_tanh_in_backward_only(function: type[torch.autograd.Function]) -> bool:
    """Whether backward calls tanh (or cosh) and the rule that saves does not: what it saved is then
    tanh(x) itself, input or output alike, and backward took tanh of it again."""
    saves = getattr(function, where_it_saves(function))
    return bool(_TANH_AGAIN & set(function.backward.__code__.co_names)) and not (
        _TANH_AGAIN & set(saves.__code__.co_names)
    )


def tanh_differentiated_as_one_minus_tanh(x: torch.Tensor) -> torch.Tensor:
    """tanh(x), with the first derivative 1 - tanh(x): what a backward returning grad_out * (1 - result)
    gives, the saved tanh(x) not squared."""
    return torch.tanh(x).detach() + (1 - torch.tanh(x.detach())) * (x - x.detach())


def tanh_differentiated_as_one_plus_tanh_squared(x: torch.Tensor) -> torch.Tensor:
    """tanh(x), with the first derivative 1 + tanh(x)**2: what a backward returning
    grad_out * (1 + result**2) gives, the sign of the squared term flipped."""
    return torch.tanh(x).detach() + (1 + torch.tanh(x.detach()) ** 2) * (x - x.detach())


# The tests of TanhInPlace's derivatives name a derivative of tanh with the square left out, or with the
# wrong sign on its squared term.
_SQUARE_LEFT_OUT = (
    "backward's derivative is 1 - tanh(x), the square left out: d tanh/dx = 1 - tanh(x)², so with result "
    "holding tanh(x), return grad_out * (1 - result**2)."
)
_SQUARE_ADDED = (
    "backward's derivative is 1 + tanh(x)², the wrong sign on the tanh² term: d tanh/dx = 1 - tanh(x)², "
    "so with result holding tanh(x), return grad_out * (1 - result**2)."
)
UNSQUARED = {
    _SQUARE_LEFT_OUT: tanh_differentiated_as_one_minus_tanh,
    _SQUARE_ADDED: tanh_differentiated_as_one_plus_tanh_squared,
}


def refuse_a_backward_ignoring_grad_out(function: type[torch.autograd.Function], x: torch.Tensor) -> None:
    """Name a backward that returns the derivative alone, whatever grad_out is: the checks that feed it
    ones (a sum, torch.func's grad of a scalar) cannot tell, and the rest would blame the formula."""
    leaf = x.detach().clone().requires_grad_()
    try:
        out = applied(function, leaf * 1)
        with torch.no_grad():
            grads = function.backward(out.grad_fn, torch.full_like(out, 2.0))
    except Exception:  # noqa: BLE001 - whatever else is wrong, the checks that follow name it
        return
    grad = grads[0] if isinstance(grads, tuple | list) and grads else grads
    slope = 1 - torch.tanh(leaf.detach()) ** 2
    if isinstance(grad, torch.Tensor) and grad.shape == slope.shape and torch.allclose(grad, slope):
        raise AnswerRefusedError(
            "fed grad_out = 2, backward returned 1 - tanh(x)**2 itself: it leaves grad_out out. Return "
            "grad_out times the derivative, grad_out * (1 - result**2)"
        )


def on_a_copy(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """function applied to a copy of x, since a leaf that requires grad cannot be changed in place."""
    return applied(function, x.clone())


def differentiated_on_a_copy(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """on_a_copy for the checks of the derivatives, a first derivative of tanh taken of tanh(x) named
    first (the forward check leaves it to them: the values are right)."""
    _refuse_tanh_of_tanh_at_five_points(function)
    # An unmarked x costs the derivatives only where they go wrong; then that is the cause to name.
    if returns_an_unmarked_input(function, x) and not _differentiates_right(function):
        raise AnswerRefusedError(UNMARKED)
    return on_a_copy(function, x)


def _refuse_tanh_of_tanh_at_five_points(function: type[torch.autograd.Function]) -> None:
    """Name a first derivative of tanh taken of tanh(x), at x from -2 to 2, with the cause the code shows;
    a Function that cannot be differentiated there is left to the checks that follow."""
    with torch.enable_grad():
        points = torch.linspace(-2, 2, 5, dtype=torch.float64, requires_grad=True)
        try:
            (slope,) = torch.autograd.grad(applied(function, points * 1).sum(), points)
        except RuntimeError:
            return
    refuse_tanh_of_tanh(function, slope, points, "its first derivative")


def the_callers_tensor(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """The values of y = x * 1 after function.apply(y), once y is found to have the node of the tensor apply
    returns as its history: y then differentiates as that tensor does, right or wrong, which is for the
    tests of the derivatives to judge, so a slip in backward costs this test nothing."""
    y = x * 1
    out = applied(function, y)
    if y.grad_fn is not getattr(out, "grad_fn", None):
        if torch.equal(y, x):
            raise AnswerRefusedError(
                "it left the caller's y as it was: forward must write tanh into x itself, "
                "and setup_context mark x with ctx.mark_dirty"
            )
        raise AnswerRefusedError(
            f"the caller's y holds tanh but keeps its old history ({type(y.grad_fn).__name__}), so it "
            "differentiates as x * 1: mark x with ctx.mark_dirty in setup_context (returning a view of x "
            "silences autograd's error, not this mistake, as section 7 showed)"
        )
    return y.detach()


def unmoved_by_a_changed_output(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """1.0 if function's backward, after the caller changes the output in place, refuses to run (the version
    check of an output saved with ctx.save_for_backward) or gives the gradient it gave before (it reads
    other saved tensors, such as the input); otherwise the answer is refused: backward read the changed
    values, from where the version check cannot see them."""
    (before,) = torch.autograd.grad(function.apply(x * 1).sum(), x)
    out = function.apply(x * 1)
    out.add_(1)  # the caller changes the output in place between forward and backward
    try:
        (after,) = torch.autograd.grad(out.sum(), x)
    except RuntimeError as error:
        if "modified by an inplace operation" not in str(error):
            raise
        return torch.tensor(1.0, dtype=torch.float64)
    if torch.allclose(after, before):
        return torch.tensor(1.0, dtype=torch.float64)
    raise AnswerRefusedError(
        "after the caller changed the output in place, backward still ran, on the changed values: it read "
        "the output from where autograd's version check cannot see it, as an attribute of ctx "
        "(ctx.result = output) or as output.data. Save the output with ctx.save_for_backward, whose version "
        "check makes backward refuse a changed output."
    )


def refuses_output_changed_in_place(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """1.0 if backward refuses to run after the caller changes function's output in place, as autograd's
    version check makes it do for a tensor saved with ctx.save_for_backward; otherwise what it read."""
    if returns_an_unmarked_input(function, x):
        raise AnswerRefusedError(UNMARKED)
    out = applied(function, x * 1)
    node = out.grad_fn  # the Function's own: changing the output in place gives it another
    saved = getattr(node, "saved_tensors", ())  # what ctx.save_for_backward was given
    before = out.detach().clone()
    try:
        out.add_(1)  # the caller changes the output in place between forward and backward
        torch.autograd.grad(out.sum(), x)
    except RuntimeError as error:
        if "is a view and is being modified inplace" in str(error):
            raise AnswerRefusedError(
                f"{function.__name__} returns a view of x, which the caller cannot change in place: return "
                "x itself, marked with ctx.mark_dirty"
            ) from None
        if "modified by an inplace operation" not in str(error):
            raise
        return torch.tensor(1.0, dtype=torch.float64)
    where = where_it_saves(function)
    if any(torch.equal(kept.detach(), before) for kept in saved):
        raise AnswerRefusedError(
            "pass the output itself to ctx.save_for_backward. After the caller changed the output in place, "
            f"backward still ran: {where} saved a copy of the output (as output.clone() makes), not the "
            "output itself. Autograd's version check, which makes backward refuse, watches the copy, which "
            "the caller never changes; and the copy takes the memory that working in place saves."
        )
    if saved and all(kept.data_ptr() != out.data_ptr() for kept in saved):
        raise AnswerRefusedError(
            "pass the output itself to ctx.save_for_backward: it holds tanh(x) already (a tanh taken when "
            "saving, as torch.tanh(x) in setup_context, is of tanh(x)). After the caller changed the output "
            f"in place, backward still ran: {where} saved a new tensor with ctx.save_for_backward, not the "
            "output, so autograd's version check, which makes backward refuse, watches that tensor instead."
        )
    attribute = attribute_holding(node, out)
    if attribute is not None:
        raise AnswerRefusedError(
            f"pass the output itself to ctx.save_for_backward, not as ctx.{attribute}. After the caller "
            "changed the output in place, backward still ran, on the changed values: autograd's version "
            "check, which makes backward refuse, watches only the tensors ctx.save_for_backward saved."
        )
    raise AnswerRefusedError(
        "pass the output itself to ctx.save_for_backward. After the caller changed the output in place, "
        "backward still ran, on the changed values: what it read was not the output saved that way, whose "
        "version check makes backward refuse. It may be kept as an attribute of ctx (ctx.result = output), "
        "or saved as output.data, which shares the output's memory but not the count of changes the version "
        "check reads."
    )


def refuse_what_torch_func_cannot_use(function: type[torch.autograd.Function], point: torch.Tensor) -> None:
    """Name why torch.func's derivatives of function at one point fail, if they do: an old-style forward
    (no setup_context of its own, as torch.func itself tells it), an unmarked input saved as the output,
    a wrong formula (tanh taken of tanh(x), or a sign that grad(grad(...)) would flip back), or a first
    derivative cut from x."""
    name = function.__name__
    if function.setup_context is torch.autograd.Function.setup_context:
        raise AnswerRefusedError(
            f"torch.func refuses {name}: its forward takes ctx. Write forward(x) without ctx, and mark x "
            "dirty and save the output in setup_context(ctx, inputs, output)"
        )
    first = torch.func.grad(lambda point: applied(function, point.clone()))(point)
    at = f"torch.func's grad of {name} at x = {point.item():g}"
    refuse_tanh_of_tanh(function, first, point, at)
    slope = 1 - torch.tanh(point) ** 2
    if torch.allclose(first, -slope):
        raise AnswerRefusedError(
            f"{at} is {first.item():g}, the first derivative 1 - tanh(x)**2 with the wrong sign: check the "
            "sign of backward's formula (grad(grad(...)) flips it back, so the second derivative alone "
            "would not show it)"
        )
    if not torch.allclose(first, slope):
        why = next(
            (
                cause
                for cause, slip in UNSQUARED.items()
                if torch.allclose(first, torch.func.grad(slip)(point))
            ),
            "backward returns grad_out times the wrong derivative",
        )
        raise AnswerRefusedError(
            f"{at} is {first.item():g}, not the first derivative 1 - tanh(x)**2 = {slope.item():g}: {why}"
        )
    leaf = point.detach().clone().requires_grad_()
    refuse_a_first_derivative_cut_from_x(applied(function, leaf * 1), leaf, name)


def torch_func_second_derivative(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """d²/dx² of function on a copy of x at every element, by torch.func's grad(grad(...)), once what
    torch.func's grad cannot use, a wrong first derivative under it, or a first derivative cut from x
    (which torch.func would turn into a silent 0) is named."""
    second = torch.func.grad(torch.func.grad(lambda point: applied(function, point.clone())))
    points = x.reshape(-1)
    for point in points:
        refuse_what_torch_func_cannot_use(function, point)
    refuse_a_backward_ignoring_grad_out(function, x)
    result = torch.stack([second(point) for point in points]).reshape(x.shape)
    refuse_a_part_cut_out(function, x, result)
    return result


def refuse_a_part_cut_out(
    function: type[torch.autograd.Function], x: torch.Tensor, second: torch.Tensor
) -> None:
    """Refuse a second derivative by torch.func that is wrong but not 0 where backward's code takes part
    of its work out of the graph (result.detach() in one factor): the values alone would not say so."""
    slope = 1 - torch.tanh(x.detach()) ** 2
    if torch.allclose(second, -2 * torch.tanh(x.detach()) * slope) or not bool(second.any()):
        return
    hint = untracked_in_backward(applied(function, x.detach().clone().requires_grad_().clone()))
    if hint:
        raise AnswerRefusedError(
            f"torch.func's second derivative through {function.__name__} is wrong, though not 0: part of the "
            f"first derivative backward returns is cut from x. {hint.removeprefix('Likely cause: ')}"
        )


def x_requires_grad(gen: torch.Generator) -> tuple[torch.Tensor]:
    """x from -2 to 2, requiring grad."""
    return (torch.linspace(-2, 2, 5, dtype=torch.float64, requires_grad=True),)


def random_x(gen: torch.Generator) -> tuple[torch.Tensor]:
    """x of a random shape, in [-3, 3)."""
    shape = torch.randint(1, 5, (int(torch.randint(0, 3, (), generator=gen)),), generator=gen).tolist()
    return (6 * torch.rand(shape, generator=gen, dtype=torch.float64) - 3,)


def random_x_requiring_grad(gen: torch.Generator) -> tuple[torch.Tensor]:
    """x of a random shape, in [-3, 3), requiring grad."""
    return (random_x(gen)[0].requires_grad_(),)
