"""Versions of what a grade depends on besides the notebook: the grading code, and each lesson.

A notebook's grade is stale when the version it was graded under is not the version now. The code's
version also tells whether two machines of a Dask cluster would grade alike.
"""

import functools
import hashlib
import importlib.util
from pathlib import Path

from autograder.course.layout import SOURCE

_CODE_PACKAGES = ("autograder", "solutions")
# What only exports grades already made, or serves them to students: changing it regrades nothing.
_NOT_GRADING = ("lms", "serve")


@functools.cache
def code_version() -> str:
    """A digest of the installed grading code (every module of the autograder and the reference
    solutions), the same on two machines exactly when they would grade alike."""
    digest = hashlib.sha256()
    for package in _CODE_PACKAGES:
        root = Path(importlib.util.find_spec(package).origin).parent
        for path in sorted(root.rglob("*.py")):
            if package == "autograder" and path.relative_to(root).parts[0] in _NOT_GRADING:
                continue
            digest.update(f"{package}/{path.relative_to(root).as_posix()}\0".encode())
            digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def source_version(assignment: str, source: Path = SOURCE) -> str:
    """A digest of a lesson's source folder: its notebook (text, solution, test cells, hidden tests,
    points) and any file beside it."""
    digest = hashlib.sha256()
    folder = source / assignment
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and ".ipynb_checkpoints" not in p.parts):
        digest.update(f"{path.relative_to(folder).as_posix()}\0".encode())
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def lesson_version(assignment: str, source: Path = SOURCE) -> str:
    """What a grade of the lesson depends on besides the notebook: its source and the grading code."""
    versions = f"{source_version(assignment, source)}\0{code_version()}"
    return hashlib.sha256(versions.encode()).hexdigest()[:16]
