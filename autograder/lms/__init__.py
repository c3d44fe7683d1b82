"""Grades out to the LMS, as nbgrader export plugins that read the course's gradebook (`grades`):

    nbgrader export --exporter=autograder.lms.CanvasExporter --to canvas.csv
    nbgrader export --exporter=autograder.lms.MoodleExporter --to moodle.csv

`canvas` writes what Canvas's gradebook import takes, `moodle` what Moodle's "Import grades from CSV"
takes. What the LMS needs and nbgrader does not keep is set in nbgrader_config.py (each module says what).
The other way, `roster` turns an LMS's roster export into the CSV `nbgrader db student import` takes
(`python -m autograder roster`).
"""

import importlib

__all__ = ["CanvasExporter", "MoodleExporter"]

_EXPORTERS = {"CanvasExporter": "autograder.lms.canvas", "MoodleExporter": "autograder.lms.moodle"}


def __getattr__(name: str):
    """The exporters, imported when nbgrader asks for one: they import nbgrader, which the `roster`
    command living here, and every command's start, need not pay for."""
    if name in _EXPORTERS:
        return getattr(importlib.import_module(_EXPORTERS[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
