"""The checks, run in a child forked from the pristine checker process (see `_checker_server`).

Each compares a student's function with a reference written in plain torch (so autograd itself gives
the reference's derivatives of any order) on float64 inputs, and explains the first difference.
"""

import inspect
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, replace

import cloudpickle
import torch

from autograder import _diagnose, _integrity, _samples
from autograder._compare import is_zero, mismatch
from autograder._result import call_student, check_result
from autograder._verdict import FailedCheckError, Verdict

# once_differentiable's wrapper refers to torch._C._functions, which is missing from sys.modules, so
# cloudpickle would copy that C module by value and fail to rebuild it; registered, it travels by name.
sys.modules.setdefault("torch._C._functions", torch._C._functions)

# The course's reference implementations: an answer must not borrow them.
_REFERENCE_PACKAGE = "solutions"


@dataclass(frozen=True)
class Check:
    """One check of a student's `function` against `reference`; pickled in the kernel, run here."""

    kind: str
    function: Callable
    reference: Callable
    name: str
    randomized: bool
    low: float = -2.0
    high: float = 2.0
    # check_result only: builds the arguments from a torch.Generator (modules, tensors, functions).
    inputs: Callable | None = None


def run(payload: bytes) -> Verdict:
    """Unpickle and run one check; any tampering found afterwards voids it."""
    warnings.simplefilter("ignore")  # torch warnings must not reach a graded cell's stderr
    sys.modules[_REFERENCE_PACKAGE] = None  # importing it now raises ModuleNotFoundError
    try:
        check = cloudpickle.loads(payload)
    except ImportError as error:
        if _REFERENCE_PACKAGE in str(error):
            return Verdict.failed(_uses_reference_message())
        raise
    if _borrows_reference(check.function):
        return Verdict.failed(_uses_reference_message())
    try:
        _CHECKS[check.kind](check)
        verdict = Verdict(passed=True)
    except FailedCheckError as failure:
        verdict = Verdict.failed(str(failure))
    tampered = _integrity.tampered_names()
    if tampered:
        shown = ", ".join(tampered[:5]) + (" ..." if len(tampered) > 5 else "")
        verdict = Verdict.failed(
            f"Your code replaced {shown}. Answers may not change torch, NumPy or the checks; "
            "this check gives no credit."
        )
    return replace(verdict, kind=check.kind, subject=check.name)


def _uses_reference_message() -> str:
    return (
        "Your answer uses the course's reference implementation (the `solutions` package) instead of "
        "writing its own. Write it yourself; this check gives no credit."
    )


def _borrows_reference(function: Callable) -> bool:
    """True when the function, its Function class or any base or method comes from the reference."""
    owner = getattr(function, "__self__", None)
    candidates = [function, *(inspect.getmro(owner) if isinstance(owner, type) else ())]
    if isinstance(owner, type):
        candidates += [getattr(owner, name, None) for name in ("forward", "backward", "setup_context")]
    modules = (getattr(c, "__module__", None) or "" for c in candidates)
    return any(m == _REFERENCE_PACKAGE or m.startswith(_REFERENCE_PACKAGE + ".") for m in modules)


def _argument_names(reference: Callable) -> list[str]:
    return list(inspect.signature(reference).parameters)


def _outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _call(check: Check, inputs: tuple[torch.Tensor, ...], names: list[str]) -> tuple:
    """The student's outputs, or a failure that says what went wrong in forward."""
    where = f"while computing forward on {_samples.describe(names, inputs)}"
    return _outputs(call_student(check.name, check.function, inputs, where))


def _backward(check: Check, outputs, inputs, grad_outs, names: list[str], create_graph=False):
    """The student's gradients, or a failure that says what went wrong in backward."""
    differentiable = [(o, g) for o, g in zip(outputs, grad_outs, strict=True) if isinstance(o, torch.Tensor)]
    if not any(o.requires_grad for o, _ in differentiable):
        raise FailedCheckError(
            f"The output of {check.name} does not require grad, so backward is never called. "
            "Call your Function through .apply, and do not detach its result."
        )
    try:
        return torch.autograd.grad(
            [o for o, _ in differentiable if o.requires_grad],
            inputs,
            [g for o, g in differentiable if o.requires_grad],
            create_graph=create_graph,
            allow_unused=True,
        )
    except NotImplementedError:
        raise FailedCheckError(
            f"The backward of {check.name} is not written yet: it raises NotImplementedError."
        ) from None
    except Exception as error:  # noqa: BLE001 - as in _call
        raise FailedCheckError(
            f"The backward of {check.name} raised {type(error).__name__}: {error}\n"
            f"  on {_samples.describe(names, inputs)}{_diagnose.known_error_hint(error)}"
        ) from None


