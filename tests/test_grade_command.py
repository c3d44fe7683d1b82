"""`python -m autograder grade` on real submissions: a class mixing good, wrong, hostile and broken
notebooks grades to the right per-question results, in parallel as sequentially, resumes after kill -9,
and leaves a gradebook that nbgrader's own commands read."""

import csv
import html
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from classroom import LESSON, answers_of, grade_command, write_submission, write_typical_class
from grading_pipeline import submission

from autograder.__main__ import main
from autograder.course.layout import SOURCE
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.records.results import Status, read_csv
from autograder.sandbox import cgroup
from autograder.wire.verdict import WIDTH

# One worker grades the module's mixed class once, for all the tests that read it.
pytestmark = pytest.mark.xdist_group("grade_command")

QUESTIONS = {"square_forward": 1.0, "square_first_derivative": 1.0, "square_second_derivative": 2.0}
FULL_MARKS = sum(QUESTIONS.values())
_SOURCE_NOTEBOOK = SOURCE / LESSON / f"{LESSON}.ipynb"


# Answers that make the test cells' checks pass without asking the checker, then cube instead of square.
_WRONG_SQUARE = answers_of("cube_with_consistent_derivatives")["square"]
_REPLACES_THE_CHECKS = f"""import autograder
import autograder.checks


def passes(*args, **kwargs):
    \"\"\"Stands in for every check.\"\"\"


for name in ("check_forward", "check_first_derivative", "check_second_derivative"):
    setattr(autograder.checks, name, passes)
    setattr(autograder, name, passes)

{_WRONG_SQUARE}"""
_FAKES_THE_CHECKER = f"""import autograder.checks
from autograder.wire.verdict import Verdict

autograder.checks._checker.ask = lambda payload, timeout: Verdict(passed=True)

{_WRONG_SQUARE}"""


# A right answer that first tries a shell: the kernel refuses to run it, and the answer keeps its marks.
_RUNS_A_SHELL = """import subprocess

try:
    print(subprocess.run(["/bin/sh", "-c", "cat /etc/passwd"], capture_output=True, text=True).stdout)
except OSError as refused:
    print("refused:", refused)"""


def _answer(code: str) -> dict[str, str]:
    return {"square": code}


def _without_test_cells(notebook):
    notebook.cells = [cell for cell in notebook.cells if not cell.metadata.get("nbgrader", {}).get("grade")]
    return notebook


def _with_test_cells_replaced(notebook):
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.source = "pass  # the tests were here"
    return notebook


def _mixed_class(root: Path) -> None:
    """Everything a real class hands in, good and bad, one student each."""
    solution = answers_of("solution")["square"]
    notebooks = {
        "solution": submission(LESSON, answers_of("solution")),
        "untouched_release": submission(LESSON, {}),
        "detach_in_backward": submission(LESSON, answers_of("detach_in_backward")),
        "patches_the_checks": submission(LESSON, answers_of("patches_the_checks")),
        "imports_the_reference": submission(LESSON, answers_of("imports_the_reference")),
        "reads_the_hidden_tests": submission(
            LESSON, _answer(f"source = open({str(_SOURCE_NOTEBOOK)!r}).read()\n{solution}")
        ),
        "runs_a_shell": submission(LESSON, _answer(f"{_RUNS_A_SHELL}\n{solution}")),
        "replaces_the_checks": submission(LESSON, _answer(_REPLACES_THE_CHECKS)),
        "fakes_the_checker": submission(LESSON, _answer(_FAKES_THE_CHECKER)),
        "loops_forever": submission(LESSON, _answer("while True:\n    pass")),
        "exits": submission(LESSON, _answer(f"import sys\nsys.exit(0)\n{solution}")),
        "kills_its_process": submission(LESSON, _answer("import os\nos._exit(1)")),
        "eats_memory": submission(LESSON, _answer(f"hog = bytearray(16 * 2**30)\n{solution}")),
        "deleted_test_cells": _without_test_cells(submission(LESSON, answers_of("solution"))),
        "edited_test_cells": _with_test_cells_replaced(submission(LESSON, answers_of("solution"))),
        "extra_notebook": submission(LESSON, answers_of("solution")),
    }
    for student, notebook in notebooks.items():
        write_submission(root, student, notebook)
    write_submission(root, "extra_notebook", submission(LESSON, {}), name="scratch")
    write_submission(root, "malformed_json", '{"cells": [ this is not json')
    (root / "missing_notebook" / LESSON).mkdir(parents=True)
    write_submission(
        root, "unknown_assignment", submission(LESSON, answers_of("solution")), assignment="99_nope"
    )


