"""The class grader's pieces, one behaviour at a time: finding submissions, the journal, grades.csv, the
gradebook, the executor shell and the grading worker (the sandbox has tests of its own, test_confine.py).

`python -m autograder grade` is tested end to end in test_grade_command.py; these tests pin each piece
on its own, fast, so that a failure names the piece that broke. Whatever installs process-wide state (an
IPython shell) runs in a forked child, never in pytest's process.
"""

import json
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import nbgrader.api
import pytest

import autograder.checks
from autograder.course.layout import COURSE_DIRECTORY
from autograder.course.nbgrader_cli import put_nbgrader_tools_on_path
from autograder.course.submissions import Submission, discover
from autograder.grading import staleness
from autograder.records import gradebook
from autograder.records.journal import Journal, Recorded
from autograder.records.results import QuestionResult, Status, one_line, read_csv, write_csv
from autograder.sandbox import executor
from autograder.wire.protocol import read_message, write_message

LESSON = "01_saving_inputs"


def in_fork(body: Callable[[], object], timeout: float = 60.0) -> object:
    """body()'s result, computed in a forked child and sent back as JSON through a pipe.

    The child always leaves through os._exit, so pytest's own code never runs twice; an exception in
    the child comes back as its traceback and fails the test here.
    """
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_fd)
            try:
                text = json.dumps({"result": body()})
            except BaseException:  # noqa: BLE001 - whatever the child hit, the parent must hear of it
                text = json.dumps({"error": traceback.format_exc()})
            with os.fdopen(write_fd, "w") as pipe:
                pipe.write(text)
        finally:
            os._exit(0)
    os.close(write_fd)
    chunks, deadline = [], time.monotonic() + timeout
    while select.select([read_fd], [], [], max(deadline - time.monotonic(), 0))[0]:
        if not (chunk := os.read(read_fd, 1 << 16)):
            break
        chunks.append(chunk)
    else:
        os.kill(pid, signal.SIGKILL)
    os.close(read_fd)
    os.waitpid(pid, 0)
    if time.monotonic() > deadline:
        pytest.fail(f"the forked child did not finish within {timeout:g} s")
    if not chunks:
        pytest.fail("the forked child died without answering")
    reply = json.loads(b"".join(chunks))
    if "error" in reply:
        pytest.fail(f"the forked child raised:\n{reply['error']}")
    return reply["result"]


# --- submissions.discover --------------------------------------------------------------------------


def _hand_in(submitted: Path, student: str, assignment: str, notebook: str) -> Path:
    path = submitted / student / assignment / notebook
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


@pytest.fixture
def submitted(tmp_path) -> Path:
    """zoe hands in the lesson plus a scratch notebook; alice hands in nothing for it and something for a
    lesson that does not exist; Jupyter's and macOS's hidden files lie everywhere."""
    root = tmp_path / "submitted"
    _hand_in(root, "zoe", LESSON, f"{LESSON}.ipynb")
    _hand_in(root, "zoe", LESSON, "scratch.ipynb")
    _hand_in(root, "zoe", LESSON, f".ipynb_checkpoints/{LESSON}-checkpoint.ipynb")
    _hand_in(root, "zoe", LESSON, ".DS_Store")
    _hand_in(root, "zoe", LESSON, "notes.txt")
    _hand_in(root, "zoe", ".ipynb_checkpoints", "old.ipynb")
    (root / "alice" / LESSON).mkdir(parents=True)
    _hand_in(root, "alice", "99_nope", "answer.ipynb")
    _hand_in(root, ".ipynb_checkpoints", LESSON, f"{LESSON}.ipynb")
    (root / ".DS_Store").write_text("")
    return root


def test_discover_lists_each_expected_notebook_of_each_student_in_student_order(submitted):
    """A notebook not handed in is still listed (path None): it must score zero, not vanish."""
    submissions, _ = discover(submitted)
    assert submissions == [
        Submission("alice", LESSON, LESSON, None),
        Submission("zoe", LESSON, LESSON, submitted / "zoe" / LESSON / f"{LESSON}.ipynb"),
    ]


