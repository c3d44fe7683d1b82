"""Lesson 00: the running example's weights and every derivative the text quotes."""

from claims import Claim

LESSON = "00_grad_vs_backward"

_FIRST = r"dy/dw1\s+computed\s+([\d.]+)[^\n]*\nd²y/dw1²"  # section 7's dy/dw1, printed above d²y/dw1²
_SECOND = r"d²y/dw1²\s+computed\s+([\d.]+)"
_DERIVATIVES = r"derivatives_at: "  # section 13 runs the exercise's functions on the lesson's network
_SUMMED = r"accumulate_three's \.grad: "
_CURVATURE = r"hidden_second_derivative: ([\d.]+),"

CLAIMS = [
    Claim(r"weights `w1 = (\d+)`", r"\bw1 = (\d+), w2"),
    Claim(r"`w2 = ([\d.]+)`, `b2", r"\bw2 = ([\d.]+), b2"),
    Claim(r"`b2 = (\d+)` and the input", r"\bb2 = (\d+), x"),
    Claim(r"the input `x = (\d+)`", r", x = (\d+), so u"),
    Claim(r"`u = (\d+)` here", r"u = w2·l \+ b2 = (\d+)"),
    Claim(r"What do (\d+) and \d+ mean", _FIRST),
    Claim(r"What do \d+ and (\d+) mean", _SECOND),
    Claim(r"(\d+) is the slope of `y`", _FIRST),
    Claim(r"and (\d+) the slope of `dy/dw1`", _SECOND),
    Claim(r"curvature term `(\d+)/2", _SECOND),
    Claim(r"straight line of slope (\d+)", _SECOND),
    Claim(r"such as ([\d.]+) for `hidden_second_derivative`", _CURVATURE),
    Claim(r"`d²y/dl²` is ([\d.]+)\.", _CURVATURE),
    Claim(r"On this lesson's network: (\d+) and", _DERIVATIVES + r"([\d.]+),"),
    Claim(r"On this lesson's network: \d+ and (\d+)", _DERIVATIVES + r"[\d.]+, ([\d.]+)\n"),
    Claim(r"become (\d+), \d+ and \d+", _SUMMED + r"([\d.]+),"),
    Claim(r"become \d+, (\d+) and \d+", _SUMMED + r"[\d.]+, ([\d.]+),"),
    Claim(r"become \d+, \d+ and (\d+)", _SUMMED + r"[\d.]+, [\d.]+, ([\d.]+)\n"),
]