def _cases(check: Check):
    """Yield (gen, names, inputs, student outputs, reference outputs) for every sample input."""
    names = _argument_names(check.reference)
    gen = _samples.generator(check.randomized)
    for inputs in _samples.inputs(len(names), check.randomized, check.low, check.high, gen):
        outputs = _call(check, inputs, names)
        expected = _outputs(check.reference(*inputs))
        if len(outputs) != len(expected):
            raise FailedCheckError(
                f"{check.name} returns {len(outputs)} output(s); it should return {len(expected)}."
            )
        yield gen, names, inputs, outputs, expected


def _output_label(index: int, count: int) -> str:
    return f" (output {index})" if count > 1 else ""


def _quietly(gradcheck: Callable, function: Callable, inputs) -> bool:
    """gradcheck or gradgradcheck as a yes/no answer, whatever the student's code raises."""
    try:
        return bool(gradcheck(function, inputs, raise_exception=False))
    except Exception:  # noqa: BLE001 - a crash inside the student's code counts as a failed check
        return False


def _agrees_with_finite_differences(check: Check, gradcheck: Callable, what: str) -> None:
    """The classic test on top of the reference comparison: analytic against numerical derivatives."""
    names = _argument_names(check.reference)
    gen = _samples.generator(check.randomized)
    inputs = next(_samples.inputs(len(names), check.randomized, check.low, check.high, gen))
    if _quietly(gradcheck, check.function, inputs):
        return
    outputs = _call(check, inputs, names)
    expected = _outputs(check.reference(*inputs))
    forward_is_wrong = any(mismatch(e, o, [], []) for e, o in zip(expected, outputs, strict=True))
    if forward_is_wrong:
        cause = (
            "Likely cause: forward is wrong (see the forward check). backward gives the reference's "
            "derivatives, which are not the derivatives of your forward."
        )
    elif _diagnose.changes_outputs_in_backward(outputs, inputs):
        cause = (
            "Likely cause: backward changes a tensor in place (e.g. result.mul_(grad_out)), and that "
            "tensor is the Function's output, so the next evaluation sees a changed value. Compute the "
            "gradient into a new tensor."
        )
    else:
        cause = (
            "They matched the reference on the sample inputs: does your Function behave differently "
            "from one call to the next?"
        )
    raise FailedCheckError(
        f"{gradcheck.__name__} fails for {check.name} on {_samples.describe(names, inputs)}: its "
        f"{what} disagree with finite differences of its forward.\n{cause}"
    )


def check_forward(check: Check) -> None:
    for _, names, inputs, outputs, expected in _cases(check):
        for index, (want, got) in enumerate(zip(expected, outputs, strict=True)):
            problem = mismatch(want, got, names, inputs)
            if problem:
                raise FailedCheckError(
                    f"Forward value is wrong{_output_label(index, len(expected))}: {check.name} on "
                    f"{_samples.describe(names, inputs)}: {problem}."
                )


def _incoming(names: list[str], article: str = "") -> str:
    """What messages call the gradient a check feeds to backward; renamed when an input bears the name."""
    return "grad_out" if "grad_out" not in names else f"{article}gradient fed to backward"


def check_first_derivative(check: Check) -> None:
    for gen, names, inputs, outputs, expected in _cases(check):
        grad_outs = _samples.like(expected, gen)
        got = _backward(check, outputs, inputs, grad_outs, names)
        want = torch.autograd.grad(expected, inputs, grad_outs, allow_unused=True)
        for name, x, w, g in zip(names, inputs, want, got, strict=True):
            w = torch.zeros_like(x) if w is None else w
            if g is None:
                raise FailedCheckError(
                    f"First derivative: backward of {check.name} returned None for {name}."
                )
            problem = mismatch(w, g, names, inputs)
            if problem:
                raise FailedCheckError(
                    f"First derivative with respect to {name} is wrong: {check.name} on "
                    f"{_samples.describe(names, inputs)}, with a random {_incoming(names)}: {problem}.\n"
                    + _first_derivative_cause(
                        check, outputs, expected, inputs, w, g, grad_outs, names, (want, got)
                    )
                )
    _agrees_with_finite_differences(check, torch.autograd.gradcheck, "first derivatives")


