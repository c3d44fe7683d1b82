"""Lesson 06: the numbers its text states, each as its cell prints it."""

from claims import Claim

LESSON = "06_beyond_the_basics"

CLAIMS = [
    # One ratio printed: the same at every batch size.
    Claim(
        r"ignoring the flags does (\d+) times the arithmetic",
        r"MatMulEverything / MatMul, at every size: ([\d.]+)\n",
    ),
    Claim(r"from ([\d.]+) MiB at 512 rows", r"  512 rows: .*, and a ([\d.]+) MiB grad_x thrown away"),
    Claim(r"to (\d+) MiB at 8192", r"8192 rows: .*, and a ([\d.]+) MiB grad_x thrown away"),
    # What section 10's torch.func gives for the loss out**2.
    Claim(r"returns (\d+) without a word", r"torch\.func's grad\(grad\(loss\)\): (-?[\d.]+)\n"),
    Claim(
        r"\| `ExpInPlaceAsView` \|.*\| (\d+), silently wrong \|",
        r"ExpInPlaceAsView: .*\n    gradient through y: \[([\d.]+),",
    ),
    Claim(
        r"\| `ExpInPlaceOnCtx` \|.*\| (\d+), silently wrong \|",
        r"ExpInPlaceOnCtx: .*\n    gradient through y: \[([\d.]+),",
    ),
]
