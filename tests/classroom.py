"""Classes of submissions in nbgrader's layout, for the grading command's tests and benchmark."""

import sys
from itertools import cycle, islice
from pathlib import Path

import nbformat
from grading_pipeline import solution_answers, submission
from mutants import MUTANTS

LESSON = "01_saving_inputs"


def grade_command(submitted: Path, out: Path, *options: str) -> list[str]:
    """`python -m autograder grade` as an instructor types it, run by this interpreter."""
    return [sys.executable, "-m", "autograder", "grade", str(submitted), "--out", str(out), *options]


def write_submission(
    root: Path, student: str, notebook, assignment: str = LESSON, name: str = LESSON
) -> Path:
    """Hand in `notebook` (a NotebookNode, or raw text for a broken file) for `student`."""
    folder = root / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.ipynb"
    if isinstance(notebook, str):
        path.write_text(notebook)
    else:
        nbformat.write(notebook, path)
    return path


def answers_of(student: str) -> dict[str, str]:
    """The solution for 'solution', the mutant's answers for a mutant's name."""
    solution = solution_answers(LESSON)
    if student == "solution":
        return solution
    return next(m for m in MUTANTS[LESSON] if m.name == student).apply(solution)


def write_typical_class(root: Path, size: int) -> dict[str, str]:
    """`size` students who answered like the solution or like one of the mutants, in turn."""
    kinds = ["solution", *(mutant.name for mutant in MUTANTS[LESSON])]
    students = {}
    for number, kind in enumerate(islice(cycle(kinds), size)):
        student = f"student{number:03d}"
        write_submission(root, student, submission(LESSON, answers_of(kind)))
        students[student] = kind
    return students


def write_course_class(root: Path, mutants: int) -> None:
    """Students who hand in every lesson: 'solution', 'blank' (the release untouched), and `mutants`
    more, the k-th making each lesson's k-th known mistake."""
    for lesson, lesson_mutants in sorted(MUTANTS.items()):
        solution = solution_answers(lesson)
        answers = {"solution": solution, "blank": {}}
        for number, mutant in enumerate(islice(cycle(lesson_mutants), mutants), start=1):
            answers[f"mutant{number}"] = mutant.apply(solution)
        for student, code in answers.items():
            write_submission(root, student, submission(lesson, code), assignment=lesson, name=lesson)
