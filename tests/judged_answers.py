"""Every answer the tests know (a lesson's solution, its mutants, its alternatives) judged once per test
process, as the class grader judges it, with torch's gradcheck or gradgradcheck beside each check of a
derivative (tests/in_process.py: a second or so an answer, where the class grader's run of the whole
notebook costs several).

The tests that read a lesson's judgements share an xdist group (`judged_params`), so one worker judges
each answer once for all of them.
"""

from functools import cache

import pytest
from alternatives import ALTERNATIVES
from grading_pipeline import solution_answers
from in_process import Judged, judged
from mutants import MUTANTS

from autograder.wire.verdict import CausesTold

SOLUTION = "solution"
# The Functions a lesson runs under torch.func (vmap(grad(grad(...))), jacfwd, hessian): torch.func runs
# their backward on a batch of incoming gradients, which is what check_batched_grad tries.
UNDER_VMAP = {"06_beyond_the_basics": {"ScaledSquare", "TanhInPlace"}, "07_forward_mode": {"Tanh"}}


def mutant_names(lesson: str) -> list[str]:
    return [mutant.name for mutant in MUTANTS[lesson]]


def answers_of(lesson: str, name: str) -> dict[str, str]:
    """The answer cells of the solution, or of the mutant or alternative named `name`."""
    solution = solution_answers(lesson)
    if name == SOLUTION:
        return solution
    return next(a for a in [*MUTANTS[lesson], *ALTERNATIVES[lesson]] if a.name == name).apply(solution)


@cache
def judged_answer(lesson: str, name: str) -> tuple[Judged, ...]:
    """Every check of the lesson's test cells, hidden ones included, on one answer."""
    return tuple(judged(lesson, answers_of(lesson, name), batched=UNDER_VMAP.get(lesson, set())))


def first_failures(lesson: str, name: str) -> dict[str, str]:
    """Per test cell the answer fails, the message of its first failing check: what the student reads
    there, and (on one line) the reason grades.csv gives; a cause an earlier cell showed is shortened
    there, as the kernel and the class grader shorten it."""
    failures: dict[str, str] = {}
    told = CausesTold()
    for result in judged_answer(lesson, name):
        if not result.verdict.passed and result.cell not in failures:
            failures[result.cell] = told.shown_in(result.cell, result.verdict.message)
    return failures


def judged_params(lessons, names_of) -> list:
    """(lesson, name) parameters, a lesson's in one xdist group: its answers are judged once."""
    return [
        pytest.param(lesson, name, marks=pytest.mark.xdist_group(f"judged-{lesson}"), id=f"{lesson}-{name}")
        for lesson in lessons
        for name in names_of(lesson)
    ]
