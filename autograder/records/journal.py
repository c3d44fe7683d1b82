"""What a grading folder holds graded, written as it goes: a run killed at any point resumes from it.

Each finished notebook is one JSON line, appended and flushed to disk only after its grades are in
the gradebook: its rows, and the basis they were graded on (the file's digest, the lesson's version,
the options). A later run skips a notebook whose basis is unchanged and grades the rest again; a
notebook that was being recorded when the run died is graded again, and its gradebook entries are
overwritten, not added to. The last line of a notebook is the one that counts.

A resumed run trusts only what this run wrote: every line carries an HMAC under a secret kept beside
the journal (in the output folder's run.json, which student code cannot see), and a line whose MAC or
shape is wrong, whoever wrote it, is ignored; its notebook is graded again.
"""

import hashlib
import hmac
import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from autograder.records.results import QuestionResult, Status

_TEXT_FIELDS = ("student", "assignment", "notebook", "question", "status", "reason")
_NUMBER_FIELDS = ("score", "max_score")
_FIELDS = {field.name for field in fields(QuestionResult)}


@dataclass(frozen=True)
class Recorded:
    """A notebook's rows, and what they were graded on (see `autograder.grading.staleness.Basis`)."""

    basis: dict[str, str]
    rows: list[QuestionResult]


def _mac(secret: bytes, body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, canonical.encode(), hashlib.sha256).hexdigest()


def _row(value: object, key: tuple[str, ...]) -> QuestionResult:
    """A journaled row, or ValueError if it is not one this run could have written for `key`."""
    if not (isinstance(value, dict) and set(value) == _FIELDS):
        raise ValueError("not a row")
    if not all(isinstance(value[name], str) for name in _TEXT_FIELDS):
        raise ValueError("not a row's text")
    if not all(type(value[name]) in (int, float) for name in _NUMBER_FIELDS):
        raise ValueError("not a row's points")
    if (value["student"], value["assignment"], value["notebook"]) != key:
        raise ValueError("a row of another notebook")
    if not 0 <= value["score"] <= value["max_score"]:
        raise ValueError("points out of range")
    return QuestionResult(**(value | {"status": Status(value["status"])}))


def _entry(line: str, secret: bytes) -> tuple[tuple[str, ...], Recorded]:
    """One journal line, checked; ValueError (or a JSON error, which is one) for anything else. A line
    of an earlier version, without a basis, is not one: its notebook is graded again."""
    entry = json.loads(line)
    if not (isinstance(entry, dict) and set(entry) == {"key", "basis", "rows", "mac"}):
        raise ValueError("not a journal entry")
    body = {"key": entry["key"], "basis": entry["basis"], "rows": entry["rows"]}
    if not (isinstance(entry["mac"], str) and hmac.compare_digest(entry["mac"], _mac(secret, body))):
        raise ValueError("not written by this run")
    key = entry["key"]
    if not (isinstance(key, list) and len(key) == 3 and all(isinstance(part, str) for part in key)):
        raise ValueError("not a notebook's key")
    if not isinstance(entry["rows"], list):
        raise ValueError("not a list of rows")
    basis = entry["basis"]
    if not (isinstance(basis, dict) and all(isinstance(v, str) for v in basis.values())):
        raise ValueError("not a basis")
    return tuple(key), Recorded(basis, [_row(row, tuple(key)) for row in entry["rows"]])


class Journal:
    """The journal at `path`, its lines signed with `secret`."""

    def __init__(self, path: Path, secret: bytes) -> None:
        self.path, self._secret = path, secret

    def load(self) -> dict[tuple[str, ...], Recorded]:
        """Finished notebooks, their rows and basis. Lines this folder's runs did not write, and a last
        line cut short by a kill, are ignored."""
        finished = {}
        if not self.path.exists():
            return finished
        for line in self.path.read_bytes().decode("utf-8", errors="replace").splitlines():
            try:
                key, recorded = _entry(line, self._secret)
            except ValueError:  # JSONDecodeError too: a garbled or forged line
                continue
            finished[key] = recorded
        return finished

    def _line(self, key: tuple[str, ...], recorded: Recorded) -> bytes:
        body = {"key": list(key), "basis": recorded.basis, "rows": [asdict(row) for row in recorded.rows]}
        return json.dumps(body | {"mac": _mac(self._secret, body)}).encode() + b"\n"

    def rewrite(self, entries: dict[tuple[str, ...], Recorded]) -> None:
        """Replace the journal by `entries`, atomically: what a run forgot (a notebook no longer handed
        in) is gone, and the lines superseded by later ones with it."""
        temporary = self.path.with_name(f".{self.path.name}.tmp")
        with open(temporary, "wb") as journal:
            journal.writelines(self._line(key, recorded) for key, recorded in sorted(entries.items()))
            journal.flush()
            os.fsync(journal.fileno())
        temporary.replace(self.path)

    def append(self, key: tuple[str, ...], recorded: Recorded) -> None:
        line = self._line(key, recorded)
        with open(self.path, "a+b") as journal:
            end = journal.seek(0, os.SEEK_END)
            if end and os.pread(journal.fileno(), 1, end - 1) != b"\n":
                # The run before was killed mid-line: end that line, or this entry would extend it.
                line = b"\n" + line
            journal.write(line)
            journal.flush()
            os.fsync(journal.fileno())
