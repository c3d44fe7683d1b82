"""Lesson 03: the gradients XExpSpy's backward receives in each call."""

from claims import Claim

LESSON = "03_saving_intermediates"

CLAIMS = [
    Claim(
        r"In the second call `grad_expx = ([\d.]+)`",
        r"second backward:\n  backward receives grad_out = [\d.]+, grad_expx = ([\d.]+)",
    ),
    Claim(
        r"the first backward's `grad_out` of (\d+)\)",
        r"first backward:\n  backward receives grad_out = ([\d.]+)",
    ),
]
