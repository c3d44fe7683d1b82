"""Attacks on the kernel's confinement of student code, written knowing how `confine` works.

Each test forks a sandbox whose body is the attack, plain Python as a notebook cell would run it; the
body reports what happened as JSON on a kept pipe. Every test checks that the attack failed and that the
instructor's side (files, processes, the test process itself) is intact. The attacks on what Landlock
guards run at the oldest Landlock ABI (1, Linux 5.13), at 4 (the first with TCP rules) and at this
kernel's, since below ABI 6 the other parts of the confinement keep what Landlock no longer does.
"""

import contextlib
import ctypes
import errno
import json
import mmap
import os
import select
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import pytest

from autograder.sandbox import confine, host, landlock
from autograder.sandbox.confine import Limits, Sandbox, SandboxUnavailableError

REPO = Path(__file__).resolve().parent.parent
DOT = Path("/usr/bin/dot")
MiB = 2**20
LIMITS = Limits(
    memory_bytes=1024 * MiB,
    max_processes=64,
    max_file_bytes=32 * MiB,
    max_open_files=256,
    scratch_bytes=16 * MiB,
)
SECRET = "the reference answer"
# A sandbox's scratch: /tmp, unless the Python environment it must read (this one's) lies in /tmp.
_SCRATCH = (
    "/var/tmp"
    if any(Path("/tmp") in Path(p).resolve().parents for p in (sys.prefix, sys.base_prefix))
    else "/tmp"
)
# The Landlock ABI versions the attacks run at (None: this kernel's own).
LEVELS = [1, 4, None]


@pytest.fixture(params=LEVELS, ids=lambda level: f"abi{level}" if level else "kernel-abi")
def landlock_level(request, monkeypatch) -> int:
    """The ABI version sandboxes made during the test use, capped as an instructor caps it."""
    if request.param is None:
        monkeypatch.delenv(landlock.CAP_VARIABLE, raising=False)
    else:
        monkeypatch.setenv(landlock.CAP_VARIABLE, str(request.param))
    return landlock.used()


at_every_level = pytest.mark.usefixtures("landlock_level")


@pytest.fixture(scope="module")
def instructor():
    """The instructor's side, outside /tmp (which sandboxes see replaced): a readable course folder that
    holds an excluded solutions folder, as a non-editable install would, and a private file beside it.
    In the repository, or, for a user who may not write there, in the folder the tests run in."""
    parent = REPO if os.access(REPO, os.W_OK) else Path.cwd()
    root = Path(tempfile.mkdtemp(prefix=".instructor-", dir=parent))
    (root / "course" / "solutions").mkdir(parents=True)
    (root / "course" / "public.py").write_text("PUBLIC = 1\n")
    (root / "course" / "solutions" / "answer.py").write_text(SECRET)
    (root / "gradebook.txt").write_text(SECRET)
    # A file anyone may write, as a careless instructor leaves one: only the read-only mounts keep it
    # from being truncated below Landlock ABI 3.
    (root / "shared.log").write_text(SECRET)
    os.chmod(root / "shared.log", 0o666)
    os.chmod(root, 0o755)
    yield root
    shutil.rmtree(root)


def _intact(instructor: Path) -> None:
    assert (instructor / "course" / "solutions" / "answer.py").read_text() == SECRET
    assert (instructor / "gradebook.txt").read_text() == SECRET
    assert (instructor / "shared.log").read_text() == SECRET
    assert os.stat(instructor / "shared.log").st_mode & 0o777 == 0o666
    assert sorted(p.name for p in instructor.iterdir()) == ["course", "gradebook.txt", "shared.log"]


def attempt(action) -> str:
    """'done' if the action succeeded, else the name of the error it raised."""
    try:
        action()
        return "done"
    except OSError as error:
        return errno.errorcode.get(error.errno, type(error).__name__)
    except (sqlite3.Error, AssertionError) as error:
        return type(error).__name__