def test_discover_reports_extra_notebooks_and_unknown_assignments_and_ignores_hidden_files(submitted):
    """What cannot be graded gets a row saying why; what Jupyter or Finder left behind gets none."""
    _, rows = discover(submitted)
    assert [(r.student, r.assignment, r.notebook, r.question, r.status, r.max_score) for r in rows] == [
        ("alice", "99_nope", "", "", Status.UNKNOWN_ASSIGNMENT, 0.0),
        ("zoe", LESSON, "scratch", "", Status.EXTRA_NOTEBOOK, 0.0),
    ]
    assert all(row.reason for row in rows)


# --- journal ---------------------------------------------------------------------------------------


def _rows(student: str, score: float = 1.0) -> list[QuestionResult]:
    return [
        QuestionResult(student, LESSON, LESSON, "square_forward", score, 1.0, Status.OK),
        QuestionResult(student, LESSON, LESSON, "square_second_derivative", 0.0, 2.0, Status.FAILED, "cut"),
    ]


def _recorded(student: str, score: float = 1.0, submission: str = "bytes") -> Recorded:
    basis = {"submission": submission, "lesson": "v1", "options": "o1"}
    return Recorded(basis, _rows(student, score))


def _key(student: str) -> tuple[str, str, str]:
    return (student, LESSON, LESSON)


def test_journal_load_returns_what_was_appended_with_statuses_as_enums(tmp_path):
    """A resumed run takes its finished notebooks' rows from here, so they must come back unchanged."""
    journal = Journal(tmp_path / "journal.jsonl", b"run secret")
    journal.append(_key("alice"), _recorded("alice"))
    journal.append(_key("bob"), _recorded("bob", 0.5))
    loaded = Journal(tmp_path / "journal.jsonl", b"run secret").load()
    assert loaded == {_key("alice"): _recorded("alice"), _key("bob"): _recorded("bob", 0.5)}
    assert {type(row.status) for entry in loaded.values() for row in entry.rows} == {Status}


def test_journal_of_a_run_not_yet_started_is_empty(tmp_path):
    assert Journal(tmp_path / "journal.jsonl", b"run secret").load() == {}


