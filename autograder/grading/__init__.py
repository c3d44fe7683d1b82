"""A class run: `python -m autograder grade`, here (`pool`) or on a Dask cluster (`cluster`).

`run` reads the submissions, feeds the workers and records every result. Each `worker` is a warmed
template process (torch, matplotlib and the checks imported) that never runs student code itself: per
notebook it forks a confined executor (`autograder.sandbox`) and a judge (`autograder.judge`), so a
submission costs about the time of its own cells and no submission can touch another.
"""
