"""A progress line for long grading runs, on a terminal or in a CI log, without third-party packages."""

import shutil
import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import Self, TextIO

# A terminal redraws in place, so it can afford to refresh often; a log keeps every line, so it gets few.
_TTY_INTERVAL = 0.1
_LOG_INTERVAL = 5.0
_LOG_FRACTION = 0.1
_BAR_WIDTH = 20


def format_duration(seconds: float) -> str:
    """'42s', '3m05s', '1h02m05s': unambiguous in a log line, unlike '3:05'."""
    minutes, secs = divmod(max(0, round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes:02d}m{secs:02d}s"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class Progress:
    """Count, percent, elapsed time and ETA of a run of `total` items, shown on `stream` as items finish.

    `done` is where a resumed run starts: those items count towards the total, but the ETA is the
    average time of the items finished in this run, since the resumed ones took no time here.
    `advance` may be called from several threads (for instance from futures' done-callbacks).
    """

    def __init__(
        self,
        total: int,
        *,
        done: int = 0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.done = done
        self._resumed = done
        self._stream = sys.stderr if stream is None else stream
        self._tty = self._stream.isatty()
        self._clock = clock
        self._start = clock()
        self._label = ""
        self._lock = threading.Lock()
        self._shown_done = done
        self._shown_at = self._start
        self._width = 0

    def __enter__(self) -> Self:
        if self._tty:
            self._show(self._start)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Show where the run stopped, even when it was interrupted between two updates."""
        with self._lock:
            if self.done != self._shown_done:
                self._show(self._clock())
            if self._tty:
                self._stream.write("\n")
                self._stream.flush()

    def advance(self, label: str = "") -> None:
        """Count one finished item; `label` names it on the line, so a stuck run shows where it is."""
        with self._lock:
            self.done += 1
            self._label = label
            now = self._clock()
            if self._due(now):
                self._show(now)

    def _due(self, now: float) -> bool:
        if self.done >= self.total:
            return True
        if self._tty:
            return now - self._shown_at >= _TTY_INTERVAL
        return (
            self.done - self._shown_done >= _LOG_FRACTION * self.total
            or now - self._shown_at >= _LOG_INTERVAL
        )

    def _show(self, now: float) -> None:
        line = self._line(now)
        if self._tty:
            line = f"{self._bar()} {line}"[: shutil.get_terminal_size().columns - 1]
            # Spaces wipe the tail of a longer previous line, which "\r" alone leaves on screen.
            self._stream.write("\r" + line.ljust(self._width))
            self._width = len(line)
        else:
            self._stream.write(line + "\n")
        self._stream.flush()
        self._shown_done = self.done
        self._shown_at = now

    def _line(self, now: float) -> str:
        """'12/40  30%  elapsed 42s  ETA 1m38s  alice/01_saving_inputs', the text of both modes."""
        elapsed = now - self._start
        finished_here = self.done - self._resumed
        eta = (
            format_duration(elapsed / finished_here * max(0, self.total - self.done))
            if finished_here > 0
            else "--"
        )
        count = f"{self.done:>{len(str(self.total))}}/{self.total}"
        text = f"{count} {self._percent():>3}%  elapsed {format_duration(elapsed)}  ETA {eta}"
        return f"{text}  {self._label}" if self._label else text

    def _percent(self) -> int:
        """Rounded down, so that 100% means finished and not 199 of 200."""
        return 100 if self.total <= 0 else 100 * self.done // self.total

    def _bar(self) -> str:
        filled = _BAR_WIDTH * min(self._percent(), 100) // 100
        return "[" + "#" * filled + "." * (_BAR_WIDTH - filled) + "]"