def _cut_short(journal: Journal) -> None:
    """What a kill in the middle of an append leaves: half a line, without its newline."""
    line = json.dumps({"key": list(_key("carol")), "rows": []})
    with open(journal.path, "a", encoding="utf-8") as file:
        file.write(line[: len(line) // 2])


def test_journal_ignores_a_last_line_cut_short_and_keeps_the_entries_before_it(tmp_path):
    """A run killed while appending must resume, grading that notebook again."""
    journal = Journal(tmp_path / "journal.jsonl", b"run secret")
    journal.append(_key("alice"), _recorded("alice"))
    _cut_short(journal)
    assert journal.load() == {_key("alice"): _recorded("alice")}


def test_journal_keeps_what_a_resumed_run_appends_after_a_line_cut_short(tmp_path):
    """Appended to the cut line, the resumed run's first entry would be lost to the next resume."""
    journal = Journal(tmp_path / "journal.jsonl", b"run secret")
    journal.append(_key("alice"), _recorded("alice"))
    _cut_short(journal)
    journal.append(_key("bob"), _recorded("bob"))
    assert journal.load() == {_key("alice"): _recorded("alice"), _key("bob"): _recorded("bob")}


def test_journal_keeps_the_latest_entry_of_a_notebook_graded_twice(tmp_path):
    """A notebook being recorded when a run died is graded again; its new rows replace the old."""
    journal = Journal(tmp_path / "journal.jsonl", b"run secret")
    journal.append(_key("alice"), _recorded("alice", 0.0))
    journal.append(_key("alice"), _recorded("alice", 1.0))
    assert journal.load() == {_key("alice"): _recorded("alice", 1.0)}


# --- grades.csv ------------------------------------------------------------------------------------

_TRICKY_REASON = 'Forward value is wrong: expected 1.0, got 2.0 (x="0, 1").\nLikely cause: x**3'


def test_grades_csv_has_exactly_the_promised_columns(tmp_path):
    write_csv(_rows("alice"), tmp_path / "grades.csv")
    header = (tmp_path / "grades.csv").read_text().splitlines()[0]
    assert header == "student,assignment,notebook,question,score,max_score,status,reason"


def test_grades_csv_is_sorted_by_key_and_reads_back_equal(tmp_path):
    """Sorted, two runs over the same submissions compare line for line; diagnostics hold commas and
    quotes, which must survive, and line breaks, which become spaces: one row, one line."""
    rows = [
        QuestionResult("bob", LESSON, LESSON, "b", 0.0, 2.0, Status.TIMEOUT, _TRICKY_REASON),
        QuestionResult("alice", "99_nope", "", "", 0.0, 0.0, Status.UNKNOWN_ASSIGNMENT, "not a lesson"),
        QuestionResult("bob", LESSON, LESSON, "a", 0.25, 1.0, Status.FAILED, "wrong"),
        QuestionResult("alice", LESSON, LESSON, "a", 1.0, 1.0, Status.OK),
    ]
    write_csv(rows, tmp_path / "grades.csv")
    read = read_csv(tmp_path / "grades.csv")
    written = [replace(row, reason=one_line(row.reason)) for row in rows]
    assert read == sorted(written, key=lambda row: row.key)
    assert len((tmp_path / "grades.csv").read_text().splitlines()) == 1 + len(rows)
    assert {type(row.status) for row in read} == {Status}


# --- gradebook -------------------------------------------------------------------------------------


def test_alembic_head_is_the_revision_nbgrader_itself_reports(monkeypatch):
    """The fast in-process answer must stamp gradebooks exactly as nbgrader's slow subprocess would."""
    # Restored after the test: putting the tools on PATH changes it for the whole process.
    monkeypatch.setenv("PATH", os.environ.get("PATH", ""))
    put_nbgrader_tools_on_path()
    assert gradebook.alembic_head() == nbgrader.api.get_alembic_version()


def test_created_gradebook_opens_in_nbgrader_without_running_alembic(tmp_path, monkeypatch):
    """nbgrader asks alembic for the revision only when a gradebook has no tables yet; a created one
    already has them, stamped, so nbgrader's own commands open it as one of theirs."""
    path = tmp_path / "gradebook.db"
    gradebook.create(f"sqlite:///{path}")

    def no_alembic(*args, **kwargs):
        raise AssertionError(f"nbgrader ran {args}: the gradebook was not stamped with its revision")

    monkeypatch.setattr(nbgrader.api.sp, "check_output", no_alembic)
    with nbgrader.api.Gradebook(f"sqlite:///{path}") as book:
        assert book.assignments == []
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT version_num FROM alembic_version").fetchall() == [
            (gradebook.alembic_head(),)
        ]


_STOPPED_WHILE_CLOSING = """
import sys
from unittest import mock
from sqlalchemy.engine.default import DefaultDialect
from autograder.records import gradebook
gradebook.create(sys.argv[1])
try:
    with mock.patch.object(DefaultDialect, "do_close", side_effect=KeyboardInterrupt):
        with gradebook.opened(sys.argv[1]) as book:
            book.assignments
except KeyboardInterrupt:
    print("stopped", file=sys.stderr)
"""


def test_a_stop_while_the_gradebook_closes_stops_the_command_without_a_traceback(tmp_path):
    """A Ctrl-C that lands while SQLAlchemy closes the gradebook's connection is logged by SQLAlchemy
    with a traceback before it goes on up to the command, which says in one line that it stopped. The
    stop must still reach the command, and the one line be all there is."""
    db_url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    closed = subprocess.run(
        [sys.executable, "-c", _STOPPED_WHILE_CLOSING, db_url], capture_output=True, text=True, timeout=60
    )
    assert closed.stderr == "stopped\n"


def test_sqlalchemy_errors_that_are_no_stop_are_still_printed(tmp_path):
    """What the stop's record is dropped from is SQLAlchemy's log, not its errors: a connection that
    fails to close is still said, as Python says it when nothing configures logging."""
    script = _STOPPED_WHILE_CLOSING.replace("KeyboardInterrupt", "OSError('disk gone')")
    closed = subprocess.run(
        [sys.executable, "-c", script, f"sqlite:///{tmp_path / 'gradebook.db'}"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "Exception closing connection" in closed.stderr
    assert "OSError: disk gone" in closed.stderr
    assert "stopped" not in closed.stderr


# --- executor --------------------------------------------------------------------------------------

_EXECUTOR_CELLS = {
    "mixed": "\n".join(
        [
            "import sys",
            "from IPython.display import display",
            "print('a')",
            "print('b')",
            "display('shown')",
            "print('oops', file=sys.stderr)",
            "print('c')",
            "6 * 7",
        ]
    ),
    "semicolon": "6 * 7;",
    "error": "1 / 0",
    "plot": "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()",
    "statement": "x = 1",
}


# The executor's tests share one shell, built once on one xdist worker.
_EXECUTOR = pytest.mark.xdist_group("grading-units-executor")


@pytest.fixture(scope="module")
def executed() -> dict[str, tuple[list[dict], int]]:
    """Each cell of _EXECUTOR_CELLS, in order, in one shell built in a forked child: the shell enables
    matplotlib's inline backend and swaps sys.stdout, which pytest's process must keep as they are."""

    def body():
        shell = executor.create_shell()
        return {name: executor.run_cell(shell, source) for name, source in _EXECUTOR_CELLS.items()}

    return in_fork(body)


@_EXECUTOR
def test_executor_records_outputs_in_kernel_order_merging_consecutive_prints(executed):
    """nbgrader grades the executed notebook: its outputs must be those a kernel would have sent."""
    outputs, count = executed["mixed"]
    assert outputs == [
        {"output_type": "stream", "name": "stdout", "text": "a\nb\n"},
        {"output_type": "display_data", "data": {"text/plain": "'shown'"}, "metadata": {}},
        {"output_type": "stream", "name": "stderr", "text": "oops\n"},
        {"output_type": "stream", "name": "stdout", "text": "c\n"},
        {"output_type": "execute_result", "data": {"text/plain": "42"}, "metadata": {}, "execution_count": 1},
    ]
    assert count == 1


@_EXECUTOR
def test_executor_shows_no_result_for_a_last_expression_ending_in_a_semicolon(executed):
    """Lessons end cells with `;` to keep a return value out of the notebook, as in Jupyter."""
    assert executed["semicolon"] == [[], 2]


@_EXECUTOR
def test_executor_records_an_exception_as_an_error_output(executed):
    """An error output is what makes nbgrader give a test cell no points."""
    (error,), _ = executed["error"]
    assert (error["output_type"], error["ename"], error["evalue"]) == (
        "error",
        "ZeroDivisionError",
        "division by zero",
    )
    assert "----> 1 1 / 0" in re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))


@_EXECUTOR
def test_executor_records_a_shown_figure_as_a_png_display(executed):
    """The lessons' plots must appear in the feedback notebook."""
    (figure,), _ = executed["plot"]
    assert figure["output_type"] == "display_data"
    assert figure["data"]["image/png"]


@_EXECUTOR
def test_executor_counts_executions_like_a_kernel(executed):
    """Every cell counts, even one that shows nothing or fails, as in a kernel."""
    assert [count for _, count in executed.values()] == [1, 2, 3, 4, 5]


# --- worker ----------------------------------------------------------------------------------------

# One worker process serves every test below: warming it up (torch, matplotlib, IPython) is what costs.
_WORKER = pytest.mark.xdist_group("grading-units-worker")
# Seconds the worker may take beyond a job's own limits: the interrupt grace, forks and replies.
_WORKER_SLACK = 15.0


def job(cells: list[str], tests: tuple[int, ...] = (), **overrides) -> dict:
    """A job as the grading run sends it, with limits small enough for tests; `tests` are the indices
    of the cells that are test cells."""
    settings = {"seed": 1, "cell_timeout": 10.0, "notebook_timeout": 30.0}
    marked = [{"source": source, "test": index in tests} for index, source in enumerate(cells)]
    return settings | overrides | {"cells": marked}


class Worker:
    """`python -m autograder.grading.worker`, spoken to the way the pool speaks to it."""

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        settings = {"memory_mb": 512, "excluded": [str(COURSE_DIRECTORY)], "trusted": False}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.grading.worker", json.dumps(settings)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=os.environ | {"TMPDIR": str(scratch)},
        )

    def grade(self, job: dict, timeout: float | None = None) -> list[dict]:
        write_message(self.process.stdin, json.dumps(job).encode())
        timeout = timeout or job["notebook_timeout"] + _WORKER_SLACK
        if not select.select([self.process.stdout], [], [], timeout)[0]:
            self.process.kill()
            pytest.fail(f"the worker did not answer within {timeout:g} s")
        reply = read_message(self.process.stdout)
        assert reply is not None, "the worker died"
        return json.loads(reply)

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """One warmed worker, its temporary files kept in a folder of its own."""
    worker = Worker(tmp_path_factory.mktemp("worker-tmp"))
    worker.grade(job(["pass"]), timeout=120)
    yield worker
    worker.close()


