"""Likely causes the judge can read off plain numbers: the expected and the measured gradients."""

from collections.abc import Collection

import torch

from autograder.wire.tensors import ATOL, RTOL, first_difference


def misuses_grad_out(
    expected: torch.Tensor,
    got: torch.Tensor,
    grad_out: torch.Tensor,
    incoming: str = "grad_out",
    numbers: Collection[str] = (),
    parameter: str = "grad_out",
) -> str | None:
    """A hint when backward returns the local derivative times the wrong weight: none, forgetting to
    multiply by the incoming gradient, or the incoming gradient summed or averaged to one number, named
    with the `.item()` that made it a Python number where backward calls it (`numbers`). `parameter` is
    backward's own name for the incoming gradient, which `incoming` may describe in other words."""
    if bool((grad_out.abs() < 1e-3).any()) or got.shape != expected.shape:
        return None
    local = (expected / grad_out).detach()
    if torch.allclose(got.detach(), local, rtol=1e-6, atol=1e-9):
        return (
            f"Likely cause: backward returns the local derivative without multiplying by {incoming} "
            f"(backward's argument after ctx). The chain rule needs, for each input, {parameter} * "
            "(d output / d input)."
        )
    if grad_out.numel() < 2:
        return None
    for reduced, call in ((grad_out.sum(), "sum"), (grad_out.mean(), "mean")):
        if torch.allclose(got.detach(), reduced * local, rtol=1e-6, atol=1e-9):
            return (
                f"Likely cause: backward multiplies by {incoming} reduced to one number "
                f"(.{call}(){'.item()' if '`.item()`' in numbers else ''}). Each "
                f"element of {incoming} weighs its own element's derivative: {incoming} * (d out / d x), "
                "element by element."
            )
    return None


def swapped_gradients(got, expected, names: list[str]) -> str | None:
    """A hint when backward returns right gradients in the wrong order (only with two or more inputs): two
    places each hold the other's gradient. One place holding another's value is a wrong formula there, such
    as grad_w computed with grad_x's, which the order of the return would not fix."""
    if len(names) < 2 or any(g is None or e is None for g, e in zip(got, expected, strict=True)):
        return None

    def holds(i: int, j: int) -> bool:
        g, e = got[i], expected[j]
        return g.shape == e.shape and torch.allclose(g.detach(), e.detach(), rtol=1e-6, atol=1e-9)

    for i in range(len(got)):
        for j in range(len(expected)):
            if i != j and holds(i, j) and holds(j, i):
                return (
                    f"Likely cause: backward returns the gradient for {names[j]} in the place of {names[i]}: "
                    "it returns them in the wrong order. backward returns one gradient per forward input, in "
                    "forward's order."
                )
    return None


def exchanged_arguments(exchanged: torch.Tensor | None, got: torch.Tensor, names: list[str]) -> str | None:
    """A hint when backward's value is the derivative taken at grad_out and weighted by x: the two were
    passed in each other's place, typically to a second Function (`CubeBackward.apply(x, grad_out)`)."""
    if exchanged is None or got.shape != exchanged.shape or not bool(torch.isfinite(exchanged).all()):
        return None
    if not torch.allclose(got.detach(), exchanged, rtol=1e-6, atol=1e-9):
        return None
    return (
        f"Likely cause: {names[0]} and grad_out are exchanged: backward gives the derivative at grad_out, "
        f"weighted by {names[0]}. If backward calls another Function, pass it its arguments in the order "
        "its forward takes them."
    )


def inputs_swapped(
    at_swapped: list[torch.Tensor] | None, got: list[torch.Tensor], names: list[str]
) -> str | None:
    """A hint when backward's gradients are the right ones at its two inputs' values exchanged: backward
    computes with each input holding the other's values."""
    if at_swapped is None or len(got) != len(at_swapped):
        return None
    if not all(
        g.shape == w.shape and torch.allclose(g.detach(), w, rtol=1e-6, atol=1e-9)
        for g, w in zip(got, at_swapped, strict=True)
    ):
        return None
    first, second = names
    return (
        f"Likely cause: backward computes with {first} and {second} exchanged: with their values swapped, "
        f"these are the right derivatives. ctx.saved_tensors gives tensors back in the order they were "
        f"saved: save them as ctx.save_for_backward({first}, {second}) and unpack them in that order, "
        f"{first}, {second} = ctx.saved_tensors."
    )


def wrong_sign(
    expected: torch.Tensor,
    got: torch.Tensor,
    what: str = "derivative",
    where: str = "its formula in backward",
) -> str | None:
    """A hint when a derivative (or `what`) is the right one negated: a sign flipped in its formula."""
    if (
        got.shape != expected.shape
        or got.dtype != expected.dtype
        or bool((expected.detach().abs() < 1e-6).all())
    ):
        return None
    if torch.allclose(got.detach(), -expected.detach(), rtol=1e-6, atol=1e-9):
        return (
            f"Likely cause: this {what} has the wrong sign: negated, it would be right. Check the sign "
            f"of {where}."
        )
    return None


