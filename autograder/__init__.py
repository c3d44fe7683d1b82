"""Grading library for the gradgrad course: the checks lessons call, graph drawing and timing.

Notebooks import from here; `python -m autograder` is the instructor's command line. Names load on
first use, so that the command line and the checker process itself never start a checker.
"""

import importlib

_PUBLIC = {
    "check_forward": "autograder.checks",
    "check_result": "autograder.checks",
    "check_first_derivative": "autograder.checks",
    "check_second_derivative": "autograder.checks",
    "draw_graph": "autograder.graphs",
    "saved_bytes": "autograder.graphs",
    "TinyNet": "autograder.models",
    "make_input": "autograder.models",
    "milliseconds": "autograder.timing",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'autograder' has no attribute {name!r}")
    return getattr(importlib.import_module(_PUBLIC[name]), name)
