"""Running nbgrader, from its command line or its gradebook API, the way an instructor runs it."""

import os
import subprocess
import sys
from pathlib import Path


def put_nbgrader_tools_on_path() -> None:
    """nbgrader's gradebook runs the `alembic` executable by name, so the interpreter's bin directory
    must be on PATH even when the virtual environment was never activated."""
    bin_directory = str(Path(sys.executable).parent)
    path = os.environ.get("PATH", "")
    if bin_directory not in path.split(os.pathsep):
        os.environ["PATH"] = os.pathsep.join([bin_directory, path])


def run_nbgrader(*arguments: str, course: Path) -> subprocess.CompletedProcess:
    """`nbgrader ARGUMENTS` in the course directory, raising on failure with nbgrader's output."""
    put_nbgrader_tools_on_path()
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *arguments], cwd=course, capture_output=True, text=True
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"nbgrader {' '.join(arguments)} failed in {course}:\n{result.stdout}{result.stderr}"
        )
    return result
