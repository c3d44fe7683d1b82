"""One grading run: discover, grade in parallel, record, report. Resumable at any point."""

import hashlib
import json
import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path

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


def _notebook_seed(run_seed: int, key: tuple[str, ...]) -> int:
    digest = hashlib.sha256(json.dumps([run_seed, *key]).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


def _job(notebook, seed: int, limits: Limits, protected: list[str]) -> dict:
    """What a worker needs to run one notebook: its code cells, in order, and the limits."""
    return {
        "cells": [cell.source for cell in notebook.cells if cell.cell_type == "code"],
        "seed": seed,
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
        "memory_mb": limits.memory_mb,
        "protected": protected,
    }


def grade_class(
    submitted: Path, out: Path, *, workers: int, limits: Limits, seed: int | None = None, stream=sys.stderr
) -> list[QuestionResult]:
    """Grade every notebook under `submitted` into the course directory `out`; return all rows."""
    started = time.monotonic()
    submitted, out = submitted.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    run_seed = _run_seed(out, seed)
    submissions, rows = discover(submitted)
    course = GradingCourse(out)
    course.prepare({s.assignment for s in submissions})
    journal = Journal(out / "journal.jsonl")
    finished = journal.load()
    todo = [s for s in submissions if s.key not in finished]
    protected = [str(COURSE_DIRECTORY), str(submitted), str(out)]

    with Progress(total=len(submissions), done=len(submissions) - len(todo), stream=stream) as progress:

        def done(submission: Submission, notebook_rows: list[QuestionResult]) -> None:
            journal.append(submission.key, notebook_rows)
            finished[submission.key] = notebook_rows
            progress.advance(label="/".join(submission.key))

        with WorkerPool(workers) as pool:
            waiting = iter(todo)
            in_flight: dict[tuple[str, ...], tuple[Submission, object]] = {}

            def feed() -> None:
                """Keep every worker busy while holding few sanitized notebooks in memory."""
                while len(in_flight) < 2 * workers and (submission := next(waiting, None)):
                    if submission.path is None:
                        reason = f"{submission.notebook}.ipynb was not handed in"
                        done(submission, course.record_unusable(*submission.key, Status.MISSING, reason))
                        continue
                    try:
                        notebook = course.sanitize(submission.path, submission.student, submission.assignment)
                    except ValueError as error:
                        unusable = course.record_unusable(
                            *submission.key, Status.INVALID_NOTEBOOK, str(error)
                        )
                        done(submission, unusable)
                        continue
                    in_flight[submission.key] = (submission, notebook)
                    pool.submit(
                        submission.key,
                        _job(notebook, _notebook_seed(run_seed, submission.key), limits, protected),
                    )

            feed()
            while in_flight:
                key, outcome = pool.results.get()
                submission, notebook = in_flight.pop(key)
                if isinstance(outcome, str):
                    done(submission, course.record_unusable(*key, Status.KERNEL_DIED, outcome))
                else:
                    done(submission, course.record(*key[:2], notebook, key[2], outcome))
                feed()

    rows += [row for notebook_rows in finished.values() for row in notebook_rows]
    write_csv(rows, out / "grades.csv")
    write_report(rows, out / "report.html", elapsed_seconds=time.monotonic() - started)
    return rows


def default_workers() -> int:
    return len(os.sched_getaffinity(0))
