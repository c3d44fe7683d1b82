"""What a rerun must grade again, and why, so that no grade in the folder is ever stale.

A notebook's grade rests on three things, its *basis*: the file handed in (name and bytes), the
version of its lesson (source notebook and grading code) and the options that can change a grade
(limits, seed). A rerun grades again every notebook whose basis changed, grades those never graded,
forgets those no longer handed in, and keeps the rest as they are.
"""

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course.submissions import Submission
from autograder.records.journal import Recorded

MISSING = "missing"
# How each option that can change a grade is typed on the command line.
OPTION_FLAGS = {
    "seed": "--seed",
    "cell_timeout": "--timeout",
    "notebook_timeout": "--notebook-timeout",
    "memory_mb": "--memory-mb",
    "trusted": "--trust-submissions",
}


def submission_digest(path: Path | None) -> str:
    """A digest of what was handed in: the file's name (a renamed file is graded under a note), its
    bytes, and the `timestamp.txt` nbgrader's collect leaves beside it (a later one may change the late
    penalty). A file that cannot be read has a digest of its own, so it is graded again once it can."""
    if path is None:
        return MISSING
    digest = hashlib.sha256(path.name.encode() + b"\0")
    try:
        if path.is_symlink():
            return "link:" + hashlib.sha256(str(path.readlink()).encode()).hexdigest()
        with open(path, "rb") as file:
            digest.update(hashlib.file_digest(file, "sha256").digest())
        timestamp = path.with_name("timestamp.txt")
        if timestamp.is_file() and not timestamp.is_symlink():
            digest.update(b"\0" + timestamp.read_bytes()[:256])
    except OSError as error:
        return f"unreadable:{error.errno}"
    return digest.hexdigest()


def options_digest(options: dict) -> str:
    return hashlib.sha256(json.dumps(options, sort_keys=True).encode()).hexdigest()[:16]


def basis(submission: Submission, lesson_version: str, options: dict) -> dict[str, str]:
    return {
        "submission": submission_digest(submission.path),
        "lesson": lesson_version,
        "options": options_digest(options),
    }


def changed_options(before: dict, now: dict) -> list[str]:
    """'--timeout 60 → 30' for each option that differs, in command-line words."""
    return [
        f"{flag} {_shown(before.get(name))} → {_shown(now.get(name))}"
        for name, flag in OPTION_FLAGS.items()
        if name in before and before.get(name) != now.get(name)
    ]


def _shown(value) -> str:
    """An option's value as typed: 60 for 60.0, on or off for a flag."""
    if isinstance(value, bool):
        return "on" if value else "off"
    return f"{value:g}" if isinstance(value, int | float) else str(value)


@dataclass
class Plan:
    """What a run does: `todo` is graded, `kept` keeps its recorded rows, `forgotten` leaves the
    folder, and `line` says so before any of it happens."""

    todo: list[tuple[Submission, dict[str, str]]] = field(default_factory=list)
    kept: dict[tuple[str, ...], Recorded] = field(default_factory=dict)
    forgotten: list[tuple[str, ...]] = field(default_factory=list)
    line: str = ""


def plan(
    submissions: list[Submission],
    recorded: dict[tuple[str, ...], Recorded],
    lesson_versions: dict[str, str],
    options: dict,
    previous_options: dict,
    selected=lambda key: True,
) -> Plan:
    """Compare every notebook's basis now with the one it was graded on. Only notebooks for which
    `selected(key)` holds are graded or forgotten; the others keep their rows, stale or not, and the
    line counts those that are stale."""
    result = Plan()
    reasons: Counter[str] = Counter()
    course_changed: Counter[str] = Counter()
    stale_outside = unchanged = 0
    current = {submission.key for submission in submissions}
    for submission in submissions:
        now = basis(submission, lesson_versions[submission.assignment], options)
        before = recorded.get(submission.key)
        if before is not None and before.basis == now:
            result.kept[submission.key] = before
            unchanged += 1
            continue
        if not selected(submission.key):
            stale_outside += 1
            if before is not None:
                result.kept[submission.key] = before
            continue
        result.todo.append((submission, now))
        if before is None:
            reasons["new"] += 1
        elif before.basis["options"] != now["options"]:
            reasons["options"] += 1
        elif before.basis["lesson"] != now["lesson"]:
            course_changed[submission.assignment] += 1
        else:
            reasons["resubmitted"] += 1
    for key, entry in recorded.items():
        if key not in current:
            if selected(key):
                result.forgotten.append(key)
            else:
                result.kept[key] = entry
    result.line = _line(
        reasons,
        course_changed,
        len(result.forgotten),
        unchanged,
        stale_outside,
        changed_options(previous_options, options),
    )
    return result


def counted(number: int, noun: str) -> str:
    """'1 notebook', '3 notebooks'."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _listed(items: list[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _line(reasons, course_changed, forgotten, unchanged, stale_outside, option_changes) -> str:
    """One line saying what the run grades, regrades and forgets, and why."""
    regrading = []
    if reasons["resubmitted"]:
        regrading.append(f"{counted(reasons['resubmitted'], 'resubmitted notebook')}")
    for assignment, number in sorted(course_changed.items()):
        regrading.append(f"{number} of {assignment}, whose course changed")
    if reasons["options"]:
        why = ", ".join(option_changes) or "the options changed"
        regrading.append(f"{counted(reasons['options'], 'notebook')} graded under other options ({why})")
    parts = []
    if reasons["new"]:
        parts.append(f"grading {counted(reasons['new'], 'notebook')} not graded yet")
    if regrading:
        parts.append(
            "regrading " + " and ".join([", ".join(regrading[:-1]), regrading[-1]][-len(regrading) :])
        )
    if forgotten:
        parts.append(f"dropping {counted(forgotten, 'notebook')} no longer handed in")
    if not parts and stale_outside:
        parts.append("nothing to grade for --student/--assignment")
    elif not parts:
        parts.append(
            f"nothing changed since the last run: {counted(unchanged, 'notebook')} keep their grades"
        )
    elif unchanged:
        parts.append(f"{unchanged} unchanged")
    if stale_outside:
        parts.append(
            f"{counted(stale_outside, 'changed notebook')} outside --student/--assignment left as they are"
        )
    return "; ".join(parts)
