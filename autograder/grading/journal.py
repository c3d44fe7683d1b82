"""What a grading run has finished, written as it goes: a run killed at any point resumes from it.

Each finished notebook is one JSON line, appended and flushed to disk only after its grades are in
the gradebook. A resumed run skips the notebooks listed and grades the rest; a notebook that was being
recorded when the run died is graded again, and its gradebook entries are overwritten, not added to.
"""

import json
import os
from dataclasses import asdict
from pathlib import Path

from autograder.grading.results import QuestionResult, Status


class Journal:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> dict[tuple[str, ...], list[QuestionResult]]:
        """Finished notebooks and their rows; a last line cut short by a kill is ignored."""
        finished = {}
        if not self.path.exists():
            return finished
        for line in self.path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except json.JSONDecodeError:
                continue
            rows = [QuestionResult(**(row | {"status": Status(row["status"])})) for row in entry["rows"]]
            finished[tuple(entry["key"])] = rows
        return finished

    def append(self, key: tuple[str, ...], rows: list[QuestionResult]) -> None:
        line = json.dumps({"key": list(key), "rows": [asdict(row) for row in rows]}).encode() + b"\n"
        with open(self.path, "a+b") as journal:
            end = journal.seek(0, os.SEEK_END)
            if end and os.pread(journal.fileno(), 1, end - 1) != b"\n":
                # The run before was killed mid-line: end that line, or this entry would extend it.
                line = b"\n" + line
            journal.write(line)
            journal.flush()
            os.fsync(journal.fileno())
