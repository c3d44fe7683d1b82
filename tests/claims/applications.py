"""Lesson 05: the numbers its text states, each as its cell prints it.

The settings the text restates (learning rates, step counts, the critic's weights) are the code's own
inputs, not results, and are not listed.
"""

from claims import Claim

LESSON = "05_applications"

CLAIMS = [
    Claim(r"a Hessian of \$10\^\{(\d+)\}\$ numbers", r"a Hessian of 1e\+(\d+) numbers"),
    Claim(r"numbers, (\d+) TB in float64", r"numbers, (\d+) TB in float64"),
    Claim(r"against (\d+) MB for one", r"one H·v of (\d+) MB"),
    Claim(r"\\lVert w\\rVert = ([\d.]+)\$: the penalty", r"‖w‖ = ([\d.]+), penalty"),
    Claim(r"the penalty is \$([\d.]+)\$", r"penalty = ([\d.]+), d penalty"),
    Claim(r"its gradient \$\(([\d.]+), [\d.]+\)\$", r"d penalty / dw = \[([\d.]+), [\d.]+\]"),
    Claim(r"its gradient \$\([\d.]+, ([\d.]+)\)\$", r"d penalty / dw = \[[\d.]+, ([\d.]+)\]"),
    Claim(r"0\.8\^\{30\} \\approx ([\d.]+)\\times 10\^\{-3\}", r"\|x - 1\| shrank by ([\d.]+)e-03"),
    Claim(
        r"autograd sees slope \$(-\d+)\$ everywhere", r"without create_graph: dz/dx = (-[\d.]+) at the start"
    ),
    Claim(r"every step adds \$([\d.]+)\$ to", r"each step adds ([\d.]+), and after 30 steps"),
    Claim(r"stops there, at about \$([\d.]+)\$", r"inside: after 30 steps x = ([\d.]+)"),
]
