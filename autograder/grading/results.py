"""One row per (student, assignment, notebook, question): what grades.csv holds."""

import csv
from dataclasses import astuple, dataclass, fields
from enum import StrEnum
from pathlib import Path


class Status(StrEnum):
    """Why a question got the score it got."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    KERNEL_DIED = "kernel died"
    INVALID_NOTEBOOK = "invalid notebook"
    MISSING = "missing"
    EXTRA_NOTEBOOK = "extra notebook"
    UNKNOWN_ASSIGNMENT = "unknown assignment"


@dataclass(frozen=True)
class QuestionResult:
    """The grade of one question (an nbgrader test cell) of one student's notebook.

    `reason` explains any score below full marks: the check's diagnostic for a failed test, or what
    went wrong with the notebook. For a submitted notebook that is not part of the assignment,
    `question` is empty and `max_score` is 0.
    """

    student: str
    assignment: str
    notebook: str
    question: str
    score: float
    max_score: float
    status: Status
    reason: str = ""

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.student, self.assignment, self.notebook, self.question)


COLUMNS = [field.name for field in fields(QuestionResult)]


def write_csv(rows: list[QuestionResult], path: Path) -> None:
    """grades.csv, sorted so that any two runs over the same submissions compare line for line."""
    with open(path, "w", newline="") as output:
        writer = csv.writer(output)
        writer.writerow(COLUMNS)
        for row in sorted(rows, key=lambda r: r.key):
            writer.writerow(astuple(row))


def read_csv(path: Path) -> list[QuestionResult]:
    with open(path, newline="") as source:
        return [
            QuestionResult(
                row["student"],
                row["assignment"],
                row["notebook"],
                row["question"],
                float(row["score"]),
                float(row["max_score"]),
                Status(row["status"]),
                row["reason"],
            )
            for row in csv.DictReader(source)
        ]
