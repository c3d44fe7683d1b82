"""Generating the student notebooks in course/ from the instructor's sources, through nbgrader.

Each lesson's source notebook in solutions/source/ is the one place its solution and hidden tests are
written. nbgrader's generate_assignment strips them; the result is copied to course/<assignment>.ipynb,
which is never edited by hand.
"""

import shutil
import tempfile
from pathlib import Path

from autograder.course.layout import COURSE_DIRECTORY, SOURCE, STUDENT_NOTEBOOKS, assignments
from autograder.course.nbgrader_cli import run_nbgrader


def write_config(course: Path, extra: str = "") -> None:
    """Give an nbgrader course directory the course's configuration, plus any `extra` lines."""
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text((COURSE_DIRECTORY / "nbgrader_config.py").read_text() + extra)


def add_lesson(course: Path, assignment: str) -> None:
    """Copy a lesson's source into a course directory and register it, as an instructor's
    `nbgrader generate_assignment` does: its cells and points go into the gradebook."""
    shutil.copytree(SOURCE / assignment, course / "source" / assignment, dirs_exist_ok=True)
    run_nbgrader("generate_assignment", assignment, "--force", course=course)


def generate(destination: Path) -> list[Path]:
    """Run nbgrader generate_assignment for every lesson; write course/-style notebooks to destination."""
    destination.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        course = Path(scratch)
        write_config(course)
        for assignment in assignments():
            add_lesson(course, assignment)
            target = destination / f"{assignment}.ipynb"
            shutil.copy(course / "release" / assignment / f"{assignment}.ipynb", target)
            written.append(target)
    return written


def stale() -> list[str]:
    """Lessons whose notebook in course/ differs from what their source generates now."""
    with tempfile.TemporaryDirectory() as scratch:
        fresh = {path.name: path.read_bytes() for path in generate(Path(scratch))}
    current = {path.name: path.read_bytes() for path in STUDENT_NOTEBOOKS.glob("*.ipynb")}
    return sorted(name for name in fresh.keys() | current.keys() if fresh.get(name) != current.get(name))
