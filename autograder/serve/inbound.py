"""The exchange's inbound folder, where `nbgrader submit` leaves each submission as an entry named
`STUDENT+ASSIGNMENT+TIMESTAMP+RANDOM`, and what makes an entry admissible.

Admission reads the entry without following a link: the Unix user who owns it must be the student it
names (or the user the course maps them to); it must be whole (nbgrader writes `timestamp.txt` after
the notebooks, and nothing in it changed for a moment); and it may hold only the files the assignment
released, each a regular file of that user, no larger than the notebook size limit. What is admitted is
a copy, made from what was checked: nothing the student changes afterwards reaches the grader.
"""

import errno
import os
import pwd
import stat
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from nbgrader.utils import parse_utc

from autograder.serve.settings import Serve

# What `nbgrader submit` adds to the assignment's own files.
EXCHANGE_FILES = frozenset({"timestamp.txt", "submission_secret.txt"})
# An entry still without its timestamp.txt after this long was not left by `nbgrader submit`.
ABANDONED_SECONDS = 60.0


class RefusedError(Exception):
    """An entry that is never graded; the message says why, in a log line."""


@dataclass(frozen=True)
class Entry:
    """One submission in inbound, as its name tells it."""

    path: Path
    student: str
    assignment: str
    timestamp: datetime

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def key(self) -> tuple[str, str]:
        return (self.student, self.assignment)


def parse(path: Path) -> Entry | None:
    """The entry at `path`, split as nbgrader's collect splits it; None for a name it would not take."""
    parts = path.name.rsplit("+", 3)
    if len(parts) < 3 or not parts[0] or not parts[1]:
        return None
    try:
        timestamp = parse_utc(parts[2])
    except (ValueError, OverflowError):
        return None
    return Entry(path, parts[0], parts[1], timestamp)


def entries(inbound: Path) -> list[Path]:
    """Every name in inbound, oldest name first."""
    return sorted(inbound / name for name in os.listdir(inbound) if not name.startswith("."))


def _walk(folder: Path) -> list[tuple[Path, os.stat_result]]:
    """Everything under `folder` with its lstat, links never followed."""
    found = []
    for child in sorted(folder.iterdir()):
        status = child.lstat()
        found.append((child, status))
        if stat.S_ISDIR(status.st_mode):
            found += _walk(child)
    return found


def settled(entry: Entry, now: float, settings: Serve) -> bool:
    """Whole: `timestamp.txt` is there, and either `nbgrader submit` finished (its last step opens the
    entry to everyone, mode 777, after writing the submission secret) or nothing in the entry changed
    for `settle_seconds`. RefusedError if it never gets its timestamp.txt, or is not a folder."""
    status = entry.path.lstat()
    if not stat.S_ISDIR(status.st_mode):
        raise RefusedError("not a folder")
    contents = _walk(entry.path)
    names = {path.relative_to(entry.path).as_posix() for path, _ in contents}
    newest = max([status.st_ctime, *(s.st_ctime for _, s in contents)])
    if "timestamp.txt" not in names:
        if now - newest > ABANDONED_SECONDS:
            raise RefusedError(f"no timestamp.txt after {ABANDONED_SECONDS:g} s: not from nbgrader submit")
        return False
    submitted = stat.S_IMODE(status.st_mode) == 0o777 and names >= EXCHANGE_FILES
    return submitted or now - newest >= settings.settle_seconds


def owner_of(student: str, settings: Serve) -> int | None:
    """The uid whose entries count as `student`'s (None: any, where the course trusts names)."""
    if settings.trust_student_names:
        return None
    user = settings.users.get(student, student)
    try:
        return pwd.getpwnam(user).pw_uid
    except KeyError:
        raise RefusedError(f"no Unix user {user} hands in for {student}") from None


def _user(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def admit(entry: Entry, released: set[str], settings: Serve, into: Path) -> None:
    """Copy the entry into the new folder `into` if it is its student's and holds only what the
    assignment released (paths relative to the release folder), notebooks no larger than the limit;
    RefusedError otherwise.

    Every check is made on the file descriptor the copy reads from, opened without following a link:
    the student owns the entry and may swap a file for a link after any check made on a path."""
    expected = owner_of(entry.student, settings)
    try:
        folder = os.open(entry.path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise RefusedError(f"not a folder: {error.strerror}") from None
    try:
        owner = os.fstat(folder).st_uid
        if expected is not None and owner != expected:
            raise RefusedError(f"forged: owned by {_user(owner)}, not by {entry.student}'s user")
        _copy(folder, "", into, _Rules(expected, entry, released, settings.max_notebook_mb))
    finally:
        os.close(folder)


@dataclass(frozen=True)
class _Rules:
    owner: int | None
    entry: Entry
    released: set[str]
    notebook_mb: float


def _copy(folder: int, prefix: str, into: Path, rules: _Rules) -> None:
    """Copy the open folder `folder` (the entry's `prefix`) into `into`, checking each thing in it."""
    into.mkdir()
    for name in sorted(os.listdir(folder)):
        relative = prefix + name
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
        try:
            opened = os.open(name, flags, dir_fd=folder)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise RefusedError(f"{relative} is a symbolic link") from None
            raise RefusedError(f"{relative} cannot be read: {error.strerror}") from None
        try:
            status = os.fstat(opened)
            if rules.owner is not None and status.st_uid != rules.owner:
                owner = _user(status.st_uid)
                raise RefusedError(f"{relative} is owned by {owner}, not by {rules.entry.student}")
            if stat.S_ISDIR(status.st_mode):
                _copy(opened, relative + "/", into / name, rules)
                continue
            if not stat.S_ISREG(status.st_mode):
                raise RefusedError(f"{relative} is not a regular file")
            if relative not in rules.released and relative not in EXCHANGE_FILES:
                raise RefusedError(f"{relative} is not a file of {rules.entry.assignment}")
            limit = int(rules.notebook_mb * 2**20)
            with os.fdopen(os.dup(opened), "rb") as source:
                data = source.read(limit + 1)
            if len(data) > limit:
                raise RefusedError(f"{relative} is larger than {rules.notebook_mb:g} MB")
            (into / name).write_bytes(data)
        finally:
            os.close(opened)


def released_files(release: Path) -> set[str]:
    """The files of a released assignment, relative to its folder."""
    return {path.relative_to(release).as_posix() for path in release.rglob("*") if path.is_file()}
