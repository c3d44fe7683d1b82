"""Every lesson through nbgrader's real pipeline: the solution scores full marks, the untouched release
scores zero, and every mutant loses the marks for the mistake it makes."""

import pytest
from grading_pipeline import Grades, autograde, solution_answers, submission
from mutants import MUTANTS

from autograder.release import assignments

LESSONS = assignments()
# Each lesson's students are split into this many nbgrader runs, so both cores of a CI machine grade.
_CHUNKS = 2
_SOLUTION, _RELEASE = "solution", "release"
_graded: dict[tuple[str, int], Grades] = {}


def _students(lesson: str) -> list[str]:
    return [_SOLUTION, _RELEASE, *(mutant.name for mutant in MUTANTS[lesson])]


def _chunk(lesson: str, student: str) -> int:
    return _students(lesson).index(student) % _CHUNKS


def _answers(lesson: str, student: str) -> dict[str, str]:
    solution = solution_answers(lesson)
    if student == _SOLUTION:
        return solution
    if student == _RELEASE:
        return {}
    return next(m for m in MUTANTS[lesson] if m.name == student).apply(solution)


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