def _stdout(result: dict) -> str:
    return "".join(o["text"] for o in result["outputs"] if o.get("name") == "stdout")


def _errors(result: dict) -> list[tuple[str, str]]:
    return [(o["ename"], o["evalue"]) for o in result["outputs"] if o["output_type"] == "error"]


@_WORKER
def test_worker_runs_cells_in_one_namespace_and_reports_them_ok(worker):
    """Cells build on each other, as in a kernel."""
    results = worker.grade(job(["x = 20", "print(x + 1)", "x * 2"]))
    assert [r["status"] for r in results] == [Status.OK] * 3
    assert [r["execution_count"] for r in results] == [1, 2, 3]
    assert _stdout(results[1]) == "21\n"
    assert results[2]["outputs"][0]["data"]["text/plain"] == "40"


@_WORKER
def test_worker_interrupts_a_cell_that_loops_forever_and_runs_the_next(worker):
    """Interrupted like a kernel, the notebook keeps its state: later cells still earn their points."""
    looping, after = worker.grade(job(["while True:\n    pass", "print('after')"], cell_timeout=0.5))
    assert looping["status"] == Status.TIMEOUT
    assert "ran past 0.5 s" in looping["reason"]
    assert [name for name, _ in _errors(looping)] == ["KeyboardInterrupt"]
    assert (after["status"], _stdout(after)) == (Status.OK, "after\n")


