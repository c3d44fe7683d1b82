"""The grading run's nbgrader course directory: gradebook, sanitising and recording, done by nbgrader.

The output folder is an ordinary nbgrader course directory, so `nbgrader export`, formgrader and
`nbgrader generate_feedback` work on it. Its gradebook is written only from the main process, one
notebook at a time: SQLite does not take concurrent writers.
"""

import copy
import functools
import re
import shutil
from pathlib import Path

import nbformat
from nbgrader.api import MissingEntry
from nbgrader.preprocessors import (
    CheckCellMetadata,
    ClearHiddenTests,
    ClearOutput,
    DeduplicateIds,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)
from nbgrader.utils import determine_grade, is_grade, is_solution

from autograder.course.layout import SOURCE
from autograder.course.nbgrader_cli import put_nbgrader_tools_on_path
from autograder.course.release import add_lesson, write_config
from autograder.records import gradebook
from autograder.records.results import QuestionResult, Status
from autograder.wire.verdict import fitted

# `nbgrader export` here must not overwrite the per-question grades.csv that grading wrote.
_EXPORT_CONFIG = """
# In a grading run's folder, grades.csv holds one row per question; nbgrader's totals go beside it.
c.ExportPlugin.to = "nbgrader_totals.csv"
"""
# What a feedback notebook says where a test cell's hidden tests were.
_HIDDEN = "# Hidden tests ran here; their results are below."
# Marks a graded test cell whose failure was a hidden test's, in its metadata under "gradgrad".
HIDDEN_FAILURE = "failed_in_hidden_tests"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# A notebook file larger than this is not read: a student's notebook is far smaller, outputs included.
MAX_NOTEBOOK_BYTES = 64 * 2**20


