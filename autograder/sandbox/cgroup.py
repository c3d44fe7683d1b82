"""A control group per notebook: caps the memory and the number of processes of all its processes
together, however many it forks. cgroup v1 (separate `memory` and `pids` hierarchies) or v2."""

import contextlib
import dataclasses
import errno
import functools
import os
import signal
import threading
import time
import uuid
from pathlib import Path

# Every group this grader makes is named so; a run's groups also carry the run's own name after it.
_PREFIX = "gradgrad-"
# With cgroup v2, the child of the grader's own group that the group's processes move into.
_LEAF = f"{_PREFIX}grader-"
_CONTROLLERS = ("memory", "pids")
_DELEGATE = (
    "as a user, start the grader in a systemd scope that delegates its cgroup to you:"
    " `systemd-run --user --scope -p Delegate=yes python -m autograder grade ...`;"
    " in Docker, start the container with --privileged --cgroupns=private"
)
_NO_CGROUP = (
    "cgroup memory and pids controllers for sub-groups of the grader's own group (cgroup v1"
    " `memory` and `pids` hierarchies, or cgroup v2 with both controllers delegated)"
)
_UNDELEGATED = (
    "cgroup v2 memory and pids controllers delegated to the grader's group ({group} offers: {available}): "
    + _DELEGATE
)
_HIDDEN = (
    "the grader's cgroup v2 group, {group}, which lies outside the cgroup mounted here:"
    " in Docker, start the container with --cgroupns=private"
)
_preparing = threading.Lock()
_prepared: list = []  # holds the plan once `prepare` has carried it out in this process


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


def _own() -> dict[str, Path]:
    """The folder of this process's own group, for each controller mounted here ("" for cgroup v2). Read
    at every call: a process moves."""
    own = {}
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            if controller in _mounts():
                own[controller] = _mounts()[controller] / path.lstrip("/")
    return own


@dataclasses.dataclass(frozen=True)
class _Plan:
    """Where notebooks' groups go, and what the grader does first; or why no group can be made."""

    parents: dict[str, Path]  # the folder per controller ("" for v2); {} when no group can be made
    leaf: Path | None = None  # v2: the child of the grader's own group its processes move into first
    lack: str = ""  # why no group can be made, with the fix


def _plan(own: dict[str, Path]) -> _Plan:
    """cgroup v1 when both its hierarchies are mounted (as before cgroup v2 was), else cgroup v2."""
    if "memory" in own and "pids" in own:
        return _Plan({"memory": own["memory"], "pids": own["pids"]})
    if "" in own:
        return _plan_v2(own[""])
    return _Plan({}, lack=_NO_CGROUP)


def _plan_v2(group: Path) -> _Plan:
    """The kernel lets memory and pids into `cgroup.subtree_control` (which notebooks' groups need in
    their parent) only in a group holding no process, the root group excepted. So the grader moves its
    group's processes into a leaf child and notebooks' groups are that leaf's siblings."""
    if group.name.startswith(_LEAF) and _enabled(group.parent):
        return _Plan({"": group.parent})  # born in a grader's leaf: a worker, or a later run's grader
    if not group.is_dir():
        return _Plan({}, lack=_HIDDEN.format(group=group))
    if _enabled(group):
        return _Plan({"": group})
    available = _words(group / "cgroup.controllers")
    if not set(_CONTROLLERS) <= available:
        offered = " ".join(sorted(available)) or "none"
        return _Plan({}, lack=_UNDELEGATED.format(group=group, available=offered))
    if not (group / "cgroup.type").exists():  # the root group, the only one without the file
        return _Plan({"": group})
    return _Plan({"": group}, leaf=group / f"{_LEAF}{os.getpid()}")


@functools.cache
def _current() -> _Plan:
    return _plan(_own())


def _parents() -> dict[str, Path]:
    """The folder notebooks' groups are made in, for each controller; {} when none can be."""
    return _current().parents


def _enabled(group: Path) -> bool:
    """Whether the children of a cgroup v2 group get memory and pids."""
    return set(_CONTROLLERS) <= _words(group / "cgroup.subtree_control")


