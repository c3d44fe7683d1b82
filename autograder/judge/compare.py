"""Verdicts: the reference's values against what a probe measured, as plain numbers.

`verdict(kind, ...)` is the whole decision. It reads only the plan it made and the measurement (a
tree of plain values from `autograder.wire.arrays`); anything in the measurement that is not of the
expected shape fails the check. The likely cause of a mistake is named from the numbers where they
tell (a forgotten grad_out, swapped gradients), or taken as text from the measurement, where only the
student's own objects tell (what a Function kept on ctx).
"""

import math
from collections.abc import Callable

import torch

from autograder.judge import gradcheck, hints
from autograder.wire import arrays, samples
from autograder.wire.tensors import NotATensor, apart, first_difference, is_zero, mismatch, numpy_result
from autograder.wire.verdict import FailedCheckError, Verdict, likely_cause

# gradcheck's own tolerances for analytic against numerical Jacobians.
_JACOBIAN_RTOL, _JACOBIAN_ATOL = 1e-3, 1e-5
_MALFORMED = (
    "The checker received a malformed measurement from your code's process; this check gives no credit."
)


def verdict(kind: str, name: str, plan: dict, measurement: dict, where: str = "") -> Verdict:
    """Passed, or failed with the message a student reads."""
    try:
        if not isinstance(measurement, dict):
            raise TypeError("not a dict")
        if "refused" in measurement:
            raise FailedCheckError(str(measurement["refused"]))
        _COMPARISONS[kind](name, plan["names"], plan["expected"], measurement, where)
        return Verdict(passed=True)
    except FailedCheckError as failure:
        return Verdict.failed(str(failure))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, RuntimeError):
        return Verdict.failed(_MALFORMED)


def _node(tree):
    """A measured value: a plain tensor, None, or NotATensor naming what it was."""
    if not isinstance(tree, dict):
        raise TypeError("not a value")
    if "tensor" in tree:
        if not isinstance(tree["tensor"], torch.Tensor):
            raise TypeError("not a tensor")
        return tree["tensor"]
    kind = str(tree["type"])
    return None if kind == "NoneType" else NotATensor(kind)


def _samples_of(expected: dict, measurement: dict):
    """(expected, measured) per sample input; the measurement stops at the sample its code failed on."""
    measured = measurement["samples"]
    if not isinstance(measured, list) or not measured:
        raise ValueError("no samples")
    for number, keep in enumerate(expected["samples"]):
        if number >= len(measured):
            raise ValueError("fewer samples than asked")
        record = measured[number]
        if "error" in record:
            raise FailedCheckError(arrays.text(record["error"]))
        yield keep, record


def _outputs(name: str, keep: dict, record: dict) -> list:
    outputs = [_node(o) for o in record["outputs"]]
    if any(o is None for o in outputs):
        raise FailedCheckError(
            f"{name} returns None where a tensor should be. Likely cause: forward computes its result "
            "but does not `return` it."
        )
    if len(outputs) != len(keep["outputs"]):
        fewer = len(outputs) < len(keep["outputs"]) and record.get("not_returned")
        cause = arrays.text(fewer) if fewer else ""
        if len(keep["outputs"]) == 1 < len(outputs):
            cause = (
                f"Likely cause: {name} returns a tuple; return the one tensor asked for (of a Function with "
                "extra outputs, the first: `.apply(x)[0]`)."
            )
        raise FailedCheckError(
            f"{name} returns {len(outputs)} output(s); it should return {len(keep['outputs'])}."
            + (f"\n{cause}" if cause else "")
        )
    return outputs


def _output_label(index: int, count: int) -> str:
    return f" (output {index})" if count > 1 else ""


def _incoming(names: list[str], article: str = "") -> str:
    """What messages call the gradient a check feeds to backward; renamed when an input bears the name."""
    return "grad_out" if "grad_out" not in names else f"{article}gradient fed to backward"


def _fed_there(grad_outs: list, want: torch.Tensor, got) -> str:
    """The incoming gradient's value, at the first wrong element where there are several, so that a
    student can redo the computation."""
    if len(grad_outs) != 1 or not isinstance(got, torch.Tensor) or grad_outs[0].shape != want.shape:
        return ""
    index = first_difference(want, got)
    if index is None:
        return ""
    value = f"{float(grad_outs[0][index]):.6g}"
    return f" = {value}" if want.numel() == 1 else f" (which is {value} at the first wrong element)"


def _forward_is_wrong(keep: dict, outputs: list) -> bool:
    return any(mismatch(e, o, [], []) for e, o in zip(keep["outputs"], outputs, strict=True))


def compare_forward(name, names, expected, measurement, where) -> None:
    for keep, record in _samples_of(expected, measurement):
        outputs = _outputs(name, keep, record)
        for index, (want, got) in enumerate(zip(keep["outputs"], outputs, strict=True)):
            problem = mismatch(want, got, names, keep["inputs"])
            if problem:
                cause = (
                    (numpy_result(got.kind) if isinstance(got, NotATensor) else "")
                    or _swapped_output(keep["outputs"], outputs, index)
                    or _one_tensor_twice(record)
                )
                raise FailedCheckError(
                    f"Forward value is wrong{_output_label(index, len(outputs))}: {name} on "
                    f"{samples.describe(names, keep['inputs'])}: {problem}." + (f"\n{cause}" if cause else "")
                )


def _swapped_output(expected: list, outputs: list, index: int) -> str:
    """A "Likely cause:" when wrong output `index` holds what another output should, and another output
    holds what output `index` should: the outputs were returned out of order, two swapped or more
    rotated; "" otherwise."""
    others = [n for n in range(len(expected)) if n != index]
    holds = [n for n in others if not mismatch(expected[n], outputs[index], [], [])]
    held_by = [n for n in others if not mismatch(expected[index], outputs[n], [], [])]
    if not (holds and held_by):
        return ""
    if holds[0] in held_by:
        first, second = sorted((index, holds[0]))
        return (
            f"Likely cause: outputs {first} and {second} are swapped: each holds the value the other "
            "should. Return the outputs in the order the exercise gives."
        )
    return (
        f"Likely cause: the outputs are out of order: output {index} holds the value output {holds[0]} "
        f"should, and output {held_by[0]} the value output {index} should. Return the outputs in the "
        "order the exercise gives."
    )


def _one_tensor_twice(record: dict) -> str:
    """The probe's "Likely cause:" for a forward that returned one tensor as two outputs, or ""."""
    return arrays.text(record["one_tensor_twice"]) if record.get("one_tensor_twice") else ""


def _in_lower_precision(keep: dict, outputs: list) -> bool:
    """Whether forward returned a floating dtype of fewer bits than the reference's (float32 for float64)."""
    return any(
        isinstance(e, torch.Tensor)
        and isinstance(o, torch.Tensor)
        and o.dtype.is_floating_point
        and torch.finfo(o.dtype).bits < torch.finfo(e.dtype).bits
        for e, o in zip(keep["outputs"], outputs, strict=True)
        if isinstance(e, torch.Tensor) and e.dtype.is_floating_point
    )


def _backward_in_lower_precision(keep: dict, record: dict) -> bool:
    """Whether backward returned, for some input, a floating dtype of fewer bits than that input's (the
    probe reads it before autograd casts it back); backward may return trailing Nones past the inputs."""
    return any(
        isinstance(x, torch.Tensor)
        and x.dtype.is_floating_point
        and isinstance(bits, int)
        and bits < torch.finfo(x.dtype).bits
        for x, bits in zip(keep["inputs"], record.get("backward_bits") or [], strict=False)
    )


_FORWARD_WRONG = "Likely cause: forward itself is wrong (see the forward check); fix it first."


def _lower_precision(returning: str, see: str = "") -> str:
    """Why a backward right in formula misses by rounding: what `returning` gives is rounded to fewer bits."""
    return (
        f"Likely cause: {returning} returns a dtype of lower precision than its input (float32 for "
        f"float64{see}), so every derivative computed through it is rounded to that dtype: keep the "
        "input's dtype."
    )


_LOWER_PRECISION = _lower_precision("forward", "; see the forward check")
_BACKWARD_LOWER_PRECISION = _lower_precision("backward")


def _consistent(record: dict) -> bool:
    """Whether the probe's Jacobian by backward agrees with finite differences, as gradcheck decides."""
    jacobians = record.get("gradcheck")
    if not isinstance(jacobians, dict) or "error" in jacobians:
        return False
    analytic, again, numeric = jacobians["analytic"], jacobians["again"], jacobians["numeric"]
    if not all(isinstance(j, torch.Tensor) for j in (analytic, again, numeric)):
        return False
    if not (analytic.shape == again.shape == numeric.shape) or analytic.numel() == 0:
        return False
    # A backward that gives another answer through the same graph is not reentrant (gradcheck's term).
    return bool(torch.equal(analytic, again)) and bool(
        torch.allclose(analytic.double(), numeric.double(), rtol=_JACOBIAN_RTOL, atol=_JACOBIAN_ATOL)
    )


