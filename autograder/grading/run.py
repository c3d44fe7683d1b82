"""One grading run: discover, plan what is stale, grade it in parallel, record, report.

Stopped at any point, the same command finishes it; rerun after any change, it grades again what the
change touched (see `autograder.grading.staleness`) and nothing else.
"""

import hashlib
import importlib
import json
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import nbformat

from autograder.course.notebooks import GradingCourse, executed_cells, is_test
from autograder.course.submissions import Submission
from autograder.grading.options import Limits
from autograder.grading.pool import WorkerPool, workers_for
from autograder.grading.stop import raise_if_stopped
from autograder.grading.target import EVERYONE, Selection, Target, open_target
from autograder.records.journal import Journal, Recorded
from autograder.records.progress import Progress
from autograder.records.report import plotted, write_report
from autograder.records.results import QuestionResult, Status, write_csv


class _Run:
    """The state of one run: what is finished, what is being graded, and where results go."""

    def __init__(
        self,
        course: GradingCourse,
        journal: Journal,
        pool: WorkerPool,
        settings: dict,
        finished: dict[tuple[str, ...], Recorded],
        registered: Callable[[dict[str, str]], None],
    ) -> None:
        self.course, self.journal, self.pool = course, journal, pool
        # Called with {assignment: version} when a lesson is registered in the gradebook.
        self.registered = registered
        self.finished = finished
        self.bases: dict[tuple[str, ...], dict[str, str]] = {}
        self.in_flight: dict[tuple[str, ...], tuple[Submission, nbformat.NotebookNode]] = {}
        self.settings = settings
        self.progress: Progress | None = None
        # What this run executed, for the benchmark: notebooks, and seconds spent in their cells.
        self.executed, self.cell_seconds = 0, 0.0

    def grade(self, todo: list[tuple[Submission, dict[str, str]]], done: int, stream) -> None:
        self.bases = {submission.key: basis for submission, basis in todo}
        waiting = (submission for submission, _ in todo)
        with Progress(total=done + len(todo), done=done, stream=stream) as self.progress:
            self._feed(waiting)
            while self.in_flight:
                key, outcome = self.pool.results.get()
                raise_if_stopped()
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
            if lesson := self.course.register(submission.assignment):
                self.registered(lesson)
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
        recorded = Recorded(self.bases[submission.key], submission.explained(rows))
        self.journal.append(submission.key, recorded)
        self.finished[submission.key] = recorded
        self.progress.advance(label="/".join(submission.key))


def grade(target: Target, pool, stream=sys.stderr, report: bool = True) -> list[QuestionResult]:
    """Do `target.work` on `pool`'s workers (started with `target.sandbox_settings()`; None when there
    is nothing to grade) and write the folder's records; return every row. Without `report`, the
    plots of report.html are not drawn: seconds that a service answering one submission cannot spend."""
    started = time.monotonic()
    run_file, out, work = target.run_file, target.out, target.work
    run_file.options = target.options
    run_file.confinement = _confinement(target, pool)
    # The marker first: a run stopped at any later point leaves a folder the next run recognises.
    run_file.save(out)
    course = _course(target, stream)
    run_file.lessons = course.prepare(target.versions, run_file.lessons)
    run_file.save(out)

    def registered(lesson: dict[str, str]) -> None:
        run_file.lessons |= lesson
        run_file.save(out)

    for student, assignment in sorted({key[:2] for key in work.forgotten}):
        course.forget(student, assignment)
    target.journal.rewrite(work.kept)
    settings = {name: target.options[name] for name in ("seed", "cell_timeout", "notebook_timeout")}
    run = _Run(course, target.journal, pool, settings, dict(work.kept), registered)
    # The report's plotting library, if it will draw its plots, loads while the main thread mostly
    # waits for the workers' results.
    plotting = report and plotted(submission.key[0] for submission in target.submissions)
    loading = threading.Thread(target=importlib.import_module, args=("autograder.records.plots",))
    if plotting:
        loading.start()
    if work.todo:
        run.grade(work.todo, done=len(work.kept), stream=stream)
    finished = run.finished
    rows = target.ungradable + [
        row for s in target.submissions if s.key in finished for row in finished[s.key].rows
    ]
    write_csv(rows, out / "grades.csv")
    if not report:
        return rows
    if plotting:
        loading.join()
    elapsed = time.monotonic() - started
    graded_by = getattr(pool, "graded_by", None)
    write_report(rows, out / "report.html", elapsed_seconds=elapsed, graded_by=graded_by)
    timing = {"notebooks": run.executed, "cell_seconds": run.cell_seconds, "wall_seconds": elapsed}
    (out / "timing.json").write_text(json.dumps(timing))
    return rows


def _confinement(target: Target, pool) -> dict:
    """What confines this run's notebooks, for run.json. Not an option that changes a grade: every
    Landlock level confines a notebook that does what the course asks alike (see `sandbox.host`)."""
    from autograder.sandbox import host

    where = "Dask workers, each confining as its own kernel allows" if hasattr(pool, "graded_by") else "here"
    return {"graded": where, "trusted_submissions": target.limits.trusted, **host.confinement()}


def _course(target: Target, stream) -> GradingCourse:
    """Where grades go: the instructor's course directory, or the run's own folder."""
    if target.course is None:
        return GradingCourse(target.out)
    from autograder.semester.course_directory import InstructorCourse

    return InstructorCourse(target.course, stream)


def grade_class(
    submitted: Path,
    out: Path,
    *,
    workers: int,
    limits: Limits,
    seed: int | None = None,
    stream=sys.stderr,
    scheduler: str | None = None,
    selection: Selection = EVERYONE,
) -> list[QuestionResult]:
    """Grade what is stale of the notebooks under `submitted` into the course directory `out`; return
    every row. With `scheduler`, the address of a Dask scheduler, the cluster's workers grade instead
    of `workers` local ones. GradingError, before anything is written, for what the instructor must
    fix first."""
    target = open_target(submitted, out, limits, seed, selection)
    print(target.work.line, file=stream, flush=True)
    with workers_for(target, workers, scheduler, stream) as pool:
        return grade(target, pool, stream)
