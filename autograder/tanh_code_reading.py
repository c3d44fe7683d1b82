"""What lesson 07's checks refuse on the student's side, where they run the student's Tanh, apart from the
slip tables of tanh_both_modes, which the judge compares values with: a forward that is not tanh, refused
before any derivative is compared; a first derivative wrong in a way no table names, pointed to the check
that names it; and a second derivative of 0 beside a right first one, refused with its cause read from the
code of the rule that lost it.
"""

import dis

import torch

from autograder.probe.diagnose import (
    COPIES,
    attributes_keeping,
    copies_it_saves,
    leads_back_to,
    names_used,
    where_it_saves,
)
from autograder.probe.refused import AnswerRefusedError
from autograder.tanh_both_modes import (
    BACKWARD_SLIPS,
    OUTPUT_CHANGED_BY_JVP,
    SHAPED_LIKE_THE_OUTPUT,
    THE_CALLER_GETS_IT,
)


def refuse_a_wrong_forward(function: type[torch.autograd.Function], x: torch.Tensor) -> None:
    """Name a forward that does not return tanh(x) before its derivatives are compared: they are the
    derivatives of another function, and no slip in backward or jvp is to blame for that. A forward whose
    values agree but whose dtype or shape differs is named by what differs, not as another function. Then
    name a jvp whose tangent is not shaped like the output, which torch refuses in words that do not say
    why."""
    x = x.detach()
    with torch.no_grad():
        out = function.apply(x)
    right = torch.tanh(x)
    name = function.__name__
    if not isinstance(out, torch.Tensor) or out.numel() != right.numel():
        _refuse_another_function(name)
    if out.shape != right.shape or out.dtype != right.dtype:
        if not torch.allclose(out.reshape(right.shape).to(right.dtype), right, rtol=1e-5, atol=1e-6):
            _refuse_another_function(name)
        differs = [
            f"{what} is wrong: {name}.apply(x) returns {got} for x of {want}"
            for what, got, want in (
                ("dtype", out.dtype, x.dtype),
                ("shape", f"shape {tuple(out.shape)}", f"shape {tuple(x.shape)}"),
            )
            if got != want
        ]
        raise AnswerRefusedError(
            f"forward's values agree with tanh(x), but its {'; its '.join(differs)} (see the forward "
            "check). Return torch.tanh(x) itself, which keeps the input's shape and dtype; then its "
            "derivatives can be checked"
        )
    if not torch.allclose(out, right):
        _refuse_another_function(name)
    _refuse_a_tangent_of_another_shape(function, x)


def _refuse_another_function(name: str) -> None:
    """Refuse a forward whose values are not tanh's: its derivatives are another function's."""
    raise AnswerRefusedError(
        f"forward itself is wrong (see the forward check): {name}.apply(x) is not tanh(x), so its "
        "derivatives cannot be tanh's either. Fix forward first"
    )


def refuse_an_unnamed_wrong_first_derivative(
    function: type[torch.autograd.Function], x: torch.Tensor
) -> None:
    """Point to the checks that name the slips where backward's gradient is wrong in a way the slip tables
    cannot name here: a slip of its own, or one made in jvp too (the same formula written in both rules),
    where the tables hold one rule's slip beside the other rule right. A second derivative through it is
    wrong for that reason first. A slip the tables name is left to the judge, which names it with what it
    does to the second derivative."""
    at = x.detach()
    leaf = at.clone().requires_grad_()
    grad_out = torch.linspace(0.5, 2, leaf.numel(), dtype=leaf.dtype).reshape(leaf.shape)
    try:
        (gradient,) = torch.autograd.grad(function.apply(leaf), leaf, grad_out)
        with torch.autograd.forward_ad.dual_level():
            dual = torch.autograd.forward_ad.make_dual(at, torch.ones_like(at))
            tangent = torch.autograd.forward_ad.unpack_dual(function.apply(dual)).tangent
    except Exception:  # noqa: BLE001 - what the rules raise is named by the check that meets it
        return
    right = 1 - torch.tanh(at) ** 2
    if not isinstance(gradient, torch.Tensor) or gradient.shape != at.shape:
        return
    if torch.allclose(gradient.detach(), grad_out * right):
        return
    jvp_right = (
        isinstance(tangent, torch.Tensor) and tangent.shape == at.shape and torch.allclose(tangent, right)
    )
    named = [grad_out * slope(at) for slope in BACKWARD_SLIPS.values()] + [right]
    if jvp_right and any(torch.allclose(gradient.detach(), slip) for slip in named):
        return
    also = ", and jvp's tangent is wrong too (see the forward-mode check)" if not jvp_right else ""
    raise AnswerRefusedError(
        f"the first derivative of {function.__name__} is already wrong (see the first-derivative check, "
        f"which names why){also}: forward over reverse differentiates backward's gradient from jvp's "
        "tangent. Fix the first derivative first"
    )


