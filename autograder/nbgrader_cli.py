"""Running nbgrader's own command line from Python, the way an instructor runs it."""

import os
import subprocess
import sys
from pathlib import Path


def run_nbgrader(*arguments: str, course: Path) -> subprocess.CompletedProcess:
    """`nbgrader ARGUMENTS` in the course directory, raising on failure with nbgrader's output.

    nbgrader calls the `alembic` executable by name, so the interpreter's bin directory goes on PATH
    even when the virtual environment was never activated.
    """
    bin_directory = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": os.pathsep.join([bin_directory, os.environ.get("PATH", "")])}
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *arguments],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(
            f"nbgrader {' '.join(arguments)} failed in {course}:\n{result.stdout}{result.stderr}"
        )
    return result
