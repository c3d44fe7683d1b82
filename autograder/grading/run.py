"""One grading run: discover, plan what is stale, grade it in parallel, record, report.

Stopped at any point, the same command finishes it; rerun after any change, it grades again what the
change touched (see `autograder.grading.staleness`) and nothing else.
"""

import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.course.layout import COURSE_DIRECTORY, assignments
from autograder.course.notebooks import GradingCourse, executed_cells, is_test
from autograder.course.submissions import Submission, discover
from autograder.course.version import lesson_version
from autograder.grading import staleness
from autograder.grading.errors import GradingError
from autograder.grading.options import Limits
from autograder.grading.pool import WorkerPool
from autograder.records.journal import Journal, Recorded
from autograder.records.progress import Progress
from autograder.records.report import write_report
from autograder.records.results import QuestionResult, Status, write_csv
from autograder.records.run_file import RunFile


class _Run:
    """The state of one run: what is finished, what is being graded, and where results go."""

    def __init__(
        self,
        course: GradingCourse,
        journal: Journal,
        pool: WorkerPool,
        settings: dict,
        finished: dict[tuple[str, ...], Recorded],
    ) -> None:
        self.course, self.journal, self.pool = course, journal, pool
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
        recorded = Recorded(self.bases[submission.key], submission.explained(rows))
        self.journal.append(submission.key, recorded)
        self.finished[submission.key] = recorded
        self.progress.advance(label="/".join(submission.key))


@dataclass(frozen=True)
class Selection:
    """The students and assignments a run grades (None: all); every other row stays as it is."""

    students: frozenset[str] | None = None
    assignments: frozenset[str] | None = None

    def __call__(self, key: tuple[str, ...]) -> bool:
        student, assignment = key[:2]
        return (self.students is None or student in self.students) and (
            self.assignments is None or assignment in self.assignments
        )

    @property
    def by_student(self) -> bool:
        return self.students is not None


LAYOUT = (
    "SUBMITTED/<student>/<assignment>/<notebook>.ipynb, "
    "e.g. SUBMITTED/alice/01_saving_inputs/01_saving_inputs.ipynb"
)


def _check_selection(
    selection: Selection, submissions: list[Submission], recorded_students: set[str]
) -> None:
    students = {s.student for s in submissions} | recorded_students
    unknown = sorted((selection.students or set()) - students)
    if unknown:
        raise GradingError(f"--student {unknown[0]}: no such student in SUBMITTED or in --out")
    lessons = set(assignments())
    unknown = sorted((selection.assignments or set()) - lessons)
    if unknown:
        raise GradingError(
            f"--assignment {unknown[0]}: not a lesson of this course ({', '.join(sorted(lessons))})"
        )


def grade_class(
    submitted: Path,
    out: Path,
    *,
    workers: int,
    limits: Limits,
    seed: int | None = None,
    stream=sys.stderr,
    scheduler: str | None = None,
    selection: Selection = Selection(),
) -> list[QuestionResult]:
    """Grade what is stale of the notebooks under `submitted` into the course directory `out`; return
    every row. With `scheduler`, the address of a Dask scheduler, the cluster's workers grade instead
    of `workers` local ones. GradingError, before anything is written, for what the instructor must
    fix first."""
    started = time.monotonic()
    submitted, out = submitted.resolve(), out.resolve()
    if out.exists() and not out.is_dir():
        raise GradingError(f"--out {out} is a file; name a folder for the grades")
    try:
        run_file = RunFile.open(out, seed)
    except ValueError as error:  # ForeignFolderError too
        raise GradingError(str(error)) from None
    submissions, rows = discover(submitted)
    if not submissions:
        raise GradingError(
            f"no notebook of a lesson of this course in {submitted}: expected {LAYOUT}", status=1
        )
    journal = Journal(out / "journal.jsonl", bytes.fromhex(run_file.journal_secret))
    recorded = journal.load() if out.exists() else {}
    _check_selection(selection, submissions, {key[0] for key in recorded})
    versions = {a: lesson_version(a) for a in sorted({s.assignment for s in submissions})}
    changed = sorted(a for a in versions if a in run_file.lessons and run_file.lessons[a] != versions[a])
    if selection.by_student and changed:
        raise GradingError(
            f"the course of {changed[0]} changed since {out} was graded: all its notebooks are graded "
            "again, so run without --student"
        )
    options = {
        "seed": run_file.seed,
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
        "memory_mb": limits.memory_mb,
        "trusted": limits.trusted,
    }
    previous_options, run_file.options = run_file.options, options
    # The marker first: a run stopped at any later point leaves a folder the next run recognises.
    run_file.save(out)
    work = staleness.plan(submissions, recorded, versions, options, previous_options, selection)
    print(work.line, file=stream, flush=True)
    settings = {
        "seed": run_file.seed,
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
    }
    confinement = {
        "memory_mb": limits.memory_mb,
        "excluded": [str(COURSE_DIRECTORY), str(submitted), str(out)],
        "trusted": limits.trusted,
        "group": f"{os.getpid()}-",
    }
    course = GradingCourse(out)
    # The workers warm up (torch imported, ready to fork) while nbgrader fills the gradebook.
    with _pool(workers, scheduler, confinement, stream) as pool:
        run_file.lessons = course.prepare(versions, run_file.lessons)
        run_file.save(out)
        for student, assignment in sorted({key[:2] for key in work.forgotten}):
            course.forget(student, assignment)
        journal.rewrite(work.kept)
        run = _Run(course, journal, pool, settings, dict(work.kept))
        run.grade(work.todo, done=len(work.kept), stream=stream)
    rows += [row for s in submissions if s.key in run.finished for row in run.finished[s.key].rows]
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
