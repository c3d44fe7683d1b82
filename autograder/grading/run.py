"""One grading run: discover, grade in parallel, record, report. Resumable at any point."""

import hashlib
import json
import secrets
import sys
import time
from pathlib import Path

import nbformat

from autograder.course.notebooks import GradingCourse, executed_cells, is_test
from autograder.course.release import COURSE_DIRECTORY
from autograder.course.submissions import Submission, discover
from autograder.grading.options import Limits
from autograder.grading.pool import WorkerPool
from autograder.records.journal import Journal
from autograder.records.progress import Progress
from autograder.records.report import write_report
from autograder.records.results import QuestionResult, Status, write_csv


def _run_settings(out: Path, seed: int | None) -> dict:
    """The run's seed of hidden tests' random inputs and the secret that signs its journal, fixed for
    the output folder: a resumed run draws the inputs, and trusts the journal lines, of the run it
    continues. A folder graded before runs were signed gets a secret now, and its journal is regraded."""
    settings = out / "run.json"
    recorded = {}
    if settings.exists():
        try:
            recorded = json.loads(settings.read_text())
            int(recorded["seed"])
            bytes.fromhex(recorded.get("journal_secret", ""))
        except (ValueError, TypeError, KeyError) as error:
            raise SystemExit(f"{settings} is damaged ({error}); grade into another --out") from None
        if seed is not None and seed != recorded["seed"]:
            raise SystemExit(f"{out} was graded with --seed {recorded['seed']}; use it, or another --out")
    chosen = {
        "seed": recorded.get("seed", secrets.randbits(63) if seed is None else seed),
        "journal_secret": recorded.get("journal_secret") or secrets.token_hex(32),
    }
    if chosen != recorded:
        settings.write_text(json.dumps(chosen))
    return chosen


class _Run:
    """The state of one run: what is finished, what is being graded, and where results go."""

    def __init__(self, course: GradingCourse, journal: Journal, pool: WorkerPool, settings: dict) -> None:
        self.course, self.journal, self.pool = course, journal, pool
        self.finished = journal.load()
        self.in_flight: dict[tuple[str, ...], tuple[Submission, nbformat.NotebookNode]] = {}
        self.settings = settings
        self.progress: Progress | None = None
        # What this run executed, for the benchmark: notebooks, and seconds spent in their cells.
        self.executed, self.cell_seconds = 0, 0.0

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
                # What a worker sends back is made of what student code printed and displayed.
                if isinstance(outcome, str):
                    self._done(submission, self.course.record_unusable(*key, Status.KERNEL_DIED, outcome))
                else:
                    cells = executed_cells(outcome)
                    self.executed += 1
                    self.cell_seconds += sum(cell.get("seconds", 0.0) for cell in cells)
                    self._done(submission, self.course.record(*key[:2], notebook, key[2], cells))
                self._feed(waiting)

    def _feed(self, waiting) -> None:
        """Keep every worker busy while holding few sanitized notebooks in memory."""
        while len(self.in_flight) < 2 * self.pool.size and (submission := next(waiting, None)):
            if submission.path is None:
                reason = f"{submission.notebook}.ipynb was not handed in"
                self._done(submission, self.course.record_unusable(*submission.key, Status.MISSING, reason))
                continue
            try:
                notebook = self.course.sanitize(submission.path, *submission.key)
            except ValueError as error:
                rows = self.course.record_unusable(*submission.key, Status.INVALID_NOTEBOOK, str(error))
                self._done(submission, rows)
                continue
            self.in_flight[submission.key] = (submission, notebook)
            self.pool.submit(submission.key, self._job(submission, notebook))

    def _job(self, submission: Submission, notebook: nbformat.NotebookNode) -> dict:
        """What a worker needs to run one notebook: its code cells in order (test cells, restored from
        the source, marked as such), a seed of its own, and the time limits."""
        digest = hashlib.sha256(json.dumps([self.settings["seed"], *submission.key]).encode()).digest()
        return self.settings | {
            "cells": [
                {"source": cell.source, "test": is_test(cell)}
                for cell in notebook.cells
                if cell.cell_type == "code"
            ],
            "seed": int.from_bytes(digest[:8], "little") >> 1,
        }

    def _done(self, submission: Submission, rows: list[QuestionResult]) -> None:
        rows = submission.explained(rows)
        self.journal.append(submission.key, rows)
        self.finished[submission.key] = rows
        self.progress.advance(label="/".join(submission.key))


def grade_class(
    submitted: Path,
    out: Path,
    *,
    workers: int,
    limits: Limits,
    seed: int | None = None,
    stream=sys.stderr,
    scheduler: str | None = None,
) -> list[QuestionResult]:
    """Grade every notebook under `submitted` into the course directory `out`; return all rows.
    With `scheduler`, the address of a Dask scheduler, the cluster's workers grade instead of `workers`
    local ones."""
    started = time.monotonic()
    submitted, out = submitted.resolve(), out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    recorded = _run_settings(out, seed)
    settings = {
        "seed": recorded["seed"],
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
    }
    confinement = {
        "memory_mb": limits.memory_mb,
        "excluded": [str(COURSE_DIRECTORY), str(submitted), str(out)],
        "trusted": limits.trusted,
    }
    submissions, rows = discover(submitted)
    course = GradingCourse(out)
    # The workers warm up (torch imported, ready to fork) while nbgrader fills the gradebook.
    with _pool(workers, scheduler, confinement, stream) as pool:
        course.prepare({s.assignment for s in submissions})
        journal = Journal(out / "journal.jsonl", bytes.fromhex(recorded["journal_secret"]))
        run = _Run(course, journal, pool, settings)
        run.grade(submissions, stream)
    # A notebook journaled by an earlier run but no longer handed in is not reported as graded.
    rows += [row for submission in submissions for row in run.finished[submission.key]]
    write_csv(rows, out / "grades.csv")
    elapsed = time.monotonic() - started
    graded_by = pool.graded_by if scheduler else None
    write_report(rows, out / "report.html", elapsed_seconds=elapsed, graded_by=graded_by)
    timing = {"notebooks": run.executed, "cell_seconds": run.cell_seconds, "wall_seconds": elapsed}
    (out / "timing.json").write_text(json.dumps(timing))
    return rows


def _pool(workers: int, scheduler: str | None, confinement: dict, stream):
    """The local workers, or a Dask cluster's: Dask is imported only for a run that asks for it."""
    if scheduler is None:
        return WorkerPool(workers, confinement)
    from autograder.grading.cluster import DaskPool

    return DaskPool(scheduler, confinement, stream)
