"""A lesson through nbgrader's real pipeline, as an instructor runs it, for the grading tests.

Submissions are built the way a student makes them: the released notebook from course/, with answer
cells filled in. Grading is plain `nbgrader generate_assignment`, `autograde` and `export` in a scratch
copy of the course directory.
"""

import csv
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from autograder.course.layout import SOURCE, STUDENT_NOTEBOOKS
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.course.release import add_lesson, write_config

_SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")


def nbgrader_cells(notebook, key: str) -> dict[str, nbformat.NotebookNode]:
    """The notebook's answer cells (key "solution") or test cells ("grade"), by grade_id, in order."""
    return {
        cell.metadata.nbgrader["grade_id"]: cell
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get(key)
    }


def solution_answers(lesson: str) -> dict[str, str]:
    """The source notebook's answer cells, as a student would type them (markers removed)."""
    source = nbformat.read(SOURCE / lesson / f"{lesson}.ipynb", as_version=4)
    return {
        grade_id: "\n".join(
            line for line in cell.source.splitlines() if line.strip() not in _SOLUTION_MARKERS
        )
        for grade_id, cell in nbgrader_cells(source, "solution").items()
    }


def submission(lesson: str, answers: dict[str, str]) -> nbformat.NotebookNode:
    """The released notebook with the given answer cells filled in; an empty dict leaves it untouched."""
    notebook = nbformat.read(STUDENT_NOTEBOOKS / f"{lesson}.ipynb", as_version=4)
    cells = nbgrader_cells(notebook, "solution")
    for grade_id, code in answers.items():
        cells[grade_id].source = code
    return notebook


@dataclass(frozen=True)
class Mutant:
    """A known-wrong answer: the solution with one mistake a lesson warns about."""

    name: str
    loses: frozenset[str]
    cell: str
    edits: tuple[tuple[str, str], ...] = ()
    answer: str | None = None
    # What the feedback on a question it loses must say: the mistake's name, where a test pins it; several
    # phrases where its questions name it each in their own words.
    says: str | tuple[str, ...] = ""
    # Graded by plain nbgrader as well: a mistake whose test runs differently in the student's own kernel,
    # one for each way it does (ten seconds a notebook).
    by_nbgrader: bool = False

    @property
    def phrases(self) -> tuple[str, ...]:
        """What the feedback must say, phrase by phrase."""
        return (self.says,) if isinstance(self.says, str) else self.says

    def apply(self, solution: dict[str, str]) -> dict[str, str]:
        """The solution's answers with this mistake made in `cell`."""
        code = solution[self.cell] if self.answer is None else self.answer
        for old, new in self.edits:
            assert old in code, f"mutant {self.name}: {old!r} is no longer in the solution"
            code = code.replace(old, new)
        return {**solution, self.cell: code}


def mistakes_in(cell: str, loses: Iterable[str] | None = None) -> Callable[..., Mutant]:
    """A maker of mutants that edit the answer cell `cell`.

    Called as `mistake(name, loses, *edits, answer=None, says="", by_nbgrader=False)`; when every mutant of
    the cell loses the same test cells, pass them here and call `mistake(name, *edits, ...)`.
    """
    if loses is not None:
        fixed = frozenset(loses)
        return lambda name, *edits, answer=None, says="", by_nbgrader=False: Mutant(
            name, fixed, cell, edits, answer, says, by_nbgrader
        )
    return lambda name, lost, *edits, answer=None, says="", by_nbgrader=False: Mutant(
        name, frozenset(lost), cell, edits, answer, says, by_nbgrader
    )


def rewrites_of(cell: str) -> Callable[..., Mutant]:
    """A maker of correct answers to the answer cell `cell`, written otherwise than the solution.

    Called as `rewrite(name, *edits, answer=None)`, like a mutant maker; a rewrite loses no test cell.
    """
    return mistakes_in(cell, ())


@dataclass
class Grades:
    """Scores nbgrader gave, per student and per test cell, with the totals `nbgrader export` wrote."""

    cells: dict[str, dict[str, float]] = field(default_factory=dict)
    max_points: dict[str, float] = field(default_factory=dict)
    exported_totals: dict[str, float] = field(default_factory=dict)
    # The notebooks as nbgrader ran them, with their outputs.
    notebooks: dict[str, nbformat.NotebookNode] = field(default_factory=dict)

    def total(self, student: str) -> float:
        return sum(self.cells[student].values())

    @property
    def max_total(self) -> float:
        return sum(self.max_points.values())


def autograde(lesson: str, submissions: dict[str, nbformat.NotebookNode], workdir: Path) -> Grades:
    """Grade every submission with plain nbgrader commands in a scratch course directory."""
    write_config(workdir)
    add_lesson(workdir, lesson)
    for student, notebook in submissions.items():
        folder = workdir / "submitted" / student / lesson
        folder.mkdir(parents=True)
        nbformat.write(notebook, folder / f"{lesson}.ipynb")
    run_nbgrader("autograde", lesson, course=workdir)
    run_nbgrader("export", course=workdir)

    grades = Grades()
    with Gradebook(f"sqlite:///{workdir / 'gradebook.db'}") as gradebook:
        for student in submissions:
            notebook = gradebook.find_submission_notebook(lesson, lesson, student)
            grades.cells[student] = {grade.name: grade.score for grade in notebook.grades}
            grades.max_points = {grade.name: grade.max_score for grade in notebook.grades}
    for student in submissions:
        ran = workdir / "autograded" / student / lesson / f"{lesson}.ipynb"
        grades.notebooks[student] = nbformat.read(ran, as_version=4)
    with open(workdir / "grades.csv", newline="") as exported:
        grades.exported_totals = {row["student_id"]: float(row["score"]) for row in csv.DictReader(exported)}
    return grades
