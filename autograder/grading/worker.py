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
import signal
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("module://matplotlib_inline.backend_inline")

import torch

import autograder.checks
from autograder import _checker_server, _integrity
from autograder._protocol import read_message, write_message
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


def _read_reply(fd: int, stream, timeout: float) -> bytes | bool | None:
    """The next message, None if the other side died, False if none came within `timeout`."""
    ready, _, _ = select.select([fd], [], [], max(timeout, 0))
    return read_message(stream) if ready else False


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
            _in_child(_run_executor, shell, executor_fds, limits)
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
        self._results = os.fdopen(pipes["from_executor"][0], "rb")
        self._audit = os.fdopen(pipes["audit"][0], "rb", buffering=0)
        os.set_blocking(self._audit.fileno(), False)

    @property
    def alive(self) -> bool:
        return self.executor is not None

    def run_cell(self, source: str, timeout: float) -> dict:
        """Run one cell: its outputs, execution count, status, the reason for a bad status, and the
        verdicts the checker gave while it ran."""
        return self._run_cell(source, timeout) | {"verdicts": self._audited_verdicts()}

    def _audited_verdicts(self) -> list[dict]:
        """Everything the checker has vouched for since the last call (written before it replied)."""
        if self._audit.closed:
            return []
        data = b""
        while chunk := self._audit.read(1 << 16):
            data += chunk
        return [json.loads(line) for line in data.splitlines()]

    def _run_cell(self, source: str, timeout: float) -> dict:
        try:
            write_message(self._cells, source.encode())
        except BrokenPipeError:
            return self._died()
        reply = _read_reply(self._results.fileno(), self._results, timeout)
        if reply is False:
            os.kill(self.executor, signal.SIGINT)
            reply = _read_reply(self._results.fileno(), self._results, _INTERRUPT_GRACE)
            if not reply:
                self.close()
                reason = f"a cell ran past {timeout:g} s and did not stop when interrupted"
                return _no_outputs(Status.TIMEOUT, reason)
            reason = f"the cell ran past {timeout:g} s and was interrupted"
            return json.loads(reply) | {"status": Status.TIMEOUT, "reason": reason}
        if reply is None:
            return self._died()
        return json.loads(reply) | {"status": Status.OK, "reason": ""}

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
        self._results.close()
        self._audit.close()


def _close(fds) -> None:
    for fd in fds:
        os.close(fd)


def _no_outputs(status: Status, reason: str) -> dict:
    return {"outputs": [], "execution_count": None, "status": status, "reason": reason, "verdicts": []}


def _run_executor(shell, fds: tuple[int, int, int, int], limits) -> None:
    """The forked executor: run each cell it is sent and reply with its outputs, until end of input."""
    cells_in, results_out, to_checker, from_checker = fds
    os.chdir(tempfile.mkdtemp(prefix="notebook-"))
    _silence_stdio()
    autograder.checks._checker.attach(os.fdopen(to_checker, "wb"), os.fdopen(from_checker, "rb"))
    cells, results = os.fdopen(cells_in, "rb"), os.fdopen(results_out, "wb")
    sandbox.install(*limits)
    while (source := read_message(cells)) is not None:
        outputs, count = executor.run_cell(shell, source.decode())
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
    results = []
    try:
        for source in job["cells"]:
            if not processes.alive:
                results.append(_no_outputs(results[-1]["status"], results[-1]["reason"]))
                continue
            started = os.times().elapsed
            results.append(processes.run_cell(source, min(job["cell_timeout"], max(budget, 0))))
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
