"""Grading a whole class: `python -m autograder grade SUBMITTED --out DIR`.

Submissions run in parallel workers. Each worker is a warmed template process (torch, matplotlib and
the checks already imported) that never runs student code itself: for every notebook it forks a fresh
executor and a fresh pristine checker, so a submission costs about the time of its own cells, and no
submission can touch another. Results land in an nbgrader gradebook, so nbgrader's export, formgrader
and generate_feedback keep working.
"""