@contextlib.contextmanager
def running(attack, limits=LIMITS, readable=(), excluded=(), linger=False, trusted=False):
    """A sandbox running `attack`; yields it and a function returning what the attack reported. With
    `linger` the sandbox's first process stays alive after reporting, until the sandbox is closed."""
    sandbox = Sandbox(limits, readable, [DOT], excluded, trusted=trusted)
    read_end, write_end = os.pipe()

    def body():
        try:
            outcome = {"reported": attack()}
        except Exception:  # noqa: BLE001 (an attack that breaks must fail the test, not hang it)
            outcome = {"raised": traceback.format_exc()}
        os.write(write_end, (json.dumps(outcome) + "\n").encode())
        while linger:
            time.sleep(60)

    def report():
        reply = b""
        while not reply.endswith(b"\n"):
            assert select.select([read_end], [], [], 60)[0], "the attack never reported"
            chunk = os.read(read_end, 1 << 16)
            assert chunk, "the sandbox died before reporting"
            reply += chunk
        outcome = json.loads(reply)
        assert "raised" not in outcome, outcome.get("raised")
        return outcome["reported"]

    try:
        sandbox.spawn(body, [write_end])
        os.close(write_end)
        yield sandbox, report
    finally:
        sandbox.close()
        os.close(read_end)


def confined(attack, **options):
    """What `attack` reported from inside a sandbox, closed afterwards."""
    with running(attack, **options) as (_, report):
        return report()


def in_namespace(namespace: str) -> list[int]:
    """The host pids of the processes in a PID namespace (as /proc/PID/ns/pid names it)."""
    pids = []
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if entry.name.isdigit() and os.readlink(entry / "ns" / "pid") == namespace:
                pids.append(int(entry.name))
    return pids


@at_every_level
def test_every_landlock_level_confines_fully_and_only_its_absence_is_missing(landlock_level, monkeypatch):
    assert confine.missing_features() == []
    monkeypatch.setenv(landlock.CAP_VARIABLE, "0")
    monkeypatch.setattr(host.cgroup, "problem", lambda: "cgroup memory and pids controllers (...)")
    with pytest.raises(SandboxUnavailableError, match="Landlock"):
        Sandbox(LIMITS, [], [DOT])
    assert confine.missing_features() == [
        f"Landlock, which {landlock.CAP_VARIABLE}=0 turns off: unset it",
        "cgroup memory and pids controllers (...)",
    ]
    monkeypatch.setattr(host.landlock, "abi", lambda: 0)
    assert "Linux 5.13+" in confine.missing_features()[0]


def test_a_cap_that_is_not_a_version_is_one_line_naming_it(monkeypatch):
    monkeypatch.setenv(landlock.CAP_VARIABLE, "six")
    with pytest.raises(ValueError, match=f"^{landlock.CAP_VARIABLE}='six' is not a Landlock ABI version"):
        Sandbox(LIMITS, [], [DOT])


def test_trusted_submissions_get_whatever_confinement_the_host_has(monkeypatch, instructor):
    monkeypatch.setattr(host.cgroup, "problem", lambda: "cgroup memory and pids controllers (...)")
    with pytest.raises(SandboxUnavailableError, match="cgroup memory"):
        Sandbox(LIMITS, [], [DOT])
    sandbox = Sandbox(LIMITS, [], [DOT], trusted=True)
    sandbox.close()
    outcome = confined(lambda: attempt(lambda: (instructor / "gradebook.txt").read_text()), trusted=True)
    assert outcome == "EACCES"


@pytest.fixture
def course_in_tmp():
    """/tmp/<random>/course, readable by anyone (as a clone is; pytest's own folders are not)."""
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    folder.chmod(0o755)
    (folder / "course").mkdir(mode=0o755)
    yield folder / "course"
    shutil.rmtree(folder)


