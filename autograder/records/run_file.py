"""`DIR/run.json`: what a grading folder was graded under, and the mark that this command made it.

It holds the seed of the hidden tests' random inputs, the secret that signs the journal (student code
never sees this folder), the options that can change a grade, the version of each lesson the gradebook
holds, and what confined the last run's notebooks (a record: no grade rests on it). A rerun compares
them with its own to know what is stale. The marker lets the command refuse a folder it did not make,
rather than write over someone else's files.
"""

import json
import secrets
from dataclasses import asdict, dataclass, field
from pathlib import Path

MARKER = "gradgrad: python -m autograder grade"
NAME = "run.json"


class ForeignFolderError(ValueError):
    """`--out` names a folder this command did not make."""


@dataclass
class RunFile:
    seed: int
    journal_secret: str
    # Options that can change a grade, as the last run that finished a notebook used them.
    options: dict = field(default_factory=dict)
    # assignment -> version of the lesson registered in the gradebook.
    lessons: dict = field(default_factory=dict)
    # What confined the last run's notebooks: the Landlock ABI used, namespaces, cgroup, mounts.
    confinement: dict = field(default_factory=dict)

    @classmethod
    def open(cls, out: Path, seed: int | None) -> "RunFile":
        """The folder's run file, or a new one for an empty or absent folder (not written yet).

        A run without `--seed` keeps the folder's seed, so that a resumed run draws the same inputs;
        a run with another seed is an option change. Raises ForeignFolderError for a folder that holds
        files and no run file of ours, and ValueError for a damaged one."""
        path = out / NAME
        if not path.exists():
            if out.exists() and any(out.iterdir()):
                raise ForeignFolderError(
                    f"--out {out} holds files this command did not write (it has no {NAME}); "
                    "name a new or empty folder"
                )
            return cls(secrets.randbits(63) if seed is None else seed, secrets.token_hex(32))
        try:
            recorded = json.loads(path.read_text())
            # An earlier version of this command wrote only the seed and the secret.
            if recorded.get("made_by") != MARKER and set(recorded) != {"seed", "journal_secret"}:
                raise ForeignFolderError(
                    f"--out {out} holds a {NAME} this command did not write; name a new or empty folder"
                )
            run = cls(
                int(recorded["seed"]),
                bytes.fromhex(recorded["journal_secret"]).hex(),
                dict(recorded.get("options", {})),
                dict(recorded.get("lessons", {})),
                dict(recorded.get("confinement", {})),
            )
        except (ValueError, TypeError, KeyError, AttributeError) as error:
            if isinstance(error, ForeignFolderError):
                raise
            raise ValueError(f"{path} is damaged ({error}); grade into a new --out") from None
        if seed is not None:
            run.seed = seed
        return run

    def save(self, out: Path) -> None:
        out.mkdir(parents=True, exist_ok=True)
        temporary = out / f".{NAME}.tmp"
        temporary.write_text(json.dumps({"made_by": MARKER, **asdict(self)}, indent=1, sort_keys=True))
        temporary.replace(out / NAME)
