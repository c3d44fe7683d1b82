"""The checks a lesson's test cells call: a Function's values and derivatives, or a function's result.

In a notebook (JupyterLab, plain nbgrader), each check sends the student's function and the test's
reference to the checker process (see `autograder.checker.server`), which measures each in a child of its own
and compares the plain numbers they give. A failed check raises AssertionError with a message that
says which derivative is wrong, where, and the likely mistake. A passing check prints one line saying
so on stdout, and nothing on stderr: nbgrader gives no credit to a test cell that writes to stderr.
The class grader does not run these functions at all: it reads the test cells and judges them itself
(see `autograder.judge.test_cells`), and shows the same lines.
"""

import atexit
import inspect
import io
import json
import linecache
import os
import sys
import types
from collections.abc import Callable
from typing import ClassVar

import cloudpickle
import torch

from autograder.checker.client import LOADED_ON_FIRST_USE, CheckerProcess
from autograder.wire.verdict import CausesTold, Verdict, passed_line


class _Pickler(cloudpickle.Pickler):
    """cloudpickle, with two of torch's modules sent by name rather than copied, which fails for both:
    torch.ops (a rule may call torch.ops.aten...), of a type of its own that cloudpickle does not take for
    a module, and torch._C._functions (once_differentiable's wrapper refers to it), missing from
    sys.modules."""

    _BY_NAME: ClassVar[dict[int, tuple]] = {
        id(torch.ops): (torch, "ops"),
        id(torch._C._functions): (torch._C, "_functions"),
    }

    def reducer_override(self, obj):
        if (parent_and_name := self._BY_NAME.get(id(obj))) is not None:
            return getattr, parent_and_name
        return super().reducer_override(obj)


def _dumps(value) -> bytes:
    buffer = io.BytesIO()
    _Pickler(buffer).dump(value)
    return buffer.getvalue()


# Seconds a student's code may run in one check before it counts as a loop that never ends.
DEFAULT_TIMEOUT = 30.0


def _hide_grader_frames() -> None:
    """In a notebook, a failed check shows the student's cell and the message, not this module's frames:
    an AssertionError's traceback is cut where it enters the `autograder` package."""
    try:
        from IPython import get_ipython
    except ImportError:  # not in a notebook: nothing to show
        return
    shell = get_ipython()
    if shell is None:
        return
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep

    def show(self, etype, value, tb, tb_offset=None):
        before, entry = None, tb
        while entry is not None and not entry.tb_frame.f_code.co_filename.startswith(package):
            before, entry = entry, entry.tb_next
        if before is not None:
            before.tb_next = None
        structured = self.InteractiveTB.structured_traceback(etype, value, tb, tb_offset=tb_offset)
        # IPython leaves showing it to the handler; a kernel sends it as the cell's error output.
        self._showtraceback(etype, value, structured)
        return structured

    shell.set_custom_exc((AssertionError,), show)


def _in_a_notebook() -> bool:
    """Whether this process runs IPython: a notebook's kernel, or an IPython shell."""
    ipython = sys.modules.get("IPython")
    return ipython is not None and ipython.get_ipython() is not None


_checker = CheckerProcess()
# In a notebook, importing this module starts the checker, so torch is loading there while the student
# reads on. Elsewhere (a grading worker, which judges test cells itself) it starts at the first check.
if _in_a_notebook():
    _checker.start()
atexit.register(_checker.stop)


def _reference_names(reference: Callable) -> None:
    """Refuse a reference whose parameters cannot be read: their names name the inputs in messages."""
    try:
        inspect.signature(reference)
    except (TypeError, ValueError):
        # Builtins such as torch.sin have no signature to read.
        raise TypeError(
            f"reference must be a Python function, e.g. lambda x: torch.sin(x), not {reference!r}"
        ) from None


def hidden_lines(source: str) -> set[int]:
    """The lines of a test cell between nbgrader's BEGIN and END HIDDEN TESTS markers."""
    lines, hidden = set(), False
    for number, text in enumerate(source.splitlines(), start=1):
        if "END HIDDEN TESTS" in text:
            hidden = False
        elif "BEGIN HIDDEN TESTS" in text:
            hidden = True
        elif hidden:
            lines.add(number)
    return lines