@at_every_level
def test_a_readable_folder_in_tmp_stays_readable_and_the_scratch_moves_elsewhere(course_in_tmp):
    """A course cloned into /tmp keeps its interpreter and modules there: the sandbox must still read them
    (and write nothing there), so /tmp stays as it is and the scratch is the next free temporary folder."""
    tmp_path = course_in_tmp
    (tmp_path / "module.py").write_text("answer = 42\n")
    (tmp_path.parent / "beside.txt").write_text("not readable")

    def attack():
        import tempfile

        def write():
            (tmp_path / "planted.py").write_text("x")

        return [
            (tmp_path / "module.py").read_text(),
            attempt(write),
            attempt(lambda: (tmp_path.parent / "beside.txt").read_text()),
            tempfile.gettempdir(),
        ]

    read, written, beside, scratch = confined(attack, readable=[tmp_path])
    assert read == "answer = 42\n"
    assert written in {"EACCES", "EROFS"}
    assert beside == "EACCES"
    assert scratch != "/tmp"
    assert not (tmp_path / "planted.py").exists()


@at_every_level
def test_reading_protected_files_fails_by_every_route(instructor):
    secret, solutions = instructor / "gradebook.txt", instructor / "course" / "solutions"
    worker = os.getpid()

    def attack():
        scratch = Path.cwd()
        course = os.open(instructor / "course", os.O_RDONLY | os.O_DIRECTORY)
        os.symlink(secret, scratch / "link")

        def reopened():
            path_only = os.open(secret, os.O_PATH)
            return open(f"/proc/self/fd/{path_only}").read()

        def listed(path, dir_fd=None):
            names = os.listdir(os.open(path, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dir_fd))
            if {"answer.py", "gradebook.txt"} & set(names):
                raise AssertionError(f"listed {names}")

        def mapped():
            with open(secret, "rb") as file:
                mmap.mmap(file.fileno(), 0, prot=mmap.PROT_READ)

        def via_sqlite():
            sqlite3.connect(f"file:{secret}?mode=ro", uri=True).execute("select * from sqlite_master")

        return {
            "public module": Path(instructor / "course" / "public.py").read_text(),
            "path": attempt(lambda: open(secret).read()),
            "excluded inside readable": attempt(lambda: (solutions / "answer.py").read_text()),
            "excluded listed": attempt(lambda: listed(solutions)),
            "repository's solutions": attempt(lambda: (REPO / "solutions" / "__init__.py").read_text()),
            "dir_fd": attempt(lambda: os.open("solutions/answer.py", os.O_RDONLY, dir_fd=course)),
            "dir_fd ..": attempt(lambda: os.open("../gradebook.txt", os.O_RDONLY, dir_fd=course)),
            "listdir(fd)": attempt(lambda: listed("solutions", dir_fd=course)),
            "listdir(fd) ..": attempt(lambda: listed("..", dir_fd=course)),
            "/proc/self/root": attempt(lambda: open(f"/proc/self/root{secret}").read()),
            "/proc/worker/root": attempt(lambda: open(f"/proc/{worker}/root{secret}").read()),
            "/proc/worker/environ": attempt(lambda: open(f"/proc/{worker}/environ").read()),
            "O_PATH reopened": attempt(reopened),
            "symlink": attempt(lambda: (scratch / "link").read_text()),
            "hard link": attempt(lambda: os.link(secret, scratch / "hard")),
            "sqlite URI": attempt(via_sqlite),
            "mmap": attempt(mapped),
            "instructor's home": attempt(lambda: os.listdir(Path.home())),
        }

    outcome = confined(attack, readable=[instructor / "course"], excluded=[solutions])
    assert outcome.pop("public module") == "PUBLIC = 1\n"
    # Excluded folders and the worker's home are empty tmpfs in the sandbox's view: listing shows nothing.
    assert outcome.pop("instructor's home") == "done"
    assert outcome.pop("excluded listed") == "done"
    assert outcome.pop("listdir(fd)") == "done"
    assert outcome.pop("/proc/worker/root") in {"ENOENT", "EACCES"}
    assert outcome.pop("/proc/worker/environ") in {"ENOENT", "EACCES"}
    assert set(outcome.values()) <= {"EACCES", "ENOENT", "EXDEV", "OperationalError"}, outcome
    _intact(instructor)