class GradingCourse:
    """An nbgrader course directory in the grading run's output folder."""

    def __init__(self, root: Path, source: Path = SOURCE, db_url: str | None = None) -> None:
        self.root, self.source = root, source
        self.db_url = db_url or f"sqlite:///{root / 'gradebook.db'}"
        self._unregistered: dict[str, str] = {}
        put_nbgrader_tools_on_path()

    def prepare(self, versions: dict[str, str], registered: dict[str, str]) -> dict[str, str]:
        """Make the folder an nbgrader course directory whose gradebook holds each lesson of `versions`
        (assignment: version) that is registered at that version, and return those. A lesson registered
        at another version is removed, with its submissions' grades: every notebook of it is graded
        again. The lessons missing are registered by `register`, each just before its first notebook is
        graded, so that the first notebook is not kept waiting for every lesson's registration."""
        write_config(self.root, extra=_EXPORT_CONFIG)
        if not (self.root / "gradebook.db").exists():
            gradebook.create(self.db_url)
        with gradebook.opened(self.db_url) as book:
            known = {assignment.name for assignment in book.assignments}
            for assignment in sorted(known & versions.keys()):
                if registered.get(assignment) != versions[assignment]:
                    book.remove_assignment(assignment)
                    known.discard(assignment)
        self._unregistered = {a: versions[a] for a in versions.keys() - known}
        return {a: registered[a] for a in registered if a in known or a not in versions}

    def register(self, assignment: str) -> dict[str, str]:
        """Register `assignment` in the gradebook, as its source is now, if `prepare` found it missing:
        {assignment: version} when it did so, for the caller to record, else {}."""
        version = self._unregistered.pop(assignment, None)
        if version is None:
            return {}
        shutil.rmtree(self.root / "source" / assignment, ignore_errors=True)
        add_lesson(self.root, assignment)
        return {assignment: version}

    def forget(self, student: str, assignment: str) -> None:
        """Take a submission no longer handed in out of the folder, as if it had never been graded."""
        with gradebook.opened(self.db_url) as book:
            try:
                book.remove_submission(assignment, student)
                if not book.find_student(student).submissions:
                    book.remove_student(student)
            except MissingEntry:
                pass
        for kind in ("autograded", "feedback"):
            shutil.rmtree(self.root / kind / student / assignment, ignore_errors=True)

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

    def sanitize(self, path: Path, student: str, assignment: str, name: str) -> nbformat.NotebookNode:
        """Read a submission and restore its test cells from the source, as `nbgrader autograde` does.

        `name` is the assignment's notebook the file is graded as. What a cell is (answer, test, points)
        comes from the source, whatever metadata the file claims. Raises ValueError with the reason
        when the file is not a readable notebook.
        """
        notebook = read_submission(path)
        _restore_cell_roles(notebook, _roles(self.source / assignment / f"{name}.ipynb"))
        resources = self._resources(student, assignment, name)
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
            if result.get("failed_in_hidden_tests"):
                cell.metadata.setdefault("gradgrad", {})[HIDDEN_FAILURE] = True

        with gradebook.opened(self.db_url) as book:
            self._open_submission(book, student, assignment)
        SaveAutoGrades().preprocess(notebook, self._resources(student, assignment, name))
        self._grades_saved(notebook, student, assignment, name)

        rows = []
        earlier_trouble = ""
        for cell, result in zip(code_cells, cells, strict=True):
            status, reason = Status(result["status"]), result["reason"]
            if not is_grade(cell):
                problem = reason if status != Status.OK else _error_of(cell)
                if problem and not earlier_trouble:
                    earlier_trouble = "\n" + fitted(f"(after an earlier cell failed: {problem})")
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
        self._drop_feedback(student, assignment, name)
        return rows

    def _open_submission(self, book, student: str, assignment: str) -> None:
        """Make the student and their submission in the gradebook, as `nbgrader autograde` does."""
        book.update_or_create_student(student)
        book.update_or_create_submission(assignment, student)

    def _grades_saved(self, notebook, student: str, assignment: str, name: str) -> None:
        """What follows a notebook's grades into the gradebook: nothing here (see InstructorCourse)."""

    def _drop_feedback(self, student: str, assignment: str, name: str) -> None:
        """Feedback generated from an earlier grade of the notebook no longer stands: `nbgrader
        generate_feedback` makes it again from this one."""
        (self.root / "feedback" / student / assignment / f"{name}.html").unlink(missing_ok=True)

    def record_unusable(
        self, student: str, assignment: str, name: str, status: Status, reason: str
    ) -> list[QuestionResult]:
        """A missing or unreadable notebook: every question scores zero, in the gradebook too."""
        with gradebook.opened(self.db_url) as book:
            self._open_submission(book, student, assignment)
            submission = book.find_submission_notebook(name, assignment, student)
            for grade in submission.grades:
                grade.auto_score = 0
                grade.needs_manual_grade = False
            book.db.commit()
        self._grades_saved(nbformat.v4.new_notebook(), student, assignment, name)
        (self.root / "autograded" / student / assignment / f"{name}.ipynb").unlink(missing_ok=True)
        self._drop_feedback(student, assignment, name)
        return [
            QuestionResult(student, assignment, name, question, 0.0, points, status, reason)
            for question, points in self.notebooks(assignment)[name]
        ]

    def _write_feedback_notebook(self, student: str, assignment: str, name: str, notebook) -> None:
        """The executed notebook, with hidden tests and the tracebacks that quote them removed."""
        feedback = nbformat.from_dict(notebook)
        feedback.metadata.pop("celltoolbar", None)
        for index, cell in enumerate(feedback.cells):
            # Only test cells hold hidden tests: markers a student typed in an answer are their text.
            if is_test(cell):
                source = cell.source
                ClearHiddenTests().preprocess_cell(cell, {}, index)
                if cell.source != source:
                    cell.source = cell.source.rstrip() + "\n" + _HIDDEN
            if is_grade(cell) and cell.cell_type == "code":
                for output in cell.outputs:
                    if output.output_type == "error":
                        output.traceback = [f"{output.ename}: {output.evalue}"]
        folder = self.root / "autograded" / student / assignment
        folder.mkdir(parents=True, exist_ok=True)
        nbformat.write(feedback, folder / f"{name}.ipynb")


def read_submission(path: Path) -> nbformat.NotebookNode:
    """A handed-in file as a notebook whose text every later step can write: a UTF-8 BOM is skipped,
    bytes that are not UTF-8 and lone surrogates (`"\\ud800"` in the JSON) become U+FFFD. ValueError
    for a file that is not a notebook, a link, or one too large to be a student's."""
    if path.is_symlink():
        raise ValueError("not a readable notebook: it is a symbolic link, not a file")
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_NOTEBOOK_BYTES + 1)
    except OSError as error:
        raise ValueError(f"not a readable notebook: {error.strerror}") from None
    if len(data) > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"not a readable notebook: larger than {MAX_NOTEBOOK_BYTES // 2**20} MiB")
    try:
        notebook = nbformat.reads(data.decode("utf-8-sig", errors="replace"), as_version=4)
        return writable_text(notebook)
    except Exception as error:  # noqa: BLE001 - JSON and format errors are all the same to a student
        # Fitted like a check's message: a parser's error quotes the file, and report.html shows it.
        raise ValueError(fitted(f"not a readable notebook: {type(error).__name__}: {error}")) from None