def _backward_error(record: dict) -> None:
    if "backward_error" in record:
        raise FailedCheckError(arrays.text(record["backward_error"]))


def _changed_grad_out(names: list[str], keep: dict, record: dict) -> str | None:
    """Where a backward run as a first backward left an incoming gradient other than autograd gave it
    (which output's, on which input, and its values there), or None where it left every one alone."""
    after = [_node(g) for g in record["grad_outs_after"]]
    for label, (sent, now) in enumerate(zip(keep["grad_outs"], after, strict=True)):
        index = first_difference(sent, now) if isinstance(now, torch.Tensor) else ()
        if index is None:
            continue
        shown = (
            f": {float(sent[index]):.6g} became {float(now[index]):.6g}"
            if isinstance(now, torch.Tensor)
            else ""
        )
        return f"{_output_label(label, len(after))}, on {samples.describe(names, keep['inputs'])}{shown}"
    return None


def _incoming_name(record: dict) -> str:
    """What backward's own signature calls its incoming gradient, for messages about that tensor."""
    return record.get("incoming_name") or "grad_out"


def _wraps_a_backward(names: list[str]) -> bool:
    """Whether the Function's first input is named grad_out: it is then another Function's backward, whose
    output is commonly called grad_x, a name messages must not give the gradients its own backward returns."""
    return names[:1] == ["grad_out"]


def _grad_out_kept(name: str, names: list[str], keep: dict, record: dict) -> None:
    """backward must leave the incoming gradient as autograd gave it: autograd may hand that very tensor
    to other parts of the graph, which would then get a changed one."""
    where = _changed_grad_out(names, keep, record)
    if where is not None:
        g = _incoming_name(record)
        new = (
            f"each gradient backward returns into a new tensor: {g} * (...)"
            if _wraps_a_backward(names)
            else f"grad_x into a new tensor: grad_x = {g} * (...)"
        )
        raise FailedCheckError(
            f"First derivative: the backward of {name} changes {g} in place{where}.\n"
            f"Likely cause: {g}.mul_(...) or {g} *= ...: autograd may hand that tensor to other "
            f"parts of the graph, which then get a wrong gradient. Compute {new}."
        )


def _grad_out_kept_in_double_backward(name: str, names: list[str], keep: dict, record: dict) -> None:
    """A backward that failed with create_graph=True, and changes grad_out in place where grad_out does
    not require grad, failed for that change: in a double backward grad_out requires grad, and autograd
    refuses to change it in place."""
    if "backward_error" not in record or "grad_outs_after" not in record:
        return
    where = _changed_grad_out(names, keep, record)
    if where is not None:
        failed = arrays.text(record["backward_error"]).splitlines()[0]
        g = _incoming_name(record)
        raise FailedCheckError(
            f"Second derivative: the backward of {name} changes {g} in place{where}, run as a first "
            f"backward. With create_graph=True it fails: {failed}\n"
            f"Likely cause: {g}.mul_(...) or {g} *= ...: in a double backward {g} requires "
            "grad (gradgradcheck makes it a leaf), and autograd does not change a leaf that requires grad "
            f"in place. Build a new tensor: {'' if _wraps_a_backward(names) else 'grad_x = '}{g} * (...)."
        )


def compare_first_derivative(name, names, expected, measurement, where) -> None:
    for keep, record in _samples_of(expected, measurement):
        outputs = _outputs(name, keep, record)
        _backward_error(record)
        _grad_out_kept(name, names, keep, record)
        got = [_node(g) for g in record["grads"]]
        want = keep["grads"]
        for label, w, g in zip(names, want, got, strict=True):
            if g is None:
                raise FailedCheckError(
                    f"First derivative: backward of {name} returned None for {label}, which requires grad "
                    "here, as every input does in this check: return its gradient (None belongs only where "
                    "ctx.needs_input_grad says False)."
                    + (
                        hints.incoming_needs_a_gradient(label)
                        if _wraps_a_backward(names) and label == names[0]
                        else ""
                    )
                )
            problem = mismatch(w, g, names, keep["inputs"])
            if problem:
                cause = _first_derivative_cause(names, label, keep, record, outputs, w, g, (want, got))
                raise FailedCheckError(
                    f"First derivative with respect to {label} is wrong: {name} on "
                    f"{samples.describe(names, keep['inputs'])}, with a random {_incoming(names)}"
                    f"{_fed_there(keep['grad_outs'], w, g)}: {problem}.\n{cause}"
                )
    _passes_torchs_checks(name, names, expected, measurement, "gradcheck", "first derivatives")


# An output's version moved during backward: whatever term is off, the in-place change is the cause.
_CHANGES_OUTPUTS = (
    "Likely cause: backward changes a tensor in place (e.g. result.mul_(grad_out)), and "
    "that tensor is one of the Function's outputs, the very tensor the caller holds: the output changes "
    "with it, and whatever reads it afterwards, later in this backward or in the next evaluation, sees the "
    "changed value. Compute into a new tensor instead (saved + other, not saved.add_(other))."
)


def _first_derivative_cause(names, label, keep, record, outputs, want, got, all_grads) -> str:
    """Why the gradient for the input `label` is wrong; `all_grads` holds every input's (expected, got)
    gradients."""
    if cause := _one_tensor_twice(record):
        # The outputs a wrapper hides can be one tensor too: its backward then reads a changed value.
        return cause
    if _forward_is_wrong(keep, outputs):
        if _in_lower_precision(keep, outputs):
            # gradcheck's finite differences need float64: in float32 they fail a right backward too.
            return _LOWER_PRECISION
        return f"{_FORWARD_WRONG} " + (
            "Your backward does match your own forward (gradcheck passes), so only forward is off."
            if _consistent(record)
            else "Your backward does not match your own forward either (gradcheck fails)."
        )
    if record.get("changes_outputs") is True:
        return _CHANGES_OUTPUTS
    if cause := _known_mistake(keep, all_grads[1]):
        return cause
    grad_outs = keep["grad_outs"]
    if (
        len(outputs) == 1
        and isinstance(got, torch.Tensor)
        and (
            hint := hints.misuses_grad_out(
                want,
                got,
                grad_outs[0],
                _incoming(names, "the "),
                _texts(record.get("making_numbers")),
                _incoming_name(record),
            )
        )
    ):
        return hint
    if isinstance(got, torch.Tensor) and (
        hint := hints.exchanged_arguments(keep.get("exchanged"), got, names)
    ):
        return hint
    if all(isinstance(g, torch.Tensor) for g in all_grads[1]) and (
        hint := hints.swapped_gradients(all_grads[1], all_grads[0], names)
    ):
        return hint
    if isinstance(got, torch.Tensor) and (hint := hints.wrong_sign(want, got)):
        return hint
    if isinstance(got, torch.Tensor) and (
        hint := hints.sign_lost(want, got, dict(zip(names, keep["inputs"], strict=True)))
    ):
        return hint
    if isinstance(got, torch.Tensor) and (
        hint := hints.missing_factor(
            want, got, dict(zip(names, keep["inputs"], strict=True)), record.get("saved", ())
        )
    ):
        return hint
    if len(outputs) > 1 and record.get("extras_hint"):
        return arrays.text(record["extras_hint"])
    if all(isinstance(g, torch.Tensor) for g in all_grads[1]) and (
        hint := hints.inputs_swapped(keep.get("at_swapped_inputs"), all_grads[1], names)
    ):
        return hint
    if isinstance(got, torch.Tensor) and (hint := hints.not_a_number(want, got)):
        return hint
    if isinstance(got, torch.Tensor) and (
        hint := hints.zero_gradient(want, got, label, _wraps_a_backward(names) and label == names[0])
    ):
        return hint
    if (
        len(outputs) == 1
        and isinstance(got, torch.Tensor)
        and (
            hint := hints.incoming_for_input(
                want,
                got,
                grad_outs[0],
                dict(zip(names, keep["inputs"], strict=True)),
                _incoming_name(record),
                record.get("saved", ()),
            )
        )
    ):
        return hint
    return "Likely cause: the derivative formula in backward is wrong; derive it again by hand."


def _known_mistake(keep: dict, got: list) -> str:
    """The causes of the test's known slips whose gradients equal every gradient backward gave, as one
    "Likely cause:" (each after "Or:" where several give the same), or ""."""
    causes = _mistakes_giving(keep.get("mistakes", []), "grads", got)
    return "Likely cause: " + "\n".join(_one_of(causes)) if causes else ""


