"""Landlock, the kernel's unprivileged allow-list for files, TCP ports, signals and abstract sockets.

Each ABI version adds rights; the grader uses what the kernel has (or less, under `CAP_VARIABLE`), and
`confine` keeps each guarantee a missing right would have kept by other means (see its docstring).
Called through ctypes: the one Landlock binding on PyPI (`landlock` 1.0.0.dev5, alpha) knows filesystem
rules only, not the TCP rules (ABI 4) or the signal and socket scoping (ABI 6).
"""

import ctypes
import functools
import os
from collections.abc import Iterable

from autograder.sandbox.syscall import call

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_VERSION_QUERY = 1
_RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
_REMOVE_DIR, _REMOVE_FILE, _MAKE_CHAR, _MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
_MAKE_REG, _MAKE_SOCK, _MAKE_FIFO, _MAKE_BLOCK, _MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
_REFER, TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
# Filesystem rights by the ABI version that introduced them.
_FS_BY_ABI = {1: (1 << 13) - 1, 2: _REFER, 3: TRUNCATE, 5: _IOCTL_DEV}
# Caps the ABI version the grader uses, e.g. AUTOGRADER_LANDLOCK_ABI=1 to grade as on Linux 5.13.
CAP_VARIABLE = "AUTOGRADER_LANDLOCK_ABI"
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1

READ = READ_FILE | READ_DIR
# Everything in its own scratch folder except running what it wrote there and making device nodes.
SCRATCH = _FS_BY_ABI[1] & ~(EXECUTE | _MAKE_CHAR | _MAKE_BLOCK) | _REFER | TRUNCATE
_FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | _IOCTL_DEV
DEVICE = READ_FILE | WRITE_FILE | TRUNCATE | _IOCTL_DEV


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64))


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version, 0 where Landlock is absent or disabled."""
    try:
        return call(_CREATE_RULESET, None, 0, _VERSION_QUERY)
    except OSError:
        return 0


def used() -> int:
    """The ABI version the grader uses: the kernel's, capped by `CAP_VARIABLE` when it is set (to
    confine as an older kernel would). Read at every call; ValueError, one line, for a bad value."""
    cap = os.environ.get(CAP_VARIABLE)
    if cap is None:
        return abi()
    if not cap.isdigit():
        raise ValueError(
            f"{CAP_VARIABLE}={cap!r} is not a Landlock ABI version: give a whole number from 0"
            f" (no Landlock) up, or unset it to use this kernel's ({abi()})"
        )
    return min(int(cap), abi())


def _handled_fs(version: int) -> int:
    return sum(bits for since, bits in _FS_BY_ABI.items() if since <= version)


def ruleset(rules: Iterable[tuple[str, int]], version: int) -> int:
    """A ruleset of ABI `version` granting `rules` (path, rights) and denying every other handled right,
    all TCP binds and connects (ABI 4), and signals and abstract unix sockets to anything outside the
    domain (ABI 6). Rights `version` does not know are dropped. Made while the paths can still be
    opened (before the uid switch), enforced by `restrict_self` after it."""
    handled = _handled_fs(version)
    attr = _RulesetAttr(
        fs=handled,
        net=_NET_BIND_TCP | _NET_CONNECT_TCP if version >= 4 else 0,
        scoped=_SCOPE_ABSTRACT_UNIX_SOCKET | _SCOPE_SIGNAL if version >= 6 else 0,
    )
    # Older kernels reject fields they do not know, even zero ones: pass only the known prefix.
    size = 24 if version >= 6 else 16 if version >= 4 else 8
    fd_ruleset = call(_CREATE_RULESET, ctypes.byref(attr), size, 0)
    try:
        for path, rights in rules:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            try:
                # Directory-only rights on a file are an error: a file gets only the rights files have.
                if not os.path.isdir(fd):
                    rights &= _FILE_RIGHTS
                rule = _PathBeneath(allowed=rights & handled, parent_fd=fd)
                call(_ADD_RULE, fd_ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
            finally:
                os.close(fd)
    except BaseException:
        os.close(fd_ruleset)
        raise
    return fd_ruleset


def restrict_self(fd_ruleset: int) -> None:
    """Confine this process and its future children to the ruleset; needs no_new_privs."""
    try:
        call(_RESTRICT_SELF, fd_ruleset, 0)
    finally:
        os.close(fd_ruleset)
