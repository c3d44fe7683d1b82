"""A grading worker: a warmed template process that forks an executor and a checker per notebook.

The worker imports torch, matplotlib and the checks once, warms them up, then never runs student code
itself. For each notebook it forks a fresh executor (which runs the cells) and a fresh checker (which
the test cells ask for verdicts), in one process group that is killed when the notebook is done.
Cells are sent one at a time, each with a time limit; a cell that runs too long is interrupted, and
killed with its notebook if it does not stop.

Jobs arrive on stdin and results leave on stdout as length-prefixed JSON (see `_protocol`).
"""

import contextlib
import json
import os
import select
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("module://matplotlib_inline.backend_inline")

import torch

import autograder.checks
from autograder import _checker_server, _integrity
from autograder._protocol import read_message, take_message, write_message
from autograder.grading import executor, sandbox
from autograder.grading.results import Status

# After a timeout the cell is interrupted; this long to stop on its own before it is killed.
_INTERRUPT_GRACE = 3.0
_WARM_UP_CELL = """
import matplotlib.pyplot as plt
import torch
from autograder import draw_graph

x = torch.rand(3, dtype=torch.float64, requires_grad=True)
torch.autograd.gradgradcheck(lambda t: (t ** 3).sin(), (x,))
plt.plot([0, 1], [1, 0])
plt.show()
(grad_x,) = torch.autograd.grad((x ** 2).sum(), x, create_graph=True)
draw_graph(grad_x=grad_x, x=x)
"""


def warm_up() -> executor.ExecutorShell:
    """Pay torch's, matplotlib's and IPython's first-use costs once, here, instead of per notebook."""
    torch.set_num_threads(1)
    # Importing the checks started a checker of its own; every notebook gets a forked one instead.
    autograder.checks._checker.stop()
    shell = executor.create_shell()
    executor.run_cell(shell, _WARM_UP_CELL)
    shell.reset(new_session=True)
    shell.execution_count = 1
    _integrity.take_snapshot()
    return shell


def _address_space() -> int:
    """This process's virtual size: forked children start from it, so their cap is relative to it."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _silence_stdio() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


class _Audit:
    """The verdicts the checker vouches for, one JSON line each, on a pipe that only it and the worker
    hold. The pipe is drained while cells run: a checker blocked writing to a full pipe would hang the
    check, and with it the cell."""

    def __init__(self, fd: int) -> None:
        # `open` while the checker may still write: until end of file, or until the worker closes it.
        self.fd, self.open, self._buffer = fd, True, bytearray()
        os.set_blocking(fd, False)

    def drain(self) -> None:
        while self.open:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return
            self.open = bool(chunk)
            self._buffer += chunk

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd, self.open = -1, False

    def verdicts(self) -> list[dict]:
        """The verdicts whole since the last call; a line still being written waits for the next."""
        self.drain()
        complete, _, self._buffer = self._buffer.rpartition(b"\n")
        return [json.loads(line) for line in complete.splitlines()]


class _Replies:
    """The executor's replies. Student code runs in the executor and can write to this pipe as well, so
    reading never waits past a deadline, and bytes that are not a reply raise ValueError."""

    def __init__(self, fd: int, limit: int, audit: _Audit) -> None:
        self.fd, self.limit, self.audit, self._buffer = fd, limit, audit, bytearray()

    def next(self, timeout: float) -> bytes | bool | None:
        """The next reply, None if the executor has gone, False if none was complete within `timeout`."""
        deadline = time.monotonic() + timeout
        while (message := take_message(self._buffer, self.limit)) is None:
            waiting_for = [self.fd, self.audit.fd] if self.audit.open else [self.fd]
            ready, _, _ = select.select(waiting_for, [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                return False
            if self.audit.fd in ready:
                self.audit.drain()
            if self.fd in ready:
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    return None
                self._buffer += chunk
        return message


def _decode(reply: bytes) -> dict:
    """A cell's outputs and execution count; ValueError if the reply is not what the executor sends."""
    result = json.loads(reply)
    if not (isinstance(result, dict) and set(result) == {"outputs", "execution_count"}):
        raise ValueError("not a cell's result")
    return result


