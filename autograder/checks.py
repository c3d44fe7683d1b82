"""The checks a lesson's test cells call: a Function's values and derivatives, or a function's result.

Each check sends the student's function and a reference written in plain torch to a pristine checker
process (see `_checker_server`), which runs them on float64 inputs and answers with a verdict. A failed
check raises AssertionError with a message that says which derivative is wrong, where, and the likely
mistake. A passing check prints nothing, on stdout or stderr: nbgrader gives no credit to a test cell
that writes to stderr.
"""

import atexit
import inspect
from collections.abc import Callable

import cloudpickle

from autograder._checker_client import CheckerProcess
from autograder._verify import Check

# Seconds a student's code may run in one check before it counts as a loop that never ends.
DEFAULT_TIMEOUT = 30.0

_checker = CheckerProcess()
# Importing this module starts the checker, so torch is loading there while the student reads on.
_checker.start()
atexit.register(_checker.stop)


def _name_of(function: Callable) -> str:
    """'Square' for Square.apply, 'sinh' for a plain function."""
    owner = getattr(function, "__self__", None)
    return getattr(owner, "__name__", None) or getattr(function, "__name__", repr(function))


def _reference_names(reference: Callable) -> None:
    """Refuse a reference whose parameters cannot be read: their names name the inputs in messages."""
    try:
        inspect.signature(reference)
    except (TypeError, ValueError):
        # Builtins such as torch.sin have no signature to read.
        raise TypeError(
            f"reference must be a Python function, e.g. lambda x: torch.sin(x), not {reference!r}"
        ) from None


def _ask(request: Check, timeout: float) -> None:
    """Send one check to the checker process; raise AssertionError with its message if it failed."""
    try:
        payload = cloudpickle.dumps(request)
    except Exception as error:  # noqa: BLE001 - whatever the student built, say why it cannot be checked
        raise AssertionError(
            f"Could not send {request.name} to the checker ({type(error).__name__}: {error}). "
            "Define it at the top level of a cell, using only tensors, modules and functions."
        ) from None
    verdict = _checker.ask(payload, timeout)
    if not verdict.passed:
        raise AssertionError(verdict.message)


def _check(kind: str, summary: str) -> Callable[..., None]:
    """One public check of a Function; the three differ only in what the checker process compares."""

    def check(
        function: Callable,
        reference: Callable,
        *,
        randomized: bool = False,
        low: float = -2.0,
        high: float = 2.0,
        name: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        _reference_names(reference)
        _ask(Check(kind, function, reference, name or _name_of(function), randomized, low, high), timeout)

    check.__name__ = check.__qualname__ = f"check_{kind}"
    check.__doc__ = f"""{summary}

    `reference` is plain torch code taking the same tensors (`lambda x: x**2`); its parameter names
    name the inputs in messages. Inputs are float64, uniform in [low, high). `randomized=True` draws
    fresh shapes and values in the checker process: hidden tests use it so that hard-coded answers fail.
    Raises AssertionError saying what is wrong, where, and the likely mistake.
    """
    return check


def check_result(
    function: Callable,
    reference: Callable,
    inputs: Callable,
    *,
    randomized: bool = False,
    name: str | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """An ordinary function (not a Function) behaves like `reference` on the arguments `inputs` builds.

    `inputs(generator)` returns the arguments as a tuple (modules, tensors, functions), drawing any
    randomness from the torch.Generator it is given; it is called twice with the same seed, so the
    function and the reference each get their own identical copy. Compared: what they return, the
    `.grad` they leave on every tensor that requires grad and every module parameter among the
    arguments, and the gradients flowing back from the result to those. `randomized=True` seeds the
    generator afresh in the checker process, so hidden tests catch hard-coded answers.
    Raises AssertionError saying what is wrong and the likely mistake.
    """
    _reference_names(reference)
    if not callable(inputs):
        raise TypeError(f"inputs must build the arguments from a torch.Generator, not {inputs!r}")
    _ask(Check("result", function, reference, name or _name_of(function), randomized, inputs=inputs), timeout)


check_forward = _check(
    "forward", "Outputs of `function` equal those of `reference`: count, shape, dtype, values."
)
check_first_derivative = _check(
    "first_derivative",
    "backward of `function` gives the reference's vector-Jacobian products for a random grad_out, and "
    "passes gradcheck.",
)
check_second_derivative = _check(
    "second_derivative",
    "The gradient built with create_graph=True stays connected to the inputs and differentiates to the "
    "reference's second derivatives (with respect to the inputs and grad_out), and passes gradgradcheck.",
)
