"""What an instructor sees of a grading run: the summary table, the HTML report, the progress line."""

import base64
import html
import io
import re

import pytest

from autograder.records.progress import Progress, format_duration
from autograder.records.report import reason_class, summary_table, write_report
from autograder.records.results import QuestionResult, Status

INPUTS, OUTPUTS = "01_saving_inputs", "02_saving_outputs"
FORWARD, DOUBLE, EXP = "square_forward", "square_double_backward", "exp_saves_output"

DETACH_CAUSE = (
    "Likely cause: backward uses `.detach()`, which cuts the graph: what backward computes from the cut "
    "tensor has no path back to it, so autograd cannot differentiate it again."
)


def cut_off(function: str, shape: str, cause: str = DETACH_CAUSE) -> str:
    return (
        f"Second derivative: the gradient is cut off from the graph. For {function} on x of shape {shape}, "
        "grad_x computed with create_graph=True does not depend on x, so autograd finds no derivative of "
        f"it with respect to x (gradgradcheck would fail).\n{cause} Compute grad_x with ordinary torch "
        "operations."
    )


def forward_wrong(shape: str, expected: float, got: float, index: str, x: float) -> str:
    return (
        f"Forward value is wrong: Square on x of shape {shape}: "
        f"expected {expected}, got {got}{index} (x={x})."
    )


def timed_out(seconds: float) -> str:
    return f"Your code did not finish within {seconds:g} s. Look for a loop that never ends in forward."


KERNEL_DIED = "kernel died: the kernel exited with code -9 while running cell 4."
INVALID = "invalid notebook: not valid JSON (line 3, column 1)."


def row(student, assignment, question, score, max_score, status=Status.OK, reason="", notebook=None):
    return QuestionResult(
        student, assignment, notebook or f"{assignment}.ipynb", question, score, max_score, status, reason
    )


CLASS = [
    row("alice", INPUTS, FORWARD, 1, 1),
    row("alice", INPUTS, DOUBLE, 2, 2),
    row("alice", OUTPUTS, EXP, 1, 1),
    row("bob", INPUTS, FORWARD, 1, 1),
    row("bob", INPUTS, DOUBLE, 1, 2, Status.FAILED, cut_off("Square", "(3,)")),
    row("bob", OUTPUTS, EXP, 0, 1, Status.TIMEOUT, timed_out(30)),
    row("carol", INPUTS, FORWARD, 0, 1, Status.KERNEL_DIED, KERNEL_DIED),
    row("carol", INPUTS, DOUBLE, 0, 2, Status.KERNEL_DIED, KERNEL_DIED),
    row("carol", INPUTS, "", 0, 0, Status.EXTRA_NOTEBOOK, "not part of the assignment", "scratch.ipynb"),
    row("dave", INPUTS, FORWARD, 0, 1, Status.INVALID_NOTEBOOK, INVALID),
    row("dave", INPUTS, DOUBLE, 0, 2, Status.INVALID_NOTEBOOK, INVALID),
    row("dave", OUTPUTS, EXP, 0, 1, Status.MISSING, "missing: 02_saving_outputs.ipynb was not submitted."),
    row("erin", INPUTS, FORWARD, 1, 1),
    row("erin", INPUTS, DOUBLE, 0, 2, Status.FAILED, cut_off("Cube", "(2, 3)")),
]


def test_summary_table_has_one_line_per_question_with_its_numbers():
    lines = summary_table(CLASS).splitlines()
    cells = [re.split(r"\s{2,}", line.strip()) for line in lines[2:-1]]
    assert cells == [
        [INPUTS, DOUBLE, "5", "0.60 / 2", "20%", "failed 2, kernel died 1, invalid notebook 1"],
        [INPUTS, FORWARD, "5", "0.60 / 1", "60%", "kernel died 1, invalid notebook 1"],
        [OUTPUTS, EXP, "3", "0.33 / 1", "33%", "timeout 1, missing 1"],
    ]
    assert lines[-1] == (
        "5 students, 9 notebooks, 13 questions graded; ok 5, failed 2, timeout 1, kernel died 2, "
        "invalid notebook 2, missing 1, extra notebook 1"
    )


