"""The confinement of a grader that is not root: its notebooks keep its uid, in user namespaces of their
own, under a cgroup delegated to it. The attacks of test_confine run at Landlock ABI 1, the weakest,
as an unprivileged user, where notebooks own the instructor's files.

As root (as in CI) the test makes that user, delegates it a child of this process's cgroup, and runs
the attacks as it with the system's Python 3.11 and this venv's packages (the venv's own interpreter
lies under root's home, which other users cannot enter).
"""

import contextlib
import os
import pwd
import re
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.sandbox import cgroup

REPO = Path(__file__).resolve().parent.parent
USER = "gradgrad-grader"
# Those of test_confine's attacks that a grader's own uid could win: files, processes, network, limits.
ATTACKS = "(abi1 or capped or close_leaves) and not memory"


@pytest.fixture(scope="module")
def grader_user() -> pwd.struct_passwd:
    """An unprivileged user, made once on a machine that lacks it."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(USER)
    subprocess.run(["useradd", "--create-home", "--shell", "/usr/sbin/nologin", USER], check=True)
    return pwd.getpwnam(USER)


@pytest.fixture(scope="module")
def delegated_cgroup(grader_user):
    """A child of this process's cgroup for each controller, owned by the user, as systemd's Delegate=
    makes one; removed afterwards with whatever is left in it."""
    folders = [parent / f"gradgrad-user-{os.getpid()}" for parent in cgroup._parents().values()]
    for folder in folders:
        folder.mkdir()
        for path in [folder, *folder.iterdir()]:
            os.chown(path, grader_user.pw_uid, grader_user.pw_gid)
    yield folders
    for folder in folders:
        for child in folder.iterdir():
            if child.is_dir():
                child.rmdir()
        folder.rmdir()


@pytest.fixture
def as_user_folder(grader_user):
    """A folder of the user's beside the repository (outside /tmp, which sandboxes see replaced)."""
    folder = Path(tempfile.mkdtemp(prefix=".as-user-", dir=REPO))
    os.chown(folder, grader_user.pw_uid, grader_user.pw_gid)
    yield folder
    shutil.rmtree(folder)


def test_a_grader_that_is_not_root_confines_its_notebooks_at_the_oldest_landlock(
    grader_user, delegated_cgroup, as_user_folder
):
    assert os.geteuid() == 0, "run as root (as CI does): it makes the unprivileged user"
    joins = " && ".join(f"echo $$ > {folder}/cgroup.procs" for folder in delegated_cgroup)
    pytest_command = [
        "/usr/bin/python3", "-m", "pytest", "-v", "-p", "no:cacheprovider", "-k", ATTACKS,
        str(REPO / "tests" / "test_confine.py"),
    ]  # fmt: skip
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": grader_user.pw_dir,
        "PYTHONPATH": os.pathsep.join([*site.getsitepackages(), str(REPO)]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    finished = subprocess.run(
        ["/bin/sh", "-c", f'{joins} && exec "$@"', "sh", *pytest_command],
        cwd=as_user_folder,
        env=environment,
        user=grader_user.pw_uid,
        group=grader_user.pw_gid,
        extra_groups=[],
        capture_output=True,
        text=True,
        timeout=300,
    )
    print(finished.stdout[-2000:], finished.stderr[-2000:], file=sys.stderr)
    assert finished.returncode == 0, finished.stdout[-4000:] + finished.stderr[-2000:]
    summary = finished.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"=+ \d+ passed, \d+ deselected in [\d.]+s =+", summary), summary
