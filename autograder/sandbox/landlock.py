"""Landlock, the kernel's unprivileged allow-list for files, TCP ports, signals and abstract sockets.

Called through ctypes: the one Landlock binding on PyPI (`landlock` 1.0.0.dev5, alpha) knows filesystem
rules only, not the TCP rules (ABI 4) or the signal and socket scoping (ABI 6) that confinement needs.
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


def _handled_fs(version: int) -> int:
    return sum(bits for since, bits in _FS_BY_ABI.items() if since <= version)


def ruleset(rules: Iterable[tuple[str, int]]) -> int:
    """A ruleset granting `rules` (path, rights) and denying every other handled right, all TCP binds and
    connects (ABI 4), and signals and abstract unix sockets to anything outside the domain (ABI 6).
    Rights this kernel does not know are dropped; `missing_features` says which. Made while the paths
    can still be opened (before the uid switch), enforced by `restrict_self` after it."""
    version = abi()
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
