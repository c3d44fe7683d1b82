"""Code that decides verdicts. It never runs student code and never imports `autograder.probe`.

It draws a check's inputs, computes the reference's values and derivatives, and compares them with the
plain numbers that a probe measured in the student's process.
"""