def defined_in_hidden_test(function: Callable) -> bool:
    """Whether `function` is defined between a test cell's HIDDEN TESTS markers. The cell's source is
    the one linecache keeps under the code's filename, as IPython keeps each cell's (and the class
    grader's judge the test cell's): a function of a module or a file has no markers around it."""
    code = getattr(inspect.unwrap(getattr(function, "__func__", function)), "__code__", None)
    if not isinstance(code, types.CodeType):
        return False
    # A decorated function's first line is its first decorator's, in the same part of the cell.
    return code.co_firstlineno in hidden_lines("".join(linecache.getlines(code.co_filename)))


# How messages name the builder of a check_result's arguments that a hidden test defines.
HIDDEN_BUILDER = "a hidden test"


def built_by(inputs: Callable) -> str:
    """Who messages say built a check_result's arguments: its builder, by name, unless a hidden test
    defines it; feedback shows no hidden test's source, and a name is a piece of it."""
    return HIDDEN_BUILDER if defined_in_hidden_test(inputs) else f"`{getattr(inputs, '__name__', 'inputs')}`"


# How messages name a function under test that a hidden test defines (and names with no name=).
HIDDEN_FUNCTION = "a function a hidden test defines"


def name_of(function: Callable) -> str:
    """'Square' for Square.apply, 'sinh' for a plain function; as `built_by`, never the name of a function
    a hidden test defines."""
    if defined_in_hidden_test(function):
        return HIDDEN_FUNCTION
    owner = getattr(function, "__self__", None)
    return getattr(owner, "__name__", None) or getattr(function, "__name__", repr(function))


def where_built(reference: Callable, built: str, inputs: Callable | None = None) -> str:
    """How check_result messages say which arguments were used, `built` by whom `built_by` names: the
    visible example's or not. A builder that states what it makes, in an attribute `in_words`, is also
    told in those words: the test cell shows a builder's name, never its body. A builder marked
    `incidental = True` builds arguments the outcome does not depend on, which messages leave out."""
    if getattr(inputs, "incidental", False):
        return ""
    names = ", ".join(inspect.signature(reference).parameters)
    where = f"when called with the {names} that {built} builds"
    words = getattr(inputs, "in_words", None) if built != HIDDEN_BUILDER else None
    return f"{where}: {words}" if words else where


def checked_on(built: str | None, randomized: bool, inputs: Callable | None = None) -> str:
    """What a passing check says it ran on: its builder's inputs, `built` by whom `built_by` names
    (check_result), or random inputs (a hidden test of a Function); nothing for a Function's visible
    inputs, or for arguments an `incidental` builder `inputs` makes (see `where_built`)."""
    if getattr(inputs, "incidental", False):
        return ""
    if built == HIDDEN_BUILDER:
        return f"inputs {HIDDEN_BUILDER} builds"
    if built is not None:
        return built
    return "random inputs" if randomized else ""


def _ask(
    kind: str,
    function: Callable,
    reference: Callable,
    inputs: Callable | None,
    mistakes: dict[str, Callable] | None = None,
    **header,
) -> None:
    """Send one check to the checker process; raise AssertionError with its message if it failed."""
    built = built_by(inputs) if inputs is not None else None
    try:
        test = _dumps((reference, inputs, mistakes or {}))
    except Exception as error:  # noqa: BLE001 - a test the checker cannot receive is the instructor's to fix
        raise TypeError(f"Could not send the test's reference to the checker: {error}") from None
    try:
        answer = _dumps(function)
    except Exception as error:  # noqa: BLE001 - whatever the student built, say why it cannot be checked
        verdict = Verdict.failed(
            f"Could not send {header['name']} to the checker ({type(error).__name__}: {error}). "
            "Define it at the top level of a cell, using only tensors, modules and functions."
        )
    else:
        where = where_built(reference, built, inputs) if built else ""
        # A notebook that has used a transform torch loads lazily most likely checks code that uses it too:
        # the checker loads it before this check's children need it.
        loaded = [module for module in LOADED_ON_FIRST_USE if module in sys.modules]
        sent = header | {
            "kind": kind,
            "built_by": built,
            "where": where,
            "loaded": loaded,
            "function": {"cell" if _defined_by_the_test(function) else "student": header["name"]},
        }
        verdict = _checker.ask(json.dumps(sent).encode(), test, answer)
    if not verdict.passed:
        _hide_grader_frames()
        raise AssertionError(_CAUSES_TOLD.shown_in(_test_cell(), verdict.message))
    print(passed_line(kind, header["name"], checked_on(built, header["randomized"], inputs)))


