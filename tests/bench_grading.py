"""`make bench` (grading): a class covering every lesson, graded by plain nbgrader and by the class grader.

Everything is measured in this one run on this machine, so the ratios compare like with like:

- the class: per lesson, its solution, its untouched release (a blank) and its first BENCH_MUTANTS
  mutants (default 3); graded by `nbgrader autograde` (lesson by lesson, as an instructor runs it) and
  by `python -m autograder grade` (all cores); both times, their ratio, and whether every question of
  every notebook got the same score from both;
- the grader's overhead per notebook above its cells' own compute: the marginal cost of a notebook
  (one worker, the lessons' solutions graded once and then twice over, by two students each time: the
  difference is per notebook, free of start-up and of the report) less the seconds its cells and
  checks' measurements took in the executor, the median of BENCH_PAIRS such pairs (default 3);
- what confinement costs per notebook: a sandboxed executor started and ended, against a plain fork of
  the same warmed worker (a core's time, not the notebook's: the worker sets a notebook's sandbox up
  while the previous notebook runs, and removes it after the result has left); at this kernel's
  Landlock ABI and at ABI 1 (`AUTOGRADER_LANDLOCK_ABI=1`, as Ubuntu 22.04's kernel confines).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import nbformat
from budgets import judged
from grading_pipeline import solution_answers, submission
from mutants import MUTANTS
from nbgrader.api import Gradebook

from autograder.course.layout import COURSE_DIRECTORY, assignments
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.course.release import add_lesson, write_config
from autograder.records.results import read_csv
from autograder.sandbox import landlock

# What the grader may add to a notebook's own compute (its cells and its checks' measurements).
OVERHEAD_BUDGET_S = 0.1
_SETTINGS = {"memory_mb": 1024, "excluded": [str(COURSE_DIRECTORY)], "trusted": False}


def _write(root: Path, student: str, lesson: str, answers: dict[str, str]) -> None:
    folder = root / student / lesson
    folder.mkdir(parents=True)
    nbformat.write(submission(lesson, answers), folder / f"{lesson}.ipynb")


def build_class(root: Path, mutants: int) -> int:
    """Every lesson's solution, blank release and first `mutants` mutants; the number of notebooks."""
    count = 0
    for lesson in assignments():
        solution = solution_answers(lesson)
        students = {"solution": solution, "blank": {}}
        students |= {m.name: m.apply(solution) for m in MUTANTS[lesson][:mutants]}
        for student, answers in students.items():
            _write(root, student, lesson, answers)
            count += 1
    return count


def solutions_class(root: Path, copies: int) -> int:
    """`copies` of every lesson's solution, handed in by two students or more, so that every run draws
    the report's plots (a run over one student does not): two runs then differ by notebooks alone."""
    students = max(copies, 2)
    for copy in range(copies):
        for index, lesson in enumerate(assignments()):
            _write(root, f"solution{(copy + index) % students}", lesson, solution_answers(lesson))
    return copies * len(assignments())


def marginal_cost(root: Path, pairs: int) -> tuple[float, float, float, str]:
    """A notebook's marginal cost with one worker, its cells' and measurements' share, and the rest,
    the grader's overhead (the median over `pairs` pairs of runs), with the spread of that overhead.

    Each pair grades the lessons' solutions once and twice over; the difference, per notebook, is free
    of the run's start-up. The overhead is the difference of each run's wall time less its own cells'
    seconds: a notebook's cells take a little more or less from one run to the next, and subtracting
    one run's average from the other's wall time would count that as the grader's."""
    once, twice = solutions_class(root / "once", 1), solutions_class(root / "twice", 2)
    measured = []
    for pair in range(pairs):
        runs = []
        for submitted in (root / "once", root / "twice"):
            seconds, _, timing = class_grader(
                submitted, root / f"out-{submitted.name}-{pair}", "--workers", "1"
            )
            runs.append((seconds, timing["cell_seconds"]))
        (single, single_cells), (double, double_cells) = runs
        measured.append(
            (
                (double - single) / (twice - once),
                (double_cells - single_cells) / (twice - once),
                ((double - double_cells) - (single - single_cells)) / (twice - once),
            )
        )
    measured.sort(key=lambda figures: figures[2])
    per_notebook, compute, overhead = measured[len(measured) // 2]
    spread = f"(median of {pairs}; {measured[0][2]:.2f} to {measured[-1][2]:.2f} s)"
    return per_notebook, compute, overhead, spread


def nbgrader_scores(submitted: Path, course: Path) -> tuple[float, dict]:
    """Seconds `nbgrader autograde` took over every lesson, and its score of every question."""
    write_config(course)
    for lesson in assignments():
        add_lesson(course, lesson)
    shutil.copytree(submitted, course / "submitted")
    started = time.perf_counter()
    for lesson in assignments():
        run_nbgrader("autograde", lesson, course=course)
    seconds = time.perf_counter() - started
    scores = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        for lesson in assignments():
            for student in book.students:
                try:
                    notebook = book.find_submission_notebook(lesson, lesson, student.id)
                except Exception:  # noqa: BLE001 - a student who did not hand in this lesson
                    continue
                scores |= {(student.id, lesson, grade.name): grade.score for grade in notebook.grades}
    return seconds, scores


def class_grader(submitted: Path, out: Path, *options: str) -> tuple[float, dict, dict]:
    """Seconds `python -m autograder grade` took, its score of every question, and its timing.json."""
    command = [sys.executable, "-m", "autograder", "grade", str(submitted), "--out", str(out), *options]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True)
    seconds = time.perf_counter() - started
    scores = {(row.student, row.assignment, row.question): row.score for row in read_csv(out / "grades.csv")}
    return seconds, scores, json.loads((out / "timing.json").read_text())


