"""Grades out to the LMS, as nbgrader export plugins that read the course's gradebook (`grades`):

    nbgrader export --exporter=autograder.lms.CanvasExporter --to canvas.csv
    nbgrader export --exporter=autograder.lms.MoodleExporter --to moodle.csv

`canvas` writes what Canvas's gradebook import takes, `moodle` what Moodle's "Import grades from CSV"
takes. What the LMS needs and nbgrader does not keep is set in nbgrader_config.py (each module says what).
The other way, `roster` turns an LMS's roster export into the CSV `nbgrader db student import` takes
(`python -m autograder roster`).
"""

from autograder.lms.canvas import CanvasExporter
from autograder.lms.moodle import MoodleExporter

__all__ = ["CanvasExporter", "MoodleExporter"]