def _first_derivative_cause(check, outputs, expected, inputs, want, got, grad_outs, names, all_grads) -> str:
    """Why one input's gradient is wrong; `all_grads` holds every input's (expected, got) gradients."""
    if any(mismatch(e, o, [], []) for e, o in zip(expected, outputs, strict=True)):
        consistent = _quietly(torch.autograd.gradcheck, check.function, inputs)
        return "Likely cause: forward itself is wrong (see the forward check); fix it first. " + (
            "Your backward does match your own forward (gradcheck passes), so only forward is off."
            if consistent
            else "Your backward does not match your own forward either (gradcheck fails)."
        )
    if len(outputs) == 1 and (
        hint := _diagnose.ignores_grad_out(want, got, grad_outs[0], _incoming(names, "the "))
    ):
        return hint
    if hint := _diagnose.swapped_gradients(all_grads[1], all_grads[0], names):
        return hint
    if len(outputs) > 1 and (hint := _diagnose.ignored_extra_outputs(outputs[0], inputs)):
        return hint
    return "Likely cause: the derivative formula in backward is wrong; derive it again by hand."


def check_second_derivative(check: Check) -> None:
    for gen, names, inputs, outputs, expected in _cases(check):
        grad_outs = _samples.like(expected, gen, requires_grad=True)
        got = _backward(check, outputs, inputs, grad_outs, names, create_graph=True)
        want = torch.autograd.grad(expected, inputs, grad_outs, create_graph=True, allow_unused=True)
        want = [torch.zeros_like(x) if w is None else w for x, w in zip(inputs, want, strict=True)]
        if any(g is None or mismatch(w, g, [], []) for w, g in zip(want, got, strict=True)):
            raise FailedCheckError(
                f"Second derivative: the first derivative of {check.name} is already wrong "
                "(see the first-derivative check); fix it first."
            )
        where = f"{check.name} on {_samples.describe(names, inputs)}"
        if not any(g.requires_grad for g in got):
            raise FailedCheckError(_cut_message(where, names[-1], "does not require grad", outputs[0]))
        grad_grads = _samples.like(want, gen)
        variables = (*inputs, *grad_outs)
        incoming = _incoming(names, "the ")
        labels = [*names, *(f"{incoming}{_output_label(i, len(expected))}" for i in range(len(expected)))]
        try:
            got2 = torch.autograd.grad(
                [g for g in got if g.requires_grad],
                variables,
                [u for g, u in zip(got, grad_grads, strict=True) if g.requires_grad],
                allow_unused=True,
            )
        except Exception as error:  # noqa: BLE001 - an error in the student's double backward is reported
            hint = _diagnose.known_error_hint(error) or (
                "\nLikely cause: the backward of a Function that backward calls returns the wrong "
                "number or shape of gradients: one per input of its forward, in order."
            )
            raise FailedCheckError(
                f"Second derivative: differentiating the gradient of {where} raised "
                f"{type(error).__name__}: {error}{hint}"
            ) from None
        want2 = torch.autograd.grad(want, variables, grad_grads, allow_unused=True)
        for label, variable, w, g in zip(labels, variables, want2, got2, strict=True):
            w = torch.zeros_like(variable) if w is None else w
            g = torch.zeros_like(variable) if g is None else g
            problem = mismatch(w, g, names, inputs)
            if not problem:
                continue
            # A backward that drops its extra outputs' gradients also gives a zero second derivative,
            # though nothing was cut from the graph: name that cause rather than a cut.
            extras_hint = _diagnose.ignored_extra_outputs(outputs[0], inputs)
            if label in names and is_zero(g) and not extras_hint:
                raise FailedCheckError(_cut_message(where, label, f"does not depend on {label}", outputs[0]))
            if label not in names and is_zero(g) and not extras_hint:
                extras_hint = (
                    f"Likely cause: the gradient with respect to {label} is lost. If backward calls a "
                    "second Function, that Function's backward must return a gradient for the incoming "
                    "gradient it was given too, not None or zero."
                )
            hint = extras_hint or (
                "Likely cause: backward's result is not built from torch operations on the saved "
                "tensors and grad_out, or its formula is wrong."
            )
            raise FailedCheckError(
                f"Second derivative with respect to {label} is wrong: differentiating grad "
                f"(from create_graph=True) of {where}: {problem}.\n{hint}"
            )
    _agrees_with_finite_differences(check, torch.autograd.gradgradcheck, "second derivatives")


def _cut_message(where: str, name: str, symptom: str, output: torch.Tensor) -> str:
    return (
        f"Second derivative: the gradient is cut off from the graph. For {where}, "
        f"grad_{name} computed with create_graph=True {symptom}, so autograd cannot differentiate it "
        f"again (gradgradcheck would fail).\n{_diagnose.cut_from_graph(output)}"
    )


_CHECKS = {
    "result": check_result,
    "forward": check_forward,
    "first_derivative": check_first_derivative,
    "second_derivative": check_second_derivative,
}
