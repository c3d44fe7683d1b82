"""Every lesson through nbgrader's real pipeline: the solution and every correct answer written otherwise
score full marks, the untouched release scores zero, and every mutant loses the marks for the mistake it
makes. The class grader grades the same notebooks, all lessons in one run, and must score every question
exactly as nbgrader does."""

import os
import subprocess
import sys

import nbformat
import pytest
from alternatives import ALTERNATIVES
from filelock import FileLock
from grading_pipeline import Grades, autograde, solution_answers, submission
from mutants import MUTANTS

from autograder.grading.results import read_csv
from autograder.release import assignments

LESSONS = assignments()
# Each lesson's students are split into this many nbgrader runs, so both cores of a CI machine grade.
_CHUNKS = 2
_SOLUTION, _RELEASE = "solution", "release"
_graded: dict[tuple[str, int], Grades] = {}


def _rewrites(lesson: str) -> list:
    """The lesson's mutants and its alternatives: the solution rewritten, wrongly or not."""
    return [*MUTANTS[lesson], *ALTERNATIVES[lesson]]


def _students(lesson: str) -> list[str]:
    return [_SOLUTION, _RELEASE, *(rewrite.name for rewrite in _rewrites(lesson))]


def _chunk(lesson: str, student: str) -> int:
    return _students(lesson).index(student) % _CHUNKS


def _answers(lesson: str, student: str) -> dict[str, str]:
    solution = solution_answers(lesson)
    if student == _SOLUTION:
        return solution
    if student == _RELEASE:
        return {}
    return next(r for r in _rewrites(lesson) if r.name == student).apply(solution)


def _cases(students_of):
    """(lesson, student) parameters; a chunk's tests share an xdist group, so one worker grades it once."""
    return [
        pytest.param(
            lesson,
            student,
            marks=pytest.mark.xdist_group(f"{lesson}-{_chunk(lesson, student)}"),
            id=f"{lesson}-{student}",
        )
        for lesson in LESSONS
        for student in students_of(lesson)
    ]


@pytest.fixture
def grades(lesson: str, student: str, tmp_path_factory) -> Grades:
    """The grades of the student's chunk, graded by one plain nbgrader run and then reused."""
    key = (lesson, _chunk(lesson, student))
    if key not in _graded:
        chunk = [name for name in _students(lesson) if _chunk(lesson, name) == key[1]]
        submissions = {name: submission(lesson, _answers(lesson, name)) for name in chunk}
        _graded[key] = autograde(lesson, submissions, tmp_path_factory.mktemp(f"{lesson}-{key[1]}"))
    return _graded[key]


def test_every_lesson_has_mutants():
    assert sorted(MUTANTS) == LESSONS
    assert all(MUTANTS[lesson] for lesson in LESSONS)


def test_every_lesson_has_alternatives():
    assert sorted(ALTERNATIVES) == LESSONS
    assert all(ALTERNATIVES[lesson] for lesson in LESSONS)
    for lesson in LESSONS:
        names = _students(lesson)
        assert len(names) == len(set(names)), f"{lesson}: two students share a name"


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: [_SOLUTION]))
def test_solution_scores_full_marks(lesson, student, grades):
    assert grades.cells[student] == grades.max_points
    assert grades.exported_totals[student] == grades.max_total > 0


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: [_RELEASE]))
def test_untouched_release_scores_zero(lesson, student, grades):
    assert set(grades.cells[student]) == set(grades.max_points)
    assert grades.total(student) == 0
    assert grades.exported_totals[student] == 0


@pytest.mark.parametrize(
    ("lesson", "student"), _cases(lambda lesson: [mutant.name for mutant in MUTANTS[lesson]])
)
def test_mutant_loses_the_marks_for_its_mistake(lesson, student, grades):
    mutant = next(m for m in MUTANTS[lesson] if m.name == student)
    scores = grades.cells[student]
    assert {cell: scores[cell] for cell in mutant.loses} == dict.fromkeys(mutant.loses, 0)
    assert grades.exported_totals[student] < grades.max_total


@pytest.mark.parametrize(
    ("lesson", "student"), _cases(lambda lesson: [answer.name for answer in ALTERNATIVES[lesson]])
)
def test_alternative_answer_scores_full_marks(lesson, student, grades):
    assert grades.cells[student] == grades.max_points
    assert grades.exported_totals[student] == grades.max_total


@pytest.fixture(scope="session")
def class_grades(tmp_path_factory) -> dict[tuple[str, str], dict[str, float]]:
    """Per (lesson, student), the class grader's score of each question, from one run over every lesson.

    The xdist workers share one run: the first to get here grades, under a lock in their common folder.
    """
    basetemp = tmp_path_factory.getbasetemp()
    root = (basetemp.parent if "PYTEST_XDIST_WORKER" in os.environ else basetemp) / "class-grader"
    grades_csv = root / "out" / "grades.csv"
    with FileLock(f"{root}.lock"):
        if not grades_csv.exists():
            for lesson in LESSONS:
                for student in _students(lesson):
                    folder = root / "submitted" / student / lesson
                    folder.mkdir(parents=True)
                    nbformat.write(submission(lesson, _answers(lesson, student)), folder / f"{lesson}.ipynb")
            command = [sys.executable, "-m", "autograder", "grade", str(root / "submitted")]
            subprocess.run(
                [*command, "--out", str(root / "out"), "--workers", "2", "--seed", "11"],
                check=True,
                capture_output=True,
            )
    scores: dict[tuple[str, str], dict[str, float]] = {}
    for row in read_csv(grades_csv):
        scores.setdefault((row.assignment, row.student), {})[row.question] = row.score
    return scores


@pytest.mark.parametrize(("lesson", "student"), _cases(_students))
def test_class_grader_scores_every_question_as_nbgrader_does(lesson, student, grades, class_grades):
    assert class_grades[(lesson, student)] == grades.cells[student]