@_WORKER
def test_worker_reports_a_dead_kernel_for_the_exiting_cell_and_each_later_one_unrun(worker):
    """Later cells would run without the state they need; each says why it has no outputs."""
    results = worker.grade(job(["print('before')", "import os\nos._exit(3)", "print('never')", "x = 1"]))
    assert results[0]["status"] == Status.OK
    for result in results[1:]:
        assert result["status"] == Status.KERNEL_DIED
        assert "exited with code 3" in result["reason"]
        assert (result["outputs"], result["execution_count"]) == ([], None)


@_WORKER
def test_worker_stops_a_notebook_that_runs_past_its_time_limit_and_says_so(worker):
    """The cell running when time is up is interrupted; the rest are not started. The reasons name
    the notebook's limit, not a cell's."""
    cells = ["import time", "time.sleep(0.6)", "time.sleep(0.6)", "print('too late')"]
    results = worker.grade(job(cells, notebook_timeout=1.0, cell_timeout=5.0))
    assert [r["status"] for r in results] == [Status.OK, Status.OK, Status.TIMEOUT, Status.TIMEOUT]
    assert [name for name, _ in _errors(results[2])] == ["KeyboardInterrupt"]
    assert results[3]["outputs"] == []
    for result in results[2:]:
        assert "the notebook ran past its 1 s limit" in result["reason"]


