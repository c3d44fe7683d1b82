"""A stop (Ctrl-C, SIGTERM) that ends a grading run even where Python drops the exception it raises.

A signal's handler raises wherever the main thread happens to be. If that is inside a weakref callback or
a `__del__`, Python prints "Exception ignored" and carries on, and the run would grade the whole class
instead of stopping. So the handler also records the stop, and the run checks the record after each
notebook it receives (`raise_if_stopped`).
"""

import signal

from autograder.grading.errors import StoppedError

# The signals received, first first: a record Python cannot drop.
_received: list[int] = []


def stop_on_signal(signal_number: int, frame) -> None:
    """The handler of SIGINT and SIGTERM: record the stop, then raise it where the run is."""
    _received.append(signal_number)
    raise StoppedError(signal_number)


def listen() -> None:
    """Stop this run on SIGINT (Ctrl-C) and SIGTERM."""
    _received.clear()
    signal.signal(signal.SIGINT, stop_on_signal)
    signal.signal(signal.SIGTERM, stop_on_signal)


def raise_if_stopped() -> None:
    """Raise the stop that a signal asked for, if its own exception was dropped."""
    if _received:
        raise StoppedError(_received[0])