@at_every_level
def test_writing_deleting_and_renaming_outside_scratch_fails(instructor, tmp_path):
    (tmp_path / "submission.ipynb").write_text(SECRET)
    libc = ctypes.CDLL(None, use_errno=True)

    def unmount(path):
        if libc.umount2(path.encode(), 2) != 0:  # MNT_DETACH: /proc would reveal the host's /proc
            raise OSError(ctypes.get_errno(), "umount")

    def attack():
        return {
            "write": attempt(lambda: (instructor / "gradebook.txt").write_text("forged")),
            "create": attempt(lambda: (instructor / "new").write_text("x")),
            "delete": attempt(lambda: (instructor / "gradebook.txt").unlink()),
            "rename": attempt(lambda: (instructor / "gradebook.txt").rename(instructor / "moved")),
            "rename into scratch": attempt(lambda: os.rename(instructor / "gradebook.txt", "stolen")),
            "test's tmp dir": attempt(lambda: (tmp_path / "submission.ipynb").write_text("forged")),
            "cgroup escape": attempt(lambda: Path("/sys/fs/cgroup/memory/cgroup.procs").write_text("1")),
            "unmount": attempt(lambda: unmount("/proc")),
            "scratch is the working folder": Path("planted").write_text("x") and os.getcwd(),
        }

    with running(attack) as (sandbox, report):
        outcome = report()
    assert outcome.pop("scratch is the working folder") == sandbox.scratch == _SCRATCH
    assert not Path(_SCRATCH, "planted").exists()
    assert set(outcome.values()) <= {"EACCES", "ENOENT", "EXDEV", "EPERM", "EROFS"}, outcome
    assert (tmp_path / "submission.ipynb").read_text() == SECRET
    _intact(instructor)


@at_every_level
def test_the_instructors_files_keep_their_length_mode_and_times(instructor):
    """Truncation by path is Landlock's only from ABI 3, and a file's mode, times and attributes never
    are: a file anyone may write could be emptied or touched, and a grader that is not root gives its
    notebooks its own uid, which owns the instructor's files. The read-only mounts keep them all."""
    gradebook, shared = instructor / "gradebook.txt", instructor / "shared.log"

    def attack():
        outcome = {}
        for path in (gradebook, shared):
            outcome |= {
                f"truncate {path.name}": attempt(lambda path=path: os.truncate(path, 0)),
                f"O_RDONLY|O_TRUNC {path.name}": attempt(
                    lambda path=path: os.close(os.open(path, os.O_RDONLY | os.O_TRUNC))
                ),
                f"chmod {path.name}": attempt(lambda path=path: os.chmod(path, 0)),
                f"touch {path.name}": attempt(lambda path=path: os.utime(path, None)),
                f"setxattr {path.name}": attempt(lambda path=path: os.setxattr(path, "user.forged", b"1")),
            }
        return outcome

    before = {path: os.stat(path).st_mtime_ns for path in (gradebook, shared)}
    outcome = confined(attack, readable=[instructor])
    assert set(outcome.values()) <= {"EROFS", "EPERM", "EACCES"}, outcome
    assert {path: os.stat(path).st_mtime_ns for path in (gradebook, shared)} == before
    _intact(instructor)


@at_every_level
def test_scratch_serves_what_notebooks_do_and_moves_across_its_folders_by_copying(landlock_level):
    """Below ABI 2 Landlock refuses every rename or link across folders, the scratch's own included:
    os.rename says EXDEV, which shutil.move (and so every library moving files) answers by copying."""

    def attack():
        import shutil
        import tempfile

        with tempfile.NamedTemporaryFile("w", delete=False) as file:
            file.write("cache")
        folder = tempfile.mkdtemp()
        os.replace(file.name, file.name + ".done")
        os.mkdir("other")
        Path(folder, "renamed").write_text("x")
        Path(folder, "moved").write_text("x")
        return {
            "rename across folders": attempt(lambda: os.rename(Path(folder, "renamed"), "other/renamed")),
            "move across folders": shutil.move(Path(folder, "moved"), "other/moved") and "done",
            "truncate own file": attempt(lambda: os.truncate(file.name + ".done", 1)),
            "files": sorted(os.listdir("other")),
        }

    outcome = confined(attack)
    assert outcome.pop("rename across folders") == ("EXDEV" if landlock_level < 2 else "done")
    moved = ["moved"] if landlock_level < 2 else ["moved", "renamed"]
    assert outcome == {"move across folders": "done", "truncate own file": "done", "files": moved}


