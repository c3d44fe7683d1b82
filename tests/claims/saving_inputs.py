"""Lesson 01: the errors of central differences at gradcheck's step, and Square's second derivative."""

from claims import Claim

LESSON = "01_saving_inputs"

CLAIMS = [
    Claim(
        r"float32's estimate of 3 is off by ([\d.]+e[-+]\d+)",
        r"float32\s+error at eps = 1e-6: ([\d.]+e[-+]\d+)",
    ),
    Claim(r"float64's is off by ([\d.]+e[-+]\d+)", r"float64\s+error at eps = 1e-6: ([\d.]+e[-+]\d+)"),
    Claim(r"Differentiating it again gives (\d+)\.", r"grad_x = 3\.0, second derivative = ([\d.]+)"),
]
