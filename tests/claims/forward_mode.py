"""Lesson 07: the numbers its text states, each as its cell prints it."""

from claims import Claim

LESSON = "07_forward_mode"

CLAIMS = [
    Claim(r"and its gradient is a silent (\d+)\.", r"ExpInPlaceAsView: .*gradient through y: \[([\d.]+),"),
]