def test_summary_table_columns_are_aligned():
    table = summary_table(CLASS).splitlines()[:-1]
    rule = table[1]
    gaps = [index for index, char in enumerate(rule) if char == " "]
    assert gaps, "the rule under the header separates the columns"
    for line in table:
        assert all(index >= len(line) or line[index] == " " for index in gaps), line


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("report") / "report.html"
    write_report(CLASS, path, title="Class of 2025", elapsed_seconds=185.4)
    return path.read_text(encoding="utf-8")


def svg_images(document: str) -> list[bytes]:
    return [
        base64.b64decode(data)
        for data in re.findall(r'<img src="data:image/svg\+xml;base64,([^"]+)"', document)
    ]


def test_report_is_one_file_with_three_embedded_plots(report):
    images = svg_images(report)
    assert len(images) == 3
    assert all(image.startswith(b"<?xml") and b"<svg" in image for image in images)
    assert "<script" not in report
    assert re.search(r"""(?:src|href)=["'](?!data:)""", report) is None, "no external assets"


def test_report_shows_the_summary_numbers_and_elapsed_time(report):
    assert "<td>0.60 / 2</td><td>20%</td><td>failed 2, kernel died 1, invalid notebook 1</td>" in report
    assert "<td>0.33 / 1</td><td>33%</td><td>timeout 1, missing 1</td>" in report
    assert "5 students, 9 notebooks, 13 questions graded;" in report
    assert "Graded in 3m05s." in report


def test_report_lists_the_most_frequent_reason_classes_with_counts(report):
    found = dict(
        (html.unescape(text), int(count))
        for text, count in re.findall(r"<tr><td>([^<]*)</td><td>(\d+)</td><td><pre>", report)
    )
    assert found == {
        DETACH_CAUSE: 2,
        "kernel died: the kernel exited with code N while running cell N.": 2,
        "invalid notebook: not valid JSON (line N, column N).": 2,
        "Your code did not finish within N s.": 1,
        "missing: 02_saving_outputs.ipynb was not submitted.": 1,
    }
    # The example is the full message, and the counts are ordered most frequent first.
    assert f"<pre>{html.escape(cut_off('Square', '(3,)'))}</pre>" in report
    assert list(found.values()) == sorted(found.values(), reverse=True)


def test_report_escapes_everything_that_comes_from_rows(tmp_path):
    hostile = "<script>alert(1)</script> & costs $\\left($ too."
    rows = [row(student, INPUTS, "<q>", 0, 1, Status.FAILED, hostile) for student in ("<b>eve</b>", "bob")]
    path = tmp_path / "report.html"
    write_report(rows, path, title="<i>report</i>")
    document = path.read_text(encoding="utf-8")
    assert "<script>" not in document
    assert "<b>eve" not in document
    assert "<q>" not in document
    assert "<i>report" not in document
    assert html.escape(hostile) in document
    images = svg_images(document)
    assert len(images) == 3, "a '$' in a label is text, not a formula"
    assert all(b"<script" not in image for image in images), "a label is text inside the plots too"


def test_a_report_on_one_student_has_its_tables_and_says_when_plots_are_drawn(tmp_path):
    """Over one student's notebooks every share is 0 or 1: the tables say it all, without the plots."""
    rows = [
        row("alice", INPUTS, FORWARD, 0, 1, Status.FAILED, DETACH_CAUSE),
        row("alice", INPUTS, "q2", 1, 1),
    ]
    path = tmp_path / "report.html"
    write_report(rows, path)
    document = path.read_text(encoding="utf-8")
    assert svg_images(document) == []
    assert "<td>0.00 / 1</td><td>0%</td>" in document
    assert "drawn when a run grades more than one student" in document
    assert f"<pre>{html.escape(DETACH_CAUSE)}</pre>" in document


def test_report_without_failures_says_so_instead_of_a_chart(tmp_path):
    rows = [row(student, INPUTS, FORWARD, 1, 1) for student in ("alice", "bob")]
    path = tmp_path / "report.html"
    write_report(rows, path)
    document = path.read_text(encoding="utf-8")
    assert len(svg_images(document)) == 2
    assert "No failures" in document
    assert "Graded in" not in document


