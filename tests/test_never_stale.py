"""No grade is ever stale: `python -m autograder grade` run again, after any change, ends with what one
fresh run over the final state gives, grading again only what changed. Every run here is the real
command in a subprocess, on one lesson and a few students."""

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path

import nbformat
import pytest
from classroom import LESSON, answers_of, grade_command, write_submission, write_typical_class
from grading_pipeline import submission

from autograder.course.layout import REPOSITORY
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.grading import stop
from autograder.grading.errors import StoppedError
from autograder.records.results import read_csv
from autograder.sandbox import cgroup

pytestmark = pytest.mark.xdist_group("never_stale")
SEED = ("--seed", "7")
# Long enough for any cell of the lesson on a loaded 2-core machine.
OPTIONS = ("--workers", "2", "--timeout", "15", *SEED)


def _grade(submitted: Path, out: Path, *options: str, **popen) -> subprocess.CompletedProcess:
    return subprocess.run(
        grade_command(submitted, out, *OPTIONS, *options), capture_output=True, text=True, **popen
    )


def _first_line(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 0, result.stderr
    return result.stderr.splitlines()[0]


def _hand_in(root: Path, student: str, kind: str) -> None:
    answers = {} if kind == "blank" else answers_of(kind)
    write_submission(root, student, submission(LESSON, answers))


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> Path:
    """alice and carol solved the lesson, bob handed in the release untouched, dave made a mistake."""
    root = tmp_path_factory.mktemp("graded")
    for student, kind in {"alice": "solution", "bob": "blank", "carol": "solution"}.items():
        _hand_in(root / "submitted", student, kind)
    _hand_in(root / "submitted", "dave", "detach_in_backward")
    _first_line(_grade(root / "submitted", root / "out"))
    return root


@pytest.fixture
def semester(graded, tmp_path) -> Path:
    """A copy of the graded class to change."""
    shutil.copytree(graded, tmp_path, dirs_exist_ok=True)
    return tmp_path


def _totals(out: Path) -> dict[str, float]:
    """The gradebook's totals, as `nbgrader export` reads them."""
    run_nbgrader("export", course=out)
    with open(out / "nbgrader_totals.csv", newline="") as exported:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(exported)}


def _scores(out: Path) -> dict[str, float]:
    scores: dict[str, float] = {}
    for row in read_csv(out / "grades.csv"):
        scores[row.student] = scores.get(row.student, 0.0) + row.score
    return scores


def _graded_notebooks(out: Path) -> dict[str, list]:
    """Each feedback notebook's test cells, as the student sees them."""
    notebooks = {}
    for path in sorted(out.glob("autograded/*/*/*.ipynb")):
        cells = nbformat.read(path, as_version=4).cells
        tests = [cell for cell in cells if cell.metadata.get("nbgrader", {}).get("grade")]
        notebooks[str(path.relative_to(out))] = [
            (c.source, [o.get("ename") for o in c.outputs]) for c in tests
        ]
    return notebooks


def _notebooks_run(out: Path) -> int:
    return json.loads((out / "timing.json").read_text())["notebooks"]


def _assert_same_as_a_fresh_run(out: Path, submitted: Path, fresh: Path) -> None:
    _first_line(_grade(submitted, fresh))
    assert (out / "grades.csv").read_text() == (fresh / "grades.csv").read_text()
    assert _totals(out) == _totals(fresh)
    assert _graded_notebooks(out) == _graded_notebooks(fresh)


def test_resubmitted_and_removed_notebooks_are_regraded_to_what_a_fresh_run_gives(semester):
    submitted, out = semester / "submitted", semester / "out"
    assert _scores(out) == {"alice": 4.0, "bob": 0.0, "carol": 4.0, "dave": 2.0}
    _hand_in(submitted, "alice", "blank")  # worse
    _hand_in(submitted, "bob", "solution")  # better
    (submitted / "carol" / LESSON / f"{LESSON}.ipynb").unlink()
    shutil.rmtree(submitted / "dave")

    line = _first_line(_grade(submitted, out))
    assert line == "regrading 3 resubmitted notebooks; dropping 1 notebook no longer handed in"
    assert _scores(out) == {"alice": 0.0, "bob": 4.0, "carol": 0.0}
    assert {row.status for row in read_csv(out / "grades.csv") if row.student == "carol"} == {"missing"}
    assert "dave" not in _totals(out)
    _assert_same_as_a_fresh_run(out, submitted, semester / "fresh")

    again = _grade(submitted, out)
    assert _first_line(again) == "nothing changed since the last run: 3 notebooks keep their grades"
    assert _notebooks_run(out) == 0


