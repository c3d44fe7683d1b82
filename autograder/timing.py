"""Timing code in lessons, the same way in every lesson, so that a plot shows what the code costs and not
what else the machine was doing."""

import time
from collections.abc import Callable

import torch


def milliseconds(run: Callable, *args, min_repeats: int = 5, min_seconds: float = 0.05) -> float:
    """The fastest of many runs of run(*args), in milliseconds, on one thread, after a warm-up run.

    One thread: a second core is shared with whatever else runs, and its speed changes with it. The
    warm-up run pays for allocations and lazy initialisation. Runs repeat until there are `min_repeats`
    of them and `min_seconds` have passed; the fastest is the one least disturbed, since disturbances only
    ever add time.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        run(*args)
        fastest, runs, start = float("inf"), 0, time.perf_counter()
        while runs < min_repeats or time.perf_counter() - start < min_seconds:
            before = time.perf_counter()
            run(*args)
            fastest = min(fastest, time.perf_counter() - before)
            runs += 1
        return 1e3 * fastest
    finally:
        torch.set_num_threads(threads)
