"""How wide a check's message is where students read it: its first line follows `AssertionError: `."""

from autograder.wire.verdict import SHOWN_AFTER, WIDTH


def widths(message: str) -> list[int]:
    """Each line's width as a notebook shows it."""
    first, *rest = message.split("\n")
    return [len(SHOWN_AFTER + first), *(len(line) for line in rest)]


def fits(message: str) -> bool:
    return max(widths(message)) <= WIDTH