def _grade(submitted: Path, out: Path, *extra: str, **popen) -> subprocess.CompletedProcess:
    # Long enough for any lesson cell on a loaded 2-core machine; the looping notebook waits it out.
    command = grade_command(submitted, out, "--timeout", "15", *extra)
    return subprocess.run(command, capture_output=True, text=True, check=True, **popen)


def _by_student(rows) -> dict[str, dict[str, object]]:
    students: dict[str, dict[str, object]] = {}
    for row in rows:
        students.setdefault(row.student, {})[row.question] = row
    return students


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixed")
    _mixed_class(root / "submitted")
    result = _grade(root / "submitted", root / "out", "--workers", "2", "--seed", "7")
    return root / "out", result.stdout, _by_student(read_csv(root / "out" / "grades.csv"))


def _total(questions) -> float:
    return sum(row.score for row in questions.values())


@pytest.mark.parametrize(
    "student", ["solution", "deleted_test_cells", "edited_test_cells", "extra_notebook", "runs_a_shell"]
)
def test_answers_like_the_solution_score_full_marks_whatever_their_neighbours_do(mixed, student):
    _, _, students = mixed
    graded = {question: row for question, row in students[student].items() if question}
    assert {q: (row.score, row.status) for q, row in graded.items()} == {
        q: (points, Status.OK) for q, points in QUESTIONS.items()
    }


@pytest.mark.parametrize(
    ("student", "lost", "reason"),
    [
        ("untouched_release", set(QUESTIONS), "not written yet"),
        ("detach_in_backward", {"square_second_derivative"}, "`.detach()`"),
        ("patches_the_checks", set(QUESTIONS), "Forward value is wrong"),
        ("imports_the_reference", set(QUESTIONS), "failed: ModuleNotFoundError: No module named 'solutions"),
        # The kernel shows the notebook an empty folder where the course's solutions are.
        ("reads_the_hidden_tests", set(QUESTIONS), "after an earlier cell failed: FileNotFoundError"),
        ("replaces_the_checks", set(QUESTIONS), "Forward value is wrong"),
        ("fakes_the_checker", set(QUESTIONS), "Forward value is wrong"),
    ],
)
def test_wrong_and_hostile_answers_lose_marks_with_the_reason(mixed, student, lost, reason):
    _, _, students = mixed
    rows = students[student]
    assert {q for q, row in rows.items() if row.score < row.max_score} == lost
    assert all(row.status == Status.FAILED for q, row in rows.items() if q in lost)
    assert any(reason in row.reason for q, row in rows.items() if q in lost), [
        r.reason for r in rows.values()
    ]


@pytest.mark.parametrize(
    ("student", "status", "reason"),
    [
        ("loops_forever", Status.FAILED, "after an earlier cell failed: the cell ran past 15 s"),
        ("exits", Status.FAILED, "after an earlier cell failed: SystemExit"),
        ("eats_memory", Status.FAILED, "after an earlier cell failed: MemoryError"),
        ("kills_its_process", Status.KERNEL_DIED, "exited with code 1"),
        ("malformed_json", Status.INVALID_NOTEBOOK, "not a readable notebook"),
        ("missing_notebook", Status.MISSING, "was not handed in"),
    ],
)
def test_broken_notebooks_cost_their_own_questions_with_a_reason(mixed, student, status, reason):
    _, _, students = mixed
    rows = students[student]
    assert set(rows) == set(QUESTIONS)
    assert _total(rows) == 0
    assert {row.status for row in rows.values()} == {status}
    assert all(reason in row.reason for row in rows.values()), [row.reason for row in rows.values()]


def test_a_shell_the_kernel_refused_printed_nothing_of_what_it_would_have_read(mixed):
    out, _, _ = mixed
    feedback = (out / "autograded" / "runs_a_shell" / LESSON / f"{LESSON}.ipynb").read_text()
    assert "refused: [Errno 13] Permission denied" in feedback
    assert "root:x:0:0" not in feedback


