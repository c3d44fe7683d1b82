"""`make bench`: one class graded by plain `nbgrader autograde` and by `python -m autograder grade`.

Both run in this one process's lifetime on the same machine, so the ratio compares like with like.
The class size is BENCH_STUDENTS (default 40); their answers cycle through the solution and the
mutants, so the grades differ from student to student. Prints both times, their ratio, and whether
the two gave every student the same total.
"""

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from classroom import LESSON, write_typical_class

from autograder.nbgrader_cli import run_nbgrader
from autograder.release import add_lesson, write_config


def _timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def _totals(grades_csv: Path, student_column: str, score_column: str) -> dict[str, float]:
    totals: dict[str, float] = {}
    with open(grades_csv, newline="") as grades:
        for row in csv.DictReader(grades):
            totals[row[student_column]] = totals.get(row[student_column], 0.0) + float(row[score_column])
    return totals


def main() -> int:
    students = int(os.environ.get("BENCH_STUDENTS", "40"))
    workers = os.cpu_count()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        write_typical_class(root / "submitted", students)

        course = root / "nbgrader-course"
        write_config(course)
        add_lesson(course, LESSON)
        shutil.copytree(root / "submitted", course / "submitted")
        baseline = _timed(lambda: run_nbgrader("autograde", LESSON, course=course))
        run_nbgrader("export", course=course)

        command = [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            str(root / "submitted"),
            "--out",
            str(root / "out"),
        ]
        ours = _timed(lambda: subprocess.run(command, check=True, capture_output=True))

        agree = _totals(course / "grades.csv", "student_id", "score") == _totals(
            root / "out" / "grades.csv", "student", "score"
        )
    print(f"students (notebooks):            {students}")
    print(f"plain nbgrader autograde:        {baseline:7.1f} s  ({baseline / students:.2f} s per notebook)")
    print(f"python -m autograder grade (x{workers}): {ours:7.1f} s  ({ours / students:.2f} s per notebook)")
    print(f"speed-up:                        {baseline / ours:7.1f}x")
    print(f"same total for every student:    {'yes' if agree else 'NO'}")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