def test_a_changed_option_regrades_every_notebook(semester):
    line = _first_line(_grade(semester / "submitted", semester / "out", "--memory-mb", "900"))
    assert line == "regrading 4 notebooks graded under other options (--memory-mb 1024 → 900)"
    assert _notebooks_run(semester / "out") == 4


def _copy_of_the_repository(destination: Path) -> Path:
    for part in ("autograder", "solutions", "pyproject.toml"):
        source = REPOSITORY / part
        if source.is_dir():
            shutil.copytree(source, destination / part, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, destination / part)
    return destination


def test_points_raised_in_the_course_regrade_every_notebook_of_the_lesson(semester):
    """The instructor makes the second derivative worth 5 points instead of 2, in their copy."""
    repository = _copy_of_the_repository(semester / "repository")
    source = repository / "solutions" / "source" / LESSON / f"{LESSON}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    (cell,) = [
        c
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "square_second_derivative"
    ]
    assert cell.metadata.nbgrader.points == 2
    cell.metadata.nbgrader.points = 5
    nbformat.write(notebook, source)
    # The copy's modules are the ones imported: the command runs from the copy.
    in_the_copy = {"cwd": repository, "env": os.environ | {"PYTHONPATH": str(repository)}}

    line = _first_line(_grade(semester / "submitted", semester / "out", **in_the_copy))
    assert line == f"regrading 4 of {LESSON}, whose course changed"
    assert _scores(semester / "out") == {"alice": 7.0, "bob": 0.0, "carol": 7.0, "dave": 2.0}
    assert _totals(semester / "out") == _scores(semester / "out")


def test_one_student_is_regraded_alone_and_the_others_stay_as_they_are(semester):
    submitted, out = semester / "submitted", semester / "out"
    _hand_in(submitted, "alice", "blank")
    _hand_in(submitted, "bob", "solution")
    result = _grade(submitted, out, "--student", "alice")
    line = _first_line(result)
    assert line == (
        "regrading 1 resubmitted notebook; 2 unchanged; "
        "1 changed notebook outside --student/--assignment left as they are"
    )
    assert _scores(out) == {"alice": 0.0, "bob": 0.0, "carol": 4.0, "dave": 2.0}
    assert _first_line(_grade(submitted, out)) == "regrading 1 resubmitted notebook; 3 unchanged"
    assert _scores(out)["bob"] == 4.0


@pytest.mark.parametrize(
    ("option", "complaint"),
    [
        (("--workers", "0"), "--workers must be a positive number, not 0"),
        (("--timeout", "-1"), "--timeout must be a positive number, not -1.0"),
        (("--notebook-timeout", "0"), "--notebook-timeout must be a positive number, not 0.0"),
        (("--memory-mb", "-5"), "--memory-mb must be a positive number, not -5"),
        (("--timeout", "nan"), "--timeout must be a positive number, not nan"),
        (("--scheduler", "nowhere"), "--scheduler nowhere is not a Dask scheduler's address"),
        (("--workers", "two"), "argument --workers: invalid int value: 'two'"),
        (("--student", "nobody"), "--student nobody: no such student in SUBMITTED or in --out"),
        (("--assignment", "99_nope"), "--assignment 99_nope: not a lesson of this course"),
    ],
)
def test_a_bad_option_gets_one_line_and_nothing_is_written(graded, tmp_path, option, complaint):
    result = _grade(graded / "submitted", tmp_path / "out", *option)
    assert result.returncode == 2
    assert complaint in result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert not (tmp_path / "out").exists()


def test_an_empty_submitted_folder_gets_the_expected_layout(tmp_path):
    (tmp_path / "submitted" / "alice" / "not_a_lesson").mkdir(parents=True)
    result = _grade(tmp_path / "submitted", tmp_path / "out")
    assert result.returncode == 1
    assert result.stderr.strip().endswith(
        "expected SUBMITTED/<student>/<assignment>/<notebook>.ipynb, "
        "e.g. SUBMITTED/alice/01_saving_inputs/01_saving_inputs.ipynb"
    )
    assert not (tmp_path / "out").exists()