def test_notebooks_outside_the_assignment_are_reported_not_graded(mixed):
    _, _, students = mixed
    (extra,) = [row for q, row in students["extra_notebook"].items() if not q]
    assert (extra.notebook, extra.status, extra.max_score) == ("scratch", Status.EXTRA_NOTEBOOK, 0)
    (unknown,) = students["unknown_assignment"].values()
    assert (unknown.assignment, unknown.status) == ("99_nope", Status.UNKNOWN_ASSIGNMENT)


def test_grades_csv_has_the_promised_columns(mixed):
    out, _, _ = mixed
    with open(out / "grades.csv", newline="") as grades:
        header = next(csv.reader(grades))
    assert header[:7] == ["student", "assignment", "notebook", "question", "score", "max_score", "status"]


def test_summary_is_printed_and_report_has_its_three_plots(mixed):
    out, stdout, _ = mixed
    assert "square_second_derivative" in stdout
    assert "grades.csv" in stdout
    assert (out / "report.html").read_text().count('src="data:image/svg+xml;base64,') == 3


def test_nbgrader_export_reads_the_gradebook_with_the_same_totals(mixed):
    out, _, students = mixed
    run_nbgrader("export", course=out)
    with open(out / "nbgrader_totals.csv", newline="") as exported:
        totals = {row["student_id"]: float(row["score"]) for row in csv.DictReader(exported)}
    graded = {student: rows for student, rows in students.items() if set(QUESTIONS) <= set(rows)}
    assert totals == {student: _total(rows) for student, rows in graded.items()}
    assert totals["solution"] == FULL_MARKS
    assert (out / "grades.csv").read_text().startswith("student,assignment,notebook,question")


def test_feedback_shows_diagnostics_but_never_the_hidden_tests(mixed):
    out, _, _ = mixed
    run_nbgrader("generate_feedback", LESSON, course=out)
    pages = {path.parent.parent.name: path.read_text() for path in out.glob(f"feedback/*/{LESSON}/*.html")}
    assert "solution" in pages
    assert "detach_in_backward" in pages
    for page in pages.values():
        assert "BEGIN HIDDEN TESTS" not in page
        assert "randomized=True" not in page
    assert "cut off from the graph" in pages["detach_in_backward"]


def _too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if len(line) > WIDTH]


def test_checks_messages_fit_where_they_are_read_and_grades_csv_keeps_each_on_one_line(mixed):
    """A failed check's message in the feedback notebook and in report.html: every line at most WIDTH
    columns, `AssertionError: ` included; in grades.csv, one line per row."""
    out, _, students = mixed
    rows = [row for questions in students.values() for row in questions.values()]
    assert len((out / "grades.csv").read_text().splitlines()) == 1 + len(rows)
    failed = [row.reason for row in rows if row.status == Status.FAILED]
    assert any("\n" not in reason and len(reason) > WIDTH for reason in failed)  # long: kept on one line
    shown = [
        "\n".join(output.traceback)
        for path in out.glob(f"autograded/*/{LESSON}/{LESSON}.ipynb")
        for cell in nbformat.read(path, as_version=4).cells
        if cell.metadata.get("nbgrader", {}).get("grade")
        for output in cell.get("outputs", [])
        if output.output_type == "error" and output.ename == "AssertionError"
    ]
    assert shown
    assert [line for text in shown for line in _too_wide(text)] == []
    report = html.unescape((out / "report.html").read_text())
    examples = re.findall(r"<pre>(.*?)</pre>", report, flags=re.DOTALL)
    assert any("Likely cause" in example for example in examples)
    assert [line for example in examples for line in _too_wide(example)] == []


def test_one_worker_gives_the_same_grades_row_for_row(mixed, tmp_path):
    out, _, _ = mixed
    _grade(out.parent / "submitted", tmp_path / "sequential", "--workers", "1", "--seed", "7")
    assert (tmp_path / "sequential" / "grades.csv").read_text() == (out / "grades.csv").read_text()


def _journal_lines(out: Path) -> int:
    journal = out / "journal.jsonl"
    return len(journal.read_text().splitlines()) if journal.exists() else 0


