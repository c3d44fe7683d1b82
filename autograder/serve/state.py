"""What the service remembers across a restart, and the status an instructor reads while it runs.

`class_grader/serve.json` holds each inbound entry already dealt with (collected, refused or
superseded), so that a restart neither collects nor logs it again, and when each student's
submissions were graded, for the per-hour limit. What is graded, and on what, is the class grader's
journal's to say: a restart grades exactly what it finds stale. Both files are replaced atomically.
"""

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

HOUR = 3600.0


def _write(path: Path, value: dict) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(value, indent=1, sort_keys=True))
    temporary.replace(path)


@dataclass
class State:
    path: Path
    # entry name -> "collected", "graded", "refused" or "superseded"
    entries: dict[str, str] = field(default_factory=dict)
    # student -> wall-clock times their submissions were graded, within the last hour
    graded_at: dict[str, list[float]] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "State":
        try:
            saved = json.loads(path.read_text())
            return cls(path, dict(saved["entries"]), {k: list(v) for k, v in saved["graded_at"].items()})
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            # Lost or damaged: every entry is looked at again, and the journal keeps grades from repeating.
            return cls(path)

    def mark(self, name: str, outcome: str) -> None:
        self.entries[name] = outcome
        self.save()

    def graded(self, student: str, now: float) -> None:
        times = [t for t in self.graded_at.get(student, []) if now - t < HOUR]
        self.graded_at[student] = [*times, now]
        self.save()

    def next_grading(self, student: str, per_hour: int, now: float) -> float | None:
        """When the student's next submission may be graded under the limit (None: now)."""
        times = sorted(t for t in self.graded_at.get(student, []) if now - t < HOUR)
        if not per_hour or len(times) < per_hour:
            return None
        return times[-per_hour] + HOUR

    def save(self) -> None:
        _write(self.path, {"entries": self.entries, "graded_at": self.graded_at})


@dataclass
class Status:
    """What an instructor reads in `class_grader/serve-status.json` (and `serve --status`)."""

    pid: int = field(default_factory=os.getpid)
    started: float = field(default_factory=time.time)
    updated: float = 0.0
    queued: int = 0
    oldest_wait_seconds: float = 0.0
    graded: int = 0
    refused: int = 0
    superseded: int = 0

    def save(self, path: Path) -> None:
        self.updated = time.time()
        _write(path, asdict(self))

    def line(self) -> str:
        return (
            f"serving since {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(self.started))} "
            f"(pid {self.pid}): "
            f"{self.queued} queued, oldest waiting {self.oldest_wait_seconds:.0f} s; {self.graded} graded, "
            f"{self.refused} refused, {self.superseded} superseded"
        )
