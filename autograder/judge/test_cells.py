"""The class grader's judge of test cells: what a test checks comes from the instructor's source.

A test cell is run here, in a process that never runs student code, with the checks replaced by
recorders. Names the cell takes from the student's notebook (`Square`, `hvp`) are stand-ins that
only remember how they are spelled, so running the cell defines its references and argument builders
and lists its checks without touching anything the student wrote. For each check this module makes
the plan (inputs drawn from the notebook's seed, the reference's values), sends the student's side
only what its function must be called with, and compares the plain numbers that come back.

The student's side gets, per check: where to find the function under test (a name in its own
notebook, or a function the test cell defines around it), the source of just those definitions of
the test cell that the function and the argument builder need, and the inputs. Never the reference,
the other statements of the cell, or the seed.
"""

import ast
import builtins
import importlib
import linecache
import math
import os
import sys
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy
import torch

import autograder.checks
from autograder.judge import compare, plan
from autograder.wire import arrays, samples
from autograder.wire.protocol import read_message, write_message
from autograder.wire.verdict import CausesTold, Verdict, passed_line

_FILENAME = "<test cell>"
_CHECKS = {
    "check_forward": "forward",
    "check_first_derivative": "first_derivative",
    "check_second_derivative": "second_derivative",
    "check_result": "result",
}
# Modules a test cell may use without importing them, as the notebook above it imported them.
_MODULES = {"torch": torch, "nn": torch.nn, "np": numpy, "numpy": numpy, "math": math}


class TestCellError(Exception):
    """The test cell itself does something the judge cannot do (a mistake of the instructor's)."""


class StudentName:
    """A name the test cell takes from the student's notebook, known here only by its spelling."""

    def __init__(self, path: str) -> None:
        self._path = path

    def __getattr__(self, attribute: str) -> "StudentName":
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return StudentName(f"{self._path}.{attribute}")

    def __call__(self, *args, **kwargs):
        raise TestCellError(f"the test cell calls {self._path} outside a check")

    @property
    def path(self) -> str:
        return self._path


@dataclass
class _Recorded:
    kind: str
    function: object
    reference: Callable
    inputs: Callable | None
    options: dict = field(default_factory=dict)
    # The line of the cell's top-level statement that made the check.
    line: int = 0


def _recorder(kind: str, into: list[_Recorded]) -> Callable:
    def record(function, reference, inputs=None, **options):
        into.append(_Recorded(kind, function, reference, inputs, options, _statement_line()))

    return record


def _statement_line() -> int:
    """The line of the test cell's top-level statement running now (a check may be called from a
    function the cell defines)."""
    line, frame = 0, sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == _FILENAME:
            line = frame.f_lineno
        frame = frame.f_back
    return line


def _free_names(tree: ast.Module) -> set[str]:
    """Names the cell reads but never binds: they come from the notebook above it."""
    bound, read = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            bound.add(node.name)
            bound.update(a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg))
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return read - bound - set(dir(builtins))


def record_checks(source: str) -> tuple[list[_Recorded], dict, ast.Module]:
    """Run the test cell with recorders; its checks in call order, its namespace and its syntax tree."""
    tree = ast.parse(source)
    recorded: list[_Recorded] = []
    namespace = {name: StudentName(name) for name in _free_names(tree)}
    namespace |= {name: module for name, module in _MODULES.items() if name in namespace}
    namespace["__name__"] = "__test_cell__"
    # Kept as IPython keeps a cell's, so that `autograder.checks.defined_in_hidden_test` reads it here too.
    linecache.cache[_FILENAME] = (len(source), None, source.splitlines(keepends=True), _FILENAME)
    originals = {name: getattr(autograder.checks, name) for name in _CHECKS}
    try:
        for name, kind in _CHECKS.items():
            setattr(autograder.checks, name, _recorder(kind, recorded))
        exec(compile(tree, _FILENAME, "exec"), namespace)  # the instructor's own test, never student code
    finally:
        for name, check in originals.items():
            setattr(autograder.checks, name, check)
    return recorded, namespace, tree


def _defined_in_cell(value) -> bool:
    code = getattr(value, "__code__", None)
    return isinstance(code, types.CodeType) and code.co_filename == _FILENAME


def _locate(value, role: str) -> dict:
    """Where the student's side finds `value`: a notebook name, a definition of the cell, an import."""
    if isinstance(value, StudentName):
        return {"student": value.path}
    target = getattr(value, "__func__", value)
    owner = getattr(value, "__self__", None)
    if isinstance(owner, type) and getattr(value, "__name__", "") == "apply":
        raise TestCellError(f"the {role} is a Function defined by the test; pass a function instead")
    if _defined_in_cell(target):
        if target.__qualname__ != target.__name__ or target.__name__ == "<lambda>":
            raise TestCellError(f"the {role} must be a function defined at the top level of the cell")
        return {"cell": target.__name__}
    module = getattr(target, "__module__", None)
    if module and importlib.import_module(module) and "<" not in target.__qualname__:
        return {"module": module, "qualname": target.__qualname__}
    raise TestCellError(f"cannot tell the student's side where to find the {role} {value!r}")


def _preamble(tree: ast.Module, source: str, wanted: set[str]) -> str:
    """The top-level statements of the cell that define `wanted`, and whatever those use, in order."""
    defines: dict[str, int] = {}
    for index, statement in enumerate(tree.body):
        for name in _bound_at_top(statement):
            defines.setdefault(name, index)
    needed, pending = set(), [defines[name] for name in wanted if name in defines]
    while pending:
        index = pending.pop()
        if index in needed:
            continue
        needed.add(index)
        used = {node.id for node in ast.walk(tree.body[index]) if isinstance(node, ast.Name)}
        pending += [defines[name] for name in used if name in defines]
    return "\n".join(ast.get_source_segment(source, tree.body[index]) for index in sorted(needed))