def test_reason_class_ignores_numbers_shapes_and_indices():
    forward = {
        reason_class(forward_wrong("(2, 3)", 0.289, 0.155, " at index [0, 1]", 0.53)),
        reason_class(forward_wrong("(4,)", -1.5e-05, 2, " at index [3]", -0.1)),
    }
    assert forward == {
        "Forward value is wrong: Square on x of shape (…): expected N, got N at index […] (x=N)."
    }
    assert (
        reason_class(timed_out(30)) == reason_class(timed_out(7.5)) == "Your code did not finish within N s."
    )


def test_reason_class_prefers_the_likely_cause_over_the_symptom():
    assert reason_class(cut_off("Square", "(3,)")) == reason_class(cut_off("Cube", "()")) == DETACH_CAUSE


def test_reason_class_keeps_different_causes_apart():
    numpy = "Likely cause: backward computes with NumPy, which autograd cannot record. Keep the kernel."
    data = (
        "Likely cause: backward uses `.data`, which cuts the graph: what backward computes from the cut "
        "tensor has no path back to it, so autograd cannot differentiate it again."
    )
    causes = {reason_class(cut_off("Square", "(3,)", cause)) for cause in (DETACH_CAUSE, numpy, data)}
    assert len(causes) == 3


def test_reason_class_keeps_identifiers_and_quoted_code():
    assert reason_class("got dtype torch.float32 instead of torch.float64") == (
        "got dtype torch.float32 instead of torch.float64"
    )
    assert reason_class("backward's `x[0]` and 'x2' were 3 off") == "backward's `x[0]` and 'x2' were N off"
    assert reason_class("") == "(no reason given)"


class Clock:
    """A clock that moves only when the test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Stream(io.StringIO):
    """Captured output that claims to be, or not to be, a terminal."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def run(progress: Progress, clock: Clock, seconds: list[float], labels: list[str]) -> None:
    with progress:
        for duration, label in zip(seconds, labels, strict=True):
            clock.now += duration
            progress.advance(label=label)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0, "0s"), (42.4, "42s"), (185, "3m05s"), (3725, "1h02m05s"), (-1, "0s")],
)
def test_format_duration(seconds, text):
    assert format_duration(seconds) == text


def test_log_gets_a_line_every_tenth_of_the_run():
    clock, stream = Clock(), Stream(tty=False)
    run(Progress(20, stream=stream, clock=clock), clock, [1] * 20, [f"s{i}" for i in range(20)])
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert lines[0] == " 2/20  10%  elapsed 2s  ETA 18s  s1"
    assert lines[-1] == "20/20 100%  elapsed 20s  ETA 0s  s19"


def test_log_gets_a_line_every_five_seconds_and_where_the_run_stopped():
    clock, stream = Clock(), Stream(tty=False)
    run(Progress(100, stream=stream, clock=clock), clock, [3] * 5, [f"s{i}" for i in range(5)])
    lines = stream.getvalue().splitlines()
    assert lines[0] == "  2/100   2%  elapsed 6s  ETA 4m54s  s1"
    assert [line.split("/")[0].strip() for line in lines] == ["2", "4", "5"]


def test_resumed_run_estimates_from_its_own_items_only():
    clock, stream = Clock(), Stream(tty=False)
    run(Progress(10, done=6, stream=stream, clock=clock), clock, [4], ["alice"])
    assert stream.getvalue() == " 7/10  70%  elapsed 4s  ETA 12s  alice\n"


def test_terminal_redraws_one_line_at_most_ten_times_a_second(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    clock, stream = Clock(), Stream(tty=True)
    labels = ["a", "b", "alice/01_saving_inputs", "bob"]
    run(Progress(4, stream=stream, clock=clock), clock, [0.01, 0.01, 0.5, 0.01], labels)
    output = stream.getvalue()
    assert output.startswith("\r")
    assert output.endswith("\n")
    assert output.count("\n") == 1
    first, third, last = output.split("\r")[1:]
    assert first == "[....................] 0/4   0%  elapsed 0s  ETA --"
    assert third.startswith("[###############.....] 3/4  75%  elapsed 1s  ETA 0s  alice/01_saving_inputs")
    # The last frame is padded to wipe the longer label before it.
    assert last.rstrip("\n").rstrip() == "[####################] 4/4 100%  elapsed 1s  ETA 0s  bob"
    assert len(last.rstrip("\n")) >= len(third)
