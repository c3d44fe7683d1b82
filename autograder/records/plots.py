"""The report's plots, as SVG inside the HTML: how each question went and why students lost marks.
A module of its own, because matplotlib takes half a second to load and a run loads it only when its
report draws them."""

from __future__ import annotations

import base64
import io
import textwrap
from typing import TYPE_CHECKING

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.cm import ScalarMappable
from matplotlib.colors import LinearSegmentedColormap, Normalize
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator, PercentFormatter

from autograder.records.results import QuestionResult

if TYPE_CHECKING:
    from autograder.records.report import QuestionSummary

# Red for no marks through yellow to green for full marks, light enough for black labels on top.
_SCORE_COLORS = LinearSegmentedColormap.from_list("score", ["#e45c4b", "#f7e07f", "#4fb06d"])
_PASS_COLOR = "#4c78a8"
_FAIL_COLOR = "#e45c4b"


def _svg(figure: Figure) -> str:
    """The figure as a data URI, in SVG with its text kept as text: sharp at any zoom, its labels
    searchable, and drawn in about half the time a PNG takes to rasterise its glyphs, which is time an
    instructor waits at the end of every run. The SVG canvas is attached here, so pyplot's global state
    is untouched; a fixed salt makes the same plot the same bytes."""
    buffer = io.BytesIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "gradgrad"}):
        FigureCanvasSVG(figure).print_figure(buffer, format="svg", bbox_inches="tight")
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _bar_figure(labels: list[str], height_per_bar: float) -> tuple[Figure, Axes]:
    """A horizontal bar chart's frame: one bar per label, the first at the top."""
    figure = Figure(figsize=(8, 0.9 + height_per_bar * len(labels)))
    axes = figure.add_subplot()
    # Labels come from rows: never read '$' in them as the start of a formula.
    axes.set_yticks(range(len(labels)), labels, parse_math=False)
    axes.set_ylim(len(labels) - 0.5, -0.5)
    axes.spines[["top", "right"]].set_visible(False)
    return figure, axes


def _question_labels(summaries: list[QuestionSummary]) -> list[str]:
    """'question (n=5)', prefixed by its assignment when the run graded more than one."""
    several = len({summary.assignment for summary in summaries}) > 1
    return [
        f"{s.assignment}: {s.question} (n={s.submissions})"
        if several
        else f"{s.question} (n={s.submissions})"
        for s in summaries
    ]


def score_distribution(summaries: list[QuestionSummary]) -> str:
    """One bar per question, split into the share of submissions at each score, labelled with it."""
    figure, axes = _bar_figure(_question_labels(summaries), 0.4)
    for y, summary in enumerate(summaries):
        left = 0.0
        for score, share in summary.score_shares():
            axes.barh(y, share, left=left, color=_SCORE_COLORS(score / summary.max_score), edgecolor="white")
            if share >= 0.05:
                axes.text(left + share / 2, y, f"{score:g}", ha="center", va="center", fontsize=8)
            left += share
    axes.set_xlim(0, 1)
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_xlabel("share of submissions at each score (the number on a segment is the score)")
    colorbar = figure.colorbar(ScalarMappable(Normalize(0, 1), _SCORE_COLORS), ax=axes, fraction=0.04)
    colorbar.set_label("score / max score")
    colorbar.ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    return _svg(figure)


def pass_rate(summaries: list[QuestionSummary]) -> str:
    figure, axes = _bar_figure(_question_labels(summaries), 0.4)
    axes.barh(range(len(summaries)), [s.pass_rate for s in summaries], color=_PASS_COLOR)
    for y, summary in enumerate(summaries):
        note = f"{summary.pass_rate:.0%} ({summary.passed}/{summary.submissions})"
        axes.text(summary.pass_rate + 0.01, y, note, va="center", fontsize=8)
    # Room on the right for the note of a question everybody passed.
    axes.set_xlim(0, 1.2)
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1])
    axes.xaxis.set_major_formatter(PercentFormatter(1.0))
    axes.set_xlabel("submissions with full marks")
    return _svg(figure)


def failure_reasons(top: list[tuple[str, list[QuestionResult]]]) -> str:
    labels = [textwrap.fill(text, 60, max_lines=3, placeholder=" …") for text, _ in top]
    figure, axes = _bar_figure(labels, 0.7)
    counts = [len(failures) for _, failures in top]
    axes.barh(range(len(top)), counts, color=_FAIL_COLOR)
    for y, count in enumerate(counts):
        axes.text(count, y, f" {count}", va="center", fontsize=8)
    axes.set_xlim(0, max(counts) * 1.1)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("questions scored below full marks")
    return _svg(figure)