def _bound_at_top(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.FunctionDef | ast.ClassDef | ast.AsyncFunctionDef):
        return [statement.name]
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return [(alias.asname or alias.name).split(".")[0] for alias in statement.names]
    if isinstance(statement, ast.Assign):
        return [
            node.id for target in statement.targets for node in ast.walk(target) if isinstance(node, ast.Name)
        ]
    return []


def _name_of(function) -> str:
    """'Square' for Square.apply, 'sinh' for a plain function, as the check in a kernel names it."""
    if isinstance(function, StudentName):
        parts = function.path.split(".")
        return parts[-2] if parts[-1] == "apply" and len(parts) > 1 else parts[-1]
    return autograder.checks.name_of(function)


@dataclass
class Check:
    """One check of a test cell: the plan and what to ask of the student's side."""

    kind: str
    name: str
    plan: dict
    request: dict
    where: str
    # The line the check prints when it passes, as the student's kernel would.
    passed: str
    # Made by a hidden test: what it says is the instructor's to show (see `autograder.serve.feedback`).
    hidden: bool = False


def checks_of(source: str, seed: int, first_number: int) -> tuple[int, Iterator[Check]]:
    """How many checks the cell makes, and each of them, planned when it is asked for with a seed of its
    own. `first_number` counts every check of the cells before, run or not: a check after a failure
    draws the very inputs it would draw after a pass."""
    recorded, _, tree = record_checks(source)
    return len(recorded), _planned(source, tree, recorded, seed, first_number)


def _planned(
    source: str, tree: ast.Module, recorded: list[_Recorded], seed: int, first_number: int
) -> Iterator[Check]:
    hidden = autograder.checks.hidden_lines(source)
    for number, call in enumerate(recorded, start=first_number):
        options = dict(call.options)
        name = options.pop("name", None) or _name_of(call.function)
        timeout = options.pop("timeout", autograder.checks.DEFAULT_TIMEOUT)
        randomized = options.pop("randomized", False)
        samples.reproducible(hash((seed, number)))
        if call.kind == "result":
            built = autograder.checks.built_by(call.inputs)
            made = plan.plan_result(
                call.reference, call.inputs, built, randomized, options.pop("mistakes", None)
            )
            where = autograder.checks.where_built(call.reference, built, call.inputs)
            builder = _locate(call.inputs, "argument builder")
        else:
            low, high = options.pop("low", -2.0), options.pop("high", 2.0)
            batched = call.kind != "forward" and options.pop("batched", False)
            mistakes = options.pop("mistakes", None)
            made = plan.plan_function(call.kind, call.reference, randomized, low, high, batched, mistakes)
            where, builder, built = "", None, None
        if options:
            raise TestCellError(f"{call.kind} check got options it does not take: {sorted(options)}")
        function = _locate(call.function, "function under test")
        wanted = {located["cell"] for located in (function, builder) if located and "cell" in located}
        request = made["probe"] | {
            "kind": call.kind,
            "name": name,
            "names": made["names"],
            "where": where,
            "timeout": timeout,
            "function": function,
            "builder": builder,
            "preamble": _preamble(tree, source, wanted),
        }
        passed = passed_line(call.kind, name, autograder.checks.checked_on(built, randomized, call.inputs))
        yield Check(call.kind, name, made, request, where, passed, call.line in hidden)


def judge(check: Check, measurement) -> Verdict:
    return compare.verdict(check.kind, check.name, check.plan, measurement, check.where)


def _error_output(name: str, message: str) -> dict:
    """A failed test cell as a kernel shows it, without frames: they would quote the test's source."""
    return {"output_type": "error", "ename": name, "evalue": message, "traceback": [f"{name}: {message}"]}


def _stdout(text: str) -> dict:
    """The lines the passing checks before a failure printed, as a kernel shows them."""
    return {"output_type": "stream", "name": "stdout", "text": text}


def serve(requests_fd: int, replies_fd: int) -> None:
    """The judge's loop. The worker first sends the notebook's seed, then each test cell; for each:
    every check's request for the student's side, each answered by the worker with what that side
    measured, then the cell's outputs as a kernel would have shown them: a line for each check that
    passed, up to the first failure, then that failure, and whether it was a hidden test's."""
    requests, replies = os.fdopen(requests_fd, "rb"), os.fdopen(replies_fd, "wb")
    if (first := read_message(requests)) is None:
        return
    seed, number, told = int(first), 0, CausesTold()
    while (source := read_message(requests)) is not None:
        outputs, hidden, passed = [], False, []
        try:
            count, checks = checks_of(source.decode(), seed, number)
            number += count
            for check in checks:
                write_message(replies, arrays.pack({"probe": check.request}))
                answer = read_message(requests)
                if answer is None:
                    return
                try:
                    measurement = arrays.unpack(answer)
                except ValueError:
                    measurement = None
                verdict = judge(check, measurement)
                if not verdict.passed:
                    message = told.shown_in(source, verdict.message)
                    outputs, hidden = [_error_output("AssertionError", message)], check.hidden
                    break
                passed.append(check.passed)
        except Exception as error:  # noqa: BLE001 - a test that cannot run fails its cell, saying why
            outputs = [_error_output(type(error).__name__, str(error))]
        shown = [_stdout("".join(f"{line}\n" for line in passed))] if passed else []
        write_message(replies, arrays.pack({"outputs": shown + outputs, "hidden": hidden}))
