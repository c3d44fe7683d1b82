"""Every line of a check's message fits the columns students read it in (a notebook's output, Validate's
dialog, the feedback, the report): broken between words, never inside one, in the one place every failed
check's message passes (`Verdict.failed`). Tried on what every mutant of every lesson is told."""

import pytest
from grading_pipeline import solution_answers
from in_process import judged
from mutants import MUTANTS
from widths import fits, widths

from autograder.course.layout import assignments
from autograder.records.results import one_line
from autograder.wire.verdict import WIDTH, Verdict, fitted


def test_fitted_breaks_between_words_keeps_each_word_whole_and_each_line_s_indentation():
    long_word = "x" * (WIDTH + 5)
    message = (
        f"{'sentence ' * 30}end.\nLikely cause: {long_word} then {'more ' * 25}words.\n"
        f"  on x of shape (2, 3) {'and ' * 40}the rest"
    )
    lines = fitted(message).split("\n")
    assert fitted(message).split() == message.split()
    assert [width for width, line in zip(widths(fitted(message)), lines, strict=True) if width > WIDTH] == [
        len(long_word)
    ]
    assert any(line.startswith("Likely cause:") for line in lines)
    on = next(index for index, line in enumerate(lines) if line.startswith("  on x"))
    assert lines[on + 1][:3] == "  a"


def test_a_message_that_fits_is_left_as_it_is():
    message = "Forward value is wrong: Square on x of shape (): expected 4, got 8.\nLikely cause: x**3."
    assert fitted(message) == message
    assert Verdict.failed(message).message == message


@pytest.mark.parametrize("lesson", assignments())
def test_every_line_of_what_each_mutant_is_told_fits(lesson):
    messages = [
        result.verdict.message
        for mutant in MUTANTS[lesson]
        for result in judged(lesson, mutant.apply(solution_answers(lesson)))
        if not result.verdict.passed
    ]
    assert any(len(one_line(message)) > WIDTH for message in messages), "no message needed wrapping"
    assert [message for message in messages if not fits(message)] == []
