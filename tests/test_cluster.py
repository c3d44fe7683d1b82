"""`python -m autograder grade --scheduler` on a real Dask cluster of this machine's processes: a class
covering every lesson grades to exactly a local run's grades.csv, though a worker is killed mid-run;
a lost scheduler stops the run with a clear message and the same command resumes it; a worker with
another version of the course is refused."""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from classroom import LESSON, answers_of, grade_command, write_course_class, write_submission
from dask_cluster import DaskCluster
from grading_pipeline import submission

from autograder.course.layout import REPOSITORY
from autograder.records.results import Status, read_csv

pytestmark = pytest.mark.xdist_group("cluster")

SEED = "5"
_KILLER = "kills_its_process"
_RUN_TIMEOUT = 600
_WORKER_COUNT = r"(tcp://[\d.:]+) \((\d+) notebooks?\)"


def _command(submitted: Path, out: Path, *extra: str) -> list[str]:
    return grade_command(submitted, out, "--seed", SEED, *extra)


def _grade(submitted: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        _command(submitted, out, *extra), capture_output=True, text=True, check=True, timeout=_RUN_TIMEOUT
    )


def _journal_keys(out: Path) -> list[tuple[str, ...]]:
    journal = out / "journal.jsonl"
    lines = journal.read_text().splitlines() if journal.exists() else []
    return [tuple(json.loads(line)["key"]) for line in lines if line.endswith("}")]


