"""Lesson 04: where and how far the path through grad_out moves the second derivative, and Cube's
derivatives at 2."""

from claims import Claim

LESSON = "04_untracked_backward"

CLAIMS = [
    Claim(
        r"For \$\|x\|\$ below about ([\d.]+) the path through",
        r"the path through grad_out is the larger from \|x\| = ([\d.]+)",
    ),
    Claim(r"off by up to (\d+) on this range", r"largest error, through x only:\s+([\d.]+e[-+]\d+)"),
    Claim(r"the first derivative is \$3 \\cdot 2\^2 = (\d+)\$", r"out = [\d.]+, grad_x = ([\d.]+), second"),
    Claim(r"and the second \$6 \\cdot 2 = (\d+)\$", r"grad_x = [\d.]+, second = ([\d.]+), third"),
    Claim(r"Even the third derivative, (\d+), comes out", r"second = [\d.]+, third = ([\d.]+)"),
]