def test_a_run_killed_mid_way_resumes_to_exactly_the_grades_of_an_uninterrupted_run(tmp_path):
    students = 12
    write_typical_class(tmp_path / "submitted", students)
    options = ("--workers", "1", "--seed", "3")
    _grade(tmp_path / "submitted", tmp_path / "uninterrupted", *options)

    interrupted = tmp_path / "interrupted"
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(tmp_path / "submitted"),
        "--out",
        str(interrupted),
    ]
    run = subprocess.Popen(
        [*command, *options], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while _journal_lines(interrupted) < 3 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(run.pid, signal.SIGKILL)
    run.wait()
    graded_before_the_kill = _journal_lines(interrupted)
    assert 3 <= graded_before_the_kill < students, "the run was not stopped mid-way"
    assert not (interrupted / "grades.csv").exists()

    _grade(tmp_path / "submitted", interrupted, *options)
    assert (interrupted / "grades.csv").read_text() == (tmp_path / "uninterrupted" / "grades.csv").read_text()
    run_nbgrader("export", course=interrupted)
    with open(interrupted / "nbgrader_totals.csv", newline="") as exported:
        totals = [(row["student_id"], float(row["score"])) for row in csv.DictReader(exported)]
    ours: dict[str, float] = {}
    for row in read_csv(interrupted / "grades.csv"):
        ours[row.student] = ours.get(row.student, 0.0) + row.score
    assert sorted(totals) == sorted(ours.items())


def test_grading_is_refused_where_the_kernel_cannot_confine_student_code(tmp_path, monkeypatch, capsys):
    """Without the kernel's confinement a submission could reach the hidden tests: the command says what
    the host lacks and grades nothing, unless the instructor says the submissions are trusted."""
    lacking = "Landlock, which AUTOGRADER_LANDLOCK_ABI=0 turns off: unset it"
    monkeypatch.setenv("AUTOGRADER_LANDLOCK_ABI", "0")
    (tmp_path / "submitted").mkdir()
    assert main(["grade", str(tmp_path / "submitted"), "--out", str(tmp_path / "out")]) == 3
    error = capsys.readouterr().err
    assert f"Refusing to grade: this host cannot confine student code. It lacks:\n- {lacking}" in error
    assert "--trust-submissions" in error
    assert not (tmp_path / "out").exists()


def _one_student(root: Path) -> Path:
    write_submission(root / "submitted", "alice", submission(LESSON, answers_of("solution")))
    return root / "submitted"


def test_a_run_leaves_none_of_its_notebooks_cgroups_behind(tmp_path):
    """Each notebook's processes live in a cgroup named for the run. When the run ends none is left: not
    even the one its worker had already set up for a next notebook that never came."""
    assert cgroup.problem() is None, "run as root (as CI does): notebooks get cgroups"
    command = grade_command(_one_student(tmp_path), tmp_path / "out", "--workers", "1")
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def the_runs() -> set[Path]:
        return {
            group for parent in cgroup._parents().values() for group in parent.glob(f"gradgrad-{run.pid}-*")
        }

    seen = set()
    while run.poll() is None:
        seen |= the_runs()
        time.sleep(0.01)
    assert run.returncode == 0
    assert seen, "the run's notebooks had cgroups"
    assert the_runs() == set()


def test_a_bug_of_the_graders_prints_one_line_and_keeps_the_traceback_in_error_log(
    tmp_path, monkeypatch, capsys
):
    import autograder.grading.run

    def broken(*args, **kwargs):
        (tmp_path / "out").mkdir()
        raise ZeroDivisionError("a bug deep in the grader")

    monkeypatch.setattr(autograder.grading.run, "grade", broken)
    assert main(["grade", str(_one_student(tmp_path)), "--out", str(tmp_path / "out")]) == 1
    error = capsys.readouterr().err
    assert "Traceback" not in error
    assert error.splitlines()[-1] == (
        "the grader failed (a bug, not your doing): ZeroDivisionError('a bug deep in the grader'); "
        f"the traceback is in {tmp_path / 'out' / 'error.log'}"
    )
    assert "Traceback (most recent call last)" in (tmp_path / "out" / "error.log").read_text()


def test_an_output_folder_that_cannot_be_written_gets_one_line(tmp_path, capsys):
    """/proc takes no new folder, even from root."""
    assert main(["grade", str(_one_student(tmp_path)), "--out", "/proc/gradgrad-grades"]) == 1
    error = capsys.readouterr().err
    assert "Traceback" not in error
    assert error.splitlines()[-1] in (
        "No such file or directory (/proc/gradgrad-grades); fix that, then run the same command",
        "permission denied (/proc/gradgrad-grades): SUBMITTED must be readable and --out writable by you; "
        "fix that, then run the same command",
    )
