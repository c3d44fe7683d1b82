"""What a check says about a student's answer: passed or not, and why."""

import json
from dataclasses import asdict, dataclass


class FailedCheckError(Exception):
    """Raised inside a check with the message the student will read."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check, with a message a student can act on when it failed.

    Verdicts travel as JSON, never as pickles: the child that writes one ran student code, and
    unpickling what it wrote could run that code again in the processes that read it.
    """

    passed: bool
    message: str = ""
    # Which check said so, and of what: a grading worker audits these against the test cell's calls.
    kind: str = ""
    subject: str = ""

    @classmethod
    def failed(cls, message: str) -> "Verdict":
        return cls(passed=False, message=message)

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self)).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Verdict":
        """Decode a verdict; anything that is not a well-formed one is reported as such."""
        try:
            fields = json.loads(data)
            return cls(
                passed=fields["passed"] is True,
                message=str(fields["message"]),
                kind=str(fields.get("kind", "")),
                subject=str(fields.get("subject", "")),
            )
        except (ValueError, TypeError, KeyError):
            return cls.failed("The checker received a malformed answer from your code's process.")
