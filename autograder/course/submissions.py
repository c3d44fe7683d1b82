"""Finding what each student handed in: SUBMITTED/<student>/<assignment>/<notebook>.ipynb.

A browser that downloads a notebook twice names it `01_saving_inputs (1).ipynb`: when exactly one
notebook of an assignment is missing and exactly one notebook that is not part of it was handed in
beside it, that one is graded in its place, and the reasons of its questions say so.
"""

from dataclasses import dataclass, replace
from pathlib import Path

from autograder.course.layout import SOURCE
from autograder.records.results import QuestionResult, Status


@dataclass(frozen=True)
class Submission:
    """One notebook the assignment expects from a student; `path` is None when it was not handed in."""

    student: str
    assignment: str
    notebook: str
    path: Path | None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.student, self.assignment, self.notebook)

    @property
    def renamed(self) -> bool:
        """Handed in under another file name than the assignment's."""
        return self.path is not None and self.path.stem != self.notebook

    def explained(self, rows: list[QuestionResult]) -> list[QuestionResult]:
        """`rows`, saying which file was graded when it was handed in under another name."""
        if not self.renamed:
            return rows
        note = f"graded from {self.path.name}, handed in under another name than {self.notebook}.ipynb"
        return [replace(row, reason=f"{note}; {row.reason}" if row.reason else note) for row in rows]


def _visible_children(folder: Path, directories: bool) -> list[Path]:
    return sorted(
        child
        for child in folder.iterdir()
        if not child.name.startswith(".") and (child.is_dir() if directories else child.suffix == ".ipynb")
    )


def expected_notebooks(assignment: str, source: Path = SOURCE) -> list[str]:
    """The notebooks of a lesson, from its source folder (empty for an unknown assignment)."""
    folder = source / assignment
    return [path.stem for path in _visible_children(folder, directories=False)] if folder.is_dir() else []


def discover(
    submitted: Path, source: Path = SOURCE, only: str | None = None
) -> tuple[list[Submission], list[QuestionResult]]:
    """The notebooks to grade, and rows for what cannot be graded: unknown assignments, extra notebooks.
    `source` holds the lessons' sources; with `only`, the other assignments' folders are passed over."""
    submissions, rows = [], []
    for student_folder in _visible_children(submitted, directories=True):
        student = student_folder.name
        for assignment_folder in _visible_children(student_folder, directories=True):
            assignment = assignment_folder.name
            if only is not None and assignment != only:
                continue
            expected = expected_notebooks(assignment, source)
            if not expected:
                reason = f"{assignment} is not a lesson of this course; nothing in it was graded"
                rows.append(
                    QuestionResult(student, assignment, "", "", 0.0, 0.0, Status.UNKNOWN_ASSIGNMENT, reason)
                )
                continue
            handed_in = {path.stem: path for path in _visible_children(assignment_folder, directories=False)}
            missing = [name for name in expected if name not in handed_in]
            extras = sorted(set(handed_in) - set(expected))
            if len(missing) == 1 and len(extras) == 1:
                handed_in[missing[0]] = handed_in.pop(extras.pop())
            for name in expected:
                submissions.append(Submission(student, assignment, name, handed_in.get(name)))
            for extra in extras:
                reason = f"{extra}.ipynb is not part of {assignment}; it was not graded"
                rows.append(
                    QuestionResult(student, assignment, extra, "", 0.0, 0.0, Status.EXTRA_NOTEBOOK, reason)
                )
    return submissions, rows