def confinement_cost(repeats: int = 20) -> tuple[float, float, float]:
    """Seconds per notebook to start and end a sandboxed executor at this kernel's Landlock ABI and at
    ABI 1 (the oldest, whose guarantees the namespaces and read-only mounts keep), and a plain fork, in a
    warmed worker. Only the sandbox differs between the two ABIs, so no class is graded twice."""
    # Imports torch and warms it up: only this measurement needs it.
    from autograder.grading import worker

    worker.warm_up()

    def plain() -> None:
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)

    def sandboxed() -> None:
        sandbox = worker.sandbox_for(_SETTINGS)
        sandbox.spawn(lambda: None, keep_fds=())
        sandbox.close()

    def sandboxed_at_abi_1() -> None:
        with mock.patch.dict(os.environ, {landlock.CAP_VARIABLE: "1"}):
            sandboxed()

    timings = []
    for action in (sandboxed, sandboxed_at_abi_1, plain):
        action()
        started = time.perf_counter()
        for _ in range(repeats):
            action()
        timings.append((time.perf_counter() - started) / repeats)
    return timings[0], timings[1], timings[2]


def main() -> int:
    mutants = int(os.environ.get("BENCH_MUTANTS", "3"))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        notebooks = build_class(root / "class", mutants)
        baseline, expected = nbgrader_scores(root / "class", root / "nbgrader-course")
        ours, scores, _ = class_grader(root / "class", root / "out")
        questions = len(expected)
        agreeing = sum(scores.get(key) == score for key, score in expected.items())

        per_notebook, compute, overhead, spread = marginal_cost(root, int(os.environ.get("BENCH_PAIRS", "3")))
    sandboxed, sandboxed_abi_1, forked = confinement_cost()

    rows = [
        (
            "class",
            f"{notebooks} notebooks, {len(assignments())} lessons (solution, blank, {mutants} mutants)",
        ),
        ("plain nbgrader autograde", f"{baseline:7.1f} s  ({baseline / notebooks:.2f} s per notebook)"),
        (f"class grader (x{os.cpu_count()})", f"{ours:7.1f} s  ({ours / notebooks:.2f} s per notebook)"),
        ("speed-up", f"{baseline / ours:7.1f}x"),
        ("questions scored alike", f"{agreeing} of {questions}"),
        ("marginal cost of a notebook (x1)", f"{per_notebook:7.2f} s  (the lessons' solutions)"),
        ("  its cells and measurements", f"{compute:7.2f} s"),
        ("  the grader's overhead", f"{judged(overhead, OVERHEAD_BUDGET_S)}  {spread}"),
        (
            f"confinement per notebook (ABI {landlock.used()})",
            f"{1000 * (sandboxed - forked):7.1f} ms  (sandboxed executor "
            f"{1000 * sandboxed:.1f} ms, plain fork {1000 * forked:.1f} ms; off the notebook's path)",
        ),
        (
            "  at Landlock ABI 1",
            f"{1000 * (sandboxed_abi_1 - forked):7.1f} ms  (sandboxed executor"
            f" {1000 * sandboxed_abi_1:.1f} ms)",
        ),
    ]
    for label, value in rows:
        print(f"{label + ':':<36}{value}")
    return 0 if agreeing == questions and overhead <= OVERHEAD_BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
