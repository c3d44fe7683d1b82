"""The grading run's nbgrader course directory: gradebook, sanitising and recording, done by nbgrader.

The output folder is an ordinary nbgrader course directory, so `nbgrader export`, formgrader and
`nbgrader generate_feedback` work on it. Its gradebook is written only from the main process, one
notebook at a time: SQLite does not take concurrent writers.
"""

import re
from pathlib import Path

import nbformat
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from nbgrader.utils import determine_grade, is_grade

from autograder.grading import audit, gradebook
from autograder.grading.results import QuestionResult, Status
from autograder.nbgrader_cli import put_nbgrader_tools_on_path
from autograder.release import add_lesson, write_config

# `nbgrader export` here must not overwrite the per-question grades.csv that grading wrote.
_EXPORT_CONFIG = """
# In a grading run's folder, grades.csv holds one row per question; nbgrader's totals go beside it.
c.ExportPlugin.to = "nbgrader_totals.csv"
"""
# What a feedback notebook says where a test cell's hidden tests were.
_HIDDEN = "# Hidden tests ran here; their results are below."
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class GradingCourse:
    """An nbgrader course directory in the grading run's output folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.db_url = f"sqlite:///{root / 'gradebook.db'}"
        put_nbgrader_tools_on_path()

    def prepare(self, assignments: set[str]) -> None:
        """Copy the lessons' sources and register them in the gradebook (once; a resumed run skips it)."""
        write_config(self.root, extra=_EXPORT_CONFIG)
        if not (self.root / "gradebook.db").exists():
            gradebook.create(self.db_url)
        with gradebook.opened(self.db_url) as book:
            known = {assignment.name for assignment in book.assignments}
        for assignment in sorted(assignments - known):
            add_lesson(self.root, assignment)

    def notebooks(self, assignment: str) -> dict[str, list[tuple[str, float]]]:
        """Each notebook of the assignment with its questions (test cells) and their points."""
        with gradebook.opened(self.db_url) as book:
            return {
                notebook.name: sorted((cell.name, cell.max_score) for cell in notebook.grade_cells)
                for notebook in book.find_assignment(assignment).notebooks
            }

    def _resources(self, student: str, assignment: str, notebook: str) -> dict:
        return {
            "nbgrader": {
                "student": student,
                "assignment": assignment,
                "notebook": notebook,
                "db_url": self.db_url,
            }
        }

    def sanitize(self, path: Path, student: str, assignment: str) -> nbformat.NotebookNode:
        """Read a submission and restore its test cells from the source, as `nbgrader autograde` does.

        Raises ValueError with the reason when the file is not a readable notebook.
        """
        try:
            notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        except Exception as error:  # noqa: BLE001 - JSON, encoding and format errors are all the same to a student
            raise ValueError(f"not a readable notebook: {type(error).__name__}: {error}") from None
        resources = self._resources(student, assignment, path.stem)
        try:
            for preprocessor in (
                ClearOutput(),
                DeduplicateIds(),
                OverwriteKernelspec(),
                OverwriteCells(add_missing_cells=True),
                CheckCellMetadata(),
            ):
                notebook, resources = preprocessor.preprocess(notebook, resources)
        except Exception as error:  # noqa: BLE001 - nbgrader rejects the notebook; say why
            raise ValueError(
                f"nbgrader could not restore its cells: {type(error).__name__}: {error}"
            ) from None
        return notebook

    def record(
        self, student: str, assignment: str, notebook: nbformat.NotebookNode, name: str, cells: list[dict]
    ) -> list[QuestionResult]:
        """Put the executed cells' outputs back, save the grades, write the feedback-safe notebook."""
        code_cells = [cell for cell in notebook.cells if cell.cell_type == "code"]
        for cell, result in zip(code_cells, cells, strict=True):
            cell.outputs = [nbformat.from_dict(output) for output in result["outputs"]]
            cell.execution_count = result["execution_count"]
            if result["status"] != Status.OK and not any(o.output_type == "error" for o in cell.outputs):
                _add_error(cell, str(result["status"]), result["reason"])
            elif is_grade(cell) and not _error_of(cell):
                unconfirmed = audit.unvouched(cell.source, result["verdicts"])
                if unconfirmed:
                    _add_error(cell, "UnconfirmedChecks", unconfirmed)

        with gradebook.opened(self.db_url) as book:
            book.update_or_create_student(student)
            book.update_or_create_submission(assignment, student)
        SaveAutoGrades().preprocess(notebook, self._resources(student, assignment, name))

        rows = []
        earlier_trouble = ""
        for cell, result in zip(code_cells, cells, strict=True):
            status, reason = Status(result["status"]), result["reason"]
            if not is_grade(cell):
                problem = reason if status != Status.OK else _error_of(cell)
                if problem and not earlier_trouble:
                    earlier_trouble = f" (after an earlier cell failed: {problem})"
                continue
            score, max_score = determine_grade(cell)
            if status == Status.OK and score < max_score:
                status, reason = Status.FAILED, _failure_reason(cell) + earlier_trouble
            rows.append(
                QuestionResult(
                    student,
                    assignment,
                    name,
                    cell.metadata["nbgrader"]["grade_id"],
                    float(score),
                    float(max_score),
                    status,
                    reason,
                )
            )
        self._write_feedback_notebook(student, assignment, name, notebook)
        return rows

    def record_unusable(
        self, student: str, assignment: str, name: str, status: Status, reason: str
    ) -> list[QuestionResult]:
        """A missing or unreadable notebook: every question scores zero, in the gradebook too."""
        with gradebook.opened(self.db_url) as book:
            book.update_or_create_student(student)
            book.update_or_create_submission(assignment, student)
            submission = book.find_submission_notebook(name, assignment, student)
            for grade in submission.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
            book.db.commit()
        return [
            QuestionResult(student, assignment, name, question, 0.0, points, status, reason)
            for question, points in self.notebooks(assignment)[name]
        ]

    def _write_feedback_notebook(self, student: str, assignment: str, name: str, notebook) -> None:
        """The executed notebook, with hidden tests and the tracebacks that quote them removed."""
        feedback = nbformat.from_dict(notebook)
        with_hidden_tests = [cell.source for cell in feedback.cells]
        feedback, _ = ClearHiddenTests().preprocess(feedback, {})
        for cell, source in zip(feedback.cells, with_hidden_tests, strict=True):
            if cell.source != source:
                cell.source = cell.source.rstrip() + "\n" + _HIDDEN
            if is_grade(cell) and cell.cell_type == "code":
                for output in cell.outputs:
                    if output.output_type == "error":
                        output.traceback = [f"{output.ename}: {output.evalue}"]
        folder = self.root / "autograded" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(feedback, folder / f"{name}.ipynb")


def _add_error(cell, name: str, message: str) -> None:
    """Fail the cell the way nbgrader sees failures: an error output, which also shows in feedback."""
    cell.outputs.append(nbformat.v4.new_output("error", ename=name, evalue=message, traceback=[message]))


def _error_of(cell) -> str:
    """The cell's error as one line of text ('MemoryError: ...'), or '' if it raised none."""
    for output in cell.outputs:
        if output.output_type == "error":
            return _ANSI.sub("", f"{output.ename}: {output.evalue}")
    return ""


def _failure_reason(cell) -> str:
    """What the student sees for a failed test: the check's message, or why stderr cost the marks."""
    error = _error_of(cell)
    if error:
        return error.removeprefix("AssertionError: ")
    return "the test cell wrote to stderr, which nbgrader counts as a failure"
