"""What a grading run tells the instructor: a summary table for the terminal, and an HTML report with
plots (autograder.records.plots) of how each question went and why students lost marks."""

import html
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from autograder.records.progress import format_duration
from autograder.records.results import QuestionResult, Status, one_line

_TOP_REASONS = 10

_LIKELY_CAUSE = "Likely cause:"
# Quoted and backticked text names code (`.detach()`, 'x2'); it is kept exactly, digits and all.
# An apostrophe inside a word (backward's) opens no quote.
_QUOTED = re.compile(r"(`[^`]*`|(?<!\w)'[^'\n]*'(?!\w)|\"[^\"\n]*\")")
_FIRST_SENTENCE = re.compile(r".*?[.!?](?=\s|$)")
# Shapes and indices, '(2, 3)', '(3,)', '[0, 1]', differ with the sample, not with the mistake.
_NUMBER_LIST = re.compile(r"([(\[])[-+\d.,\s]*\d[-+\d.,\s]*([)\]])")
_SCALAR_SHAPE = re.compile(r"(?<=shape )\(\)")
# A standalone number: not the digits of an identifier such as float64 or log1p.
_NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?!\w)")


def reason_class(reason: str) -> str:
    """The diagnosis in a failure message, stripped of what varies between students who made the
    same mistake (sample values, shapes, timeouts), so that their failures count together."""
    text = one_line(reason)
    if not text:
        return "(no reason given)"
    # Lines are fitted to a notebook's width, so a sentence may go on over several: read them as one.
    cause = text.find(_LIKELY_CAUSE)
    line = text[cause:] if cause >= 0 else text
    sentence = _FIRST_SENTENCE.match(line)
    parts = _QUOTED.split(sentence.group() if sentence else line)
    # split() with a group puts the quoted parts at the odd indices.
    return " ".join(
        "".join(part if index % 2 else _without_numbers(part) for index, part in enumerate(parts)).split()
    )


def _without_numbers(text: str) -> str:
    text = _NUMBER_LIST.sub(r"\1…\2", text)
    text = _SCALAR_SHAPE.sub("(…)", text)
    return _NUMBER.sub("N", text)


def _is_question(row: QuestionResult) -> bool:
    """Extra notebooks (no question, nothing to score) count in the status totals only."""
    return bool(row.question) and row.max_score > 0


@dataclass(frozen=True)
class QuestionSummary:
    """How one question of one assignment went across the class."""

    assignment: str
    question: str
    rows: tuple[QuestionResult, ...]

    @property
    def submissions(self) -> int:
        return len(self.rows)

    @property
    def max_score(self) -> float:
        return max(row.max_score for row in self.rows)

    @property
    def mean_score(self) -> float:
        return sum(row.score for row in self.rows) / len(self.rows)

    @property
    def passed(self) -> int:
        return sum(row.score == row.max_score for row in self.rows)

    @property
    def pass_rate(self) -> float:
        return self.passed / len(self.rows)

    @property
    def not_ok(self) -> str:
        return _status_counts([row for row in self.rows if row.status != Status.OK])

    def score_shares(self) -> list[tuple[float, float]]:
        """(score, share of submissions with that score), lowest score first."""
        counts = Counter(row.score for row in self.rows)
        return [(score, counts[score] / len(self.rows)) for score in sorted(counts)]


def _question_summaries(rows: list[QuestionResult]) -> list[QuestionSummary]:
    grouped = defaultdict(list)
    for row in rows:
        if _is_question(row):
            grouped[row.assignment, row.question].append(row)
    return [QuestionSummary(a, q, tuple(group)) for (a, q), group in sorted(grouped.items())]


def _status_counts(rows: list[QuestionResult]) -> str:
    """'failed 3, timeout 1', in the order Status lists them, so runs read alike."""
    counts = Counter(row.status for row in rows)
    return ", ".join(f"{status} {counts[status]}" for status in Status if counts[status])


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _totals(rows: list[QuestionResult]) -> str:
    students = len({row.student for row in rows})
    notebooks = len({(row.student, row.assignment, row.notebook) for row in rows})
    questions = sum(_is_question(row) for row in rows)
    return (
        f"{_plural(students, 'student')}, {_plural(notebooks, 'notebook')}, "
        f"{_plural(questions, 'question')} graded; {_status_counts(rows)}"
    )


_HEADER = ("assignment", "question", "submissions", "mean / max", "pass", "not ok")
_RIGHT_ALIGNED = {2, 3, 4}


def _cells(summary: QuestionSummary) -> tuple[str, ...]:
    return (
        summary.assignment,
        summary.question,
        str(summary.submissions),
        f"{summary.mean_score:.2f} / {summary.max_score:g}",
        f"{summary.pass_rate:.0%}",
        summary.not_ok,
    )