def _passes_torchs_checks(name, names, expected, measurement, checker: str, what: str) -> None:
    """On top of the reference comparison, what torch's gradcheck or gradgradcheck checks, on every
    sample: analytic against numerical derivatives, then the rest (`autograder.judge.gradcheck`)."""
    for keep, record in _samples_of(expected, measurement):
        _agrees_with_finite_differences(name, names, keep, record, checker, what)
        gradcheck.check(checker, name, names, keep, record["gradcheck"], _incoming(names))


def _agrees_with_finite_differences(name, names, keep, record, checker: str, what: str) -> None:
    if _consistent(record):
        return
    on = f"{name} on {samples.describe(names, keep['inputs'])}"
    jacobians = record.get("gradcheck")
    crashed = isinstance(jacobians, dict) and "error" in jacobians
    outputs = _outputs(name, keep, record)
    if _forward_is_wrong(keep, outputs) and _in_lower_precision(keep, outputs):
        # Finite differences of a forward rounded to float32 miss a right backward too (lesson 01, section 4).
        cause = _LOWER_PRECISION
    elif _forward_is_wrong(keep, outputs):
        cause = (
            "Likely cause: forward is wrong (see the forward check). backward gives the reference's "
            "derivatives, which are not the derivatives of your forward."
        )
    elif _backward_in_lower_precision(keep, record):
        cause = _BACKWARD_LOWER_PRECISION
    elif record.get("changes_outputs") is True:
        cause = _CHANGES_OUTPUTS
    elif crashed:
        raise FailedCheckError(
            f"{checker} fails for {on}: differentiating one output element at a time, as {checker} does, "
            f"raised {arrays.text(jacobians['error'])}{arrays.text(jacobians.get('hint', ''))}"
        )
    else:
        cause = (
            "They matched the reference on the sample inputs: does your Function behave differently "
            "from one call to the next?"
        )
    raise FailedCheckError(
        f"{checker} fails for {on}: its {what} disagree with finite differences of its forward.\n{cause}"
    )


def _cut_message(where: str, cut: list[str], names: list[str], symptom: str, record: dict) -> str:
    """`symptom` ("require grad", "depend on x") is said of the gradients of `cut`, of the inputs `names`,
    together: what was measured is their weighted sum (of those that should depend on x, for "depend on
    x")."""
    cause = (
        record.get("cut_hint")
        or "Likely cause: the gradient was computed from tensors autograd did not record."
    )
    if _wraps_a_backward(names):
        plural = "s" if len(cut) > 1 else ""
        returned = f"the gradient{plural} its backward returns for {' and '.join(cut)}"
        gradients = f"{returned}, taken with create_graph=True,"
    else:
        gradients = " and ".join(f"grad_{name}" for name in cut) + " computed with create_graph=True"
    does, it = ("does", "it") if len(cut) == 1 else ("do", "them")
    on = symptom.removeprefix("depend on ")
    lost = (
        f"finds no derivative of {it} with respect to {on}"
        if on != symptom
        else f"cannot differentiate {it} again"
    )
    return (
        f"Second derivative: the gradient is cut off from the graph. For {where}, "
        f"{gradients} {does} not {symptom}, so autograd {lost} "
        f"(gradgradcheck would fail).\n{arrays.text(cause)}"
    )


def _depending_on(label: str, names: list[str], keep: dict) -> list[str]:
    """The inputs whose reference gradient depends on the input `label`, as the plan found them: the
    gradients a second derivative cut from `label` concerns (all, where it found none)."""
    depends = keep.get("depends_on", [[label]] * len(names))
    return [name for name, on in zip(names, depends, strict=True) if label in on] or names


def _lost_incoming_gradient(label: str, record: dict) -> str:
    """Why the second derivative with respect to an incoming gradient is zero, by what backward's code
    and graph show: a call that leaves the graph, or a second Function it calls."""
    lost = f"Likely cause: the gradient with respect to {label} is lost"
    if untracked := record.get("untracked_hint"):
        return (
            f"{lost}: keep {label} attached, since gradgradcheck differentiates backward in {label} too. "
            f"{untracked.removeprefix('Likely cause: ')}"
        )
    if called := record.get("called_functions"):
        return (
            f"{lost}. backward calls {', '.join(called)}, whose backward must return a gradient for the "
            "incoming gradient it was given too, not None or zero."
        )
    return f"{lost}: backward must compute its result from {label} with torch operations autograd records."


def _wrong_in_called(called: list[str] | None) -> str | None:
    """Where to look when backward's values are right but their derivative is not, and backward calls other
    Functions: their backward is what autograd differentiates it through. None when it calls none."""
    if not called:
        return None
    backwards = " or ".join(f"{name}.backward" for name in called)
    return (
        f"Likely cause: backward's values are right but their derivative is not, and backward calls "
        f"{', '.join(called)}: {backwards} returns a wrong gradient for one of its inputs. See the checks "
        f"of {' and '.join(called)} itself."
    )


# Why a second derivative is wrong but not 0 where backward takes part of its work out of the graph.
_PARTLY = (
    "torch.autograd, which this test uses, still records the rest of backward, so its second derivative "
    "is not 0, but it lacks the terms of the part taken out of the graph."
)


def compare_second_derivative(name, names, expected, measurement, where) -> None:
    for keep, record in _samples_of(expected, measurement):
        outputs = _outputs(name, keep, record)
        if _forward_is_wrong(keep, outputs):
            # A right backward under a wrong forward is not the lesson's Function: no marks for its half.
            raise FailedCheckError(
                f"Second derivative: {name}'s forward is wrong (see the forward check); fix it first."
                + (f"\n{_LOWER_PRECISION}" if _in_lower_precision(keep, outputs) else "")
            )
        _grad_out_kept_in_double_backward(name, names, keep, record)
        _backward_error(record)
        got = [_node(g) for g in record["grads"]]
        if any(g is None or mismatch(w, g, [], []) for w, g in zip(keep["grads"], got, strict=True)):
            cause = _known_mistake(keep, got) or (
                # Swapped gradients are named here too: a formula is not what to fix.
                all(isinstance(g, torch.Tensor) for g in got)
                and hints.swapped_gradients(got, keep["grads"], names)
            )
            raise FailedCheckError(
                f"Second derivative: the first derivative of {name} is already wrong "
                f"(see the first-derivative check); fix it first.{' ' + cause if cause else ''}"
            )
        inputs = keep["inputs"]
        at = f"{name} on {samples.describe(names, inputs)}"
        if not any(g["requires_grad"] is True for g in record["grads"]):
            raise FailedCheckError(_cut_message(at, names, names, "require grad", record))
        if "grads2_error" in record:
            hint = record.get("grads2_hint") or (
                "\nLikely cause: the backward of a Function that backward calls returns the wrong "
                "number or shape of gradients: one per input of its forward, in order."
            )
            raise FailedCheckError(
                f"Second derivative: differentiating the gradient of {at} raised "
                f"{arrays.text(record['grads2_error'])}{arrays.text(hint)}"
            )
        incoming = _incoming(names, "the ")
        count = len(outputs)
        labels = [*names, *(f"{incoming}{_output_label(i, count)}" for i in range(count))]
        variables = (*inputs, *keep["grad_outs"])
        got2 = [_node(g) for g in record["grads2"]]
        for label, variable, w, g in zip(labels, variables, keep["grads2"], got2, strict=True):
            g = torch.zeros_like(variable) if g is None else g
            problem = mismatch(w, g, names, inputs)
            if not problem:
                continue
            # A backward that drops its extra outputs' gradients also gives a zero second derivative,
            # though nothing was cut from the graph: name that cause rather than a cut.
            extras_hint = record.get("extras_hint")
            zero = isinstance(g, torch.Tensor) and is_zero(g)
            if label in names and zero and not extras_hint:
                cut = _depending_on(label, names, keep)
                raise FailedCheckError(_cut_message(at, cut, names, f"depend on {label}", record))
            if label not in names and zero and not extras_hint:
                extras_hint = _lost_incoming_gradient(label, record)
            # What the code shows taken out of the graph comes before what the numbers alone suggest.
            hint = (
                extras_hint
                or (record.get("untracked_hint") and f"{arrays.text(record['untracked_hint'])} {_PARTLY}")
                or hints.missing_factor(
                    w,
                    g,
                    dict(zip(labels, variables, strict=True)),
                    record.get("saved", ()),
                    record.get("called_functions") or (),
                )
                or record.get("computed_on_ctx_hint")
                or _wrong_in_called(record.get("called_functions"))
                or (
                    "Likely cause: backward's values are right but their derivative is not: a term that "
                    "vanishes at first order (an extra output's gradient), or the backward of a Function "
                    "that backward calls, is wrong."
                )
            )
            # The random weight of the gradient that was differentiated, and the random incoming gradient it
            # was taken with, so that a student can redo it (left out where an input is itself called v).
            weight = _fed_there(keep.get("grad_grads", []), w, g) if "v" not in names else ""
            fed = _fed_there(keep["grad_outs"], w, g)
            taken = f" and grad_{names[0]} taken with a random {_incoming(names)}{fed}" if fed else ""
            weighted = f", as sum(v * grad_{names[0]}) with a random v{weight}{taken}" if weight else ""
            raise FailedCheckError(
                f"Second derivative with respect to {label} is wrong: differentiating backward's gradients "
                f"(taken with create_graph=True) of {at}{weighted}: {problem}.\n{arrays.text(hint)}"
            )
    _passes_torchs_checks(name, names, expected, measurement, "gradgradcheck", "second derivatives")


