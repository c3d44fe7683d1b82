"""Lesson 04: where and how far the path through grad_out outweighs the path through x and moves the
second derivative, and Cube's derivatives at 2."""

from claims import Claim

LESSON = "04_untracked_backward"

CLAIMS = [
    Claim(
        r"For \$\|x\|\$ below about ([\d.]+) the path through",
        r"the path through grad_out is the larger from \|x\| = ([\d.]+)",
    ),
    Claim(r"except from ([\d.]+) to [\d.]+, around", r"except from \|x\| = ([\d.]+) to"),
    Claim(r"except from [\d.]+ to ([\d.]+), around", r"except from \|x\| = [\d.]+ to ([\d.]+)"),
    Claim(r"varies: ([\d.]+) times the other", r"at \|x\| = 1, 1\.4, 1\.6: ([\d.]+),"),
    Claim(r"\$\|x\| = 1\$, ([\d.]+) times at 1\.4", r"at \|x\| = 1, 1\.4, 1\.6: [\d.]+, ([\d.]+),"),
    Claim(r"([\d.]+) times at 1\.6", r"at \|x\| = 1, 1\.4, 1\.6: [\d.]+, [\d.]+, ([\d.]+)"),
    Claim(r"off by up to (\d+) on this range", r"largest error, through x only:\s+([\d.]+e[-+]\d+)"),
    Claim(r"the first derivative is \$3 \\cdot 2\^2 = (\d+)\$", r"out = [\d.]+, grad_x = ([\d.]+), second"),
    Claim(r"and the second \$6 \\cdot 2 = (\d+)\$", r"grad_x = [\d.]+, second = ([\d.]+), third"),
    Claim(r"Even the third derivative, (\d+), comes out", r"second = [\d.]+, third = ([\d.]+)"),
]
