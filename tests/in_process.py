"""A lesson's test cells judged on an answer without running its notebook, as the class grader judges them.

The class grader runs a whole notebook, seconds per answer; these tests try every mutant and correct
answer, so they run only what the checks need. A forked child runs the notebook's imports, functions and
classes that the answer and the test cells use, then the answer cells; every check of every test cell is
planned here as the grader plans it (its seeding, so hidden tests draw the grader's inputs), measured in
the child exactly as the grader's executor measures it, and judged here, where nothing the answer did can
reach. Beside each check of a Function's derivatives, the child runs torch's own gradcheck or
gradgradcheck on that check's inputs.
"""

import ast
import contextlib
import os
import pickle
import signal
import sys
import warnings
from collections.abc import Set
from dataclasses import dataclass
from functools import cache

import nbformat
import torch
from grading_pipeline import nbgrader_cells, submission

from autograder.course.layout import SOURCE
from autograder.judge.test_cells import Check, checks_of, judge
from autograder.probe import measure
from autograder.wire import arrays
from autograder.wire.verdict import Verdict

# The seed the grading tests give the class grader (test_grading.py): hidden tests draw its inputs.
SEED = 11
# Torch's check for each kind of check of a Function's derivatives.
TORCH_CHECKS = {"first_derivative": "gradcheck", "second_derivative": "gradgradcheck"}
# Seconds an answer's child may take for every check of its lesson before it is killed.
_CHILD_SECONDS = 600


@dataclass(frozen=True)
class Judged:
    """One check of a test cell on one answer: our verdict, and torch's where torch has one."""

    cell: str
    kind: str
    verdict: Verdict
    # Per sample input, torch's error (None where torch accepts); empty where torch has no check.
    torch_errors: tuple[str | None, ...] = ()

    @property
    def torch_rejects(self) -> bool:
        return any(error is not None for error in self.torch_errors)


def lesson_tests(lesson: str) -> dict[str, str]:
    """The lesson's test cells, hidden tests included, by grade_id in notebook order."""
    source = nbformat.read(SOURCE / lesson / f"{lesson}.ipynb", as_version=4)
    return {
        grade_id: cell.source
        for grade_id, cell in nbgrader_cells(source, "grade").items()
        if not cell.metadata.nbgrader.get("solution")
    }


def planned(lesson: str) -> list[tuple[str, Check]]:
    """Every check of the lesson's test cells, numbered and seeded as the class grader numbers them."""
    checks: list[tuple[str, Check]] = []
    for grade_id, source in lesson_tests(lesson).items():
        _, cell_checks = checks_of(source, SEED, len(checks))
        checks += [(grade_id, check) for check in cell_checks]
    return checks


def _names_read(tree: ast.AST) -> set[str]:
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def _bound(statement: ast.stmt) -> set[str]:
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
    return {statement.name}


def _definitions(source: str) -> list[ast.stmt]:
    """A cell's top-level imports, functions and classes: what it defines without computing anything.
    A cell that is not plain Python (an IPython magic) defines nothing an answer may rely on."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return []
    kinds = ast.Import | ast.ImportFrom | ast.FunctionDef | ast.ClassDef
    return [statement for statement in body if isinstance(statement, kinds)]


def _program(lesson: str, answers: dict[str, str]) -> list[str]:
    """The code the child runs, in notebook order: each answer cell whole, and of the other cells only
    the definitions that the answers and test cells use, directly or through one another."""
    notebook = submission(lesson, answers)
    wanted = set().union(*(_names_read(ast.parse(source)) for source in lesson_tests(lesson).values()))
    steps: list[str | list[ast.stmt]] = []
    for cell in notebook.cells:
        role = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or (role.get("grade") and not role.get("solution")):
            continue
        if role.get("solution"):
            steps.append(cell.source)
            wanted |= _names_read(ast.parse(cell.source))
        else:
            steps.append(_definitions(cell.source))
    chosen: set[int] = set()
    definitions = [s for step in steps if isinstance(step, list) for s in step]
    while grown := [s for s in definitions if id(s) not in chosen and _bound(s) & wanted]:
        for statement in grown:
            chosen.add(id(statement))
            wanted |= _names_read(statement)
    return [
        step if isinstance(step, str) else ast.unparse(ast.Module([s for s in step if id(s) in chosen], []))
        for step in steps
        if isinstance(step, str) or any(id(s) in chosen for s in step)
    ]


def _located(located: dict, scope: dict):
    """The function a check names, found as the grader's executor finds it."""
    path = (located.get("student") or located["cell"]).split(".")
    value = scope[path[0]]
    for attribute in path[1:]:
        value = getattr(value, attribute)
    return value