def sign_lost(expected: torch.Tensor, got: torch.Tensor, inputs: dict[str, torch.Tensor]) -> str | None:
    """A hint when a derivative is right where an input is positive and negated where it is negative:
    backward computes with that input's absolute value, as one rebuilt from an even power of it does."""
    if got.shape != expected.shape:
        return None
    for name, value in inputs.items():
        if value.shape != got.shape or not bool((value < 0).any()) or not bool((value > 0).any()):
            continue
        if bool((expected.detach()[value < 0].abs() < 1e-6).all()):
            continue
        if torch.allclose(got.detach(), expected.detach() * value.detach().sign(), rtol=1e-6, atol=1e-9):
            return (
                f"Likely cause: this derivative is right where {name} is positive and has the wrong sign "
                f"where {name} is negative: backward computes with |{name}| in place of {name}, as it "
                f"does when {name} is rebuilt from the output by a square root (the root of {name}**2 is "
                f"|{name}|). Save {name} itself and use it."
            )
    return None


def missing_factor(
    expected: torch.Tensor,
    got: torch.Tensor,
    factors: dict[str, torch.Tensor],
    saved: Collection[str] = (),
    called: Collection[str] = (),
) -> str | None:
    """A hint when a derivative is the right one divided by one of the named tensors: a factor left out
    of its formula, typically one that forward did not save (`6 * x` for `6 * grad_out * x`). A factor
    in `saved`, which backward had, is only named: the slip is in the formula. Where backward's values
    are right and it calls the Functions `called`, autograd differentiates it through their backward,
    which is where the factor was left out."""
    for name, factor in factors.items():
        if factor.shape != got.shape or got.shape != expected.shape:
            continue
        # A factor near 1 (or 0) changes too little (or everything): it tells nothing.
        magnitude = factor.detach().abs()
        if bool(((magnitude - 1).abs() < 1e-3).any()) or bool((magnitude < 1e-3).any()):
            continue
        if torch.allclose((got * factor).detach(), expected.detach(), rtol=1e-6, atol=1e-9):
            if called:
                why = (
                    f"backward calls {' and '.join(called)}, and autograd takes this derivative from "
                    f"{' or '.join(f'{function}.backward' for function in called)}, which leaves {name} out "
                    f"of a gradient it returns. See the checks of {' and '.join(called)} itself."
                )
            elif name in saved:
                why = f"Forward saved {name}, so backward has it: put it back in this formula."
            else:
                why = "A tensor that backward needs must be saved by forward (ctx.save_for_backward)."
            return (
                f"Likely cause: this derivative is missing the factor {name}: multiplied by {name}, it "
                f"would be right. {why}"
            )
    return _off_by_a_factor_of_two(expected, got)


def zero_gradient(expected: torch.Tensor, got: torch.Tensor, label: str, wrapped: bool) -> str | None:
    """A hint when a gradient is zero everywhere and the right one is not: like None, zero says that the
    input does not change the output. `wrapped`: the Function is another one's backward and `label` is
    its incoming gradient, which the second derivative differentiates through too."""
    if (
        got.shape != expected.shape
        or bool(got.detach().any())
        or bool((expected.detach().abs() < 1e-6).all())
    ):
        return None
    return (
        f"Likely cause: backward returned zero for {label}, which requires grad here, as every input does "
        f"in this check: return its gradient (zero, like None, belongs only where ctx.needs_input_grad "
        f"says False).{incoming_needs_a_gradient(label) if wrapped else ''}"
    )


def incoming_needs_a_gradient(label: str) -> str:
    """Why a Function that is another one's backward returns a gradient for `label`, its incoming
    gradient, rather than None or zero: a second derivative differentiates through it."""
    return (
        f" Though {label} is only the gradient that arrived, it usually depends on the inputs too, and a "
        "second derivative follows that path through this gradient."
    )


def incoming_for_input(
    expected: torch.Tensor,
    got: torch.Tensor,
    incoming: torch.Tensor,
    inputs: dict[str, torch.Tensor],
    parameter: str,
    saved: Collection[str] = (),
) -> str | None:
    """A hint when a derivative uses the gradient fed to backward (named `parameter` there) where an input
    belongs, as a backward does that needs an input forward did not save (`grad_grad_x * 6 * x` written
    with grad_grad_x for grad_out)."""
    if got.shape != expected.shape or incoming.shape != got.shape:
        return None
    for name, value in inputs.items():
        if value.shape != got.shape or bool((value.detach().abs() < 1e-3).any()):
            continue
        if torch.allclose(value.detach(), incoming.detach(), rtol=1e-6, atol=1e-9):
            continue
        if torch.allclose((got * value).detach(), (expected * incoming).detach(), rtol=1e-6, atol=1e-9):
            keep = (
                f"Forward saved {name}: take it from ctx.saved_tensors."
                if name in saved
                else f"Save {name} in forward (ctx.save_for_backward) and take it back in backward."
            )
            return (
                f"Likely cause: this derivative uses {parameter}, the gradient fed to backward, where "
                f"{name} belongs: with {name} in its place it would be right. {keep}"
            )
    return None