# check_result: an ordinary function, compared by what it returns, leaves in .grad, and lets flow back.


def compare_result(name, names, expected, measurement, where) -> None:
    if "arity" in expected or "arity" in measurement:
        built = expected.get("arity", measurement.get("arity"))
        raise FailedCheckError(
            f"The test is inconsistent: {expected['builder']} builds {built} argument(s) but the "
            f"reference takes {len(names)} ({', '.join(names)})."
        )
    if "error" in measurement:
        raise FailedCheckError(arrays.text(measurement["error"]))
    try:
        _compare_arguments_left_alone(name, names, measurement)
        _compare_result_value(name, expected, measurement)
        _compare_stored_gradients(name, expected, measurement)
        _refuse_a_gradient_cycle(name, measurement)
        _compare_gradient_flow(name, expected, measurement)
    except FailedCheckError as failure:
        # Which builder made the arguments tells a student whether it was the visible example or not.
        raise FailedCheckError(f"{failure}\n  {where}") from None


def _compare_arguments_left_alone(name: str, names, measurement: dict) -> None:
    """The caller's tensors keep their requires_grad and get no history: an answer that changes them in
    place is told to work on a copy."""
    before, after = measurement["flags_before"], measurement["flags_after"]
    for label, flag, now, history in zip(names, before, after, measurement["histories_after"], strict=True):
        if now and not flag and history:
            raise FailedCheckError(
                f"{name} gave the caller's {label} a history (a grad_fn): {label} was changed in place "
                "by a computation that requires grad, as by a Function's forward that changes its input and "
                "marks it with ctx.mark_dirty, or by a jvp that changes its tangent x_t, the caller's "
                "tensor, in place (x_t.mul_(...)). Build each result as a new tensor (x * y, not "
                f"x.mul_(y)); a Function meant to work in place is applied to a copy ({label}.clone())."
            )
        if flag is not now:
            raise FailedCheckError(
                f"{name} changed {label}.requires_grad from {flag} to {now}: it modified the caller's "
                f"tensor. Work on a copy: {label} = {label}.detach().requires_grad_()."
            )


def _compare_result_value(name: str, expected: dict, measurement: dict) -> None:
    """The returned value; a wrong one equal to what a known mistake returns is told with its cause, or
    with each cause it could be where several mistakes return the same (an absolute value and no square
    agree wherever the difference is positive): the numbers cannot tell them apart, so neither is
    blamed alone. A number where a tensor was expected, or a wrong shape, is told with the calls that made
    it, as the probe read them off the code (`making_numbers`, `reshaping`)."""
    got, arguments = measurement["result"], expected.get("arguments", {})
    try:
        _compare_returned(name, expected["result"], got, "the result", arguments)
    except FailedCheckError as failure:
        causes = [
            arrays.text(mistake["cause"])
            for mistake in expected.get("mistakes", [])
            if _returns(name, mistake["result"], got, arguments)
        ]
        if not causes and measurement.get("written_in") is True:
            advice = "compute it from the arguments with autograd"
            raise FailedCheckError(
                f"{failure}\nLikely cause: {_written_in('the result', advice, graph='flow' in expected)}."
            ) from None
        number = _made_a_number(
            expected["result"],
            got,
            measurement.get("making_numbers"),
            _first_wrong_item(name, expected["result"], got, arguments),
        )
        rounded = _paired_tensors(expected["result"], got)
        if not causes and rounded and (float32 := _rounded_to_float32(rounded, measurement)):
            raise FailedCheckError(f"{failure}\n{float32}") from None
        if not causes and number:
            raise FailedCheckError(f"{failure}\nLikely cause: {number}") from None
        if not causes and (absolute := _absolute_value_taken(expected["result"], got, measurement)):
            raise FailedCheckError(f"{str(failure).split(chr(10), 1)[0]}\n{absolute}") from None
        if not causes:
            # Close to the right value is a cause too, but only where no known mistake explains it.
            want, near = expected["result"], _node(got)
            if (
                "tensor" in want
                and isinstance(near, torch.Tensor)
                and (hint := hints.approximately(want["tensor"], near))
            ):
                raise FailedCheckError(f"{failure}\n{hint}") from None
            if isinstance(near, torch.Tensor) and (missing := _reduction_missing(want, near)):
                raise FailedCheckError(f"{failure}\n{missing}") from None
            reshaping = _texts(measurement.get("reshaping"))
            if isinstance(near, torch.Tensor) and (kept := _size_one_dimensions_kept(want, near, reshaping)):
                raise FailedCheckError(f"{failure}\n{kept}") from None
            if "got shape" in str(failure) and reshaping:
                raise FailedCheckError(f"{failure}\n{_reshaped_by(reshaping)}") from None
            if _gradients_left_in_their_tuple(want, got, measurement):
                raise FailedCheckError(f"{failure}\nLikely cause: {_TUPLE_OF_GRADIENTS}") from None
            raise
        # A known mistake's cause replaces the generic hint the comparison may have added.
        headline = str(failure).split("\n", 1)[0]
        listed = "\n".join(_one_of(_absolute_value_first(causes, measurement)))
        raise FailedCheckError(f"{headline}\nLikely cause: {listed}") from None


_TUPLE_OF_GRADIENTS = (
    "torch.autograd.grad returns a tuple, one gradient per input, even for one input: unpack it, "
    "(g,) = torch.autograd.grad(...)."
)


def _gradients_left_in_their_tuple(want: dict, got, measurement: dict) -> bool:
    """Whether a tuple came back where a tensor was expected (the result, or an item of it), from code that
    calls torch.autograd.grad, whose result is a tuple whatever it differentiates by."""
    ways = measurement.get("ways_out")
    if not isinstance(ways, dict) or not ways.get("gradient_calls_recorded") or not isinstance(got, dict):
        return False
    return bool(_tensors_returned_as(want, got, lambda value: value.get("type") == "tuple"))


# How far a value computed with a float32 tensor among float64 ones may be off, relative to the largest
# value of its tensor: float32 keeps about 7 significant digits (its epsilon is 1.2e-7), and a few
# roundings add up.
_FLOAT32_ROUNDING = 1e-5


def _rounded_to_float32(pairs: list, measurement: dict) -> str:
    """Why values are wrong where the answer's code makes a float32 tensor (as the probe saw it,
    `float32_made`) among float64 inputs and every (expected, got) tensor of `pairs` is off by float32
    rounding alone: that tensor, which rounds what it touches. "" otherwise: nothing is cut or
    differentiated otherwise there, and where the numbers are further off the rounding is not why."""
    made = measurement.get("float32_made")
    if not isinstance(made, dict) or not all(_off_by_rounding(w, g) for w, g in pairs):
        return ""
    calls = _texts(made.get("calls"))
    with_calls = f" (with {' or '.join(calls)})" if calls else ""
    return (
        f"Likely cause: your code makes a float32 tensor{with_calls}, which rounds to about 7 significant "
        "digits what it holds and what it touches (torch.tensor(0.01) is float32: 0.0099999998); the checks "
        "run in float64. Keep plain numbers Python numbers (lr * grad needs no tensor), and tensors in the "
        "inputs' dtype (dtype=torch.float64, x.new_tensor(0.01), no .float())."
    )


def _off_by_rounding(want, got) -> bool:
    """Whether `got`, of `want`'s shape and dtype, is off from it by no more than float32 rounding."""
    if not isinstance(want, torch.Tensor) or not isinstance(got, torch.Tensor):
        return False
    if got.shape != want.shape or got.dtype != want.dtype or not want.dtype.is_floating_point:
        return False
    scale = float(want.detach().abs().max()) if want.numel() else 0.0
    off = float((got.detach() - want.detach()).abs().max()) if want.numel() else 0.0
    return off <= _FLOAT32_ROUNDING * scale


def _paired_tensors(want: dict, got) -> list:
    """The (expected, got) tensors of two results of one structure (a tensor, or tuples, lists or dicts of
    them), in order; [] where the structures differ or hold anything else."""
    if not isinstance(got, dict):
        return []
    if "tensor" in want:
        return [(want["tensor"], got["tensor"])] if "tensor" in got else []
    wanted, gotten = want.get("items"), got.get("items")
    if not isinstance(wanted, list) or not isinstance(gotten, list) or len(wanted) != len(gotten):
        return []
    if want.get("keys") != got.get("keys"):
        return []
    pairs = [_paired_tensors(w, g) for w, g in zip(wanted, gotten, strict=True)]
    return [pair for pair_list in pairs for pair in pair_list] if all(pairs) else []


