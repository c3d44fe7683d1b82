"""Lesson 07: the numbers its text states, each as its cell prints it.

None: its text states results in words (which Jacobian is faster, which Hessian is right), and restates
only the code's own settings (sizes, repeats, the hidden width, and the ratio of passes two sizes make) as
numbers.
"""

LESSON = "07_forward_mode"

CLAIMS = []
