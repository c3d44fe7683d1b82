"""What a check says about a student's answer: passed or not, and why."""

import json
from dataclasses import asdict, dataclass


class FailedCheckError(Exception):
    """Raised inside a comparison with the message the student will read."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check, with a message a student can act on when it failed.

    Verdicts travel as JSON: reading one runs nothing.
    """

    passed: bool
    message: str = ""

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
            return cls(passed=fields["passed"] is True, message=str(fields["message"]))
        except (ValueError, TypeError, KeyError):
            return cls.failed("The checker received a malformed answer.")