def _first_wrong_item(name: str, want: dict, got: dict, arguments: dict) -> int | None:
    """The index of the first wrong item of a sequence returned, the one the failure names; None where the
    result is not a sequence of as many items as the reference's."""
    wanted, gotten = want.get("items"), got.get("items")
    if not isinstance(wanted, list) or not isinstance(gotten, list) or len(wanted) != len(gotten):
        return None
    for index, (w, g) in enumerate(zip(wanted, gotten, strict=True)):
        if not _returns(name, w, g, arguments):
            return index
    return None


def _made_a_number(want: dict, got: dict, making_numbers, first_wrong: int | None) -> str:
    """Why a tensor came back as a Python number, where the code makes a call that does that; else "". In
    a sequence, only where the first wrong item, the one the failure names, is one of those numbers: another
    item's number is told once that one is right."""
    calls = _texts(making_numbers)
    wanted = _tensors_made_numbers(want, got)
    if first_wrong is not None and not any(tensor is want["items"][first_wrong] for tensor in wanted):
        return ""
    if not calls or not wanted:
        return ""
    if any(tensor.get("requires_grad") for tensor in wanted):
        return (
            f"{' or '.join(calls)} turns the tensor into a Python number, which has no graph; return the "
            "tensor."
        )
    # Where the reference's tensors have no graph, the type is all that is wrong: name the shapes expected.
    shapes = " and ".join(str(tuple(tensor["tensor"].shape)) for tensor in wanted)
    several = len(wanted) > 1
    kind = "tensors (shapes" if several else "a tensor (shape"
    numbers = "Python numbers" if several else "a Python number"
    made = " or ".join(calls)
    return f"{made} turns a tensor into a Python number: return {kind} {shapes}), not {numbers}."


def _tensors_made_numbers(want: dict, got: dict) -> list[dict]:
    """The expected tensors for which `got` holds a number, `want` itself or items of the same sequence."""
    return _tensors_returned_as(want, got, lambda value: "number" in value)


def _tensors_returned_as(want: dict, got: dict, returned_as: Callable[[dict], bool]) -> list[dict]:
    """The expected tensors for which `got` holds a value `returned_as` tells (a number, a tuple), `want`
    itself or items of the same sequence."""
    if "tensor" in want:
        return [want] if returned_as(got) else []
    wanted, gotten = want.get("items"), got.get("items")
    if not isinstance(wanted, list) or not isinstance(gotten, list):
        return []
    return [
        w
        for w, g in zip(wanted, gotten, strict=False)
        if isinstance(w, dict) and isinstance(g, dict) and "tensor" in w and returned_as(g)
    ]


def _reduction_missing(want: dict, got: torch.Tensor) -> str:
    """Why a result has more values than the reference's: they were never reduced (summed or averaged),
    which no call that changes shapes explains, as it would where values are as many but arranged
    otherwise. "" where the result is no more values than expected."""
    if "tensor" not in want or got.numel() <= want["tensor"].numel():
        return ""
    if want["tensor"].numel() == 1:
        return (
            f"Likely cause: it returns {got.numel()} values where one is expected: reduce them to one (for "
            "a loss, their mean, .mean())."
        )
    return (
        f"Likely cause: it returns {got.numel()} values where {want['tensor'].numel()} are expected: a "
        "reduction (a sum or mean over a dimension) is missing."
    )


# The calls among those measure names (`reshaping`) that give a 0-dim tensor a dimension of size 1.
_ADDING_A_DIMENSION = ("`.unsqueeze()`", "`.reshape()`", "`.view()`", "`.flatten()`")


def _size_one_dimensions_kept(want: dict, got: torch.Tensor, reshaping: list[str]) -> str:
    """Why one value, where a 0-dim tensor is expected, comes in dimensions of size 1: a call in the code
    that adds one (a 0-dim loss's .reshape(1)), which is to be dropped, or else a reduction over one
    dimension or with keepdim=True that kept it (the penalty's .mean(dim=0) after a norm with
    keepdim=True), to be made over every dimension. `reshaping` are the shape-changing calls the code
    makes, as measure spells them. "" where the reference's result is not 0-dim or the result is not one
    value."""
    if "tensor" not in want or want["tensor"].dim() != 0 or got.numel() != 1 or got.dim() == 0:
        return ""
    shape = tuple(got.shape)
    adding = [call for call in reshaping if call in _ADDING_A_DIMENSION]
    if adding:
        return (
            f"Likely cause: {' or '.join(adding)} in your code, if applied to the value you return, gives "
            f"its one value the shape {shape}. Drop that call: return the 0-dim tensor itself."
        )
    return (
        f"Likely cause: the result is one value, but in shape {shape}: a reduction with dim= or "
        "keepdim=True kept that size-1 dimension. Reduce over every dimension at once (.mean() or .sum() "
        "without dim=)."
    )


def _reshaped_by(calls: list[str]) -> str:
    """Why a result has the wrong shape, in code that calls something that changes shapes (`calls`, as
    measure spells them): the call applied to the value returned, since elsewhere (the .sum() of a loss)
    such a call does no harm; torch.autograd.grad already gives each gradient its tensor's own shape."""
    if len(calls) == 1:
        which = f"{calls[0]} in your code, if applied to the value you return: it changes"
    else:
        listed = f"{', '.join(calls[:-1])} or {calls[-1]}"
        which = f"{listed} in your code, whichever is applied to the value you return: each changes"
    return (
        f"Likely cause: {which} a tensor's shape, and torch.autograd.grad already returns each gradient in "
        "the shape of its tensor."
    )


def _returns(name: str, result, got, arguments: dict) -> bool:
    """Whether `got` is `result`, as the check compares them."""
    try:
        _compare_returned(name, result, got, "the result", arguments)
    except FailedCheckError:
        return False
    return True


def _one_of(causes: list[str]) -> list[str]:
    """The causes as lines: one alone, several each after "Or:"."""
    return causes[:1] + [f"Or: {cause}" for cause in causes[1:]]


def _kind(tree: dict) -> str:
    if "keys" in tree:
        return f"a {tree['type']} of {', '.join(repr(key) for key in tree['keys'])}"
    if "items" in tree:
        return f"a {tree['type']} of {len(tree['items'])}"
    if "tensor" in tree:
        return "a Tensor"
    return "None" if tree["type"] == "NoneType" else f"a {tree['type']}"


def _item_of_the_result(name: str, index: int, count: int) -> str:
    """How a message names item `index` of a tuple result: by the label a name such as
    "jvp(grad(f)) → (gradient, H·v)" gives it, so the student need not count; else by its index."""
    _, arrow, labels = name.rpartition(" → (")
    named = labels.removesuffix(")").split(", ") if arrow else []
    label = f"{named[index]} (item {index})" if len(named) == count else f"item {index}"
    return f"{label} of the result"


def _compare_parts(name: str, parts, arguments: dict) -> None:
    """Each (want, got, label) part of a tuple or dict result; the first wrong part fails the check. Where
    its values told a cause, every other wrong part is named after it with the first sentence of its own,
    so that a slip made in two parts (a division in each gradient) is fixed in one go; where they told
    none, the cause is the whole result's (numbers written in), which the caller adds."""
    failures = []
    for want, got, label in parts:
        try:
            _compare_returned(name, want, got, label, arguments)
        except FailedCheckError as failure:
            failures.append((label, str(failure)))
    if not failures:
        return
    if not likely_cause(failures[0][1]):
        raise FailedCheckError(failures[0][1])
    also = []
    for label, message in failures[1:]:
        cause = likely_cause(message)
        also.append(f"{_capitalized(label)} is wrong too" + (f": {cause}" if cause else "."))
    raise FailedCheckError("\n".join([failures[0][1], *also]))