def _off_by_a_factor_of_two(expected: torch.Tensor, got: torch.Tensor) -> str | None:
    """A hint when a derivative is half or twice the right one: a constant 2 left out of its formula (the
    2 of d/dx x**2 = 2x) or put in once too often."""
    if bool((expected.detach().abs() < 1e-6).all()):
        return None
    slips = {
        2.0: "half the right one: a factor 2 left out of its formula (as the 2 of d/dx x**2 = 2 * x)",
        0.5: "twice the right one: a factor 2 too many in its formula",
    }
    for ratio, slip in slips.items():
        if torch.allclose((got * ratio).detach(), expected.detach(), rtol=1e-6, atol=1e-9):
            return f"Likely cause: this derivative is {slip}. Derive it again."
    return None


def approximately(expected: torch.Tensor, got: torch.Tensor) -> str | None:
    """A hint when every element is within 0.1% of the right one but not all are equal to it, as the
    check compares them: what an approximation of an exact value gives, or a result rebuilt in float32."""
    if got.shape != expected.shape or not got.dtype.is_floating_point:
        return None
    if not torch.allclose(got.detach().double(), expected.detach().double(), rtol=1e-3, atol=1e-6):
        return None
    if got.dtype != expected.dtype:
        return (
            f"Likely cause: the result is {got.dtype}, not {expected.dtype}: rebuilt from plain numbers "
            "(torch.tensor(...) of .item() or Python floats, which makes float32 and cuts the graph), or "
            f"computed in {got.dtype}. Keep the computation on the inputs' tensors."
        )
    return (
        "Likely cause: every value is within 0.1% of the right one, but not equal to it: an approximation "
        "(a finite difference, float32 arithmetic somewhere, or an epsilon added for safety) where the "
        "exact value is expected. Compute it exactly, with autograd's derivatives in float64."
    )


def wrong_only_where_zero(
    expected: torch.Tensor, got: torch.Tensor, arguments: dict[str, torch.Tensor]
) -> str | None:
    """A hint when every wrong element sits where an argument is exactly 0, and that argument is not 0
    everywhere: a special case at 0 (`torch.where(x != 0, ..., 0)`) turns a gradient into a constant
    there, whose derivative is 0 whatever the formula's."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return None
    wrong = ~torch.isclose(got.detach(), expected.detach(), rtol=RTOL, atol=ATOL)
    if not bool(wrong.any()):
        return None
    for name, argument in arguments.items():
        if argument.shape != got.shape:
            continue
        at_zero = argument.detach() == 0
        if bool(at_zero.all()) or not bool((wrong <= at_zero).all()):
            continue
        return (
            f"Likely cause: the value is wrong only where {name} is 0, right everywhere else: a special "
            f"case at {name} == 0 (torch.where on {name} != 0, an if) makes the gradient a constant there, "
            f"and a constant's derivative is 0. The formula holds at 0 too: drop the special case."
        )
    return None


def divides_by_zero(
    expected: torch.Tensor, got: torch.Tensor, arguments: dict[str, torch.Tensor]
) -> str | None:
    """A hint when the first wrong element is nan or inf where a finite one is expected, and an argument of
    the same shape is 0 there: a formula that divides by it, such as a derivative written as out / x."""
    index = first_difference(expected, got)
    if index is None or not bool(torch.isfinite(expected[index])) or bool(torch.isfinite(got[index])):
        return None
    for name, argument in arguments.items():
        if argument.shape == got.shape and float(argument[index]) == 0:
            return (
                f"Likely cause: a division by {name}, which is 0 there (as in a backward that writes a "
                f"derivative as out / {name}): write the formula without dividing by {name}."
            )
    return None


def not_a_number(expected: torch.Tensor, got: torch.Tensor) -> str | None:
    """A hint when the first wrong element is nan where a finite one is expected: a power, root or log
    that torch leaves undefined there, such as a cube root taken as y ** (1 / 3) of a negative y."""
    index = first_difference(expected, got)
    if index is None or not bool(torch.isfinite(expected[index])) or not bool(torch.isnan(got[index])):
        return None
    return (
        "Likely cause: backward computes nan where the right value is finite. A fractional power of a "
        "negative number (y ** (1 / 3) for a cube root), or the sqrt or log of one, is nan in torch: "
        "write the formula with the tensors it needs directly (save the input if it needs the input)."
    )