def writable_text(value):
    """`value` with every lone surrogate in its strings (keys too) replaced by U+FFFD, in place where it
    is a dict or list: JSON lets them in, UTF-8 files and SQLite cannot take them out."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, list):
        value[:] = [writable_text(item) for item in value]
    elif isinstance(value, dict):
        items = [(writable_text(key), writable_text(item)) for key, item in value.items()]
        value.clear()
        value.update(items)
    return value


def executed_cells(cells: list[dict]) -> list[dict]:
    """A worker's per-cell results with every output a notebook can hold: outputs are made by code that
    student code can reach, so one that is not a well-formed nbformat output is replaced by a note, and
    the text of all is made writable."""
    for cell in writable_text(cells):
        outputs = cell["outputs"] if isinstance(cell["outputs"], list) else []
        cell["outputs"] = [output if _well_formed(output) else dict(_DROPPED) for output in outputs]
        if not isinstance(cell["execution_count"], int) or isinstance(cell["execution_count"], bool):
            cell["execution_count"] = None
    return cells


_DROPPED = {"output_type": "stream", "name": "stderr", "text": "[an output that is not notebook output]\n"}


def _texts(value) -> bool:
    return isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))


def _well_formed(output) -> bool:
    """An output nbformat's v4 schema accepts (of the kinds a kernel sends), checked field by field."""
    if not isinstance(output, dict):
        return False
    kind = output.get("output_type")
    if kind == "stream":
        return (
            set(output) == {"output_type", "name", "text"}
            and output["name"] in ("stdout", "stderr")
            and (_texts(output["text"]))
        )
    if kind == "error":
        return (
            set(output) == {"output_type", "ename", "evalue", "traceback"}
            and isinstance(output["ename"], str)
            and isinstance(output["evalue"], str)
            and _texts(output["traceback"])
            and isinstance(output["traceback"], list)
        )
    fields = {"display_data": {"output_type", "data", "metadata"}}
    fields["execute_result"] = fields["display_data"] | {"execution_count"}
    if kind not in fields or set(output) != fields[kind]:
        return False
    data, count = output["data"], output.get("execution_count")
    return (
        isinstance(data, dict)
        and all(isinstance(key, str) and "/" in key for key in data)
        and all(_texts(v) or key.endswith("json") for key, v in data.items())
        and isinstance(output["metadata"], dict)
        and (kind == "display_data" or count is None or type(count) is int)
    )


@functools.cache
def _roles(source: Path) -> dict[str, dict]:
    """The nbgrader metadata of each cell of a lesson's source notebook, by grade_id."""
    notebook = nbformat.read(source, as_version=4)
    return {
        cell.metadata.nbgrader["grade_id"]: dict(cell.metadata.nbgrader)
        for cell in notebook.cells
        if "grade_id" in cell.metadata.get("nbgrader", {})
    }


def _restore_cell_roles(notebook: nbformat.NotebookNode, roles: dict[str, dict]) -> None:
    """Give every cell the nbgrader metadata its grade_id has in the source; a cell whose id the source
    does not know (or that has none) is plain. A test cell unmarked by the student is a test again, and
    a cell the student marked as a test, or as worth more points, is nothing of the kind."""
    for cell in notebook.cells:
        claimed = cell.metadata.get("nbgrader")
        if claimed is None:
            continue
        grade_id = claimed.get("grade_id") if isinstance(claimed, dict) else None
        if isinstance(grade_id, str) and grade_id in roles:
            cell.metadata["nbgrader"] = nbformat.from_dict(copy.deepcopy(roles[grade_id]))
        else:
            del cell.metadata["nbgrader"]


def is_test(cell) -> bool:
    """An autograded test cell: the judge runs it, never the notebook's own process."""
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


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