def _compare_returned(name: str, want: dict, got: dict, label: str, arguments: dict) -> None:
    """Same structure, and every tensor or number in it equal to the reference's; `arguments`, the
    tensors the function was called with, can name why a tensor in it is wrong."""
    title = _capitalized(_the_result_of(name) if label == "the result" else f"{label} of {name}")
    if "items" in want and want["type"] in ("tuple", "list"):
        if "items" not in got or len(got["items"]) != len(want["items"]):
            raise FailedCheckError(f"{name} returns {_kind(got)}; it should return {_kind(want)}.")
        labels = [_item_of_the_result(name, index, len(want["items"])) for index in range(len(want["items"]))]
        _compare_parts(name, zip(want["items"], got["items"], labels, strict=True), arguments)
        return
    if "keys" in want:
        if "keys" not in got or sorted(got["keys"]) != sorted(want["keys"]):
            raise FailedCheckError(f"{name} returns {_kind(got)}; it should return {_kind(want)}.")
        entries = dict(zip(got["keys"], got["items"], strict=True))
        parts = [
            (w, entries[key], f"entry {key!r} of the result")
            for key, w in zip(want["keys"], want["items"], strict=True)
        ]
        _compare_parts(name, parts, arguments)
        return
    if _node(want) is None:
        if _node(got) is not None and label == "the result":
            raise FailedCheckError(
                f"{name} returns {_kind(got)}; it should return None: its work shows in .grad."
            )
        if _node(got) is not None:
            raise FailedCheckError(f"{title} should be None, not {_kind(got)}.")
        return
    hint = ""
    if "tensor" in want:
        problem = mismatch(want["tensor"], _node(got), [], [])
        if _node(got) is None:
            hint = _RETURNED_NONE
        if problem and isinstance(_node(got), torch.Tensor):
            problem += _shaped_like(want["tensor"], _node(got), arguments)
            hint = (
                hints.divides_by_zero(want["tensor"], _node(got), arguments)
                or hints.wrong_only_where_zero(want["tensor"], _node(got), arguments)
                or hints.wrong_sign(want["tensor"], _node(got), "value", "the expression that computes it")
                or ""
            )
    elif "tensor" in got or "number" in got:
        value = got.get("number")
        if "tensor" in got and got["tensor"].numel() == 1:
            value = float(got["tensor"])
        close = isinstance(value, float) and math.isclose(value, want["number"], rel_tol=1e-7, abs_tol=1e-9)
        shown = got.get("tensor", value)
        if close:
            problem = None
        elif isinstance(value, float):
            expected_text, got_text = apart(want["number"], value)
            problem = f"expected {expected_text}, got {got_text}"
        else:
            problem = f"expected {want['number']:.6g}, got {shown}"
    else:
        problem = f"got {_kind(got)} instead of a number"
    if problem:
        raise FailedCheckError(f"{title} is wrong: {problem}." + (f"\n{hint}" if hint else ""))


# Why a function returned None where a tensor was expected: the two ways code does that without meaning to.
_RETURNED_NONE = (
    "Likely cause: it returns nothing (no `return` line), or a `.grad` that is None: only a leaf that "
    "requires grad gets one, from a backward. torch.autograd.grad returns a gradient instead."
)


def _shaped_like(want: torch.Tensor, got: torch.Tensor, arguments: dict) -> str:
    """Where a result of the wrong shape should have the shape of an argument, which one; else "". Not for
    a result of one element: a (1, 1) argument has that shape as often by chance as by design."""
    if got.dtype != want.dtype or got.shape == want.shape or want.numel() < 2:
        return ""
    label = next((label for label, argument in arguments.items() if argument.shape == want.shape), None)
    return f"; return a tensor shaped like {label}" if label else ""


def _compare_stored_gradients(name: str, expected: dict, measurement: dict) -> None:
    """`.backward()` fills .grad and adds to it; torch.autograd.grad does neither."""
    known = _how_counted_twice(
        _no_graph_first(
            _zeroing_first(
                _mistakes_giving(expected.get("mistakes", []), "leaf_grads", measurement["leaf_grads"]),
                measurement,
            ),
            measurement,
        ),
        measurement,
    )
    for label, want_tree, got_tree, kept, before in zip(
        expected["leaves"],
        expected["leaf_grads"],
        measurement["leaf_grads"],
        expected["kept_filled"],
        expected["filled"],
        strict=True,
    ):
        want, got = _node(want_tree), _node(got_tree)
        if kept and got is None:
            raise FailedCheckError(
                f"{name} emptied {label}.grad (None), which held the gradient an earlier backward left for "
                "the caller. Likely cause: the code resets it (.grad = None or zero_grad()), perhaps to undo "
                "its own .backward(); torch.autograd.grad returns the gradient and leaves every .grad as it "
                "was: nothing to undo."
            )
        if kept and mismatch(want, got, [], []):
            raise FailedCheckError(
                f"{name} changed {label}.grad, which held the gradient an earlier backward left for the "
                "caller. Likely cause: .backward() adds to .grad (or the code writes to it); "
                "torch.autograd.grad returns the gradient and leaves every .grad as it was."
            )
        if (
            want is None
            and got is not None
            and measurement.get("calls_backward") is not False
            and _gradient_of_the_result(expected, measurement, label, got)
        ):
            raise FailedCheckError(
                f"{name} filled {label}.grad, which should stay None, with the gradient of the result it "
                "returns. Likely cause: it calls .backward() on that result; take no gradient of it and "
                f"return it as it is: the caller differentiates what {name} returns, and its .backward() "
                "stores the gradient."
            )
        if want is None and got is not None:
            raise FailedCheckError(
                f"{name} filled {label}.grad, which should stay None. Likely cause: "
                + _what_fills_grad(expected, measurement, got)
            )
        if want is not None and got is None:
            raise FailedCheckError(
                f"{name} left {label}.grad empty (None). Likely cause: "
                + (
                    "\n".join(_one_of(known))
                    if known
                    else "torch.autograd.grad returns gradients without storing them, and .backward() is "
                    "what stores them in .grad; or .grad was cleared (zero_grad(), .grad = None) after the "
                    "backward calls."
                )
            )
        problem = want is not None and mismatch(want, got, [], [])
        if problem and _written_in_grad(expected["leaves"], measurement, label):
            raise FailedCheckError(
                f"{label}.grad after {name} is wrong: {problem}.\nLikely cause: "
                f"{_written_in(f'{label}.grad', 'let backward add the gradients', graph=False)}."
            )
        if problem and not known and (negated := _added_negated(want, got, _node(before))):
            raise FailedCheckError(f"{label}.grad after {name} is wrong: {problem}.\n{negated}")
        if problem:
            causes = known or [
                ".grad adds up over backward calls; check which results you call .backward() on, and that "
                "nothing is zeroed in between or counted twice."
            ]
            listed = "\n".join(_one_of(causes))
            raise FailedCheckError(f"{label}.grad after {name} is wrong: {problem}.\nLikely cause: {listed}")


def _added_negated(want, got, before) -> str | None:
    """The wrong-sign hint where what the answer added to a .grad is what the reference added, negated (a
    minus in front of what backward is called on). What was added is measured from what the .grad held
    before the call, if anything. None for a .grad of another shape or dtype, which the difference would
    hide."""
    if not (isinstance(want, torch.Tensor) and isinstance(got, torch.Tensor)):
        return None
    if got.shape != want.shape or got.dtype != want.dtype:
        return None
    held = before if isinstance(before, torch.Tensor) else torch.zeros_like(want)
    return hints.wrong_sign(
        want - held, got - held, "sum added to .grad", "the results you call .backward() on"
    )


def _written_in(what: str, advice: str, graph: bool) -> str:
    """Why a value is wrong where the code wrote its numbers in (torch.full_like(x, 12.5), a literal
    tensor): nothing was computed from the arguments, so it fits one network at most. That it has no
    graph is said where `graph` asks: where the check needs one and its message has not said so already.
    Of a result the tests do not differentiate, or of a .grad, it would suggest that a graph is wanted."""
    subject = "it has no graph, and" if graph else "it"
    return (
        f"{what} is numbers written in (torch.full_like, torch.tensor of values), not computed from the "
        f"arguments: {subject} fits at most the one network whose numbers they are; {advice}"
    )


def _written_in_grad(labels: list[str], measurement: dict, label: str) -> bool:
    """Whether the code wrote numbers in as `label`'s .grad, where the probe saw it make that tensor."""
    written = measurement.get("grads_written_in")
    return isinstance(written, list) and len(written) == len(labels) and written[labels.index(label)] is True


def _zeroing_first(causes: list[str], measurement: dict) -> list[str]:
    """The causes, those that zero or clear .grad first where the code does (zero_grad(), .grad = None):
    of two mistakes that leave the same .grad, the code shows which one it makes. Where the code zeroes
    nothing, a cause that says .grad was zeroed is not its mistake, and is dropped if another remains."""
    if not measurement.get("zeroes_grads"):
        kept = [cause for cause in causes if "zeroed" not in cause]
        return kept or causes
    return sorted(causes, key=lambda cause: "zero" not in cause)


def _no_graph_first(causes: list[str], measurement: dict) -> list[str]:
    """The causes, only those of a gradient computed without create_graph=True where the code takes a
    gradient and never passes create_graph (one of them among them): of two mistakes that leave the same
    .grad (a backward never called, or run on a constant), the code shows which one it makes."""
    ways = measurement.get("ways_out")
    ways = ways if isinstance(ways, dict) else {}
    if ways.get("takes_gradients") is not True or ways.get("create_graph") is True:
        return causes
    constant = [cause for cause in causes if "without create_graph=True" in cause]
    return constant or causes