def _refuse_a_tangent_of_another_shape(function: type[torch.autograd.Function], x: torch.Tensor) -> None:
    """Run jvp by dual numbers and name torch's size error as the slip it is: a tangent reduced (by a sum,
    most often) or reshaped, where tanh's tangent is one number per output, element by element."""
    x = x.detach()
    try:
        with torch.autograd.forward_ad.dual_level():
            function.apply(torch.autograd.forward_ad.make_dual(x, torch.ones_like(x)))
    except RuntimeError as error:
        if "forward gradient that has a different size" not in str(error):
            return
        summed = " (it calls .sum())" if "sum" in names_used(function.jvp).everywhere else ""
        raise AnswerRefusedError(
            f"jvp returns a tangent of another shape than the output{summed}: {SHAPED_LIKE_THE_OUTPUT}."
        ) from None


# Calls that give a tensor's values without its history or its tangent, in the order a message names them:
# a call that leaves torch comes after the one that detached what it was given.
_CUTS = {
    "detach": "`.detach()`",
    "data": "`.data`",
    "no_grad": "`torch.no_grad()`",
    "item": "`.item()`",
    "tolist": "`.tolist()`",
    "tensor": "`torch.tensor(...)`",
    "numpy": "`.numpy()`",
}
# torch.func follows .data where forward mode over torch.autograd.grad does not: why only that test sees it.
_DATA_UNDER_FORWARD_AD = (
    " torch.func's transforms follow .data; autograd's own forward mode, around torch.autograd.grad, does "
    "not (the Finer points of section 4.1)."
)
_SAVING = {"save_for_backward", "save_for_forward", "saved_tensors", "set_materialize_grads", "mark_dirty"}


def _reads_its_tangent(jvp) -> bool:
    """Whether jvp's code reads its tangent argument (x_t, whatever its name) at all."""
    code = getattr(jvp, "__code__", None)
    if code is None or code.co_argcount < 2:
        return True
    tangent = code.co_varnames[1]
    for instruction in dis.get_instructions(code):
        loaded = instruction.argval if isinstance(instruction.argval, tuple) else (instruction.argval,)
        if instruction.opname.startswith("LOAD_") and tangent in loaded:
            return True
    return False


def why_a_second_derivative_is_zero(function: type[torch.autograd.Function], rule: str) -> str:
    """Why the second derivative through `rule` ("backward": forward over reverse, "jvp": reverse over
    forward) is 0 though the first is right, read from the Function's code: what its setup_context saves
    in place of the output, a call in that rule that keeps the values but drops their history and tangent,
    or a jvp that never reads its tangent; where the code shows none of them, what is lost."""
    made = "gradient" if rule == "backward" else "tangent"
    where = where_it_saves(function)
    saving = names_used(getattr(function, where)).everywhere - _SAVING - {"torch"}
    copies = copies_it_saves(function)
    if saving - set(COPIES):
        detached = " of a detached input" if copies else ""
        return (
            f"{where} saves a tanh it computed itself{detached} (torch.tanh(inputs[0])), which has no link "
            "to the Function's output and carries no tangent or history: save `output` itself and build the "
            f"{made} with torch operations on it."
        )
    if copies:
        return (
            f"{where} saves a copy of the output ({' and '.join(copies)} in {where}), which carries no "
            "tangent or history: save `output` itself."
        )
    used = names_used(getattr(function, rule)).everywhere
    cuts = [text for name, text in _CUTS.items() if name in used]
    if cuts:
        shown = _DATA_UNDER_FORWARD_AD if rule == "backward" and "data" in used else ""
        return (
            f"{rule} uses {' and '.join(cuts)}, which keeps the values but not how they move with x: build "
            f"the {made} with torch operations on the saved output itself.{shown}"
        )
    if not _reads_its_tangent(function.jvp):
        return "jvp never reads its tangent x_t: the output's tangent is x_t times tanh's derivative."
    if rule == "backward":
        return (
            "forward mode finds backward's gradient constant, computed from a tensor that carries no "
            "tangent: save `output` itself and build the gradient with torch operations on it."
        )
    return (
        "the tangent jvp returned has no history for reverse mode to differentiate: save `output` itself and "
        "build the tangent with torch operations on it."
    )


def refuse_an_output_changed_by_jvp(
    function: type[torch.autograd.Function], x: torch.Tensor, v: torch.Tensor
) -> None:
    """Name a jvp that changes the saved output in place: that output is the caller's result. Forward mode,
    running jvp, raises the output's version; without a tangent, jvp does not run."""
    without_jvp = function.apply(x)._version
    with torch.autograd.forward_ad.dual_level():
        with_jvp = function.apply(torch.autograd.forward_ad.make_dual(x, v))._version
    if with_jvp != without_jvp:
        raise AnswerRefusedError(f"{OUTPUT_CHANGED_BY_JVP}, {THE_CALLER_GETS_IT}")


