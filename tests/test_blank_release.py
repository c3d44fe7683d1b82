"""The untouched release, judged as the class grader judges it: every check fails, and its reason names the
student's function that is not written yet, never a function the test cell defines around it (lesson 08's
test calls inner_step through `adapted_then_own`; the student has no `adapted_then_own` to write)."""

import ast
import re

import pytest
from grading_pipeline import solution_answers
from in_process import judged, lesson_tests

from autograder.course.layout import assignments


def _defined(sources) -> set[str]:
    """The functions and classes defined at the top level of these cells."""
    return {
        statement.name
        for source in sources
        for statement in ast.parse(source).body
        if isinstance(statement, ast.FunctionDef | ast.ClassDef)
    }


def _named(names: set[str], text: str) -> set[str]:
    return {name for name in names if re.search(rf"\b{re.escape(name)}\b", text)}


@pytest.mark.parametrize("lesson", assignments())
def test_blank_release_reasons_name_the_students_missing_function(lesson):
    exercises = _defined(solution_answers(lesson).values())
    helpers = _defined(lesson_tests(lesson).values()) - exercises
    reasons = {(r.cell, r.verdict.message) for r in judged(lesson, {}) if not r.verdict.passed}
    assert {cell for cell, _ in reasons} == set(lesson_tests(lesson)), "a test cell passes the blank release"
    for cell, reason in reasons:
        assert "not written yet" in reason, (cell, reason)
        assert _named(exercises, reason), (cell, reason)
        assert not _named(helpers, reason), (cell, reason)