def _how_counted_twice(causes: list[str], measurement: dict) -> list[str]:
    """The causes, a gradient "counted twice" told how, as the code shows: where it writes to .grad itself,
    it added there what a backward had already added; else backward ran on that result twice, or on a sum
    that holds it twice."""
    if measurement.get("writes_grads"):
        how = "your code adds to .grad itself what a backward had already added; leave that to backward."
    else:
        how = (
            "run backward once on each result, on the result itself. Here backward ran twice on it (two "
            "calls, or backward(create_graph=True) and another), or on what holds it twice (2 * g, g + g)."
        )
    return [f"{cause[:-1]}: {how}" if cause.endswith("counted twice.") else cause for cause in causes]


def _absolute_value_first(causes: list[str], measurement: dict) -> list[str]:
    """The causes, only those that take an absolute value where the code does (.abs()) and one of them
    is among them: of two mistakes that give the same result (|d| and d agree wherever d > 0), the code
    shows which one it makes."""
    absolute = [cause for cause in causes if "absolute value" in cause]
    return absolute if measurement.get("takes_abs") and absolute else causes


def _absolute_value_taken(want: dict, got: dict, measurement: dict) -> str:
    """Why a result is wrong where the code takes an absolute value and the result is the expected one's
    absolute value: the .abs(), which turns its negative values positive, rather than a flipped sign. ""
    otherwise."""
    near = _node(got)
    if not measurement.get("takes_abs") or "tensor" not in want or not isinstance(near, torch.Tensor):
        return ""
    expected = want["tensor"]
    if near.shape != expected.shape or near.dtype != expected.dtype:
        return ""
    if not torch.allclose(near.detach(), expected.abs(), rtol=1e-6, atol=1e-9):
        return ""
    return (
        "Likely cause: the .abs() in your code: the result is the right one's absolute value, positive where "
        "it should be negative. Keep the sign: remove the .abs()."
    )


def _what_fills_grad(expected: dict, measurement: dict, got: torch.Tensor) -> str:
    """Why a .grad that should stay None was filled: .backward() where the code calls it, else the code
    wrote to .grad itself. Where the code records a gradient with torch.autograd.grad(..., create_graph=True)
    and the .grad holds one of the results the function should return, its backward differentiated that
    gradient: the fix is to take that derivative with torch.autograd.grad too, not a create_graph=True the
    code already passes. Otherwise the reminder that a gradient differentiated again needs create_graph=True
    is only for code that records one (it passes create_graph) or whose result the caller differentiates
    (the reference's has a graph): for a plain first derivative it would be beside the point. Code that
    passes create_graph=True but to no torch.autograd.grad call passed it to .backward(): it is told to swap
    that call, not that it still needs create_graph=True; code whose torch.autograd.grad already records is
    told to leave out the .backward()."""
    if measurement.get("calls_backward") is False:
        return ".grad was assigned directly (or added to); return the value instead and leave .grad alone."
    instead = (
        ".backward() stores gradients in the .grad of every leaf it reaches; torch.autograd.grad returns "
        "them instead and leaves .grad alone."
    )
    ways = measurement.get("ways_out")
    ways = ways if isinstance(ways, dict) else {}
    if any(ways.get("gradient_calls_recorded") or ()) and any(
        _same(want, got) for want in _tensors_in(expected["result"])
    ):
        return (
            f"{instead} That .grad holds a result the function should return: to differentiate a gradient g "
            "that torch.autograd.grad(..., create_graph=True) recorded, call torch.autograd.grad(g, w), "
            "which returns the derivative; g.backward() stores it in w.grad."
        )
    if "flow" not in expected and ways.get("create_graph") is not True:
        return instead
    if ways.get("create_graph") is not True:
        return (
            f"{instead} A gradient you differentiate again needs create_graph=True: "
            "torch.autograd.grad(..., create_graph=True)."
        )
    if not any(ways.get("gradient_calls_recorded") or ()):
        return (
            f"{instead} Swap .backward(create_graph=True) for torch.autograd.grad(..., create_graph=True), "
            "which returns the gradient with its graph."
        )
    return (
        f"{instead} The code already takes a gradient with torch.autograd.grad(..., create_graph=True): take "
        "every gradient here that way and call no .backward()."
    )


def _tensors_in(tree) -> list[torch.Tensor]:
    """The tensors a measured result holds (a tensor, or tuples, lists or dicts of them), in order."""
    if not isinstance(tree, dict):
        return []
    if isinstance(tree.get("tensor"), torch.Tensor):
        return [tree["tensor"]]
    return [tensor for item in tree.get("items") or [] for tensor in _tensors_in(item)]


def _gradient_of_the_result(expected: dict, measurement: dict, label: str, got) -> bool:
    """Whether the .grad an answer filled is the gradient of the scalar it returns (the reference's, or its
    own where its graph is still there), as a .backward() on its own result leaves: a loss, which the
    caller differentiates, and which needs no gradient taken inside at all."""
    if expected.get("scalar") is not True:
        return False
    index = expected["leaves"].index(label)
    flow = measurement.get("flow")
    gradients = [expected["flow"][index]]
    if isinstance(flow, dict) and isinstance(flow.get("grads"), list):
        gradients.append(flow["grads"][index])
    return any(_value(gradient) is not None and _same(gradient, got) for gradient in gradients)


def _mistakes_giving(mistakes: list[dict], key: str, got: list) -> list[str]:
    """The causes of the known mistakes whose `key` (the gradients backward gives, or what is left in each
    .grad) is, tensor for tensor, what the answer gave; a mistake that gives no tensor names nothing."""
    return [
        arrays.text(mistake["cause"])
        for mistake in mistakes
        if key in mistake
        and any(_value(tensor) is not None for tensor in mistake[key])
        and all(_same(w, g) for w, g in zip(mistake[key], got, strict=True))
    ]


def _value(value):
    """A value as planned or already read from a measurement, or read from a measured tree."""
    return _node(value) if isinstance(value, dict) else value


def _same(want, got) -> bool:
    """Equal as the checks compare tensors; None equals only None."""
    want, got = _value(want), _value(got)
    if want is None or got is None:
        return want is None and got is None
    return isinstance(got, torch.Tensor) and not mismatch(want, got, [], [])


def _refuse_a_gradient_cycle(name: str, measurement: dict) -> None:
    """A result right in every number can still leak all its memory, every call. The probe tells which
    tensor holds the cycle, one of the caller's by its name, and whether it is a leaf: a leaf's .grad gets
    a graph from .backward(create_graph=True) or from the code writing one there; a tensor that is not one,
    from any pass through it once it retains its gradient."""
    if measurement.get("gradient_cycle") is not True:
        return
    cycle = measurement.get("cycle_in")
    cycle = cycle if isinstance(cycle, dict) else {}
    label = cycle.get("label")
    holder = f"{arrays.text(label)}.grad" if isinstance(label, str) else "the .grad of a tensor it made"
    if cycle.get("leaf") is False:
        cause = (
            "a tensor that is not a leaf retains its gradient (retain_grad(), or listed in backward's "
            "inputs=): every later pass through it, torch.autograd.grad's too, stores a gradient there, so "
            "setting that .grad to None in between does not help. torch.autograd.grad alone stores nothing."
        )
    elif measurement.get("calls_backward") is False:
        cause = "a gradient made with create_graph=True was assigned to .grad; assign its .detach() instead."
    else:
        cause = (
            ".backward(create_graph=True) stores the gradient in .grad, graph and all. Take a gradient "
            "you differentiate again with torch.autograd.grad(..., create_graph=True), which returns it and "
            "stores nothing."
        )
    raise FailedCheckError(
        f"{name} leaks memory: {holder} holds a gradient whose graph leads back to that tensor, a reference "
        f"cycle never freed (https://github.com/pytorch/pytorch/issues/4661).\nLikely cause: {cause}"
    )


