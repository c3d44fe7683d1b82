"""The Binder launch: repo2docker accepts binder/, and binder/requirements.txt alone gives an environment
that runs every solved lesson, checks and all, within Binder's memory. (The release, whose exercises
fail, is run in JupyterLab: test_jupyterlab.)

The environment is built the way repo2docker builds it (`pip install -r binder/requirements.txt` from a
copy of the repository) in a fresh virtual environment, and each notebook runs in a kernel of that
environment, so a dependency that only this machine's `.venv` provides makes these tests fail.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import venv
from pathlib import Path

import pytest
from grading_pipeline import solution_answers, submission
from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager
from notebook_runs import (
    PNG,
    SVG,
    errors,
    execute,
    record_peaks,
    rendered,
    wrote_to_stderr,
)
from packaging.requirements import Requirement
from packaging.version import Version

from autograder.course.layout import REPOSITORY, assignments

LESSONS = assignments()
REQUIREMENTS = REPOSITORY / "binder" / "requirements.txt"
PYTORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
# Binder gives a session 2 GB at most; JupyterLab's server and the browser's tab need some of it.
KERNEL_MEMORY_BUDGET_MIB = 1536

pytestmark = pytest.mark.xdist_group("binder")


def _requirement_lines() -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in REQUIREMENTS.read_text().splitlines())
    return [line for line in lines if line]


def test_binder_pins_the_cpu_build_of_the_torch_that_pyproject_pins():
    lines = _requirement_lines()
    assert f"--extra-index-url {PYTORCH_CPU_INDEX}" in lines
    (torch,) = [Requirement(line) for line in lines if line.startswith("torch")]
    (pinned,) = [Version(spec.version) for spec in torch.specifier if spec.operator == "=="]
    assert pinned.local == "cpu", "pin the CPU build (torch==X+cpu): the default one brings GBs of CUDA"
    project = tomllib.loads((REPOSITORY / "pyproject.toml").read_text())["project"]
    (course_torch,) = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "torch"]
    assert course_torch.specifier.contains(pinned), (torch, course_torch)
    # The course itself, which brings pyproject.toml's other dependencies at the versions it names.
    assert "." in lines


def test_readme_launches_binder_on_the_course():
    launches = re.findall(r"\(https://mybinder\.org/v2/gh/([^)]*)\)", (REPOSITORY / "README.md").read_text())
    assert len(launches) >= 2, "the README needs a Binder badge and a launch link"
    for launch in launches:
        assert launch == "gradgrad/gradgrad/main?urlpath=lab/tree/course", launch
    assert (REPOSITORY / "course").is_dir()


def test_repo2docker_accepts_the_repository():
    # Binder builds as user 1000, who then owns the copied repository and can build `.` in it.
    repo2docker = Path(sys.executable).with_name("jupyter-repo2docker")
    binder_user = ["--user-id", "1000", "--user-name", "jovyan"]
    result = subprocess.run(
        [repo2docker, "--no-build", "--debug", *binder_user, str(REPOSITORY)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    dockerfile, log = result.stdout, result.stderr
    assert "Building conda environment for python=3.11" in log, log
    assert "apt-get install --yes --no-install-recommends graphviz" in dockerfile
    # `.` needs the whole repository in place, so requirements are installed after it is copied.
    install = dockerfile.index('pip install --no-cache-dir -r "binder/requirements.txt"')
    assert dockerfile.index("src/ ${REPO_DIR}/") < install
    # Then binder/postBuild, which makes its JupyterLab a student's.
    assert install < dockerfile.index("RUN ./binder/postBuild")


def _copy_of_the_repository(destination: Path) -> Path:
    """The files git tracks or would track: what Binder clones and repo2docker copies into the image."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for name in filter(None, listed.split("\0")):
        if (REPOSITORY / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPOSITORY / name, destination / name)
    return destination


