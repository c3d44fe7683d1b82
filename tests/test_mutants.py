"""Every mutant loses the marks for its mistake, and where the mutant says what the mistake is, the feedback
names it, in lines that fit the notebook.

Each mutant is judged as the class grader judges it (tests/judged_answers.py): a second or so, where the
class grader's run of the whole notebook costs several. test_grading.py pins that the class grader gives
these very grades and reasons, question for question, on each lesson's mutants that it grades, and that
plain nbgrader gives them on those it grades.
"""

import pytest
from judged_answers import first_failures, judged_params, mutant_names
from mutants import MUTANTS
from widths import fits

from autograder.course.layout import assignments
from autograder.records.results import one_line
from autograder.wire.verdict import WIDTH

LESSONS = assignments()


def _mutant(lesson: str, name: str):
    return next(mutant for mutant in MUTANTS[lesson] if mutant.name == name)


@pytest.mark.parametrize(("lesson", "name"), judged_params(LESSONS, mutant_names))
def test_mutant_loses_the_marks_for_its_mistake(lesson, name):
    """A test cell scores zero when one of its checks fails: the cells the mutant names all do."""
    mutant = _mutant(lesson, name)
    assert mutant.loses, "a mutant must lose some marks"
    assert sorted(mutant.loses - set(first_failures(lesson, name))) == []


@pytest.mark.parametrize(
    ("lesson", "name"),
    judged_params(LESSONS, lambda lesson: [m.name for m in MUTANTS[lesson] if m.says]),
)
def test_feedback_names_the_mutants_mistake(lesson, name):
    mutant = _mutant(lesson, name)
    reasons = {
        cell: one_line(message)
        for cell, message in first_failures(lesson, name).items()
        if cell in mutant.loses
    }
    for phrase in mutant.phrases:
        assert any(phrase in reason for reason in reasons.values()), (phrase, reasons)


@pytest.mark.parametrize(
    "lesson", [pytest.param(lesson, marks=pytest.mark.xdist_group(f"judged-{lesson}")) for lesson in LESSONS]
)
def test_every_line_each_mutant_is_shown_fits_the_notebook(lesson):
    """What a student reads of each failed test cell: every line broken between words to the notebook's
    width (test_messages_fit.py pins the breaking itself)."""
    messages = [message for name in mutant_names(lesson) for message in first_failures(lesson, name).values()]
    assert any(len(one_line(message)) > WIDTH for message in messages), "no message needed wrapping"
    assert [message for message in messages if not fits(message)] == []