def _torch_errors(check: Check, namespace: dict, batched: bool) -> tuple[str | None, ...]:
    """Torch's gradcheck or gradgradcheck on each of the check's sample inputs, with check_batched_grad
    if `batched`: None where it passes."""
    if check.kind not in TORCH_CHECKS:
        return ()
    scope = dict(namespace)
    try:
        exec(check.request["preamble"], scope)
        function = _located(check.request["function"], scope)
    except Exception as error:  # noqa: BLE001 - no function to check: torch cannot pass it either
        return (f"{type(error).__name__}: {error}",)
    errors = []
    for sample in check.request["samples"]:
        inputs = tuple(x.clone().requires_grad_() for x in sample["inputs"])
        try:
            if check.kind == "first_derivative":
                torch.autograd.gradcheck(function, inputs, check_batched_grad=batched)
            else:
                grad_outs = tuple(g.clone().requires_grad_() for g in sample["grad_outs"])
                torch.autograd.gradgradcheck(function, inputs, grad_outs, check_batched_grad=batched)
            errors.append(None)
        except Exception as error:  # noqa: BLE001 - whatever torch raised, it did not pass the answer
            errors.append(f"{type(error).__name__}: {error}")
    return tuple(errors)


def _without_the_reference() -> None:
    """The reference package cannot be imported, as in the class grader's confined executor."""
    for name in [m for m in sys.modules if m.split(".")[0] == measure.REFERENCE_PACKAGE]:
        del sys.modules[name]
    sys.modules[measure.REFERENCE_PACKAGE] = None


def _run_in_child(lesson: str, answers: dict[str, str], checks: list[tuple[str, Check]], batched: Set[str]):
    """In the forked child: run the answer, then measure every check and run torch's beside it."""
    signal.alarm(_CHILD_SECONDS)
    warnings.simplefilter("ignore")
    _without_the_reference()
    namespace: dict = {"__name__": "__main__"}
    for code in _program(lesson, answers):
        # A cell that fails leaves what it defined before, as in a notebook.
        with contextlib.suppress(BaseException):
            exec(compile(code, "<cell>", "exec"), namespace)
    return [
        (
            arrays.pack(measure.measure_in(check.request, namespace)),
            _torch_errors(check, namespace, check.name in batched),
        )
        for _, check in checks
    ]


@cache
def _warm_up() -> None:
    """Pay torch.func's first-use costs (its transforms import and trace on first use) once, here,
    rather than in every answer's child: lessons 06 and 07 check through jvp, jacfwd, hessian and vmap."""
    x = torch.linspace(-1, 1, 3, dtype=torch.float64)
    with warnings.catch_warnings():  # forward mode's first use warns of torch.jit.script, which it calls
        warnings.simplefilter("ignore")
        torch.func.jvp(torch.sin, (x,), (x,))
        torch.func.hessian(lambda y: y.sin().sum())(x)
        torch.func.jacrev(torch.func.jacfwd(lambda y: y.sin().sum()))(x)
        torch.func.vmap(torch.func.grad(torch.func.grad(torch.sin)))(x)
        torch.autograd.gradgradcheck(torch.sin, (x.requires_grad_(),), check_batched_grad=True)


def judged(
    lesson: str, answers: dict[str, str], kinds: Set[str] | None = None, batched: Set[str] = frozenset()
) -> list[Judged]:
    """The checks of the lesson's test cells (those of `kinds`, or all) on the answer (`answers` fills
    answer cells; {} is the untouched release), with torch's gradcheck or gradgradcheck beside each
    check of a derivative, and its check_batched_grad for the Functions named in `batched`."""
    checks = [(cell, check) for cell, check in planned(lesson) if kinds is None or check.kind in kinds]
    _warm_up()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            payload = pickle.dumps(_run_in_child(lesson, answers, checks, batched))
        except BaseException as error:  # noqa: BLE001 - the parent must hear why, whatever happened
            payload = pickle.dumps(f"{type(error).__name__}: {error}")
        with os.fdopen(write_end, "wb") as reply:
            reply.write(payload)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reply:
        data = reply.read()
    _, status = os.waitpid(pid, 0)
    assert data, f"the answer's child died ({status}) before it answered"
    results = pickle.loads(data)
    assert isinstance(results, list), results
    return [
        Judged(cell, check.kind, judge(check, arrays.unpack(packed)), errors)
        for (cell, check), (packed, errors) in zip(checks, results, strict=True)
    ]