_SQUARE = """
import torch


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**2{wrong_forward}

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x{wrong_backward}
"""


def _square(wrong_forward: str = "", wrong_backward: str = "") -> str:
    return _SQUARE.format(wrong_forward=wrong_forward, wrong_backward=wrong_backward)


def _check_cell(check: str, options: str = "") -> str:
    """A test cell as a lesson writes it, calling `check` on Square with `options`."""
    return f"from autograder import {check}\n{check}(Square.apply, lambda x: x**2{options})"


@_WORKER
def test_worker_judges_a_test_cell_outside_the_notebook_and_passes_a_correct_function(worker):
    """A test cell is judged, not run in the notebook's process: it has no execution count there."""
    defined, checked = worker.grade(job([_square(), _check_cell("check_second_derivative")], tests=(1,)))
    assert (defined["status"], defined["execution_count"]) == (Status.OK, 1)
    passed = {"output_type": "stream", "name": "stdout", "text": "✓ Square: second derivatives right\n"}
    assert (checked["status"], checked["outputs"], checked["execution_count"]) == (Status.OK, [passed], None)


@_WORKER
def test_worker_judges_the_test_as_written_whatever_the_notebook_replaced(worker):
    """An answer that replaces the checks (and torch's comparisons) in its own process changes nothing:
    the checks the test cell makes are read from its source and judged where no answer runs."""
    cheat = (
        "import autograder, autograder.checks, torch\n"
        "autograder.checks.check_forward = lambda *args, **kwargs: None\n"
        "torch.isclose = lambda a, b, **kwargs: torch.ones_like(a, dtype=torch.bool)"
    )
    cells = [_square(wrong_forward=" + 1"), cheat, _check_cell("check_forward")]
    *_, checked = worker.grade(job(cells, tests=(2,)))
    ((name, message),) = _errors(checked)
    assert name == "AssertionError"
    assert message.startswith("Forward value is wrong: Square on x of shape ():")


@_WORKER
def test_worker_checks_fail_a_backward_cut_from_the_graph(worker):
    """The judge's diagnostic reaches the notebook as the test cell's error, as a kernel shows it."""
    _, checked = worker.grade(
        job([_square(wrong_backward=".detach()"), _check_cell("check_second_derivative")], tests=(1,))
    )
    ((name, message),) = _errors(checked)
    assert name == "AssertionError"
    assert "the gradient is cut off from the graph" in message


@_WORKER
def test_worker_draws_the_same_random_inputs_for_the_same_seed(worker):
    """Grading twice (or resuming) gives the same grades; another seed draws other hidden inputs."""

    def failure(seed: int) -> str:
        cells = [_square(wrong_forward=" + 1"), _check_cell("check_forward", ", randomized=True")]
        ((name, message),) = _errors(worker.grade(job(cells, tests=(1,), seed=seed))[1])
        assert name == "AssertionError"
        return message

    first = failure(seed=1)
    assert "Forward value is wrong" in first
    assert failure(seed=1) == first
    assert failure(seed=2) != first


