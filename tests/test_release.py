"""`make release` (`python -m autograder release`) in a copy of the repository: it regenerates the
student notebook of a lesson whose source changed, and only that one."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from autograder.course.layout import REPOSITORY, assignments

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
    assert _release(repository) == ["course/ is up to date: no lesson's source changed"]

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
