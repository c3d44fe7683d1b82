"""Running a notebook's cells in a forked child: a minimal IPython shell that records nbformat outputs.

A Jupyter kernel costs seconds to start and import torch; this shell is built once in the warmed worker
and inherited by every forked child, so running a submission costs only its cells. Outputs are
recorded the way a kernel would send them (streams, displays, execute results, errors), so nbgrader
grades the executed notebook exactly as it grades one run by a kernel.
"""

import importlib
import io
import json
import os
import select
import signal
import sys
import time

from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets import Type
from traitlets.config import Config

import autograder.checks
from autograder.probe import measure
from autograder.wire import arrays
from autograder.wire.protocol import read_message, write_message
from autograder.wire.verdict import ended_early

# What one cell may print or display before the rest is cut: a student who prints in a loop keeps a
# readable notebook, and the grader's memory stays bounded.
OUTPUT_LIMIT = 1_000_000
_CUT = "\n[... output cut: this cell printed or displayed more than {limit:,} characters]\n"
# Messages from the worker: a cell to run, or a check's request to measure the student's function.
CELL, PROBE = b"c", b"p"


class _Recorder:
    """The outputs of the cell that is running, in the order they happened, up to OUTPUT_LIMIT
    characters; past it, one visible note says the rest was cut."""

    def __init__(self) -> None:
        self.outputs: list[dict] = []
        self.size = 0

    def start(self) -> None:
        self.outputs, self.size = [], 0

    def _room(self, wanted: int) -> int:
        """How much of `wanted` characters still fits; the first overflow adds the note."""
        room = max(OUTPUT_LIMIT - self.size, 0)
        if wanted > room and self.size <= OUTPUT_LIMIT:
            self.size = OUTPUT_LIMIT + 1
            self.outputs.append(
                {"output_type": "stream", "name": "stdout", "text": _CUT.format(limit=OUTPUT_LIMIT)}
            )
            return room
        self.size += wanted
        return wanted

    def stream(self, name: str, text: str) -> None:
        text = text[: self._room(len(text))]
        if not text:
            return
        if self.outputs and self.outputs[-1].get("name") == name:
            self.outputs[-1]["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def display(self, data: dict, metadata: dict, execution_count: int | None = None) -> None:
        size = len(json.dumps(data, default=str))
        if self._room(size) < size:
            return
        output = {"output_type": "display_data", "data": data, "metadata": metadata}
        if execution_count is not None:
            output |= {"output_type": "execute_result", "execution_count": execution_count}
        self.outputs.append(output)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self.outputs.append(
            {"output_type": "error", "ename": ename, "evalue": evalue, "traceback": traceback}
        )


_recorder = _Recorder()


class _Stream(io.TextIOBase):
    """sys.stdout or sys.stderr for student code: text becomes a stream output of the running cell."""

    def __init__(self, name: str) -> None:
        self.name = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        _recorder.stream(self.name, text)
        return len(text)


class _DisplayPublisher(DisplayPublisher):
    def publish(self, data, metadata=None, *args, **kwargs) -> None:
        _recorder.display(data, metadata or {})


class _DisplayHook(DisplayHook):
    """The value of a cell's last expression becomes its execute_result, as in a kernel."""

    def start_displayhook(self) -> None:
        pass

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        _recorder.display(format_dict, md_dict or {}, execution_count=self.prompt_count)

    def finish_displayhook(self) -> None:
        pass


class ExecutorShell(InteractiveShell):
    displayhook_class = Type(_DisplayHook)
    display_pub_class = Type(_DisplayPublisher)

    def enable_gui(self, gui=None) -> None:
        """Inline figures need no event loop."""

    def _showtraceback(self, etype, evalue, stb: list[str]) -> None:
        _recorder.error(etype.__name__, str(evalue), stb)


def create_shell() -> ExecutorShell:
    """Built once in the warmed worker; every forked child inherits it ready to run.

    Its history is never opened on disk: every notebook's process would inherit the open database,
    shared by all of the instructor's IPython sessions, and student code could write into it.
    """
    shell = ExecutorShell.instance(history_length=0, config=Config(HistoryManager={"enabled": False}))
    shell.enable_matplotlib("inline")
    return shell


def run_cell(shell: ExecutorShell, source: str) -> tuple[list[dict], int]:
    """Run one cell as a kernel would; return its outputs and execution count."""
    _recorder.start()
    sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
    try:
        shell.run_cell(source, store_history=True)
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    return _recorder.outputs, shell.execution_count - 1


def _measure_in_child(shell: ExecutorShell, request: dict, reply_fd: int) -> None:
    """In a child forked for one check: the student's function measured, sent as plain numbers."""
    try:
        payload = arrays.pack(measure.measure_in(request, shell.user_ns))
    except BaseException as error:  # noqa: BLE001 - the child must always answer, whatever it ran
        payload = arrays.pack({"refused": f"The checker could not run your code: {type(error).__name__}"})
    with os.fdopen(reply_fd, "wb") as reply:
        reply.write(payload)
    os._exit(0)


def probe(shell: ExecutorShell, request: dict) -> bytes:
    """One check's measurement, taken in a forked child so that the check leaves the notebook as it
    was; a child that runs past the check's time limit is killed, one that dies is reported."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _measure_in_child(shell, request, write_fd)
    os.close(write_fd)
    timeout = float(request["timeout"])
    chunks, timed_out, deadline = [], False, time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        if not select.select([read_fd], [], [], remaining)[0]:
            continue
        chunk = os.read(read_fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        message = (
            f"Your code did not finish within {timeout:g} s. Look for a loop that never ends in forward "
            "or backward."
        )
    elif chunks:
        return b"".join(chunks)
    else:
        message = ended_early(status)
    return arrays.pack({"refused": message})


def serve(shell: ExecutorShell, requests_fd: int, replies_fd: int) -> None:
    """The executor's loop: run each cell, or measure for a check, as the worker asks, until it stops."""
    requests, replies = os.fdopen(requests_fd, "rb"), os.fdopen(replies_fd, "wb")
    # A lesson's own cells may call the checks to show what they say; no interpreter may be started here.
    autograder.checks._checker.fork_instead = True
    # Import caches filled in the worker describe folders as they were before the sandbox hid some:
    # forgotten, every notebook's imports see the same files, so the same answer fails the same way.
    importlib.invalidate_caches()
    # The worker interrupts a cell that runs too long; an interrupt that arrives just after the cell
    # ended must not kill the executor while it waits for the next one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while (message := read_message(requests)) is not None:
        kind, body = message[:1], message[1:]
        if kind == PROBE:
            write_message(replies, probe(shell, arrays.unpack(body)))
            continue
        signal.signal(signal.SIGINT, signal.default_int_handler)
        outputs, count = run_cell(shell, body.decode())
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        write_message(replies, json.dumps({"outputs": outputs, "execution_count": count}).encode())
