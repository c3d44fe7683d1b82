"""The kernel's confinement of student code: one `Sandbox` per notebook, entered by a forked child of the
warmed worker before any student code runs, and inherited by every process that child starts.

What each part keeps out:
- a PID namespace whose init is the notebook's first process: killing it kills all the notebook ever
  started (new sessions, double forks); nothing outside is visible to signal, trace or read;
- a network namespace (no interface but a downed loopback) and, from Landlock ABI 4, its TCP rules: no
  network;
- a mount namespace (`mounts`): every inherited mount read-only; a size-limited tmpfs on /tmp is the
  only writable folder (cwd, HOME, TMPDIR), empty tmpfs hide /run, /var/tmp, /dev/shm, the excluded
  folders and the worker's home (its interpreter is mounted back), and a fresh /proc shows only the
  notebook's processes;
- Landlock: read only the system, the interpreter, the venv and `readable`; write only scratch; execute
  only `executables` and their ELF loader; from ABI 6, no signals or abstract unix sockets outside;
- as root, a uid and gid of its own, no supplementary groups, no capabilities; no_new_privs;
- a cgroup capping the memory and process count of the notebook as a whole; rlimits on file size, open
  files and core dumps; death with the worker.

Every guarantee holds from Landlock ABI 1 (Linux 5.13) up; what a later ABI adds is kept below it by:
- ABI 2 (renames and links across folders): below it Landlock refuses them all (EXDEV), stricter;
- ABI 3 (truncation by path): the read-only mounts (EROFS), which also keep chmod, chown, utime and
  xattrs off the instructor's files at every level;
- ABI 4 (TCP): the network namespace, where no address outside is reachable;
- ABI 5 (device ioctls): the only devices granted are null, zero, full, random and urandom, whose
  ioctls that change anything need capabilities the notebook does not hold;
- ABI 6 (signals, abstract unix sockets): the PID namespace (no process outside is visible to signal)
  and the network namespace (abstract unix sockets are per network namespace).
"""

import contextlib
import os
import pwd
import resource
import select
import shutil
import signal
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from autograder.sandbox import cgroup, host, landlock, syscall
from autograder.sandbox.host import NAMESPACES
from autograder.sandbox.mounts import View
from autograder.sandbox.syscall import CLONE_NEWUSER

# Where other programs keep temporary files, sockets and shared memory: the sandbox sees them empty, and
# the first that holds nothing it must read (the interpreter may live in /tmp) is its scratch.
_TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/run")
_SYSTEM = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/sys/devices/system/cpu")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# Sandbox uids are this plus the host pid of the notebook's first process, which is unique while it
# lives: far above the uids of real users and of the usual subordinate-id ranges.
_UID_BASE = 3_000_000_000


@dataclass(frozen=True)
class Limits:
    """What one notebook may use, all its processes together unless said otherwise."""

    memory_bytes: int  # cgroup memory
    max_processes: int  # cgroup pids, and RLIMIT_NPROC of its own uid
    max_file_bytes: int  # RLIMIT_FSIZE, per file
    max_open_files: int  # RLIMIT_NOFILE, per process
    scratch_bytes: int  # the size of its writable scratch tmpfs
    # RLIMIT_AS, per process: an allocation past it fails with MemoryError, which a notebook survives,
    # where the cgroup's limit on all its processes together ends the notebook. None: no such limit.
    address_space_bytes: int | None = None


class SandboxUnavailableError(RuntimeError):
    """This host cannot confine student code fully, and the submissions were not declared trusted."""


class SandboxError(RuntimeError):
    """Confinement could not be set up in the notebook's process; no student code ran."""


def missing_features() -> list[str]:
    """What this host lacks for confining student code, each with its fix; [] when nothing is missing."""
    return host.missing_features()


def _interpreter(program: Path) -> Path | None:
    """The ELF loader (PT_INTERP) a 64-bit little-endian program needs, None for a static one. The kernel
    opens it for execution too, so it needs the execute right as well."""
    with program.open("rb") as elf:
        header = elf.read(64)
        if header[:5] != b"\x7fELF\x02":
            raise SandboxError(f"{program} is not a 64-bit ELF program")
        offset = int.from_bytes(header[32:40], "little")
        size, count = int.from_bytes(header[54:56], "little"), int.from_bytes(header[56:58], "little")
        for index in range(count):
            elf.seek(offset + index * size)
            entry = elf.read(size)
            if int.from_bytes(entry[0:4], "little") == 3:
                elf.seek(int.from_bytes(entry[8:16], "little"))
                path = elf.read(int.from_bytes(entry[32:40], "little")).rstrip(b"\0")
                return Path(os.fsdecode(path)).resolve()
    return None