def test_scratch_holds_no_more_than_its_size():
    def attack():
        written, chunk = 0, b"x" * MiB
        with contextlib.suppress(OSError):
            for index in range(64):
                with open(f"fill-{index}", "wb") as file:
                    for _ in range(4):
                        file.write(chunk)
                        file.flush()
                        written += len(chunk)
        return written

    assert confined(attack) <= LIMITS.scratch_bytes


@at_every_level
def test_only_the_real_dot_runs():
    def attack():
        shutil.copy("/bin/sh", "dot")
        os.chmod("dot", 0o755)
        return {
            "dot -V": subprocess.run([DOT, "-V"], capture_output=True, text=True).stderr,
            "sh": attempt(lambda: subprocess.run(["/bin/sh", "-c", "true"])),
            "python": attempt(lambda: subprocess.run([sys.executable, "-c", "pass"])),
            "sh named dot": attempt(lambda: subprocess.run(["./dot", "-c", "true"])),
            "sh named dot on PATH": attempt(lambda: subprocess.run(["dot", "-c", "true"], env={"PATH": "."})),
        }

    outcome = confined(attack)
    assert "graphviz version" in outcome.pop("dot -V")
    assert set(outcome.values()) == {"EACCES"}, outcome


def test_no_network_even_to_a_server_on_loopback(landlock_level):
    """Below ABI 4 a notebook may bind a port, in a network namespace of its own that nothing reaches."""
    server = socket.create_server(("127.0.0.1", 0))
    server.setblocking(False)
    port = server.getsockname()[1]

    def attack():
        return {
            "connect": attempt(lambda: socket.create_connection(("127.0.0.1", port), timeout=2)),
            "bind": attempt(lambda: socket.create_server(("127.0.0.1", 0))),
            "udp": attempt(
                lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53))
            ),
        }

    with server:
        outcome = confined(attack)
        with pytest.raises(BlockingIOError):
            server.accept()
    assert outcome.pop("bind") == ("done" if landlock_level < 4 else "EACCES")
    assert set(outcome.values()) <= {"EACCES", "ENETUNREACH", "EADDRNOTAVAIL"}, outcome


@at_every_level
def test_the_granted_devices_ioctls_that_change_anything_are_refused():
    """Landlock scopes device ioctls from ABI 5; below it, the random devices' ioctls that change the
    entropy pool need CAP_SYS_ADMIN, which the notebook does not hold (null, zero and full have none)."""
    changing = {
        "RNDADDTOENTCNT": 0x40045201,
        "RNDZAPENTCNT": 0x5204,
        "RNDCLEARPOOL": 0x5206,
        "RNDRESEEDCRNG": 0x5207,
    }

    def attack():
        import fcntl

        with open("/dev/urandom", "wb") as device:
            return {
                name: attempt(lambda number=number: fcntl.ioctl(device, number, b"\0" * 4))
                for name, number in changing.items()
            }

    outcome = confined(attack)
    assert set(outcome.values()) == {"EPERM"}, outcome


@at_every_level
def test_no_abstract_unix_socket_outside_reaches_it():
    """Landlock scopes abstract unix sockets from ABI 6; below it, the network namespace hides them."""
    name = f"\0gradgrad-test-{os.getpid()}".encode()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    datagrams = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(name)
    datagrams.bind(name + b"-dgram")
    server.listen()
    server.setblocking(False)

    def attack():
        stream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        return {
            "connect": attempt(lambda: stream.connect(name)),
            "sendto": attempt(
                lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", name + b"-dgram")
            ),
        }

    with server, datagrams:
        outcome = confined(attack)
        with pytest.raises(BlockingIOError):
            server.accept()
        datagrams.setblocking(False)
        with pytest.raises(BlockingIOError):
            datagrams.recv(1)
    assert set(outcome.values()) <= {"ECONNREFUSED", "EPERM"}, outcome


