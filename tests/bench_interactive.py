"""`make bench` (interactive work): what an instructor waits for when regrading one student or
releasing a lesson, against its budgets, beside plain nbgrader measured in the same run.

- the first line on screen: seconds from the command's start to its first line;
- a run's fixed cost: one student's three solved lessons graded with `--workers 1`, the command's wall
  time less the seconds its cells (test cells included) took, from `timing.json`, the median of
  BENCH_RUNS runs (default 5), with their spread; nbgrader's
  `autograde` of the same notebooks, less the same cells' time, is the baseline;
- `make release`: every lesson generated from scratch, and `python -m autograder release` when no
  source changed.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from budgets import judged
from classroom import write_submission
from grading_pipeline import solution_answers, submission

from autograder.course.layout import assignments
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.course.release import add_lesson, generate, write_config

FIRST_LINE_BUDGET_S = 1.0
FIXED_COST_BUDGET_S = 3.0
RELEASE_BUDGET_S = 10.0
UNCHANGED_RELEASE_BUDGET_S = 1.0
LESSONS = assignments()[1:4]


def _one_student(root: Path) -> Path:
    for lesson in LESSONS:
        write_submission(root, "alice", submission(lesson, solution_answers(lesson)), lesson, lesson)
    return root


def _grade(submitted: Path, out: Path) -> tuple[float, float, float]:
    """Seconds to the first line, in all, and in the notebooks' cells."""
    command = [
        sys.executable,
        "-m",
        "autograder",
        "grade",
        str(submitted),
        "--out",
        str(out),
        "--workers",
        "1",
    ]
    started = time.perf_counter()
    run = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    run.stderr.readline()
    first_line = time.perf_counter() - started
    run.stderr.read()
    if run.wait() != 0:
        raise SystemExit(f"grading failed: {' '.join(command)}")
    wall = time.perf_counter() - started
    return first_line, wall, json.loads((out / "timing.json").read_text())["cell_seconds"]


def _runs(submitted: Path, root: Path, runs: int) -> tuple[float, float, float, str]:
    """The median run of `runs` (by fixed cost): its first line, fixed cost and cells' seconds, and the
    spread of the fixed cost. One run alone says as much about the machine's other work as the grader."""
    measured = []
    for run in range(runs):
        first_line, wall, cells = _grade(submitted, root / f"out-{run}")
        measured.append((first_line, wall - cells, cells))
    measured.sort(key=lambda figures: figures[1])
    spread = f"(median of {runs}; {measured[0][1]:.2f} to {measured[-1][1]:.2f} s)"
    return *measured[len(measured) // 2], spread


def _nbgrader_autograde(submitted: Path, course: Path) -> float:
    write_config(course)
    for lesson in LESSONS:
        add_lesson(course, lesson)
    shutil.copytree(submitted, course / "submitted")
    started = time.perf_counter()
    for lesson in LESSONS:
        run_nbgrader("autograde", lesson, course=course)
    return time.perf_counter() - started


def _seconds(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    return time.perf_counter() - started


def main() -> int:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        submitted = _one_student(root / "submitted")
        first_line, fixed, cells, spread = _runs(submitted, root, int(os.environ.get("BENCH_RUNS", "5")))
        nbgrader_fixed = _nbgrader_autograde(submitted, root / "nbgrader") - cells
        started = time.perf_counter()
        generate(root / "release")
        release = time.perf_counter() - started
    unchanged = _seconds([sys.executable, "-m", "autograder", "release"])

    figures = [
        ("first line on screen", first_line, FIRST_LINE_BUDGET_S, ""),
        (f"fixed cost of a run ({len(LESSONS)} notebooks)", fixed, FIXED_COST_BUDGET_S, f"  {spread}"),
        (f"release of {len(assignments())} lessons", release, RELEASE_BUDGET_S, ""),
        ("release, no source changed", unchanged, UNCHANGED_RELEASE_BUDGET_S, ""),
    ]
    for label, value, budget, note in figures:
        print(f"{label + ':':<40}{judged(value, budget)}{note}")
    print(f"{'  its cells and checks:':<40}{cells:7.2f} s")
    baseline = f"{nbgrader_fixed:7.2f} s  ({nbgrader_fixed / fixed:.1f}x ours)"
    print(f"{'  nbgrader autograde, less the cells:':<40}{baseline}")
    return 0 if all(value <= budget for _, value, budget, _ in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
