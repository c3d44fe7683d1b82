"""nbgrader's own API, in this process: a course directory's configuration, and `generate_assignment`
without the seconds a `python -m nbgrader` process takes to start for each lesson."""

import logging
from pathlib import Path

from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from autograder.records import gradebook


def course_config(course: Path) -> Config:
    """The course directory's nbgrader_config.py, as `nbgrader` run there would read it."""
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    config.CourseDirectory.root = str(course)
    return config


def generate_assignment(course: Path, assignment: str) -> None:
    """`nbgrader generate_assignment ASSIGNMENT --force` in `course`: the lesson's cells and points go
    into the gradebook, its student version into release/. RuntimeError with nbgrader's log if it fails."""
    from nbgrader.apps import NbGraderAPI

    api = NbGraderAPI(config=course_config(course))
    api.log.setLevel(logging.ERROR)
    with gradebook.stamped_in_process():
        result = api.generate_assignment(assignment, force=True)
    if not result["success"]:
        raise RuntimeError(
            f"nbgrader generate_assignment {assignment} failed in {course}:\n"
            f"{result.get('log', '')}{result.get('error', '')}"
        )