@pytest.fixture(scope="module")
def binder_python(tmp_path_factory) -> Path:
    """The Python of a fresh virtual environment built from binder/requirements.txt alone."""
    scratch = tmp_path_factory.mktemp("binder")
    repository = _copy_of_the_repository(scratch / "repository")
    venv.create(scratch / "venv", with_pip=True)
    python = scratch / "venv" / "bin" / "python"
    # The file's extra index (PyTorch's CPU wheels) may be out of reach, as on machines that see only
    # PyPI: pip then retries it five times with back-off for every package, over ten minutes here.
    # `--retries 0` lets pip pass over an unreachable index at once; it changes nothing where the index
    # answers. torch then comes from a local copy of the same CPU wheel, if pip's find-links has one.
    result = subprocess.run(
        [python, "-m", "pip", "install", "--retries", "0", "-r", "binder/requirements.txt"],
        cwd=repository,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return python


def test_binder_environment_has_the_cpu_torch_and_the_course_installed(binder_python, tmp_path):
    probe = "import autograder, torch; print(torch.__version__); print(autograder.__file__)"
    result = subprocess.run(
        [binder_python, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    torch_version, autograder_file = result.stdout.split()
    assert torch_version == "2.13.0+cpu"
    assert Path(autograder_file).is_relative_to(binder_python.parent.parent), autograder_file
    installed = subprocess.run(
        [binder_python, "-m", "pip", "list", "--format=json"], capture_output=True, text=True, check=True
    ).stdout
    assert not [package["name"] for package in json.loads(installed) if package["name"].startswith("nvidia")]


def test_binder_environment_has_the_course_jupyterlab_settings(binder_python):
    """Binder's JupyterLab reads its defaults from the environment: the package installs them there."""
    installed = binder_python.parent.parent / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert installed.read_text() == (REPOSITORY / "lab-settings" / "overrides.json").read_text()


def test_binder_jupyterlab_is_a_students_validate_without_the_instructors_tools(binder_python):
    """binder/postBuild, as repo2docker runs it (from the repository, the environment's python first on
    PATH), leaves nbgrader's Validate and disables its formgrader, create assignment, course list and
    assignment list, in the server and in JupyterLab (the browser test checks the same settings' menus)."""
    environment = {**os.environ, "PATH": f"{binder_python.parent}{os.pathsep}{os.environ['PATH']}"}
    subprocess.run(["./binder/postBuild"], cwd=REPOSITORY, env=environment, check=True)
    jupyter = binder_python.with_name("jupyter")

    def listed(*command: str) -> str:
        result = subprocess.run([jupyter, *command, "list"], env=environment, capture_output=True, text=True)
        return re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)

    servers = dict(
        re.findall(r"(nbgrader\.server_extensions\.\w+) (enabled|disabled)", listed("server", "extension"))
    )
    assert servers == {
        "nbgrader.server_extensions.formgrader": "disabled",
        "nbgrader.server_extensions.validate_assignment": "enabled",
        "nbgrader.server_extensions.assignment_list": "disabled",
        "nbgrader.server_extensions.course_list": "disabled",
    }
    plugins = listed("labextension").split("Disabled extensions:")[-1].split()
    assert sorted(plugins) == [
        "@jupyter/nbgrader:assignment-list",
        "@jupyter/nbgrader:course-list",
        "@jupyter/nbgrader:create-assignment",
        "@jupyter/nbgrader:formgrader",
        "@jupyter/nbgrader:menu",
    ]


def _run_in_binder_kernel(python: Path, notebook, workdir: Path) -> dict[int, int]:
    """Run the notebook in a kernel of the Binder environment; return each process's peak memory (MiB).

    The kernel's processes are the kernel itself and the checker it starts; each check's forked child
    shares the checker's memory and lives a few milliseconds. Peaks are read after every cell.
    """
    specs = workdir / "kernels" / "binder"
    specs.mkdir(parents=True)
    argv = [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (specs / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "Binder", "language": "python"})
    )
    kernels = AsyncKernelManager(
        kernel_name="binder", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(specs.parent)])
    )
    peaks: dict[int, int] = {}
    execute(
        notebook,
        workdir,
        km=kernels,
        on_cell_executed=lambda **_: record_peaks(kernels.provisioner.pid, peaks),
    )
    return peaks


def _report_memory(record_property, peaks: dict[int, int]) -> int:
    total = sum(peaks.values())
    kernel, *others = peaks.values()
    record_property("peak memory, MiB", f"{total} (kernel {kernel}, checker {sum(others)})")
    return total


@pytest.mark.parametrize("lesson", LESSONS)
def test_binder_runs_the_solved_lesson_without_an_error(lesson, binder_python, tmp_path, record_property):
    notebook = submission(lesson, solution_answers(lesson))
    peaks = _run_in_binder_kernel(binder_python, notebook, tmp_path)
    assert errors(notebook) == {}
    assert rendered(notebook, SVG) >= 1
    assert rendered(notebook, PNG) >= 1
    assert not wrote_to_stderr(notebook), "a cell wrote to stderr"
    assert _report_memory(record_property, peaks) < KERNEL_MEMORY_BUDGET_MIB
