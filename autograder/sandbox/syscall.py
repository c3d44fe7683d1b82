"""The few Linux system calls that Python 3.11's `os` lacks, through ctypes (libc's `syscall`)."""

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long

CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER = 0x00020000, 0x08000000, 0x10000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REC, MS_PRIVATE = 0x4000, 1 << 18
PR_SET_PDEATHSIG, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS, PR_SET_CHILD_SUBREAPER = 1, 24, 38, 36
_UNSHARE, _OPEN_TREE, _MOVE_MOUNT, _MOUNT_SETATTR = 272, 428, 429, 442
_OPEN_TREE_CLONE, _AT_RECURSIVE, _MOVE_MOUNT_F_EMPTY_PATH = 1, 0x8000, 0x4
_MOUNT_ATTR_RDONLY = 1


def call(number: int, *args) -> int:
    """System call `number`; OSError with the kernel's errno when it fails."""
    result = _libc.syscall(ctypes.c_long(number), *(_argument(a) for a in args))
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return result


def _argument(value):
    if isinstance(value, int):
        return ctypes.c_long(value)
    if isinstance(value, str):
        return ctypes.c_char_p(os.fsencode(value))
    return value


def unshare(flags: int) -> None:
    call(_UNSHARE, flags)


def mount(source: str, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    result = _libc.mount(
        os.fsencode(source),
        os.fsencode(target),
        fstype and fstype.encode(),
        ctypes.c_ulong(flags),
        data.encode() or None,
    )
    if result < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {target}: {os.strerror(error)}")


def clone_tree(path: str) -> int:
    """A detached copy of the mounts at and under `path`, to attach elsewhere with `attach_tree`."""
    return call(_OPEN_TREE, -100, path, _OPEN_TREE_CLONE | _AT_RECURSIVE | os.O_CLOEXEC)


def attach_tree(tree: int, target: str) -> None:
    call(_MOVE_MOUNT, tree, "", -100, target, _MOVE_MOUNT_F_EMPTY_PATH)


class _MountAttr(ctypes.Structure):
    _fields_ = tuple((name, ctypes.c_uint64) for name in ("set", "clear", "propagation", "userns_fd"))


def make_read_only(path: str) -> None:
    """Make every mount at and under `path` read-only (mount_setattr(2), Linux 5.12+: older than any
    kernel with Landlock). Device nodes on them stay writable: only their files' contents are frozen."""
    attr = _MountAttr(set=_MOUNT_ATTR_RDONLY)
    call(_MOUNT_SETATTR, -100, path, _AT_RECURSIVE, ctypes.byref(attr), ctypes.sizeof(attr))


def prctl(option: int, value: int) -> None:
    if _libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0) < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl {option}: {os.strerror(error)}")


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = tuple((name, ctypes.c_uint32) for name in ("effective", "permitted", "inheritable"))


def drop_capabilities() -> None:
    """Empty this process's effective, permitted and inheritable capability sets."""
    header, data = _CapHeader(version=0x20080522), (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) < 0:
        error = ctypes.get_errno()
        raise OSError(error, f"capset: {os.strerror(error)}")