def _words(path: Path) -> set[str]:
    try:
        return set(path.read_text().split())
    except FileNotFoundError:
        return set()


def _writable(plan: _Plan) -> list[Path]:
    """What the grader writes: with cgroup v2, moving a process needs write access to the group both
    its old and new groups are in (the kernel's delegation containment), here the parent."""
    if "" not in plan.parents:
        return list(plan.parents.values())
    parent = plan.parents[""]
    enabling = [] if _enabled(parent) else [parent / "cgroup.subtree_control"]
    return [parent, parent / "cgroup.procs", *enabling]


def problem() -> str | None:
    """Why per-notebook groups cannot be made here, or None when they can."""
    plan = _current()
    if not plan.parents:
        return plan.lack
    unwritable = [str(p) for p in _writable(plan) if not os.access(p, os.W_OK)]
    if unwritable:
        return f"write access to the grader's cgroup ({', '.join(unwritable)}): run as root, or {_DELEGATE}"
    return None


def describe() -> str:
    """Which cgroup version notebooks get their groups under, where, and whether the grader may."""
    plan = _current()
    if not plan.parents:
        return "none with memory and pids for sub-groups"
    version = "v2" if "" in plan.parents else "v1"
    where = ", ".join(str(p) for p in plan.parents.values())
    first = (
        f", once the grader's group's processes are in its child {plan.leaf.name} with memory and pids"
        " enabled for the children"
        if plan.leaf
        else ""
    )
    return f"{version} under {where}{first} ({'writable' if problem() is None else 'not writable'})"


def prepare() -> None:
    """With cgroup v2, remove the empty leaves earlier graders left, move the processes of the grader's
    own group into its leaf and enable memory and pids for the group's children. Before this process
    starts those that make notebooks' groups (they are born in the leaf, and find their parent ready);
    its later calls do nothing.

    Every process of the group moves, not only this one: the kernel enables the controllers only in a
    group holding none, and under systemd's Delegate=yes (a scope or service) or in a container with a
    cgroup namespace of its own the group and its processes are the grader's to arrange. The leaf cannot
    be removed while this process lives in it; once every process moved into it has ended, a later run
    in the group (born in a leaf) removes it.
    """
    with _preparing:
        plan = _current()
        if _prepared or "" not in plan.parents or problem() is not None:
            return
        _prepared.append(plan)
        parent = plan.parents[""]
        _remove_empty_leaves(parent)
        if not _enabled(parent):
            if plan.leaf:
                _enter_leaf(parent, plan.leaf)
            _enable(parent)


def _remove_empty_leaves(group: Path) -> None:
    """Remove the leaves earlier graders left in `group`, once every process in them has ended."""
    for leaf in group.glob(f"{_LEAF}*"):
        with contextlib.suppress(OSError):  # not empty: its grader, or a process moved with it, lives
            leaf.rmdir()


def _enter_leaf(group: Path, leaf: Path) -> None:
    """Move every process of `group` into `leaf`, again while one forks meanwhile."""
    leaf.mkdir(exist_ok=True)  # an earlier grader with this pid may have left it
    for _ in range(100):
        processes = (group / "cgroup.procs").read_text().split()
        if not processes:
            return
        for pid in processes:
            with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
                _write(leaf / "cgroup.procs", int(pid))
    raise OSError(errno.EBUSY, f"processes keep appearing in {group}, so no leaf can hold them all")


def _enable(group: Path) -> None:
    """Give the children of a cgroup v2 group memory and pids; the kernel refuses (EBUSY) while the
    group holds a process, unless it is the root group, and (ENOENT) when its parent does not give
    them to the group itself."""
    (group / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in _CONTROLLERS))


class Cgroup:
    """One notebook's group: made with its limits, joined by the notebook's first process, removed when
    every process in it has gone."""

    def __init__(self, memory_bytes: int, max_processes: int, group: str = "") -> None:
        prepare()
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
    worker before they could remove them; a process still in one is killed first. A run's name starts
    with its pid, so a grader's leaf (which holds the grader) never matches."""
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