def test_a_folder_the_command_did_not_make_is_left_untouched(graded, tmp_path):
    foreign = tmp_path / "theirs"
    foreign.mkdir()
    (foreign / "grades.csv").write_text("their grades\n")
    result = _grade(graded / "submitted", foreign)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"--out {foreign} holds files this command did not write (it has no run.json); "
        "name a new or empty folder"
    )
    assert [path.name for path in foreign.iterdir()] == ["grades.csv"]
    assert (foreign / "grades.csv").read_text() == "their grades\n"

    (foreign / "run.json").write_text('{"their": "settings"}')
    assert _grade(graded / "submitted", foreign).returncode == 2
    (tmp_path / "a_file").write_text("")
    result = _grade(graded / "submitted", tmp_path / "a_file")
    assert (result.returncode, result.stderr.strip()) == (
        2,
        f"--out {tmp_path / 'a_file'} is a file; name a folder for the grades",
    )


def _as_from_a_shell() -> None:
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _journal_lines(out: Path) -> int:
    journal = out / "journal.jsonl"
    return len(journal.read_text().splitlines()) if journal.exists() else 0


def _processes_naming(text: str) -> list[str]:
    """Command lines of live processes that mention `text` (the workers' settings name DIR)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            arguments = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in arguments:
            found.append(arguments)
    return found


@pytest.fixture(scope="module")
def larger_class(tmp_path_factory) -> Path:
    """Twelve students, graded once without interruption."""
    root = tmp_path_factory.mktemp("larger")
    write_typical_class(root / "submitted", 12)
    _first_line(_grade(root / "submitted", root / "uninterrupted"))
    return root


@pytest.mark.parametrize(("stop", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_run_ends_at_once_in_one_line_and_the_same_command_finishes_it(
    larger_class, tmp_path, stop, status
):
    out = tmp_path / "out"
    command = grade_command(larger_class / "submitted", out, *OPTIONS)
    # As a terminal's Ctrl-C does, the signal goes to the command's whole process group. The command
    # starts as a shell starts it, with SIGINT neither ignored nor blocked, whatever this test's process
    # was left with by a library an earlier test used (a child inherits both).
    run = subprocess.Popen(
        command, stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_as_from_a_shell
    )
    deadline = time.monotonic() + 120
    while _journal_lines(out) < 2 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    # What the stop met: notebooks saved, and whether the run had already ended.
    met = f"{_journal_lines(out)} notebooks saved, exit status {run.poll()}"
    os.killpg(run.pid, stop)
    stopped_at = time.monotonic()
    _, stderr = run.communicate(timeout=60)
    assert time.monotonic() - stopped_at < 10
    saved = _journal_lines(out)
    assert 2 <= saved < 12, f"the run was not stopped mid-way; the stop met {met}; it said:\n{stderr}"
    assert run.returncode == status
    assert stderr.splitlines()[-1].endswith(
        f"stopped: {saved} graded notebooks saved in {out}; the same command finishes the class"
    )
    assert "Traceback" not in stderr
    assert _processes_naming(str(out)) == []
    parents = cgroup._parents().values()
    assert [group for parent in parents for group in parent.glob(f"gradgrad-{run.pid}-*")] == []

    line = _first_line(_grade(larger_class / "submitted", out))
    assert line == f"grading {12 - saved} notebooks not graded yet; {saved} unchanged"
    assert (out / "grades.csv").read_text() == (larger_class / "uninterrupted" / "grades.csv").read_text()
    assert _totals(out) == _scores(out)


def test_a_stop_whose_exception_python_drops_in_a_weakref_callback_still_stops_the_run(monkeypatch):
    """The race the stopped-run test above can meet: the handler's exception raised inside a weakref
    callback is printed and ignored by Python. The stop is recorded all the same, and the run raises it
    with the next notebook it receives."""
    monkeypatch.setattr(stop, "_received", [])
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)

    class Resource:
        pass

    held = Resource()
    weakref.finalize(held, stop.stop_on_signal, signal.SIGINT, None)
    del held  # the callback runs here, and Python drops its StoppedError
    assert [type(unraisable.exc_value) for unraisable in dropped] == [StoppedError]
    with pytest.raises(StoppedError) as stopped:
        stop.raise_if_stopped()
    assert stopped.value.signal_number == signal.SIGINT
