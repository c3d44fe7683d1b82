"""The grader under cgroup v2, on this host's real unified hierarchy: what it decides a group lacks, and
its move into a leaf child (the kernel enables controllers for a group's children only in a group
holding no process). This host's cgroup v2 offers no memory or pids, so the step that enables them
must fail here as the kernel refuses it; the move must not."""

import errno
import os
import subprocess
from pathlib import Path

import pytest

from autograder.sandbox import cgroup

UNIFIED = Path("/sys/fs/cgroup/unified")


@pytest.fixture
def scratch_group():
    """A child of the unified hierarchy's root, removed afterwards with the groups in it (their processes
    are ended by whoever started them)."""
    assert os.geteuid() == 0, "run as root (as CI does): it makes a cgroup v2 group"
    folder = UNIFIED / f"gradgrad-scratch-{os.getpid()}"
    folder.mkdir()
    yield folder
    for group in [*(child for child in folder.iterdir() if child.is_dir()), folder]:
        cgroup._remove(group)


@pytest.fixture
def sleeper_in():
    """Start a process in a group; each is killed and reaped afterwards."""
    started = []

    def start(group: Path) -> int:
        started.append(subprocess.Popen(["sleep", "60"]))
        (group / "cgroup.procs").write_text(str(started[-1].pid))
        return started[-1].pid

    yield start
    for sleeper in started:
        sleeper.kill()
        sleeper.wait()


def _grader_moving_into_leaf(group: Path, sleeper_in) -> tuple[int, str, int, int]:
    """A forked child, moved into `group`, that does what `cgroup.prepare` does for a grader there
    (which this host's cgroup v1 keeps it from choosing): removes the empty leaves, moves the group's
    processes into its own leaf, then enables memory and pids. Returns its pid, the group it found
    itself in after the move, the errno the enabling failed with (0 if it succeeded), and the process
    a grader of the same pid left in a leaf of the same name."""
    go_read, go_write = os.pipe()
    report_read, report_write = os.pipe()
    pid = os.fork()
    if pid == 0:
        status = 255  # the move failed: nothing is reported
        try:
            os.read(go_read, 1)
            own = cgroup._own()[""]
            cgroup._remove_empty_leaves(own)
            cgroup._enter_leaf(own, own / f"gradgrad-grader-{os.getpid()}")
            os.write(report_write, str(cgroup._own()[""]).encode())
            status = 0
            cgroup._enable(own)
        except OSError as error:
            status = error.errno if status == 0 else status
        finally:
            os._exit(status)
    os.close(report_write)
    (group / "cgroup.procs").write_text(str(pid))
    # A leaf of the same name, left by an earlier grader whose pid this child reuses, and not empty.
    (group / f"gradgrad-grader-{pid}").mkdir()
    left_behind = sleeper_in(group / f"gradgrad-grader-{pid}")
    os.write(go_write, b"x")
    after = os.read(report_read, 4096).decode()
    _, status = os.waitpid(pid, 0)
    return pid, after, os.waitstatus_to_exitcode(status), left_behind


def test_every_process_of_the_graders_group_moves_into_its_leaf_before_controllers_are_enabled(
    scratch_group, sleeper_in
):
    classmate = sleeper_in(scratch_group)  # another process of the grader's group, as under a scope
    (scratch_group / "gradgrad-grader-1").mkdir()
    living = sleeper_in(scratch_group / "gradgrad-grader-1")  # a leaf whose grader still lives
    (scratch_group / "gradgrad-grader-2").mkdir()  # an empty leaf an earlier grader left

    pid, after, enabling_errno, left_behind = _grader_moving_into_leaf(scratch_group, sleeper_in)

    leaf = scratch_group / f"gradgrad-grader-{pid}"
    assert after == str(leaf)
    assert (scratch_group / "cgroup.procs").read_text().split() == []
    assert sorted((leaf / "cgroup.procs").read_text().split()) == sorted([str(classmate), str(left_behind)])
    assert (scratch_group / "gradgrad-grader-1" / "cgroup.procs").read_text().split() == [str(living)]
    assert not (scratch_group / "gradgrad-grader-2").exists()
    # The hierarchy gives this group no memory or pids, so the kernel refuses them to its children.
    assert cgroup._words(scratch_group / "cgroup.controllers") == set()
    assert enabling_errno == errno.ENOENT


def test_a_cgroup_v2_group_without_memory_and_pids_is_reported_with_the_delegation_fix(scratch_group):
    plan = cgroup._plan_v2(scratch_group)
    assert plan.parents == {}
    assert plan.lack == (
        f"cgroup v2 memory and pids controllers delegated to the grader's group ({scratch_group} offers:"
        " none): as a user, start the grader in a systemd scope that delegates its cgroup to you:"
        " `systemd-run --user --scope -p Delegate=yes python -m autograder grade ...`; in Docker, start"
        " the container with --privileged --cgroupns=private"
    )
    offered = " ".join(sorted(cgroup._words(UNIFIED / "cgroup.controllers"))) or "none"
    assert f"({UNIFIED} offers: {offered})" in cgroup._plan_v2(UNIFIED).lack


def test_a_cgroup_v2_group_outside_the_mount_is_reported_with_dockers_fix():
    hidden = UNIFIED / "system.slice" / "docker-0.scope"
    assert cgroup._plan_v2(hidden).lack == (
        f"the grader's cgroup v2 group, {hidden}, which lies outside the cgroup mounted here: in Docker,"
        " start the container with --cgroupns=private"
    )