@at_every_level
def test_signals_and_ptrace_reach_neither_the_worker_nor_a_sibling():
    received = []
    previous = signal.signal(signal.SIGUSR1, lambda *_: received.append(True))
    worker = os.getpid()
    libc = ctypes.CDLL(None, use_errno=True)

    def ptrace(pid):
        if libc.ptrace(16, pid, None, None) != 0:  # PTRACE_ATTACH
            raise OSError(ctypes.get_errno(), "ptrace")

    try:
        with running(lambda: "waiting", linger=True) as (sibling, sibling_report):
            assert sibling_report() == "waiting"

            def attack():
                return {
                    "signal worker": attempt(lambda: os.kill(worker, signal.SIGUSR1)),
                    "signal sibling": attempt(lambda: os.kill(sibling.pid, signal.SIGKILL)),
                    "ptrace worker": attempt(lambda: ptrace(worker)),
                    "ptrace sibling": attempt(lambda: ptrace(sibling.pid)),
                    "signal everything": attempt(lambda: os.kill(-1, signal.SIGUSR1)),
                }

            outcome = confined(attack)
            assert os.waitpid(sibling.pid, os.WNOHANG) == (0, 0), "the sibling sandbox was killed"
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert not received
    # kill(-1) from the init of a PID namespace reaches only that namespace: here nothing.
    assert outcome.pop("signal everything") == "ESRCH"
    assert set(outcome.values()) <= {"ESRCH", "EPERM"}, outcome


def test_close_leaves_nothing_running_not_even_a_daemon():
    def attack():
        ready, started = os.pipe()
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                signal.signal(signal.SIGTERM, signal.SIG_IGN)
                os.write(started, b"!")
                time.sleep(600)
            os._exit(0)
        os.read(ready, 1)
        return len([p for p in os.listdir("/proc") if p.isdigit()])

    with running(attack, linger=True) as (sandbox, report):
        assert report() == 3  # itself, its zombie child and the daemon
        namespace = os.readlink(f"/proc/{sandbox.pid}/ns/pid")
        assert len(in_namespace(namespace)) == 3
        sandbox.close()
        assert in_namespace(namespace) == []


def test_forks_are_capped():
    def attack():
        started = 0
        for _ in range(200):
            try:
                if os.fork() == 0:
                    time.sleep(5)
                    os._exit(0)
                started += 1
            except BlockingIOError:
                break
        return started

    assert confined(attack) < LIMITS.max_processes
    assert subprocess.run(["true"]).returncode == 0


def test_the_notebook_as_a_whole_is_capped_in_memory():
    def attack():
        children = []
        for _ in range(4):
            child = os.fork()
            if child == 0:
                hoard = b"\1" * (600 * MiB)
                time.sleep(1)
                os._exit(len(hoard) and 0)
            children.append(child)
        return [os.waitpid(child, 0)[1] for child in children]

    with running(attack) as (sandbox, report):
        statuses = report()
        assert sandbox.out_of_memory()
    assert any(os.WIFSIGNALED(s) and os.WTERMSIG(s) == signal.SIGKILL for s in statuses), statuses
    assert subprocess.run(["true"]).returncode == 0


@at_every_level
def test_root_becomes_an_unprivileged_user_that_can_still_import_the_standard_library():
    def attack():
        for name in [m for m in sys.modules if m.split(".")[0] in {"json", "email", "xml"}]:
            del sys.modules[name]
        import email.parser
        import json
        import xml.dom.minidom

        status = dict(line.split(":\t") for line in Path("/proc/self/status").read_text().splitlines())
        return {
            "uid": os.getuid(),
            "groups": os.getgroups(),
            "capabilities": int(status["CapEff"], 16) | int(status["CapBnd"], 16),
            "no_new_privs": status["NoNewPrivs"],
            "imports": [json.dumps([1]), email.parser.__name__, xml.dom.minidom.__name__],
            "home": os.environ["HOME"],
        }

    outcome = confined(attack)
    assert outcome["uid"] != 0
    assert outcome["groups"] == []
    assert outcome["capabilities"] == 0
    assert outcome["no_new_privs"] == "1"
    assert outcome["imports"] == ["[1]", "email.parser", "xml.dom.minidom"]
    assert outcome["home"] == _SCRATCH
