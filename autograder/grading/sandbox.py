"""Limits on what student code may do while it is graded.

Installed in a forked child just before it runs student code: an audit hook that refuses to open
anything under the protected folders (the reference solutions and hidden tests, other students'
submissions, the gradebook), to start programs other than Graphviz's `dot` (which draws the lessons'
graphs), and to walk the garbage collector (the way to reach this hook's own state); and a cap on the
child's address space. CPython offers no way to remove an audit hook, so student code cannot switch it
off.
"""

import os
import resource
import sys
from collections.abc import Iterable
from pathlib import Path

_ALLOWED_PROGRAMS = frozenset({"dot"})
_REFUSED_EVENTS = frozenset(
    {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "ctypes.dlopen"}
    | {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "pty.spawn"}
)


class SandboxError(PermissionError):
    """What student code sees when it tries something grading does not allow."""


def install(protected: Iterable[Path], address_space_bytes: int | None) -> None:
    """Protect the given folders from here on, in this process and its forks."""
    roots = tuple(str(Path(p).resolve()) + os.sep for p in protected)
    if address_space_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (address_space_bytes, address_space_bytes))

    def refuse(what: str) -> None:
        raise SandboxError(f"not allowed while grading: {what}")

    def hook(event: str, args: tuple) -> None:
        if event == "open":
            path = args[0]
            if isinstance(path, str | bytes | os.PathLike):
                resolved = os.path.realpath(os.fsdecode(path)) + os.sep
                if resolved.startswith(roots):
                    refuse(f"reading {os.fsdecode(path)}")
        elif event in ("os.listdir", "os.scandir") and args and args[0] is not None:
            if (os.path.realpath(os.fsdecode(args[0])) + os.sep).startswith(roots):
                refuse(f"listing {os.fsdecode(args[0])}")
        elif event == "subprocess.Popen":
            executable, argv = args[0], args[1]
            first = executable or (argv if isinstance(argv, str | bytes | os.PathLike) else argv[0])
            program = os.path.basename(os.fsdecode(first))
            if program not in _ALLOWED_PROGRAMS:
                refuse(f"running {program}")
        elif event in _REFUSED_EVENTS:
            refuse(event)

    sys.addaudithook(hook)
