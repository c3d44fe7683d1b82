"""One row per (student, assignment, notebook, question): what grades.csv holds."""

import csv
from dataclasses import astuple, dataclass, fields, replace
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
# A spreadsheet evaluates a cell that starts with one of these (a file named `=HYPERLINK(...).ipynb`
# would put a formula in the notebook column). Such a cell, and one starting with the quote that marks
# text, is written after a quote: spreadsheets show it as text, and read_csv takes the quote off.
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "'")


def as_text(value: object) -> object:
    """A cell of grades.csv that no spreadsheet evaluates."""
    if isinstance(value, str) and value.startswith(_FORMULA_STARTS):
        return "'" + value
    return value


def from_text(cell: str) -> str:
    """What `as_text` was given."""
    return cell[1:] if cell.startswith("'") else cell


def one_line(reason: str) -> str:
    """A reason on one line, as grades.csv holds it: its lines, which are fitted to a notebook's width,
    joined by spaces; a reason of one line as it is."""
    lines = reason.split("\n")
    return reason if len(lines) == 1 else " ".join(line.strip() for line in lines if line.strip())


def write_csv(rows: list[QuestionResult], path: Path) -> None:
    """grades.csv, sorted so that any two runs over the same submissions compare line for line; one line
    per row."""
    with open(path, "w", newline="", encoding="utf-8", errors="replace") as output:
        writer = csv.writer(output)
        writer.writerow(COLUMNS)
        for row in sorted(rows, key=lambda r: r.key):
            writer.writerow([as_text(value) for value in astuple(replace(row, reason=one_line(row.reason)))])


def read_csv(path: Path) -> list[QuestionResult]:
    with open(path, newline="", encoding="utf-8") as source:
        return [
            QuestionResult(
                from_text(row["student"]),
                from_text(row["assignment"]),
                from_text(row["notebook"]),
                from_text(row["question"]),
                float(row["score"]),
                float(row["max_score"]),
                Status(row["status"]),
                from_text(row["reason"]),
            )
            for row in csv.DictReader(source)
        ]