def _allow(path: Path, rights: int, excluded: tuple[Path, ...], rules: list[tuple[str, int]]) -> None:
    """Grant `rights` beneath `path` except beneath `excluded`. Landlock only adds rights, so a folder
    holding an excluded path is granted listing only, and each of its entries is granted in turn."""
    path = path.resolve()
    if not path.exists() or any(path == e or e in path.parents for e in excluded):
        return
    if not any(path in e.parents for e in excluded):
        rules.append((str(path), rights))
        return
    rules.append((str(path), rights & landlock.READ_DIR))
    for entry in path.iterdir():
        _allow(entry, rights, excluded, rules)


class Sandbox:
    """One notebook's confinement, made in the warmed worker (which never runs student code).

    `spawn` forks the notebook's first process into it; `kill` ends every process it started; `close`
    also removes its cgroup (its scratch is a tmpfs that vanishes with its last process)."""

    def __init__(
        self,
        limits: Limits,
        readable: Sequence[Path],
        executables: Sequence[Path],
        excluded: Sequence[Path] = (),
        trusted: bool = False,
        group: str = "",
    ) -> None:
        # Read per sandbox, as the cap on it is.
        self._abi = landlock.used()
        missing = missing_features()
        if missing and not trusted:
            raise SandboxUnavailableError(
                "student code cannot be confined on this host; it lacks:\n- "
                + "\n- ".join(missing)
                + "\nGrade only trusted submissions here, saying so explicitly."
            )
        self.limits = limits
        self._root = os.geteuid() == 0
        self._isolated = host.namespaces_problem() is None
        excluded = tuple(Path(p).resolve() for p in excluded)
        programs = [Path(p).resolve() for p in executables]
        roots = [*map(Path, _SYSTEM), Path(sys.base_prefix), Path(sys.prefix), *map(Path, readable)]
        needed = [Path(p).resolve() for p in [*roots, *programs]]
        free = [
            place
            for place in _TEMPORARY
            if os.path.isdir(place) and not any(Path(place) in (p, *p.parents) for p in needed)
        ]
        if not free:
            raise ValueError(f"every one of {', '.join(_TEMPORARY)} holds what the sandbox must read")
        # A temporary folder holding what it must read stays as it is, and Landlock keeps the rest out.
        scratch_place, hidden = free[0], free[1:]
        self._rules: list[tuple[str, int]] = []
        for root in roots:
            _allow(root, landlock.READ, excluded, self._rules)
        for program in programs:
            loader = _interpreter(program)
            for path in (program, loader) if loader else (program,):
                _allow(path, landlock.READ_FILE | landlock.EXECUTE, excluded, self._rules)
        self._rules += [(device, landlock.DEVICE) for device in _DEVICES]
        home = Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()
        self._view = View(
            scratch=scratch_place,
            scratch_bytes=limits.scratch_bytes,
            home=home,
            # What lies in the worker's home that the sandbox needs (typically the interpreter).
            kept=tuple(sorted({str(r) for r in [*roots, *programs] if home in Path(r).resolve().parents})),
            hidden=(*hidden, *(str(p) for p in excluded if p.is_dir())),
        )
        self._cgroup = None
        if not cgroup.problem():
            self._cgroup = cgroup.Cgroup(limits.memory_bytes, limits.max_processes, group)
        self.scratch = scratch_place if self._isolated else tempfile.mkdtemp(prefix="sandbox-")
        self.pid: int | None = None
        self.status: int | None = None

    def spawn(self, body: Callable[[], None], keep_fds: Sequence[int]) -> int:
        """Fork the notebook's first process, confine it, run `body` in it, and return its pid. Returns
        once confinement is in place (SandboxError if it could not be). Once per sandbox.

        An intermediate child makes the namespaces (unsharing in the threaded worker is refused or
        unsafe) and exits, so the notebook's process, the init of its PID namespace, is reparented to
        the worker: this makes the worker a child subreaper."""
        if self.pid is not None:
            raise RuntimeError("a sandbox runs one notebook process tree")
        syscall.prctl(syscall.PR_SET_CHILD_SUBREAPER, 1)
        report_read, report_write = os.pipe()
        pid_read, pid_write = os.pipe()
        worker = os.pidfd_open(os.getpid())
        intermediate = os.fork()
        if intermediate == 0:
            try:
                _close_fds_except({0, 1, 2, report_write, pid_write, worker, *keep_fds})
                self._unshare()
                # Readable once this process has exited and its child has a new parent.
                intermediate = os.pidfd_open(os.getpid())
                first = os.fork()
                if first == 0:
                    os.close(pid_write)
                    self._enter(body, report_write, intermediate, worker)
                os.write(pid_write, str(first).encode())
            except BaseException:  # noqa: BLE001 (whatever fails, the worker must hear of it)
                os.write(report_write, traceback.format_exc().encode())
            finally:
                os._exit(0)
        for fd in (report_write, pid_write, worker):
            os.close(fd)
        os.waitpid(intermediate, 0)
        with os.fdopen(pid_read, "rb") as pid_pipe, os.fdopen(report_read, "rb") as report:
            pid, failure = pid_pipe.read(), report.read()
        if pid:
            self.pid = int(pid)
        if failure:
            self.close()
            raise SandboxError(f"confining the notebook's process failed:\n{failure.decode()}")
        return self.pid

    def _unshare(self) -> None:
        """In the intermediate child: join the cgroup and make the namespaces its child will enter."""
        if self._cgroup:
            self._cgroup.join()
        if not self._isolated:
            return
        if self._root:
            syscall.unshare(NAMESPACES)
            return
        uid, gid = os.getuid(), os.getgid()
        syscall.unshare(NAMESPACES | CLONE_NEWUSER)
        Path("/proc/self/setgroups").write_text("deny")
        Path("/proc/self/uid_map").write_text(f"{uid} {uid} 1")
        Path("/proc/self/gid_map").write_text(f"{gid} {gid} 1")

    def _enter(self, body: Callable[[], None], report: int, intermediate: int, worker: int) -> None:
        """In the notebook's first process: confine it, report success by closing `report`, run body."""
        try:
            os.setsid()
            uid, gid = os.getuid(), os.getgid()
            if self._root:
                # /proc is still the host's: its `self` names this process's pid there.
                uid = gid = _UID_BASE + int(os.readlink("/proc/self"))
            if self._isolated:
                self._view.make(uid, gid)
            os.chdir(self.scratch)
            os.environ.update(HOME=self.scratch, TMPDIR=self.scratch, MPLCONFIGDIR=self.scratch)
            tempfile.tempdir = self.scratch
            self._set_rlimits()
            rules = [*self._rules, (self.scratch, landlock.SCRATCH)]
            rules += [("/proc", landlock.READ)] if self._isolated else []
            ruleset = landlock.ruleset(rules, self._abi) if self._abi else None
            _drop_privileges(uid, gid, self._root)
            # The intermediate child exits once it has reported this pid; until then it is the parent,
            # and its death would deliver the parent-death signal. Its pidfd, unlike a pipe it held,
            # turns readable only once the kernel has given this process its new parent, the worker.
            select.select([intermediate], [], [])
            os.close(intermediate)
            syscall.prctl(syscall.PR_SET_PDEATHSIG, signal.SIGKILL)
            if select.select([worker], [], [], 0)[0]:
                os._exit(1)
            os.close(worker)
            syscall.prctl(syscall.PR_SET_NO_NEW_PRIVS, 1)
            if ruleset is not None:
                landlock.restrict_self(ruleset)
        except BaseException:  # noqa: BLE001 (whatever fails, the worker must hear of it)
            os.write(report, traceback.format_exc().encode())
            os._exit(126)
        os.close(report)
        try:
            body()
        finally:
            os._exit(0)

    def _set_rlimits(self) -> None:
        limits = self.limits
        _, hard_files = resource.getrlimit(resource.RLIMIT_NOFILE)
        open_files = limits.max_open_files if self._root else min(limits.max_open_files, hard_files)
        for which, value in (
            (resource.RLIMIT_FSIZE, limits.max_file_bytes),
            (resource.RLIMIT_NOFILE, open_files),
            (resource.RLIMIT_CORE, 0),
            (resource.RLIMIT_NPROC, limits.max_processes),
        ):
            resource.setrlimit(which, (value, value))
        if limits.address_space_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limits.address_space_bytes, limits.address_space_bytes))

    def wait(self) -> int:
        """Wait for the notebook's first process (and so all of its processes) to end; its wait status."""
        if self.status is None and self.pid is not None:
            _, self.status = os.waitpid(self.pid, 0)
        return self.status

    def out_of_memory(self) -> bool:
        """Whether the kernel killed one of the notebook's processes for exceeding its memory."""
        return self._cgroup is not None and self._cgroup.out_of_memory()

    def kill(self) -> None:
        """SIGKILL everything in the sandbox: the init of its PID namespace takes all the others along."""
        if self.pid is not None and self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """Kill and reap everything, then remove the cgroup and scratch: nothing of the notebook remains."""
        self.kill()
        self.wait()
        if self._cgroup:
            self._cgroup.remove()
            self._cgroup = None
        if not self._isolated:
            shutil.rmtree(self.scratch, ignore_errors=True)


def _close_fds_except(keep: set[int]) -> None:
    start = 0
    for fd in sorted(keep):
        # Python 3.11 passes an empty range on to close_range(2) as (start, start - 1): everything.
        if fd > start:
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def _drop_privileges(uid: int, gid: int, root: bool) -> None:
    """Become `uid`/`gid` with no supplementary groups (as root) and no capabilities: the bounding set is
    emptied first, while CAP_SETPCAP is still held, then the effective and permitted sets."""
    for capability in range(int(Path("/proc/sys/kernel/cap_last_cap").read_text()) + 1):
        with contextlib.suppress(OSError):
            syscall.prctl(syscall.PR_CAPBSET_DROP, capability)
    if root:
        os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    syscall.drop_capabilities()
