"""Generating the student notebooks in course/ from the instructor's sources, through nbgrader.

Each lesson's source notebook in solutions/source/ is the one place its solution and hidden tests are
written. nbgrader's generate_assignment strips them; the result is copied to course/<assignment>.ipynb,
which is never edited by hand. Each course notebook is stamped with the version of the source and of the
course's nbgrader configuration (its answer cells' stub, for one) it was made from, so that `make release`
regenerates only the lessons whose source changed, and every lesson when the configuration did.
"""

import hashlib
import json
import shutil
import tempfile
from pathlib import Path

from autograder.course.layout import COURSE_DIRECTORY, SOURCE, STUDENT_NOTEBOOKS, assignments
from autograder.course.version import source_version

# The metadata key, under "gradgrad", that tells which release version a course notebook was made from.
_STAMP = "generated_from"


def release_version(assignment: str) -> str:
    """A digest of what a lesson's course notebook is made from: its source and the course's nbgrader
    configuration, which generate_assignment reads."""
    configuration = (COURSE_DIRECTORY / "nbgrader_config.py").read_bytes()
    return hashlib.sha256(source_version(assignment).encode() + b"\0" + configuration).hexdigest()[:16]


def write_config(course: Path, extra: str = "") -> None:
    """Give an nbgrader course directory the course's configuration, plus any `extra` lines."""
    course.mkdir(parents=True, exist_ok=True)
    (course / "nbgrader_config.py").write_text((COURSE_DIRECTORY / "nbgrader_config.py").read_text() + extra)


def add_lesson(course: Path, assignment: str) -> None:
    """Copy a lesson's source into a course directory and register it, as an instructor's
    `nbgrader generate_assignment` does: its cells and points go into the gradebook."""
    from autograder.course.nbgrader_api import generate_assignment  # nbgrader only when it is needed

    shutil.copytree(SOURCE / assignment, course / "source" / assignment, dirs_exist_ok=True)
    generate_assignment(course, assignment)


def generate(destination: Path, lessons: list[str] | None = None) -> list[Path]:
    """Run nbgrader generate_assignment for `lessons` (every lesson by default) and write their
    course/-style notebooks to destination, each stamped with the version of the source it came from."""
    import nbformat  # only when a notebook is made: an up-to-date release answers without it

    destination.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as scratch:
        course = Path(scratch)
        write_config(course)
        for assignment in assignments() if lessons is None else lessons:
            add_lesson(course, assignment)
            notebook = nbformat.read(course / "release" / assignment / f"{assignment}.ipynb", as_version=4)
            notebook.metadata["gradgrad"] = {_STAMP: release_version(assignment)}
            target = destination / f"{assignment}.ipynb"
            nbformat.write(notebook, target)
            written.append(target)
    return written


def release() -> tuple[list[Path], list[Path]]:
    """Bring course/ up to date: regenerate the notebooks whose source or configuration changed since they
    were made, and remove those whose lesson is gone. Returns (written, removed)."""
    lessons = assignments()
    changed = [a for a in lessons if _generated_from(STUDENT_NOTEBOOKS / f"{a}.ipynb") != release_version(a)]
    gone = [p for p in STUDENT_NOTEBOOKS.glob("*.ipynb") if p.stem not in lessons]
    for path in gone:
        path.unlink()
    return generate(STUDENT_NOTEBOOKS, changed) if changed else [], gone


def _generated_from(path: Path) -> str | None:
    """The release version a course notebook is stamped with, or None."""
    try:
        return json.loads(path.read_text())["metadata"]["gradgrad"][_STAMP]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def stale() -> list[str]:
    """Lessons whose notebook in course/ differs from what their source generates now."""
    with tempfile.TemporaryDirectory() as scratch:
        fresh = {path.name: path.read_bytes() for path in generate(Path(scratch))}
    current = {path.name: path.read_bytes() for path in STUDENT_NOTEBOOKS.glob("*.ipynb")}
    return sorted(name for name in fresh.keys() | current.keys() if fresh.get(name) != current.get(name))