def _in_child(body, *args) -> None:
    """Run a forked child's body and exit; whatever happens, it never returns into the worker."""
    try:
        body(*args)
    finally:
        os._exit(0)


class NotebookProcesses:
    """One notebook's executor and checker, forked from the warmed worker into one process group."""

    def __init__(self, shell: executor.ExecutorShell, job: dict, worker_fds: tuple[int, ...]) -> None:
        limits = ([Path(p) for p in job["protected"]], _address_space() + job["memory_mb"] * 2**20)
        # The notebook's working folder, made here so that it is removed with the notebook.
        self.folder = tempfile.mkdtemp(prefix="notebook-")
        # (read end, write end) of each pipe, named for the direction it carries.
        pipes = {
            name: os.pipe()
            for name in ("to_checker", "from_checker", "to_executor", "from_executor", "audit")
        }
        executor_fds = (
            pipes["to_executor"][0],
            pipes["from_executor"][1],
            pipes["to_checker"][1],
            pipes["from_checker"][0],
        )
        checker_fds = (pipes["to_checker"][0], pipes["from_checker"][1], pipes["audit"][1])
        worker_fds_kept = (pipes["to_executor"][1], pipes["from_executor"][0], pipes["audit"][0])
        # Each child closes every end that is not its own, and the worker's own protocol pipes: student
        # code must not be able to write a result, or an audited verdict, for the worker to read.
        every_fd = {fd for pair in pipes.values() for fd in pair} | set(worker_fds)

        self.executor = os.fork()
        if self.executor == 0:
            os.setpgid(0, 0)
            _close(every_fd - set(executor_fds))
            _in_child(_run_executor, shell, executor_fds, limits, self.folder)
        self.group = self.executor
        os.setpgid(self.executor, self.group)

        self.checker = os.fork()
        if self.checker == 0:
            os.setpgid(0, self.group)
            _close(every_fd - set(checker_fds))
            _in_child(_run_checker, checker_fds, limits, job["seed"])
        os.setpgid(self.checker, self.group)

        _close(every_fd - set(worker_fds_kept) - set(worker_fds))
        self._cells = os.fdopen(pipes["to_executor"][1], "wb")
        self._audit = _Audit(pipes["audit"][0])
        # A reply cannot be longer than what the executor can hold in its memory.
        self._replies = _Replies(pipes["from_executor"][0], job["memory_mb"] * 2**20, self._audit)

    @property
    def alive(self) -> bool:
        return self.executor is not None

    def run_cell(self, source: str, timeout: float, overrun: str) -> dict:
        """Run one cell: its outputs, execution count, status, the reason for a bad status, and the
        verdicts the checker gave while it ran. `overrun` names the limit that `timeout` enforces."""
        return self._run_cell(source, timeout, overrun) | {"verdicts": self._audit.verdicts()}

    def _run_cell(self, source: str, timeout: float, overrun: str) -> dict:
        try:
            write_message(self._cells, source.encode())
        except BrokenPipeError:
            return self._died()
        try:
            reply = self._replies.next(timeout)
            if reply is None:
                return self._died()
            status, reason = Status.OK, ""
            if reply is False:
                os.kill(self.executor, signal.SIGINT)
                if not (reply := self._replies.next(_INTERRUPT_GRACE)):
                    self.close()
                    return _no_outputs(Status.TIMEOUT, f"{overrun} and did not stop when interrupted")
                status, reason = Status.TIMEOUT, f"{overrun} and was interrupted"
            return _decode(reply) | {"status": status, "reason": reason}
        except ValueError:
            self.close()
            reason = "the notebook's process wrote something other than its results to the grader's pipe"
            return _no_outputs(Status.KERNEL_DIED, reason)

    def _died(self) -> dict:
        _, status = os.waitpid(self.executor, 0)
        self.executor = None
        if os.WIFSIGNALED(status):
            cause = f"the notebook's process was ended by {signal.Signals(os.WTERMSIG(status)).name}"
            cause += " (out of memory, or a crash)"
        else:
            cause = f"the notebook's process exited with code {os.WEXITSTATUS(status)}"
        self.close()
        return _no_outputs(Status.KERNEL_DIED, cause)

    def close(self) -> None:
        """Kill everything the notebook started (its whole group) and reap our two children."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.group, signal.SIGKILL)
        for pid in (self.executor, self.checker):
            if pid is not None:
                os.waitpid(pid, 0)
        self.executor = self.checker = None
        self._cells.close()
        os.close(self._replies.fd)
        self._audit.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _close(fds) -> None:
    for fd in fds:
        os.close(fd)


def _no_outputs(status: Status, reason: str) -> dict:
    return {"outputs": [], "execution_count": None, "status": status, "reason": reason, "verdicts": []}


def _run_executor(shell, fds: tuple[int, int, int, int], limits, folder: str) -> None:
    """The forked executor: run each cell it is sent and reply with its outputs, until end of input."""
    cells_in, results_out, to_checker, from_checker = fds
    os.chdir(folder)
    _silence_stdio()
    autograder.checks._checker.attach(os.fdopen(to_checker, "wb"), os.fdopen(from_checker, "rb"))
    cells, results = os.fdopen(cells_in, "rb"), os.fdopen(results_out, "wb")
    sandbox.install(*limits)
    # The worker interrupts a cell that runs too long; an interrupt that arrives just after the cell
    # ended must not kill the executor while it waits for the next one.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while (source := read_message(cells)) is not None:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        outputs, count = executor.run_cell(shell, source.decode())
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        write_message(results, json.dumps({"outputs": outputs, "execution_count": count}).encode())


def _run_checker(fds: tuple[int, int, int], limits, seed: int) -> None:
    """The forked checker: pristine, since it was forked before any student code ran."""
    _silence_stdio()
    sandbox.install(*limits)
    requests, replies, audit = os.fdopen(fds[0], "rb"), os.fdopen(fds[1], "wb"), os.fdopen(fds[2], "wb")
    _checker_server.serve(requests, replies, seed=seed, audit=audit)


def grade_notebook(shell: executor.ExecutorShell, job: dict, worker_fds: tuple[int, ...]) -> list[dict]:
    """Run every code cell of one notebook; a cell after the notebook's death is reported, not run."""
    processes = NotebookProcesses(shell, job, worker_fds)
    budget = job["notebook_timeout"]
    notebook_overrun = f"the notebook ran past its {job['notebook_timeout']:g} s limit"
    results = []
    try:
        for source in job["cells"]:
            if processes.alive and budget <= 0:
                # The notebook's time is up: the cells left are not started.
                processes.close()
                results.append(_no_outputs(Status.TIMEOUT, notebook_overrun))
            elif not processes.alive:
                results.append(_no_outputs(results[-1]["status"], results[-1]["reason"]))
            else:
                started = os.times().elapsed
                if budget < job["cell_timeout"]:
                    results.append(processes.run_cell(source, budget, notebook_overrun))
                else:
                    overrun = f"the cell ran past {job['cell_timeout']:g} s"
                    results.append(processes.run_cell(source, job["cell_timeout"], overrun))
                budget -= os.times().elapsed - started
    finally:
        if processes.alive:
            processes.close()
    return results


def main() -> None:
    requests, replies = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    # Nothing but results may reach the main process: stray prints go nowhere.
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    shell = warm_up()
    worker_fds = (requests.fileno(), replies.fileno())
    while (job := read_message(requests)) is not None:
        results = grade_notebook(shell, json.loads(job), worker_fds)
        write_message(replies, json.dumps(results).encode())


if __name__ == "__main__":
    main()
