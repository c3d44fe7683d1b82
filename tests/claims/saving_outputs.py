"""Lesson 02: the gradient of w that a backward changing grad_out in place spoils."""

from claims import Claim

LESSON = "02_saving_outputs"

_GRAD_W = r"Tanh: grad_x = [\d.]+, grad_w = ([\d.]+)"  # the right Tanh's line, printed first

CLAIMS = [
    Claim(r"the gradient of `w` should be (\d+)\.", _GRAD_W),
    Claim(r"instead of (\d+), with no error, because the backward of `out \+ w`", _GRAD_W),
]