_DOUBLED = """
import torch


def doubled(x):
    return {doubled}
"""
# A test cell whose hidden part defines a builder of inputs and a function under test: their names are
# pieces of the hidden source.
_HIDDEN_BUILDER_CELL = """
from autograder import check_result


def visible_pair(gen):
    return (torch.ones(2, requires_grad=True),)


check_result(doubled, lambda x: 2 * x, visible_pair)
### BEGIN HIDDEN TESTS
def secret_builder_xyz(gen):
    return (torch.rand(3, generator=gen, requires_grad=True),)


check_result(doubled, lambda x: 2 * x, secret_builder_xyz, randomized=True)


def secret_quadrupled_xyz(x):
    return 2 * doubled(x)


check_result(secret_quadrupled_xyz, lambda x: 4 * x, visible_pair)
### END HIDDEN TESTS
"""
# Right on the visible pair, wrong on the hidden test's three inputs.
_RIGHT_THEN_WRONG = ["2 * x", "2 * x if x.numel() == 2 else 3 * x"]


def _hidden_builder_run_in_a_kernel() -> list[list[dict]]:
    """Each answer of _RIGHT_THEN_WRONG, then the test cell, run as plain nbgrader's kernel runs them:
    the checks themselves run; the test cell's outputs."""

    def body() -> list[list[dict]]:
        shell = executor.create_shell()
        ran = []
        try:
            for answer in _RIGHT_THEN_WRONG:
                executor.run_cell(shell, _DOUBLED.format(doubled=answer))
                ran.append(executor.run_cell(shell, _HIDDEN_BUILDER_CELL)[0])
        finally:
            autograder.checks._checker.stop()
        return ran

    return in_fork(body)


@_WORKER
def test_no_line_or_message_names_a_builder_the_hidden_tests_define_in_a_kernel_or_the_class_grader(worker):
    """The feedback never holds the hidden tests' source: a passing check and a failed one say a hidden
    test built their inputs, or defined the function they check, in the kernel as in the class grader,
    which print the same lines; a visible builder keeps its name."""
    cells = [
        cell
        for answer in _RIGHT_THEN_WRONG
        for cell in (_DOUBLED.format(doubled=answer), _HIDDEN_BUILDER_CELL)
    ]
    by_class_grader = [result["outputs"] for result in worker.grade(job(cells, tests=(1, 3)))[1::2]]
    for right, wrong in (by_class_grader, _hidden_builder_run_in_a_kernel()):
        visible = "✓ doubled: result right on `visible_pair`\n"
        assert _stdout({"outputs": right}) == visible + (
            "✓ doubled: result right on inputs a hidden test builds\n"
            "✓ a function a hidden test defines: result right on `visible_pair`\n"
        )
        assert _stdout({"outputs": wrong}) == visible
        # (The kernel's traceback quotes the cell, as any kernel's does: the class grader's shows none.)
        ((name, message),) = _errors({"outputs": wrong})
        assert name == "AssertionError"
        assert message.startswith("The result of doubled is wrong")
        assert message.endswith("when called with the x that a hidden test builds")
        assert "secret_builder_xyz" not in message


_LIST_OPEN_FILES = """
import os

for fd in os.listdir("/proc/self/fd"):
    try:
        print(os.readlink(f"/proc/self/fd/{fd}"))
    except OSError:
        pass  # the listing's own descriptor, closed by now
"""


@_WORKER
def test_worker_lets_notebook_code_inherit_no_open_file_but_its_pipes(worker):
    """Student code can write to whatever its process holds open: an inherited IPython history
    database, shared by every IPython session of the instructor, was corrupted that way, and the
    workers that started next failed on it."""
    (listed,) = worker.grade(job([_LIST_OPEN_FILES]))
    assert {name for name in _stdout(listed).split() if not name.startswith("pipe:")} == {"/dev/null"}


_WRITES_TO_EVERY_FD = """
import os

for fd in range(3, 51):
    try:
        os.write(fd, b"garbage")
    except OSError:
        pass
print("done")
"""


@_WORKER
def test_worker_survives_student_code_writing_to_every_file_descriptor(worker):
    """The worker's own pipes are closed in the executor; its results pipe cannot be, so whatever the
    notebook writes there stops the notebook, never the worker."""
    results = worker.grade(job([_WRITES_TO_EVERY_FD, "print('next cell')"], notebook_timeout=5.0))
    assert [(r["status"], r["outputs"]) for r in results] == [(Status.KERNEL_DIED, [])] * 2
    assert "wrote something other than its results" in results[0]["reason"]
    (after,) = worker.grade(job(["print('next notebook')"]))
    assert (after["status"], _stdout(after)) == (Status.OK, "next notebook\n")