def _start_grading(submitted: Path, out: Path, scheduler: str, graded_before: int) -> subprocess.Popen:
    """A cluster run, returned once it has recorded `graded_before` notebooks."""
    run = subprocess.Popen(
        _command(submitted, out, "--scheduler", scheduler),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + _RUN_TIMEOUT
    while len(_journal_keys(out)) < graded_before:
        assert run.poll() is None, run.communicate()
        assert time.monotonic() < deadline, "the run recorded nothing"
        time.sleep(0.05)
    return run


@pytest.fixture(scope="module")
def submitted(tmp_path_factory) -> Path:
    """Every lesson's solution, first mutant and untouched release, and one notebook that kills its
    own process."""
    root = tmp_path_factory.mktemp("class") / "submitted"
    write_course_class(root, mutants=1)
    write_submission(root, _KILLER, submission(LESSON, {"square": "import os\nos._exit(1)"}))
    return root


def _notebooks(submitted: Path) -> int:
    return len(list(submitted.glob("*/*/*.ipynb")))


@pytest.fixture(scope="module")
def local_grades(submitted, tmp_path_factory) -> str:
    out = tmp_path_factory.mktemp("local") / "out"
    _grade(submitted, out, "--workers", "2")
    return (out / "grades.csv").read_text()


def _graded_by(stderr: str) -> str:
    """Which workers graded how many notebooks, as the run's log says at its end."""
    (line,) = [line for line in stderr.splitlines() if line.startswith("graded by ")]
    return line.removeprefix("graded by ")


@pytest.fixture(scope="module")
def worker_killed(submitted, tmp_path_factory):
    """A run on two Dask workers, one of which is killed -9 (with its nanny) after 4 notebooks."""
    root = tmp_path_factory.mktemp("worker-killed")
    with DaskCluster(root / "cluster") as cluster:
        survivor, _ = cluster.add_worker("survivor")
        killed, victim = cluster.add_worker("killed")
        run = _start_grading(submitted, root / "out", cluster.address, graded_before=4)
        cluster.kill(victim)
        stdout, stderr = run.communicate(timeout=_RUN_TIMEOUT)
    assert run.returncode == 0, stderr
    return root / "out", stdout, stderr, {"survivor": survivor, "killed": killed}


def test_a_worker_killed_mid_run_changes_no_grade_of_a_local_run_with_the_same_seed(
    worker_killed, local_grades
):
    out, _, _, _ = worker_killed
    assert (out / "grades.csv").read_text() == local_grades


def test_every_notebook_is_recorded_once_though_a_worker_was_killed(worker_killed, submitted):
    out, _, stderr, workers = worker_killed
    keys = _journal_keys(out)
    assert len(keys) == len(set(keys)) == _notebooks(submitted)
    counts = {address: int(n) for address, n in re.findall(_WORKER_COUNT, _graded_by(stderr))}
    assert set(counts) <= set(workers.values())
    assert workers["survivor"] in counts
    assert sum(counts.values()) == _notebooks(submitted)


def test_the_report_names_the_workers_that_took_part(worker_killed):
    out, _, stderr, workers = worker_killed
    report = (out / "report.html").read_text()
    assert f"<p>Graded by {_graded_by(stderr)}.</p>" in report
    assert workers["survivor"] in report


def test_a_notebook_that_kills_its_grading_process_is_graded_kernel_died(worker_killed):
    out, stdout, _, _ = worker_killed
    rows = [row for row in read_csv(out / "grades.csv") if row.student == _KILLER]
    assert rows
    assert {row.status for row in rows} == {Status.KERNEL_DIED}
    assert all("exited with code 1" in row.reason for row in rows)
    assert "kernel died" in stdout


def _part_of(submitted: Path, folder: Path, lessons: set[str]) -> Path:
    """A copy of the class's notebooks for `lessons` only."""
    for notebook in submitted.glob("*/*/*.ipynb"):
        if notebook.parent.name in lessons:
            copy = folder / notebook.relative_to(submitted)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(notebook, copy)
    return folder


def _rows_of(grades_csv: str, lessons: set[str]) -> list[list[str]]:
    """grades.csv's header and its rows for `lessons`, in order (a reason may span lines)."""
    header, *rows = csv.reader(io.StringIO(grades_csv))
    return [header, *(row for row in rows if row[1] in lessons)]


def test_a_lost_scheduler_stops_the_run_clearly_and_the_same_command_resumes(
    submitted, local_grades, tmp_path
):
    lessons = {"01_saving_inputs", "02_saving_outputs"}
    part, out = _part_of(submitted, tmp_path / "submitted", lessons), tmp_path / "out"
    with DaskCluster(tmp_path / "first") as cluster:
        cluster.add_worker("worker", threads=2)
        run = _start_grading(part, out, cluster.address, graded_before=2)
        cluster.kill(cluster.scheduler)
        _, stderr = run.communicate(timeout=120)
        port = cluster.port
    assert run.returncode == 1
    assert stderr.splitlines()[-1] == (
        f"lost the Dask scheduler at tcp://127.0.0.1:{port}; every notebook graded so far is saved: start "
        "the scheduler and workers again, then run the same command to resume"
    )
    assert "Traceback" not in stderr
    assert not (out / "grades.csv").exists()
    graded_before = len(_journal_keys(out))
    assert 2 <= graded_before < _notebooks(part)

    with DaskCluster(tmp_path / "second", port=port) as cluster:
        cluster.add_worker("worker", threads=2)
        _grade(part, out, "--scheduler", cluster.address)
    with open(out / "grades.csv", newline="") as resumed:
        assert list(csv.reader(resumed)) == _rows_of(local_grades, lessons)
    assert len(_journal_keys(out)) == len(set(_journal_keys(out))) == _notebooks(part)


def _another_version(folder: Path) -> dict[str, str]:
    """An environment whose `import autograder` finds a copy of the course with one line added."""
    for package in ("autograder", "solutions"):
        shutil.copytree(REPOSITORY / package, folder / package, ignore=shutil.ignore_patterns("__pycache__"))
    with open(folder / "autograder" / "checks.py", "a") as checks:
        checks.write("# a later version\n")
    return os.environ | {"PYTHONPATH": str(folder)}


def test_a_worker_with_another_course_version_is_refused_with_a_clear_message(tmp_path):
    write_submission(tmp_path / "submitted", "solution", submission(LESSON, answers_of("solution")))
    with DaskCluster(tmp_path / "cluster") as cluster:
        good, _ = cluster.add_worker("good")
        stale, stale_process = cluster.add_worker("stale", env=_another_version(tmp_path / "stale"))
        result = _grade(tmp_path / "submitted", tmp_path / "out", "--scheduler", cluster.address)
        stale_process.wait(timeout=60)
    refusal = re.search(
        rf"refused Dask worker {stale}: its course version \((\w+)\) is not the grading machine's "
        r"\((\w+)\); install the same commit of the course there",
        result.stderr,
    )
    assert refusal, result.stderr
    assert refusal[1] != refusal[2]
    assert f"graded by 1 Dask worker: {good} (1 notebook)" in result.stderr
    assert {row.status for row in read_csv(tmp_path / "out" / "grades.csv")} == {Status.OK}


def test_a_local_run_does_not_import_dask():
    probe = "import sys, autograder.__main__; print('distributed' in sys.modules)"
    imported = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "False"
