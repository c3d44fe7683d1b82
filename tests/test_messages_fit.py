"""Every line of a check's message fits the columns students read it in (a notebook's output, Validate's
dialog, the feedback, the report): broken between words, never inside one, in the one place every failed
check's message passes (`Verdict.failed`). test_grading.py tries it on what every mutant of every lesson is
shown, in the notebooks the class grader hands back."""

from widths import widths

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