def summary_table(rows: list[QuestionResult]) -> str:
    """One aligned line per question and a totals line: what a run prints when it ends."""
    table = [_HEADER, *(_cells(summary) for summary in _question_summaries(rows))]
    widths = [max(len(line[column]) for line in table) for column in range(len(_HEADER))]
    table.insert(1, tuple("-" * width for width in widths))
    lines = [
        "  ".join(
            cell.rjust(width) if column in _RIGHT_ALIGNED else cell.ljust(width)
            for column, (cell, width) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in table
    ]
    return "\n".join([*lines, _totals(rows)])


def _failures_by_reason(rows: list[QuestionResult]) -> list[tuple[str, list[QuestionResult]]]:
    """Every question scored below full marks, grouped by reason class, most frequent first."""
    grouped = defaultdict(list)
    for row in sorted(rows, key=lambda r: r.key):
        if row.score < row.max_score:
            grouped[reason_class(row.reason)].append(row)
    return sorted(grouped.items(), key=lambda item: (-len(item[1]), item[0]))


_ONE_STUDENT = "The plots of how each question went are drawn when a run grades more than one student."


def plotted(students: Iterable[str]) -> bool:
    """Whether the report draws its plots. Over one student's notebooks a share of submissions is 0 or
    1, and a plot says no more than the tables beside it; drawing the plots is about a quarter of a
    second at the end of a run, which a regrade of one student would wait for."""
    return len(set(students)) > 1


def _image(uri: str, alt: str) -> str:
    return f'<img src="{uri}" alt="{html.escape(alt)}">'


def _html_table(header: tuple[str, ...], body: list[tuple[str, ...]]) -> str:
    """A table of cells that are already HTML: callers escape what came from rows."""
    head = "".join(f"<th>{cell}</th>" for cell in header)
    lines = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in line) + "</tr>\n" for line in body)
    return f"<table>\n<tr>{head}</tr>\n{lines}</table>"


def _summary_section(rows: list[QuestionResult], summaries: list[QuestionSummary]) -> str:
    body = [tuple(html.escape(cell) for cell in _cells(summary)) for summary in summaries]
    section = f"<h2>Summary</h2>\n{_html_table(_HEADER, body)}\n<p>{html.escape(_totals(rows))}</p>"
    if not summaries:
        return section + "\n<p>No question was graded.</p>"
    if not plotted(row.student for row in rows):
        return section + f"\n<p>{_ONE_STUDENT}</p>"
    from autograder.records import plots

    return (
        f"{section}\n<h2>Score distribution</h2>\n{_image(plots.score_distribution(summaries), 'scores')}\n"
        f"<h2>Pass rate</h2>\n{_image(plots.pass_rate(summaries), 'pass rate per question')}"
    )


def _example(row: QuestionResult) -> str:
    where = " / ".join(html.escape(part) for part in (row.student, row.assignment, row.question) if part)
    return f'<pre>{html.escape(row.reason)}</pre><p class="from">{where} ({html.escape(row.status)})</p>'


def _reasons_section(rows: list[QuestionResult]) -> str:
    heading = "<h2>Most frequent failure reasons</h2>"
    by_reason = _failures_by_reason(rows)
    if not by_reason:
        return f"{heading}\n<p>No failures: every question scored full marks.</p>"
    failures = sum(len(group) for _, group in by_reason)
    top = by_reason[:_TOP_REASONS]
    body = [(html.escape(text), str(len(group)), _example(group[0])) for text, group in top]
    return (
        f"{heading}\n<p>{_plural(failures, 'question')} scored below full marks, for "
        f"{_plural(len(by_reason), 'distinct reason')}; the {len(top)} most frequent:</p>\n"
        f"{_reasons_plot(rows, top)}{_html_table(('reason class', 'questions', 'one example'), body)}"
    )


def _reasons_plot(rows: list[QuestionResult], top: list[tuple[str, list[QuestionResult]]]) -> str:
    if not plotted(row.student for row in rows):
        return ""
    from autograder.records import plots

    return f"{_image(plots.failure_reasons(top), 'failure reasons')}\n"


_STYLE = """
body { font-family: sans-serif; margin: 2em; max-width: 70em; }
table { border-collapse: collapse; margin: 1em 0; }
th, td { border: 1px solid #ccc; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
pre { white-space: pre-wrap; margin: 0; max-width: 50em; }
p.from { color: #666; font-size: small; margin: 0.3em 0 0; }
img { max-width: 100%; }
"""


def write_report(
    rows: list[QuestionResult],
    path: Path,
    *,
    title: str = "Grading report",
    elapsed_seconds: float | None = None,
    graded_by: str | None = None,
) -> None:
    """One HTML file with its plots inside, so that it can be mailed or archived with grades.csv.
    `graded_by` names the machines that graded, when they were not this one."""
    summaries = _question_summaries(rows)
    elapsed = "" if elapsed_seconds is None else f"<p>Graded in {format_duration(elapsed_seconds)}.</p>\n"
    if graded_by:
        elapsed += f"<p>Graded by {html.escape(graded_by)}.</p>\n"
    document = (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{elapsed}"
        f"{_summary_section(rows, summaries)}\n{_reasons_section(rows)}\n</body>\n</html>\n"
    )
    path.write_text(document, encoding="utf-8")
