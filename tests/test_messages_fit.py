"""Every line of a check's message fits the columns students read it in (a notebook's output, Validate's
dialog, the feedback, the report): broken between words, never inside one, in the one place every failed
check's message passes (`Verdict.failed`). test_grading.py tries it on what every mutant of every lesson is
shown, in the notebooks the class grader hands back."""

from widths import fits, widths

from autograder.records.results import one_line
from autograder.wire.verdict import WIDTH, CausesTold, Verdict, fitted


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


def test_a_cause_an_earlier_cell_showed_is_told_by_its_first_sentence_and_a_cell_run_again_tells_it_all():
    cause = (
        "Likely cause: forward calls `.mul_()`, which changes its input in place (e.g. x.mul_(w)) and "
        "returns it. Build a new tensor. Only a Function meant to work in place returns its input."
    )
    first = Verdict.failed(f"Square on x of shape () raised RuntimeError: returned as-is.\n{cause}").message
    later = Verdict.failed(
        f"Square raised RuntimeError: returned as-is.\n{cause}\n  when called with x"
    ).message
    told = CausesTold()
    assert told.shown_in("forward cell", first) == first
    shortened = told.shown_in("derivative cell", later)
    assert one_line(shortened) == one_line(
        "Square raised RuntimeError: returned as-is. Likely cause: forward calls `.mul_()`, which changes "
        "its input in place (e.g. x.mul_(w)) and returns it. The first test above that failed with it says "
        "more. when called with x"
    )
    assert fits(shortened)
    assert told.shown_in("forward cell", first) == first


def test_a_cause_of_one_sentence_is_repeated_whole():
    message = Verdict.failed(
        "Square raised TypeError: no.\nLikely cause: forward takes ctx; drop it."
    ).message
    told = CausesTold()
    assert told.shown_in("one cell", message) == told.shown_in("another cell", message) == message
