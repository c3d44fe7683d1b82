"""Limits on what student code may do while it is graded.

Installed in a forked child just before it runs student code: an audit hook that refuses to open, list,
change or link anything under the protected folders (the reference solutions and hidden tests, other
students' submissions, the gradebook), to start programs other than Graphviz's `dot` (which draws the
lessons' graphs), to look up C functions or reach memory by address through ctypes (ways around every
other refusal), and to walk the garbage collector (the way to reach this hook's own state); and a cap
on the child's address space. CPython offers no way to remove an audit hook, so student code cannot
switch it off.
"""

import os
import resource
import sys
from collections.abc import Iterable
from pathlib import Path

_ALLOWED_PROGRAMS = frozenset({"dot"})
_REFUSED_EVENTS = frozenset(
    {"gc.get_objects", "gc.get_referrers", "gc.get_referents"}
    | {"ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.cdata"}
    | {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "pty.spawn"}
)
# Events that name files, and which of their arguments do: a hard link's source is the protected file
# under another name, a symlink's target is resolved when it is opened.
_PATH_ARGUMENTS = {
    "open": (0,),
    "os.listdir": (0,),
    "os.scandir": (0,),
    "os.chmod": (0,),
    "os.chown": (0,),
    "os.link": (0, 1),
    "os.mkdir": (0,),
    "os.remove": (0,),
    "os.rename": (0, 1),
    "os.rmdir": (0,),
    "os.symlink": (1,),
    "os.truncate": (0,),
    "os.utime": (0,),
    "sqlite3.connect": (0,),
}
_VERBS = {"open": "reading", "os.listdir": "listing", "os.scandir": "listing"}


class SandboxError(PermissionError):
    """What student code sees when it tries something grading does not allow."""


def _under(path: str | bytes | os.PathLike, roots: tuple[str, ...]) -> bool:
    return (os.path.realpath(os.fsdecode(path)) + os.sep).startswith(roots)


def install(protected: Iterable[Path], address_space_bytes: int | None) -> None:
    """Protect the given folders from here on, in this process and its forks."""
    roots = tuple(str(Path(p).resolve()) + os.sep for p in protected)
    if address_space_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space_bytes, address_space_bytes))

    def refuse(what: str) -> None:
        raise SandboxError(f"not allowed while grading: {what}")

    def hook(event: str, args: tuple) -> None:
        if event in _PATH_ARGUMENTS:
            for index in _PATH_ARGUMENTS[event]:
                # os.listdir() and os.scandir() without a path list the current folder.
                path = os.curdir if args[index] is None else args[index]
                if isinstance(path, str | bytes | os.PathLike) and _under(path, roots):
                    refuse(f"{_VERBS.get(event, event)} {os.fsdecode(path)}")
        elif event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            first = executable or (argv if isinstance(argv, str | bytes | os.PathLike) else argv[0])
            program = os.path.basename(os.fsdecode(first))
            if program not in _ALLOWED_PROGRAMS:
                refuse(f"running {program}")
        elif event in _REFUSED_EVENTS:
            refuse(event)

    sys.addaudithook(hook)
