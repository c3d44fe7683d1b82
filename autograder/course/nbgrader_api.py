"""nbgrader's own API, in this process: a course directory's configuration, and `generate_assignment`
without the seconds a `python -m nbgrader` process takes to start for each lesson."""

import io
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
    into the gradebook, its student version into release/. RuntimeError with nbgrader's log if it fails.

    This is `NbGraderAPI.generate_assignment` without its `capture_log`, whose bare `except:` would turn
    a Ctrl-C, or the SIGTERM that stops a run, into a lesson that failed to generate."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.converters import GenerateAssignment
    from nbgrader.utils import temp_attrs

    api = NbGraderAPI(config=course_config(course))
    api.log.setLevel(logging.ERROR)
    with gradebook.stamped_in_process(), temp_attrs(api.coursedir, assignment_id=assignment):
        app = GenerateAssignment(coursedir=api.coursedir, parent=api)
        app.force = app.create_assignment = True
        log = io.StringIO()
        handler = logging.StreamHandler(log)
        app.log.addHandler(handler)
        try:
            app.start()
        except Exception as error:
            raise RuntimeError(
                f"nbgrader generate_assignment {assignment} failed in {course}:\n{log.getvalue()}{error}"
            ) from error
        finally:
            app.log.removeHandler(handler)