def refuse_an_output_kept_on_ctx(function: type[torch.autograd.Function], x: torch.Tensor) -> None:
    """Name a setup_context that keeps the output itself on ctx (ctx.result = output): the output holds its
    grad_fn, which is ctx, and ctx then holds the output, a reference cycle that only Python's garbage
    collector frees. Read from ctx's attributes, as the tests may themselves keep every tensor made."""
    out = function.apply(x.detach().requires_grad_())
    kept = attributes_keeping(out.grad_fn, [out])
    if kept:
        raise AnswerRefusedError(
            f"setup_context keeps the output on ctx.{kept[0]} (as in ctx.result = output): the output holds "
            "its grad_fn, which is ctx, and ctx then holds the output, a reference cycle, so the output and "
            "its graph stay in memory after the caller drops them, until Python's garbage collector runs. "
            "Save the output with ctx.save_for_forward (and ctx.save_for_backward) and read it from "
            "ctx.saved_tensors."
        )


def refuse_a_tangent_changed_by_jvp(v: torch.Tensor, before: torch.Tensor) -> None:
    """Name a jvp that changed the caller's direction v in place: dual numbers hand jvp v itself as x_t,
    and torch.func's refusal of the same step in place does not run here."""
    if not torch.equal(v, before):
        raise AnswerRefusedError(
            "jvp changes its tangent x_t in place (x_t.mul_(...), x_t *= ...), and x_t is the caller's "
            "direction v, which it changed: compute the tangent into a new tensor (x_t * ...)."
        )


def _forward_mode_alone(
    function: type[torch.autograd.Function], x: torch.Tensor, v: torch.Tensor, right: torch.Tensor
) -> str:
    """Whether forward mode alone, run as torch.func.jvp (which jacfwd runs under vmap), accepts jvp: dual
    numbers hand jvp plain tensors, torch.func wrapped ones that NumPy and .tolist() cannot read, so the
    forward-mode tests may fail on the same jvp."""
    try:
        _, tangent = torch.func.jvp(function.apply, (x.detach(),), (v.detach(),))
        passes = torch.allclose(tangent, right)
    except Exception:  # noqa: BLE001 - any refusal means the forward-mode tests fail too
        passes = False
    if passes:
        return "forward mode alone needs no record: the forward-mode tests pass"
    return (
        "forward mode alone needs no record, but torch.func's forward mode refuses this jvp too: the first "
        "test above that failed with it says more"
    )


def refuse_a_tangent_without_history(
    function: type[torch.autograd.Function], x: torch.Tensor, v: torch.Tensor, tangent: torch.Tensor
) -> None:
    """Name why jvp's tangent, right in value, has no history though x and v require grad, or, where jvp's
    own code cuts it (`.detach()`), no path back to one of them: forward mode alone never needs one, so only
    reverse over forward shows it, and the code tells which call or copy lost it. A wrong tangent, and a
    path lost to a copy that setup_context saved, are left for the comparison to name."""
    right = v.detach() * (1 - torch.tanh(x.detach()) ** 2)
    if not (
        isinstance(tangent, torch.Tensor)
        and tangent.shape == right.shape
        and torch.allclose(tangent.detach(), right)
    ):
        return
    alone = _forward_mode_alone(function, x, v, right)
    if tangent.grad_fn is None:
        raise AnswerRefusedError(
            "the tangent jvp returns is right, but autograd recorded nothing of it, so reverse over forward, "
            f"which differentiates it, finds it constant ({alone}). "
            f"{why_a_second_derivative_is_zero(function, 'jvp')}"
        )
    cuts_in_jvp = set(_CUTS) & names_used(function.jvp).everywhere
    if x.requires_grad and cuts_in_jvp and not leads_back_to(tangent, x):
        raise AnswerRefusedError(
            "the tangent jvp returns is right, but autograd recorded no path from it back to x, so reverse "
            f"over forward finds its derivative in x zero ({alone}). "
            f"{why_a_second_derivative_is_zero(function, 'jvp')}"
        )
    if v.requires_grad and "detach" in cuts_in_jvp and not leads_back_to(tangent, v):
        raise AnswerRefusedError(
            "the tangent jvp returns is right, but autograd recorded no path from it back to the tangent v "
            "it was given: jvp uses `.detach()` on x_t. Multiply x_t itself by tanh's derivative"
        )


def refuse_a_zero_second_derivative(
    function: type[torch.autograd.Function],
    rule: str,
    what: str,
    first: torch.Tensor,
    right_first: torch.Tensor,
    second: torch.Tensor,
) -> None:
    """Name why `what`, a second derivative through `rule`, is 0 beside a first derivative equal to
    `right_first`: the code tells which tensor or call lost it, which a comparison of values alone cannot.
    Anything else is left for the comparison to name."""
    first_right = (
        isinstance(first, torch.Tensor)
        and first.shape == right_first.shape
        and torch.allclose(first, right_first)
    )
    if first_right and isinstance(second, torch.Tensor) and second.numel() and not second.any():
        cause = why_a_second_derivative_is_zero(function, rule)
        raise AnswerRefusedError(f"{what} is 0 though the first derivative is right: {cause}")
