"""One grading run: discover, grade in parallel, record, report. Resumable at any point."""

import hashlib
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.grading.course import GradingCourse
from autograder.grading.journal import Journal
from autograder.grading.pool import WorkerPool
from autograder.grading.progress import Progress
from autograder.grading.report import write_report
from autograder.grading.results import QuestionResult, Status, write_csv
from autograder.grading.submissions import Submission, discover
from autograder.release import COURSE_DIRECTORY


@dataclass(frozen=True)
class Limits:
    """What one notebook may use."""

    cell_timeout: float = 60.0
    notebook_timeout: float = 300.0
    memory_mb: int = 1024


def default_workers() -> int:
    """The cores this process may use (fewer than the machine's in a container or under taskset)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _run_seed(out: Path, seed: int | None) -> int:
    """The seed of hidden tests' random inputs, fixed for the output folder so that a resumed run
    draws the same inputs as the run it continues."""
    settings = out / "run.json"
    if settings.exists():
        recorded = json.loads(settings.read_text())["seed"]
        if seed is not None and seed != recorded:
            raise SystemExit(f"{out} was graded with --seed {recorded}; use it, or another --out")
        return recorded
    chosen = secrets.randbits(63) if seed is None else seed
    settings.write_text(json.dumps({"seed": chosen}))
    return chosen


class _Run:
    """The state of one run: what is finished, what is being graded, and where results go."""

    def __init__(self, course: GradingCourse, journal: Journal, pool: WorkerPool, settings: dict) -> None:
        self.course, self.journal, self.pool = course, journal, pool
        self.finished = journal.load()
        self.in_flight: dict[tuple[str, ...], tuple[Submission, nbformat.NotebookNode]] = {}
        self.settings = settings
        self.progress: Progress | None = None

    def grade(self, submissions: list[Submission], stream) -> None:
        todo = [s for s in submissions if s.key not in self.finished]
        waiting = iter(todo)
        with Progress(
            total=len(submissions), done=len(submissions) - len(todo), stream=stream
        ) as self.progress:
            self._feed(waiting)
            while self.in_flight:
                key, outcome = self.pool.results.get()
                submission, notebook = self.in_flight.pop(key)
                if isinstance(outcome, str):
                    self._done(submission, self.course.record_unusable(*key, Status.KERNEL_DIED, outcome))
                else:
                    self._done(submission, self.course.record(*key[:2], notebook, key[2], outcome))
                self._feed(waiting)

    def _feed(self, waiting) -> None:
        """Keep every worker busy while holding few sanitized notebooks in memory."""
        while len(self.in_flight) < 2 * self.pool.size and (submission := next(waiting, None)):
            if submission.path is None:
                reason = f"{submission.notebook}.ipynb was not handed in"
                self._done(submission, self.course.record_unusable(*submission.key, Status.MISSING, reason))
                continue
            try:
                notebook = self.course.sanitize(submission.path, submission.student, submission.assignment)
            except ValueError as error:
                rows = self.course.record_unusable(*submission.key, Status.INVALID_NOTEBOOK, str(error))
                self._done(submission, rows)
                continue
            self.in_flight[submission.key] = (submission, notebook)
            self.pool.submit(submission.key, self._job(submission, notebook))

    def _job(self, submission: Submission, notebook: nbformat.NotebookNode) -> dict:
        """What a worker needs to run one notebook: its code cells in order, a seed, the limits."""
        digest = hashlib.sha256(json.dumps([self.settings["seed"], *submission.key]).encode()).digest()
        return self.settings | {
            "cells": [cell.source for cell in notebook.cells if cell.cell_type == "code"],
            "seed": int.from_bytes(digest[:8], "little") >> 1,
        }

    def _done(self, submission: Submission, rows: list[QuestionResult]) -> None:
        self.journal.append(submission.key, rows)
        self.finished[submission.key] = rows
        self.progress.advance(label="/".join(submission.key))


def grade_class(
    submitted: Path, out: Path, *, workers: int, limits: Limits, seed: int | None = None, stream=sys.stderr
) -> list[QuestionResult]:
    """Grade every notebook under `submitted` into the course directory `out`; return all rows."""
    started = time.monotonic()
    submitted, out = submitted.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    settings = {
        "seed": _run_seed(out, seed),
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
        "memory_mb": limits.memory_mb,
        "protected": [str(COURSE_DIRECTORY), str(submitted), str(out)],
    }
    submissions, rows = discover(submitted)
    course = GradingCourse(out)
    # The workers warm up (torch imported, ready to fork) while nbgrader fills the gradebook.
    with WorkerPool(workers) as pool:
        course.prepare({s.assignment for s in submissions})
        run = _Run(course, Journal(out / "journal.jsonl"), pool, settings)
        run.grade(submissions, stream)
    rows += [row for notebook_rows in run.finished.values() for row in notebook_rows]
    write_csv(rows, out / "grades.csv")
    write_report(rows, out / "report.html", elapsed_seconds=time.monotonic() - started)
    return rows
