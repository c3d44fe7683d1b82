"""What every LMS export shares: the class's grades as nbgrader's gradebook holds them, and the export
plugin that writes them as the one CSV file an LMS imports."""

import csv
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.plugins import ExportPlugin


@dataclass(frozen=True)
class Assignment:
    """An assignment as an LMS sees it: one column, out of `max_score` points."""

    name: str
    max_score: float


@dataclass(frozen=True)
class StudentGrades:
    """A roster student, with the fields nbgrader keeps, and their score on each assignment by name."""

    id: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    scores: dict[str, float]

    def score_fields(self, assignments: list[Assignment]) -> list[str]:
        """This student's scores on `assignments`, in order, as the LMS reads them."""
        return [number(self.scores[assignment.name]) for assignment in assignments]


@dataclass(frozen=True)
class ClassGrades:
    """Every roster student on every assignment, in the gradebook's order (students by last name,
    assignments by due date)."""

    assignments: list[Assignment]
    students: list[StudentGrades]


def _final_score(submission) -> float:
    """nbgrader's grade for a submission, by the rule of its own `nbgrader export` (CsvExportPlugin):
    the score less the late penalty, never below 0."""
    return max(0.0, submission.score - submission.late_submission_penalty)


def read_grades(
    gradebook: Gradebook, students: Iterable[str] = (), assignments: Iterable[str] = ()
) -> ClassGrades:
    """The grades of every roster student on every assignment, or only of those named (as `nbgrader
    export --student` and `--assignment` name them).

    A student who handed nothing in scores 0, as in `nbgrader export`: Canvas and Moodle read a blank
    as "no grade", not as 0."""
    wanted_students, wanted_assignments = set(map(str, students)), set(map(str, assignments))
    chosen = [a for a in gradebook.assignments if not wanted_assignments or a.name in wanted_assignments]
    scores = {a.name: _scores_of(gradebook, a.name) for a in chosen}
    return ClassGrades(
        assignments=[Assignment(a.name, a.max_score) for a in chosen],
        students=[
            StudentGrades(
                id=student.id,
                first_name=student.first_name or "",
                last_name=student.last_name or "",
                email=student.email or "",
                lms_user_id=student.lms_user_id or "",
                scores={name: by_student.get(student.id, 0.0) for name, by_student in scores.items()},
            )
            for student in gradebook.students
            if not wanted_students or student.id in wanted_students
        ],
    )


def _scores_of(gradebook: Gradebook, assignment: str) -> dict[str, float]:
    """Each submitting student's final score on `assignment`, in one query."""
    return {s.student_id: _final_score(s) for s in gradebook.assignment_submissions(assignment)}


def number(value: float) -> str:
    """A score as an LMS reads it: plain decimal, without float noise (2.3, not 2.3000000000000003)."""
    return f"{value:.10g}"


class RosterError(Exception):
    """The roster lacks what the LMS needs to tell students apart; the message names who and what."""


class LmsExporter(ExportPlugin):
    """An nbgrader export plugin writing one CSV file, UTF-8, for an LMS; a subclass says its rows."""

    # Where the file goes without `--to`.
    default_file = "grades.csv"

    def rows(self, grades: ClassGrades) -> list[list[str]]:
        """The file's rows, header first."""
        raise NotImplementedError

    def export(self, gradebook: Gradebook) -> None:
        grades = read_grades(gradebook, self.student, self.assignment)
        try:
            rows = self.rows(grades)
        except RosterError as error:
            # One line, as nbgrader's own apps fail, and no file an LMS would half-import.
            self.log.error("%s", error)
            sys.exit(1)
        destination = Path(self.to or self.default_file)
        with destination.open("w", newline="", encoding="utf-8") as out:
            csv.writer(out).writerows(rows)
        self.log.info("Wrote %d students' grades to %s", len(grades.students), destination)