@_WORKER
def test_worker_leaves_nothing_a_notebook_saved(worker):
    """A notebook's files live in its own scratch, which ends with it: a class would otherwise leave one
    folder per notebook, with whatever the student saved in it, in the worker's temporary folder."""
    before = sorted(worker.scratch.rglob("*"))
    saving = "import tempfile\nprint(open(tempfile.mktemp(), 'w').write('left behind?'))"
    (saved,) = worker.grade(job([saving]))
    assert (saved["status"], _stdout(saved)) == (Status.OK, "12\n")
    assert sorted(worker.scratch.rglob("*")) == before


_FAILING_CHECK = """
import torch
from autograder import check_forward


class Cube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x**3


check_forward(Cube.apply, lambda x: x**2)
"""


def test_a_failed_check_in_a_notebook_shows_the_cell_and_the_message_not_the_graders_frames():
    """In JupyterLab a failing check reads like the student's own assertion: the line of the cell that
    called it, then the message; the checks' own frames tell a student nothing."""

    def body() -> list[dict]:
        shell = executor.create_shell()
        outputs, _ = executor.run_cell(shell, _FAILING_CHECK)
        return [output for output in outputs if output["output_type"] == "error"]

    (error,) = in_fork(body)
    shown = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(error["traceback"]))
    assert error["ename"] == "AssertionError"
    assert "check_forward(Cube.apply, lambda x: x**2)\n\nAssertionError: Forward value" in shown
    assert "checks.py" not in shown
    assert "_ask" not in shown
    assert shown.endswith(f"AssertionError: {error['evalue']}")
    assert error["evalue"].startswith("Forward value is wrong: Cube on x of shape ():")


# --- what a rerun grades again -----------------------------------------------------------------------


def _handed_in(tmp_path: Path, student: str, text: str = "{}") -> Submission:
    path = tmp_path / student / LESSON / f"{LESSON}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return Submission(student, LESSON, LESSON, path)


def test_a_rerun_plans_exactly_the_notebooks_whose_basis_changed_and_says_why(tmp_path):
    options = {"seed": 1, "cell_timeout": 60.0}
    alice, bob, carol = (_handed_in(tmp_path, name) for name in ("alice", "bob", "carol"))
    graded = {s.key: Recorded(staleness.basis(s, "v1", options), _rows(s.student)) for s in (alice, bob)}
    graded[_key("dave")] = _recorded("dave")
    _handed_in(tmp_path, "bob", '{"cells": []}')  # bob hands in again

    work = staleness.plan([alice, bob, carol], graded, {LESSON: "v1"}, options, options)
    assert [s.student for s, _ in work.todo] == ["bob", "carol"]
    assert set(work.kept) == {alice.key}
    assert work.forgotten == [_key("dave")]
    assert work.line == (
        "grading 1 notebook not graded yet; regrading 1 resubmitted notebook; "
        "dropping 1 notebook no longer handed in; 1 unchanged"
    )

    work = staleness.plan([alice], graded, {LESSON: "v2"}, options, options)
    assert work.line.startswith(f"regrading 1 of {LESSON}, whose course changed;")
    changed = options | {"cell_timeout": 30.0}
    work = staleness.plan([alice], graded, {LESSON: "v1"}, changed, options)
    assert work.line.startswith("regrading 1 notebook graded under other options (--timeout 60 → 30);")
    work = staleness.plan(
        [alice, bob], graded, {LESSON: "v1"}, options, options, lambda key: key[0] == "alice"
    )
    assert (work.todo, work.forgotten, set(work.kept)) == ([], [], {alice.key, bob.key, _key("dave")})
    assert work.line.endswith("1 changed notebook outside --student/--assignment left as they are")