def _why_constant(measurement: dict, whole: bool) -> tuple[list[str], str]:
    """Why a result, or part of it, is a constant to autograd, naming only what the answer's code does (as
    the probe read it off): the calls it makes that leave the graph, NumPy, a gradient taken without
    create_graph=True where it takes one and never passes create_graph; and the advice that goes with it.
    A copy made by `.detach().requires_grad_()` is named only where the result is not `whole`ly
    constant: what is computed from that new leaf is recorded, only not back to the tensor it copies."""
    ways = measurement.get("ways_out")
    ways = ways if isinstance(ways, dict) else {}
    calls = [arrays.text(call) for call in ways.get("calls", []) if isinstance(call, str)]
    without_create_graph = ways.get("takes_gradients") is True and ways.get("create_graph") is not True
    causes = []
    if without_create_graph:
        causes.append("it takes a gradient without create_graph=True, which makes that gradient a constant")
    if calls:
        verb = "leaves" if len(calls) == 1 else "leave"
        causes.append(
            f"the code computing it uses {', '.join(calls)}, which {verb} what it computes out of the graph"
        )
    if ways.get("fresh_leaves") is True and not whole:
        causes.append(
            "the code computing it uses `.detach().requires_grad_()`, a new leaf with no path back to the "
            "tensor it copies: use that tensor itself where the result must lead back to it"
        )
    if ways.get("numpy") is True:
        causes.append("it computes with NumPy, which autograd cannot record")
    copies = _texts(ways.get("copies_in_setup_context"))
    if copies:
        causes.append(
            f"setup_context saves a tensor made with {' or '.join(copies)} in place of the output itself. "
            "setup_context runs with grad disabled, before autograd links the output into the graph, so "
            "only the output saved as it is gets a history; a tensor made there has none, and what a rule "
            "computes from it is cut from the inputs: save the output itself"
        )
    computed = _texts(ways.get("computed_in_setup_context"))
    if computed:
        causes.append(
            f"setup_context saves a tensor it computed itself (with {' and '.join(computed)}) in place of "
            "the output. setup_context runs with grad disabled, so that tensor has no history and no link to "
            "the Function's output, and what a rule computes from it is cut from the inputs: save `output`"
        )
    # Where the whole result is a constant, the cause says all: the gradient taken is a constant.
    advice = ""
    if without_create_graph and not whole:
        advice = " With create_graph=True autograd records the gradient, so it can be differentiated again."
    if without_create_graph and ways.get("retain_graph") is True:
        advice += (
            " retain_graph=True is no substitute: it only keeps the graph for another backward, where "
            "create_graph=True records the gradient so that it can be differentiated."
        )
    return causes, advice


def _texts(listed) -> list[str]:
    """The strings of a list the probe measured, as text; anything else, none."""
    return [arrays.text(item) for item in listed if isinstance(item, str)] if isinstance(listed, list) else []


def _constant_otherwise(measurement: dict) -> str:
    """Why a result is a constant where its code names no cause: where it passes create_graph to some
    gradient call, another call may still lack it (the last of two, whose gradient it returns)."""
    ways = measurement.get("ways_out")
    ways = ways if isinstance(ways, dict) else {}
    untracked = "it was computed from tensors autograd did not record"
    recorded = ways.get("gradient_calls_recorded")
    if isinstance(recorded, list) and len(recorded) > 1 and recorded[-1] is False and True in recorded:
        return (
            "the last of its gradient calls lacks create_graph=True: the gradient it takes is a constant, "
            f"so a result computed from it has no graph; or {untracked}"
        )
    if ways.get("takes_gradients") is True and ways.get("create_graph") is True:
        return (
            "one of its gradient calls lacks create_graph=True, which makes that gradient a constant (every "
            f"call whose gradient is returned or differentiated again needs it); or {untracked}"
        )
    return untracked


def _differentiated_otherwise(causes: list[str], functions: list[str], rules: dict) -> str:
    """Why a result of the right value has the wrong gradient: a part autograd takes as a constant, for the
    causes the answer's code can have; without one, the backward of a Function on the way, where the
    result runs through one, and a saved tensor changed in place where a rule of it changes one; else a
    derivative rule on the way is wrong as well."""
    if causes:
        return f"part of the result is a constant to autograd: {'; or '.join(causes)}"
    if functions:
        return (
            f"the backward of {' or '.join(functions)}, which the result runs through, returns a wrong "
            f"derivative: check its formula{_saved_tensor_changed(rules)}"
        )
    return (
        "autograd differentiates it otherwise than its value says: part of it was computed from tensors "
        "autograd did not record, or a Function it runs through has a wrong backward"
    )


def _saved_tensor_changed(rules: dict) -> str:
    """The second thing to check, where a rule of a Function on the way changes a tensor in place: that
    it is not a saved one. The rules are named as the Function defines them."""
    if not rules.get("in_place"):
        return ""
    defined = [arrays.text(rule) for rule in rules.get("defined", [])]
    if len(defined) > 1:
        return (
            f", and that no rule of the Function, {' or '.join(defined)}, changes a saved tensor in "
            f"place {_IN_PLACE_CALLS}"
        )
    return f", and that backward changes no saved tensor in place {_IN_PLACE_CALLS}"


# How a rule changes a saved tensor in place, whichever tensors its Function saves (an input or the output).
_IN_PLACE_CALLS = "(its .mul_(), .square_() or +=)"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def _the_result_of(name: str) -> str:
    """What a message calls the result: a check named by what it computes ("the query loss after
    inner_step") is that result already; one named by a function is "the result of" it."""
    return name if name.startswith("the ") else f"the result of {name}"


def _compare_gradient_flow(name: str, expected: dict, measurement: dict) -> None:
    """Where the reference's result can be differentiated, the student's must give the same gradients."""
    if "flow" not in expected:
        return
    labels = expected["leaves"]
    reached = [label for label, w in zip(labels, expected["flow"], strict=True) if not is_zero(w)] or labels
    targets = ", ".join(reached[:3]) + (", ..." if len(reached) > 3 else "")
    flow = measurement["flow"]
    constant = flow.get("requires_grad") is False or flow.get("missing") is True
    causes, advice = _why_constant(measurement, whole=constant)
    listed = measurement.get("functions")
    functions = [arrays.text(f) for f in listed if isinstance(f, str)] if isinstance(listed, list) else []
    rules = measurement.get("rules") if isinstance(measurement.get("rules"), dict) else {}
    cause = "; or ".join(causes) or _constant_otherwise(measurement)
    result = _the_result_of(name)
    if not causes and measurement.get("written_in") is True:
        cause = _written_in("the result", "compute it from the arguments with autograd", graph=False)
    if constant:
        raise FailedCheckError(
            f"{_capitalized(result)} does not require grad: it has no graph, so no gradient can "
            f"flow back to {targets}. Likely cause: {cause}.{advice}"
        )
    if "error" in flow:
        raise FailedCheckError(
            f"Differentiating {result} raised {arrays.text(flow['error'])}{arrays.text(flow.get('hint', ''))}"
        )
    gotten = [_node(g) for g in flow["grads"]]
    for label, w, g in zip(labels, expected["flow"], gotten, strict=True):
        if isinstance(g, torch.Tensor) and is_zero(g) and not is_zero(w):
            # A gradient reaches the argument, with the value 0: a derivative rule on the way gives it.
            raise FailedCheckError(
                f"The gradient of {result} with respect to {label} is 0 at every element, but "
                f"it should not be. Likely cause: {_differentiated_otherwise(causes, functions, rules)}."
                f"{advice}"
            )
        if g is None and not is_zero(w):
            # A result with a graph that misses the argument may come from other tensors altogether.
            elsewhere = "; or ".join(causes) or (
                "it was computed from tensors other than the arguments (a network or a tensor made inside "
                "the function) or from tensors autograd did not record"
            )
            raise FailedCheckError(
                f"No gradient flows from {result} back to {label}, but it should. Likely "
                f"cause: {elsewhere}.{advice}"
            )
        problem = mismatch(w, torch.zeros_like(w) if g is None else g, [], [])
        if problem:
            weighted = "" if expected["scalar"] else " (weighted by a random grad_out)"
            wrong = f"The gradient of {result} with respect to {label}{weighted} is wrong: {problem}."
            flows = zip(expected["flow"], gotten, strict=True)
            pairs = [(w, torch.zeros_like(w) if g is None else g) for w, g in flows]
            if float32 := _rounded_to_float32(pairs, measurement):
                raise FailedCheckError(f"{wrong}\n{float32}")
            mistaken = _mistaken_gradients(name, expected, gotten)
            if mistaken:
                raise FailedCheckError(f"{wrong}\nLikely cause: {mistaken}")
            raise FailedCheckError(
                f"{wrong} Likely cause: {_differentiated_otherwise(causes, functions, rules)}.{advice}"
            )


def _mistaken_gradients(name: str, expected: dict, gotten: list) -> str | None:
    """The cause of a known mistake that returns the reference's result with other gradients, where those
    are the gradients measured; None where no such mistake gives them."""
    for mistake in expected.get("mistakes", []):
        if "flow" not in mistake:
            continue
        try:
            _compare_returned(name, expected["result"], mistake["result"], "the result", {})
        except FailedCheckError:
            continue
        if all(
            _same(m, torch.zeros_like(m) if g is None else g)
            for m, g in zip(mistake["flow"], gotten, strict=True)
        ):
            return arrays.text(mistake["cause"])
    return None


_COMPARISONS = {
    "forward": compare_forward,
    "first_derivative": compare_first_derivative,
    "second_derivative": compare_second_derivative,
    "result": compare_result,
}
