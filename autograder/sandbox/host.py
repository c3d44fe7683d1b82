"""What this host offers for confining student code, and what it lacks, each lack with its fix.

Landlock at any ABI version (Linux 5.13+), the namespaces and a cgroup the grader can write are needed;
nothing else is. Every later Landlock right stands in for a guarantee that another part of the
confinement already keeps (see `confine`), so an older kernel confines as fully, only more bluntly.
"""

import functools
import os
from pathlib import Path

from autograder.sandbox import cgroup, landlock, syscall
from autograder.sandbox.syscall import CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER

NAMESPACES = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWNS
_NO_LANDLOCK = (
    "Landlock (file access allow-lists): a Linux 5.13+ kernel built with CONFIG_SECURITY_LANDLOCK=y and"
    " booted with landlock in its lsm= list (Debian/Ubuntu: in /etc/default/grub add"
    " lsm=landlock,lockdown,yama,integrity,apparmor to GRUB_CMDLINE_LINUX, run `sudo update-grub`, reboot)"
)
# What keeps, below each Landlock ABI version, the guarantee that version's new right gives.
STAND_INS = {
    2: "renames and links across folders: below it refused outright (EXDEV)",
    3: "truncation by path: kept off by the read-only mounts",
    4: "TCP rules: kept by the network namespace, where nothing outside is reachable",
    5: "device ioctls: only null, zero, full, random and urandom are granted, and their ioctls that"
    " change anything need capabilities the notebook does not hold",
    6: "signal and abstract unix socket scoping: kept by the PID namespace (nothing outside is visible)"
    " and the network namespace (abstract sockets are per network namespace)",
}
_CONTAINER = (
    "in a container, start it with --cap-add SYS_ADMIN --security-opt seccomp=unconfined"
    " --security-opt apparmor=unconfined (Kubernetes: privileged: true)"
)


def _sysctl(name: str) -> str | None:
    try:
        return Path("/proc/sys", *name.split(".")).read_text().strip()
    except OSError:
        return None


@functools.cache
def namespaces_problem() -> str | None:
    """Try the namespaces in a throwaway child: sysctls, AppArmor and seccomp profiles can all refuse."""
    root = os.geteuid() == 0
    child = os.fork()
    if child == 0:
        try:
            syscall.unshare(NAMESPACES | (0 if root else CLONE_NEWUSER))
            os._exit(0)
        except OSError as error:
            os._exit(error.errno)
    _, status = os.waitpid(child, 0)
    if status == 0:
        return None
    why = os.strerror(os.waitstatus_to_exitcode(status))
    if root:
        return f"PID, network, IPC and mount namespaces ({why}): {_CONTAINER}"
    return f"unprivileged user namespaces ({why}): {_user_namespaces_fix()}"


def _user_namespaces_fix() -> str:
    """The setting that refuses a user its namespaces here, and the command that allows them."""
    for name, allowing, note in (
        ("kernel.apparmor_restrict_unprivileged_userns", "0", "AppArmor restricts them (Ubuntu 23.10+): "),
        ("kernel.unprivileged_userns_clone", "1", ""),
        ("user.max_user_namespaces", "15000", ""),
    ):
        if _sysctl(name) == ("1" if allowing == "0" else "0"):
            also = ", or an AppArmor profile granting `userns,` to the interpreter" if note else ""
            return f"{note}`sudo sysctl -w {name}={allowing}` (kept in /etc/sysctl.d/){also}; or run as root"
    return f"{_CONTAINER}; or run as root"


def _landlock_problem() -> str | None:
    if landlock.used():
        return None
    if landlock.abi():
        return f"Landlock, which {landlock.CAP_VARIABLE}=0 turns off: unset it"
    return _NO_LANDLOCK


def missing_features() -> list[str]:
    """What this host lacks for confining student code, each as a sentence naming it and how to get it
    on Debian or Ubuntu; [] when nothing is missing. The Landlock level is read at every call (it
    follows `landlock.CAP_VARIABLE`), the namespaces and cgroup are probed once per process."""
    return list(filter(None, (_landlock_problem(), namespaces_problem(), cgroup.problem())))


def confinement() -> dict:
    """What confines a notebook graded here now, for run.json and `python -m autograder doctor`."""
    root = os.geteuid() == 0
    isolated = namespaces_problem() is None
    return {
        "landlock_abi": landlock.used(),
        "kernel_landlock_abi": landlock.abi(),
        "namespaces": (["pid", "net", "ipc", "mnt"] + ([] if root else ["user"])) if isolated else [],
        "uid": "a uid of its own, no capabilities (root)" if root else "the grader's, in a user namespace",
        "cgroup": cgroup.describe(),
        "read_only_mounts": isolated,
        "missing": missing_features(),
    }
