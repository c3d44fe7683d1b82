"""`make release` (`python -m autograder release`) in a copy of the repository: it regenerates the
student notebook of a lesson whose source changed, and only that one, and every one when the course's
nbgrader configuration changed. nbgrader's generate_assignment, in this process, says why a lesson failed,
and lets a Ctrl-C through as one."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbgrader.preprocessors import NbGraderPreprocessor

from autograder.course.layout import REPOSITORY, assignments
from autograder.course.release import add_lesson, write_config

LESSON = "01_saving_inputs"


def _release(repository: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-m", "autograder", "release"],
        cwd=repository,
        env=os.environ | {"PYTHONPATH": str(repository)},
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.splitlines()


def test_release_regenerates_only_the_lessons_whose_source_changed(tmp_path):
    repository = tmp_path / "repository"
    for part in ("autograder", "solutions", "course"):
        shutil.copytree(REPOSITORY / part, repository / part, ignore=shutil.ignore_patterns("__pycache__"))
    assert _release(repository) == ["course/ is up to date: no lesson's source or configuration changed"]

    source = repository / "solutions" / "source" / LESSON / f"{LESSON}.ipynb"
    notebook = nbformat.read(source, as_version=4)
    notebook.cells[0].source += "\n\nA sentence the instructor added."
    nbformat.write(notebook, source)
    before = {path.name: path.read_bytes() for path in (repository / "course").glob("*.ipynb")}
    assert _release(repository) == [f"wrote course/{LESSON}.ipynb"]
    after = {path.name: path.read_bytes() for path in (repository / "course").glob("*.ipynb")}
    assert [name for name in sorted(after) if after[name] != before[name]] == [f"{LESSON}.ipynb"]
    assert "A sentence the instructor added." in after[f"{LESSON}.ipynb"].decode()
    assert len(after) == len(assignments())


def test_release_regenerates_every_lesson_when_the_configuration_changed(tmp_path):
    """The answer cells' stub is nbgrader configuration: a new one reaches every course notebook."""
    repository = tmp_path / "repository"
    for part in ("autograder", "solutions", "course"):
        shutil.copytree(REPOSITORY / part, repository / part, ignore=shutil.ignore_patterns("__pycache__"))
    config = repository / "solutions" / "nbgrader_config.py"
    config.write_text(config.read_text().replace("not answered yet", "still to answer"))
    written = _release(repository)
    assert sorted(written) == [f"wrote course/{lesson}.ipynb" for lesson in assignments()]
    for lesson in assignments():
        assert "still to answer" in (repository / "course" / f"{lesson}.ipynb").read_text()


class Interrupted(NbGraderPreprocessor):
    """What a Ctrl-C does when it lands while nbgrader generates a lesson."""

    def preprocess(self, nb, resources):
        raise KeyboardInterrupt


class Broken(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        raise ValueError("a cell the instructor broke")


@pytest.mark.parametrize(
    ("preprocessor", "raised"), [(Interrupted, KeyboardInterrupt), (Broken, RuntimeError)]
)
def test_generating_a_lesson_stops_at_a_ctrl_c_and_says_why_it_failed(tmp_path, preprocessor, raised):
    # nbgrader's own place for a course's preprocessors, run after its own.
    write_config(
        tmp_path, extra=f"c.GenerateAssignment.preprocessors.append('{__name__}.{preprocessor.__name__}')\n"
    )
    with pytest.raises(raised) as error:
        add_lesson(tmp_path, LESSON)
    if raised is RuntimeError:
        assert f"nbgrader generate_assignment {LESSON} failed" in str(error.value)
        assert "a cell the instructor broke" in str(error.value)