# The causes this kernel's failed checks have shown, as the class grader's judge keeps them for a notebook.
_CAUSES_TOLD = CausesTold()


def _test_frame() -> types.FrameType | None:
    """The frame of the test that called the check: the first one outside this package."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("autograder"):
        frame = frame.f_back
    return frame


def _test_cell() -> str:
    """The file of the test cell that called the check. ipykernel names a cell's code by a hash of its
    source, so a cell run again is the same cell, and a test cell is never another one."""
    frame = _test_frame()
    return frame.f_code.co_filename if frame is not None else ""


def _defined_by_the_test(function: Callable) -> bool:
    """Whether the test calling the check defined `function` (a wrapper around the student's code, made
    by the test cell's own code) or took it from this package, as the class grader's judge tells a test
    cell's definitions from the notebook's names: only the student's own function is answerable for how it
    made its values (numbers written in). It changes what a failed check's message names, never whether
    it fails."""
    code = getattr(inspect.unwrap(getattr(function, "__func__", function)), "__code__", None)
    frame = _test_frame()
    if not isinstance(code, types.CodeType) or frame is None:
        return False
    return code.co_filename.startswith(_PACKAGE) or _made_by(frame.f_code, code)


# Where this package's code lives: a function from here is the test's, never the student's.
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def _made_by(outer: types.CodeType, code: types.CodeType) -> bool:
    """Whether running `outer` defines `code`: it is among its constants, or theirs (a nested function)."""
    return any(
        const is code or (isinstance(const, types.CodeType) and _made_by(const, code))
        for const in outer.co_consts
    )


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
        batched: bool = False,
        mistakes: dict[str, Callable] | None = None,
    ) -> None:
        _reference_names(reference)
        if batched and kind == "forward":
            raise TypeError("batched is for the checks of a derivative: forward has no backward to batch")
        if mistakes and kind == "forward":
            raise TypeError("mistakes are for the checks of a derivative: check_result names forward's")
        _ask(
            kind,
            function,
            reference,
            None,
            mistakes,
            name=name or name_of(function),
            randomized=randomized,
            low=low,
            high=high,
            timeout=timeout,
            batched=batched,
        )

    check.__name__ = check.__qualname__ = f"check_{kind}"
    check.__doc__ = f"""{summary}

    `reference` is plain torch code taking the same tensors (`lambda x: x**2`); its parameter names
    name the inputs in messages. Inputs are float64, uniform in [low, high). `randomized=True` draws
    fresh shapes and values in the checker process: hidden tests use it so that hard-coded answers fail.
    `batched=True` (a derivative's check) also feeds backward a batch of incoming gradients under vmap,
    as gradcheck's check_batched_grad does: for a Function the lesson runs under torch.func.
    `mistakes` (a derivative's check) maps the cause of a slip in backward to a plain torch function with
    the slip's first derivatives: a wrong gradient equal to its gradient is told with that cause.
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
    mistakes: dict[str, Callable] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> None:
    """An ordinary function (not a Function) behaves like `reference` on the arguments `inputs` builds.

    `inputs(generator)` returns the arguments as a tuple (modules, tensors, functions), drawing any
    randomness from the torch.Generator it is given; it is called twice with the same seed, so the
    function and the reference each get their own identical copy. Compared: what they return, the
    `.grad` they leave on every tensor that requires grad and every module parameter among the
    arguments, and the gradients flowing back from the result to those. `randomized=True` seeds the
    generator afresh in the checker process, so hidden tests catch hard-coded answers.
    `mistakes` maps the cause of a mistake students make to a function doing what that mistake does: a
    wrong result, or a wrong .grad on every argument, equal to what one of them returns or leaves is
    reported with its cause, and so are wrong gradients equal to those flowing back from one that returns
    the right result.
    Raises AssertionError saying what is wrong and the likely mistake.
    """
    _reference_names(reference)
    if not callable(inputs):
        raise TypeError(f"inputs must build the arguments from a torch.Generator, not {inputs!r}")
    _ask(
        "result",
        function,
        reference,
        inputs,
        mistakes,
        name=name or name_of(function),
        randomized=randomized,
        timeout=timeout,
    )


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
