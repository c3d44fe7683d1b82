"""A control group per notebook: caps the memory and the number of processes of all its processes
together, however many it forks. cgroup v1 (separate `memory` and `pids` hierarchies) or v2."""

import contextlib
import functools
import os
import signal
import time
import uuid
from pathlib import Path

# Every group this grader makes is named so; a run's groups also carry the run's own name after it.
_PREFIX = "gradgrad-"


@functools.cache
def _mounts() -> dict[str, Path]:
    """Where each controller's hierarchy is mounted ("" for cgroup v2), from this process's view."""
    mounts = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields, _, tail = line.partition(" - ")
        fstype, _, options = tail.split()[:3]
        if fstype == "cgroup2":
            mounts.setdefault("", Path(fields.split()[4]))
        elif fstype == "cgroup":
            for controller in {"memory", "pids"} & set(options.split(",")):
                mounts[controller] = Path(fields.split()[4])
    return mounts


@functools.cache
def _parents() -> dict[str, Path]:
    """The folder of this process's own group, for each controller it can create subgroups under."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            if controller in _mounts():
                own[controller] = _mounts()[controller] / path.lstrip("/")
    if "memory" in own and "pids" in own:
        return {"memory": own["memory"], "pids": own["pids"]}
    if "" in own and {"memory", "pids"} <= set((own[""] / "cgroup.subtree_control").read_text().split()):
        return {"": own[""]}
    return {}


def problem() -> str | None:
    """Why per-notebook groups cannot be made here, or None when they can."""
    parents = _parents()
    if not parents:
        return (
            "cgroup memory and pids controllers for sub-groups of the grader's own group (cgroup v1"
            " `memory` and `pids` hierarchies, or cgroup v2 with `memory pids` in the grader's"
            " cgroup.subtree_control, e.g. a systemd unit with Delegate=yes)"
        )
    unwritable = [str(p) for p in parents.values() if not os.access(p, os.W_OK)]
    if unwritable:
        return f"write access to the grader's cgroup ({', '.join(unwritable)}): run as root or delegate it"
    return None


def describe() -> str:
    """Which cgroup version notebooks get their groups under, where, and whether the grader may."""
    parents = _parents()
    if not parents:
        return "none with memory and pids for sub-groups"
    version = "v2" if "" in parents else "v1"
    where = ", ".join(str(p) for p in parents.values())
    return f"{version} under {where} ({'writable' if problem() is None else 'not writable'})"


class Cgroup:
    """One notebook's group: made with its limits, joined by the notebook's first process, removed when
    every process in it has gone."""

    def __init__(self, memory_bytes: int, max_processes: int, group: str = "") -> None:
        name = f"{_PREFIX}{group}{uuid.uuid4().hex[:12]}"
        self.folders = [parent / name for parent in _parents().values()]
        for folder in self.folders:
            folder.mkdir()
        if len(self.folders) == 2:
            memory, pids = self.folders
            _write(memory / "memory.limit_in_bytes", memory_bytes)
            # Without swap accounting the file is absent and swap is not limited apart from memory.
            with contextlib.suppress(FileNotFoundError):
                _write(memory / "memory.memsw.limit_in_bytes", memory_bytes)
        else:
            (memory,) = (pids,) = self.folders
            _write(memory / "memory.max", memory_bytes)
            with contextlib.suppress(FileNotFoundError):
                _write(memory / "memory.swap.max", 0)
        _write(pids / "pids.max", max_processes)
        self._events = memory / ("memory.oom_control" if len(self.folders) == 2 else "memory.events")

    def join(self) -> None:
        """Move the calling process into the group; its children are born in it."""
        for folder in self.folders:
            _write(folder / "cgroup.procs", os.getpid())

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the group for exceeding its memory."""
        for line in self._events.read_text().splitlines():
            key, _, count = line.partition(" ")
            if key == "oom_kill":
                return int(count) > 0
        return False

    def remove(self) -> None:
        """Remove the group. The caller has reaped every process in it; a dying process may still be
        leaving, so removal is retried for a moment."""
        for folder in self.folders:
            _remove(folder)


def remove_leftovers(group: str) -> None:
    """Remove the cgroups named with `group` that their notebooks left behind, killed with their
    worker before they could remove them; a process still in one is killed first."""
    for parent in _parents().values():
        for folder in parent.glob(f"{_PREFIX}{group}*"):
            with contextlib.suppress(FileNotFoundError):
                if (folder / "cgroup.kill").exists():
                    _write(folder / "cgroup.kill", 1)
                else:
                    for pid in (folder / "cgroup.procs").read_text().split():
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(int(pid), signal.SIGKILL)
            _remove(folder)


def _remove(folder: Path) -> None:
    """rmdir, retried for a moment while the group's last processes leave."""
    for _ in range(100):
        try:
            folder.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01)


def _write(path: Path, value: int) -> None:
    path.write_text(str(value))
