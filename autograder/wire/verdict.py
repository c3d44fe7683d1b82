"""What a check says about a student's answer: passed or not, and why."""

import json
import os
import signal
import textwrap
from dataclasses import asdict, dataclass

# Columns a line of a message may take, where students read it: a notebook's output, Validate's dialog,
# the feedback, the report. Its first line follows the name of the error, as a notebook shows it.
WIDTH = 88
SHOWN_AFTER = "AssertionError: "


# Signals that end a process which crashed in native code (torch's C++), not one Python code asked for.
_CRASHES = {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT}


def ended_early(status: int) -> str:
    """What a student reads when the process running their code ended before it answered, `status` as
    os.waitpid gives it: only the causes that way of ending can have."""
    if not os.WIFSIGNALED(status):
        return _ended(f"exit code {os.WEXITSTATUS(status)}", "Does it call sys.exit or os._exit?")
    ended_by = signal.Signals(os.WTERMSIG(status))
    if ended_by not in _CRASHES:
        return _ended(ended_by.name, "Does it use too much memory, or kill its own process?")
    return _ended(
        ended_by.name,
        "It crashed in native code, as torch does on some operations under vmap, which runs a batch of "
        "incoming gradients through backward at once (check_batched_grad): .data of a gradient, for one. "
        "Compute each gradient with plain torch operations, without .data.",
    )


def _ended(cause: str, why: str) -> str:
    return f"Your code ended the checker process ({cause}) before it could answer. {why}"


# What each kind of check compares, as its passing line names it.
_CHECKED = {
    "forward": "forward values",
    "first_derivative": "first derivatives",
    "second_derivative": "second derivatives",
    "result": "result",
}


def passed_line(kind: str, name: str, on: str) -> str:
    """The one line a passing check prints in the notebook, and the class grader shows in its place: a
    test cell that printed nothing would leave a student unsure it ran. `on` tells the checks of one
    cell apart (see `autograder.checks.checked_on`). It goes to stdout, which nbgrader ignores in
    grading (stderr would cost the cell its points)."""
    return f"✓ {name}: {_CHECKED[kind]} right" + (f" on {on}" if on else "")


class FailedCheckError(Exception):
    """Raised inside a comparison with the message the student will read."""


def fitted(message: str) -> str:
    """The message with every line at most WIDTH columns, the first after SHOWN_AFTER: each line is broken
    between words, never inside one, and keeps its indentation. Its own line breaks stay."""
    lines = []
    for number, line in enumerate(message.splitlines()):
        indent = line[: len(line) - len(line.lstrip())]
        # The first line is wrapped as if it followed SHOWN_AFTER, which is then taken off again.
        first = " " * len(SHOWN_AFTER) if number == 0 else indent
        wrapped = textwrap.wrap(
            line.strip(),
            width=WIDTH,
            initial_indent=first,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [first]
        if number == 0:
            wrapped[0] = indent + wrapped[0][len(first) :]
        lines += wrapped
    return "\n".join(line.rstrip() for line in lines)


# Where a message says why a check failed and what to change. One mistake often fails every test cell of a
# Function (a forward that raises fails them all): the first cell to show its cause shows it in full.
_CAUSE = "\nLikely cause: "
# What a later cell says instead of the rest of a cause an earlier cell showed.
_TOLD_ABOVE = "The first test above that failed with it says more."
# A full stop that ends a sentence: not one inside `code`, (brackets) or an abbreviation.
_ABBREVIATIONS = ("e.g.", "i.e.")


def _first_sentence(text: str) -> str:
    depth, in_code = 0, False
    for index, character in enumerate(text):
        in_code ^= character == "`"
        depth += (character == "(") - (character == ")")
        at_end = index + 1 == len(text) or text[index + 1] == " "
        if (
            character == "."
            and at_end
            and not in_code
            and depth == 0
            and not text[: index + 1].endswith(_ABBREVIATIONS)
        ):
            return text[: index + 1]
    return text


def likely_cause(message: str) -> str:
    """The first sentence of a message's likely cause, on one line; "" where it names none."""
    _, found, rest = message.partition(_CAUSE)
    return _first_sentence(" ".join(rest.split())) if found else ""


class CausesTold:
    """The causes a notebook's failed checks have shown, and the test cell that showed each first: a later
    cell failing for the same cause gives its first sentence alone, where a student reading the notebook
    from the top has just read it all. The kernel (`autograder.checks`) and the class grader's judge keep
    one each, fed in the order the cells run, so both show the same text."""

    def __init__(self) -> None:
        self._first_cell: dict[str, object] = {}

    def shown_in(self, cell: object, message: str) -> str:
        """The failed check's `message` as test cell `cell` shows it (a cell shows one failure)."""
        before, found, rest = message.partition(_CAUSE)
        if not found:
            return message
        lines = rest.split("\n")
        # The cause runs to the first indented line (the inputs it failed on) or to the end.
        end = next((number for number, line in enumerate(lines) if line.startswith(" ")), len(lines))
        cause = " ".join(lines[:end])
        first_sentence = _first_sentence(cause)
        if self._first_cell.setdefault(cause, cell) == cell or first_sentence == cause:
            return message
        return fitted("\n".join([f"{before}{_CAUSE}{first_sentence} {_TOLD_ABOVE}", *lines[end:]]))


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check, with a message a student can act on when it failed.

    Verdicts travel as JSON: reading one runs nothing.
    """

    passed: bool
    message: str = ""

    @classmethod
    def failed(cls, message: str) -> "Verdict":
        """Every failed check's message passes here, and leaves fitted to the columns students read."""
        return cls(passed=False, message=fitted(message))

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
