"""A grading worker: a warmed template process that grades one notebook at a time.

The worker imports torch, matplotlib and IPython once and warms them up; it never runs student code,
and never reads a job either. Per notebook it forks a grading child, which forks two processes, both
*before* it reads the notebook's job, while the worker's previous notebook still runs:

- the executor, confined by the kernel (`confine.Sandbox`) before any of the notebook's code runs. It
  never holds the test cells or the seed: only the cells it is sent, one at a time;
- the judge (`autograder.judge.test_cells`), which is sent the seed and then the instructor's test
  cells, runs them with the checks recorded, plans each check, and compares what the executor measured
  with the reference. It never runs student code.

Student cells go to the executor; test cells go to the judge, whose requests for measurements the
worker carries to the executor and whose answers it carries back. A cell that runs too long is
interrupted, and killed with its notebook if it does not stop.

Jobs arrive on stdin and results leave on stdout as length-prefixed JSON (see `autograder.wire.protocol`). The
run's settings (memory, excluded folders, whether submissions are trusted) come as the first argument.
"""

import contextlib
import gc
import json
import os
import select
import signal
import sys
import time
from pathlib import Path

if __name__ == "__main__":
    # torch and the rest load as millions of objects that live as long as the worker: the collector,
    # run over and over while they load, costs a tenth of the worker's start. It pauses until
    # `warm_up` has frozen them, and then runs as always.
    gc.disable()

import matplotlib

matplotlib.use("module://matplotlib_inline.backend_inline")

import torch

import autograder
import autograder.checks
from autograder.course.layout import COURSE_DIRECTORY
from autograder.judge import plan, test_cells
from autograder.probe import measure
from autograder.records.results import Status
from autograder.sandbox import confine, executor
from autograder.wire import arrays
from autograder.wire.protocol import read_message, take_message, write_message

# A grading child's exit code when the pool has closed the job pipe.
_NO_MORE_JOBS = 3
# After a timeout the cell is interrupted; this long to stop on its own before it is killed.
_INTERRUPT_GRACE = 3.0
# The executor's reply to one cell or check, and all of one notebook's, at most (cells cut their own
# output well below this; only a notebook writing to the grader's pipe itself reaches it).
_REPLY_LIMIT = 16 * 2**20
_NOTEBOOK_LIMIT = 64 * 2**20
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
# torch.func's first use costs a second or more, and only the later lessons use it: the template pays
# it, for a run that grades one of them, while its first notebook is graded, so the first notebook
# starts sooner and every later one forks warm.
_LATER_WARM_UP_CELL = """
import torch

x = torch.rand(3, dtype=torch.float64, requires_grad=True)
torch.func.grad(torch.sin)(x[0])
torch.func.jvp(torch.sin, (x,), (x,))
"""


def warm_up() -> executor.ExecutorShell:
    """Pay torch's, matplotlib's and IPython's first-use costs once, here, instead of per notebook."""
    torch.set_num_threads(1)
    shell = executor.create_shell()
    # What is loaded by now stays: frozen, it is left out of the full collection that IPython's reset
    # makes, which then looks only at what the warm-up cell made.
    gc.freeze()
    _run_and_forget(shell, _WARM_UP_CELL)

    # The judge's and the probe's first checks, on the worker's own functions, never a student's.
    def sine(x):
        return torch.sin(x)

    for kind in ("forward", "first_derivative", "second_derivative"):
        made = plan.plan_function(kind, sine, False, -1.0, 1.0)
        arrays.pack(measure.measure(made["probe"] | {"kind": kind, "name": "sine", "names": ["x"]}, sine))
    # What the host offers for confinement (the namespaces are tried in a forked process), probed once
    # here for every notebook's sandbox, instead of by each notebook's child.
    confine.missing_features()
    # Every object so far is the template's: the collector in a forked child leaves them alone, so the
    # child copies (and is charged for) fewer of the worker's pages.
    gc.freeze()
    gc.enable()
    return shell


def _run_and_forget(shell: executor.ExecutorShell, cell: str) -> None:
    """Run a warm-up cell and leave the shell as new: a notebook starts at its first cell."""
    executor.run_cell(shell, cell)
    shell.reset(new_session=True)
    shell.execution_count = 1


def warm_up_later(shell: executor.ExecutorShell) -> None:
    """The warm-ups only some lessons need, paid once in the template while its first child grades."""
    _run_and_forget(shell, _LATER_WARM_UP_CELL)
    gc.freeze()


def _sizes() -> tuple[int, int]:
    """This process's virtual and resident size: forked children start from them."""
    with open("/proc/self/statm") as statm:
        virtual, resident = statm.read().split()[:2]
    return int(virtual) * os.sysconf("SC_PAGE_SIZE"), int(resident) * os.sysconf("SC_PAGE_SIZE")


def sandbox_for(settings: dict) -> confine.Sandbox:
    """A notebook's confinement: it may read the course's public modules, and run Graphviz's dot.

    Its memory caps count from the worker's own size, which its processes start from: what the notebook
    may add is `memory_mb`, for each process (its address space) and for all of them together (every
    page they touch, the worker's pages they copy on first write included)."""
    memory = settings["memory_mb"] * 2**20
    virtual, resident = _sizes()
    limits = confine.Limits(
        memory_bytes=resident + memory,
        address_space_bytes=virtual + memory,
        max_processes=settings.get("max_processes", 64),
        max_file_bytes=min(memory, 256 * 2**20),
        max_open_files=256,
        scratch_bytes=64 * 2**20,
    )
    dot = Path("/usr/bin/dot")
    return confine.Sandbox(
        limits,
        readable=[Path(autograder.__file__).parent],
        executables=[dot] if dot.exists() else [],
        # The run names its machine's folders; wherever this worker runs, its own solutions are kept out.
        excluded=[Path(p) for p in settings["excluded"]] + [COURSE_DIRECTORY],
        trusted=settings.get("trusted", False),
        # The run's name on the notebook's cgroup, so that the run can remove it if it is killed.
        group=settings.get("group", ""),
    )


def _silence_stdio() -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)


class _Replies:
    """Messages from a process that runs student code: reading never waits past a deadline, and bytes
    that are not a message, or more of them than a notebook may send, raise ValueError."""

    def __init__(self, fd: int) -> None:
        self.fd, self._buffer, self._total = fd, bytearray(), 0

    def next(self, timeout: float) -> bytes | bool | None:
        """The next message, None if the writer has gone, False if none was complete within `timeout`."""
        deadline = time.monotonic() + timeout
        while (message := take_message(self._buffer, _REPLY_LIMIT)) is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select_readable(self.fd, remaining):
                return False
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                return None
            self._total += len(chunk)
            if self._total > _NOTEBOOK_LIMIT:
                raise ValueError("more output than the grader keeps for a notebook")
            self._buffer += chunk
        return message


def select_readable(fd: int, timeout: float) -> bool:
    return bool(select.select([fd], [], [], timeout)[0])


def _close_all_but(keep: set[int]) -> None:
    """Close every descriptor above stdio that is not in `keep`."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def _decode_cell(reply: bytes) -> dict:
    """A cell's outputs and execution count; ValueError if the reply is not what the executor sends."""
    result = json.loads(reply)
    if not (isinstance(result, dict) and set(result) == {"outputs", "execution_count"}):
        raise ValueError("not a cell's result")
    if not isinstance(result["outputs"], list) or not all(isinstance(o, dict) for o in result["outputs"]):
        raise ValueError("not a cell's outputs")
    return result


def _no_outputs(status: Status, reason: str) -> dict:
    return {"outputs": [], "execution_count": None, "status": status, "reason": reason}


class Notebook:
    """One notebook's confined executor and its judge, forked before its job is known."""

    def __init__(self, shell: executor.ExecutorShell, settings: dict) -> None:
        self.sandbox = sandbox_for(settings)
        cells_read, cells_write = os.pipe()
        replies_read, replies_write = os.pipe()

        def body() -> None:
            _silence_stdio()
            executor.serve(shell, cells_read, replies_write)

        self.sandbox.spawn(body, keep_fds=(cells_read, replies_write))
        os.close(cells_read)
        os.close(replies_write)
        self._cells = os.fdopen(cells_write, "wb")
        self._replies = _Replies(replies_read)
        self.alive = True
        self._judge: tuple[int, object, object] | None = None
        try:
            self._judge = self._fork_judge()
        except BaseException:
            self.close()
            raise

    @staticmethod
    def _fork_judge() -> tuple[int, object, object]:
        """The judge, waiting for its seed; it never meets student code."""
        to_judge, from_judge = os.pipe(), os.pipe()
        pid = os.fork()
        if pid == 0:
            _silence_stdio()
            _close_all_but({to_judge[0], from_judge[1]})
            try:
                test_cells.serve(to_judge[0], from_judge[1])
            finally:
                os._exit(0)
        os.close(to_judge[0])
        os.close(from_judge[1])
        return pid, os.fdopen(to_judge[1], "wb"), os.fdopen(from_judge[0], "rb")

    def seed_judge(self, seed: int) -> None:
        """Give the judge the job's seed, which draws every check's inputs."""
        write_message(self._judge[1], str(seed).encode())

    def run_cell(self, source: str, timeout: float, overrun: str) -> dict:
        """Run a student's cell in the executor: its outputs, execution count, status and reason, and
        the seconds the executor took."""
        started = time.monotonic()
        try:
            reply = self._send(executor.CELL + source.encode(), timeout, overrun)
            if isinstance(reply, dict):
                return reply
            result = _decode_cell(reply[0]) | {"status": reply[1], "reason": reply[2]}
            return result | {"seconds": time.monotonic() - started}
        except ValueError:
            return self._broken()

    def run_test(self, source: str, timeout: float, overrun: str) -> dict:
        """Judge a test cell: the judge's outputs for it, the executor measuring on the judge's behalf."""
        _, requests, answers = self._judge
        write_message(requests, source.encode())
        started = time.monotonic()
        while (message := read_message(answers)) is not None:
            tree = arrays.unpack(message)
            if "outputs" in tree:
                return {
                    "outputs": tree["outputs"],
                    "execution_count": None,
                    "status": Status.OK,
                    "reason": "",
                    "failed_in_hidden_tests": tree["hidden"],
                    # A test cell's time is the notebook's own compute, as a student cell's is.
                    "seconds": time.monotonic() - started,
                }
            remaining = timeout - (time.monotonic() - started)
            try:
                reply = self._send(executor.PROBE + arrays.pack(tree["probe"]), remaining, overrun)
            except ValueError:
                return self._broken()
            if isinstance(reply, dict):
                return reply
            write_message(requests, reply[0])
        raise RuntimeError("the judge stopped")

    def _send(self, message: bytes, timeout: float, overrun: str) -> dict | tuple[bytes, Status, str]:
        """(reply, status, reason), or the cell's result when the notebook died or was stopped."""
        if not self.alive:
            return _no_outputs(Status.KERNEL_DIED, "the notebook's process had already ended")
        try:
            write_message(self._cells, message)
        except BrokenPipeError:
            return self._died()
        reply = self._replies.next(timeout)
        if reply is None:
            return self._died()
        if reply is not False:
            return reply, Status.OK, ""
        os.kill(self.sandbox.pid, signal.SIGINT)
        reply = self._replies.next(_INTERRUPT_GRACE)
        if not reply:
            self.close()
            return _no_outputs(Status.TIMEOUT, f"{overrun} and did not stop when interrupted")
        return reply, Status.TIMEOUT, f"{overrun} and was interrupted"

    def _broken(self) -> dict:
        self.close()
        reason = "the notebook's process wrote something other than its results to the grader's pipe"
        return _no_outputs(Status.KERNEL_DIED, reason)

    def _died(self) -> dict:
        self.sandbox.kill()
        status = self.sandbox.wait()
        if self.sandbox.out_of_memory():
            cause = "the notebook used more memory than it may, and the kernel stopped it"
        elif os.WIFSIGNALED(status):
            cause = f"the notebook's process was ended by {signal.Signals(os.WTERMSIG(status)).name}"
            cause += " (out of memory, or a crash)"
        else:
            cause = f"the notebook's process exited with code {os.WEXITSTATUS(status)}"
        self.close()
        return _no_outputs(Status.KERNEL_DIED, cause)

    def stop(self) -> None:
        """SIGKILL the notebook's processes and the judge, without waiting for them to end."""
        if self.alive:
            self.sandbox.kill()
        if self._judge is not None:
            os.kill(self._judge[0], signal.SIGKILL)

    def close(self) -> None:
        """Kill everything the notebook started and the judge; nothing of the notebook remains."""
        if self.alive:
            self.alive = False
            with contextlib.suppress(BrokenPipeError):
                self._cells.close()
            os.close(self._replies.fd)
            self.sandbox.close()
        if self._judge is not None:
            pid, requests, answers = self._judge
            requests.close()
            answers.close()
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            self._judge = None


def grade_notebook(notebook: Notebook, job: dict) -> list[dict]:
    """Run every code cell of one notebook; a cell after the notebook's death is reported, not run.
    The notebook's processes are stopped when it ends; `Notebook.close` reaps them."""
    notebook.seed_judge(job["seed"])
    budget = job["notebook_timeout"]
    notebook_overrun = f"the notebook ran past its {job['notebook_timeout']:g} s limit"
    results = []
    try:
        for cell in job["cells"]:
            if notebook.alive and budget <= 0:
                # The notebook's time is up: the cells left are not started.
                notebook.close()
                results.append(_no_outputs(Status.TIMEOUT, notebook_overrun))
            elif not notebook.alive:
                results.append(_no_outputs(results[-1]["status"], results[-1]["reason"]))
            else:
                started = time.monotonic()
                if budget < job["cell_timeout"]:
                    timeout, overrun = budget, notebook_overrun
                else:
                    timeout, overrun = job["cell_timeout"], f"the cell ran past {job['cell_timeout']:g} s"
                run = notebook.run_test if cell["test"] else notebook.run_cell
                results.append(run(cell["source"], timeout, overrun))
                budget -= time.monotonic() - started
    finally:
        notebook.stop()
    return results


def _grade_one(shell: executor.ExecutorShell, settings: dict, requests, replies, taken: int) -> int:
    """In a child of the template: one notebook. Its executor is forked before the job is read; once
    the job is read, a byte on `taken` tells the template to set up the next child. A failure of the
    grader's own (the sandbox could not be set up, say) is the notebook's outcome, with its reason, as a
    string: the pool records it and the worker goes on with the next notebook."""
    try:
        notebook = Notebook(shell, settings)
    except Exception as error:  # noqa: BLE001 - said in the outcome of the job it would have graded
        notebook, failure = None, f"the grader could not start this notebook: {type(error).__name__}: {error}"
    job = read_message(requests)
    if job is not None:
        os.write(taken, b".")
    os.close(taken)
    if job is None:
        if notebook is not None:
            notebook.close()
        return _NO_MORE_JOBS
    if notebook is None:
        write_message(replies, json.dumps(failure).encode())
        return 0
    try:
        outcome = grade_notebook(notebook, json.loads(job))
    except Exception as error:  # noqa: BLE001 - as above
        outcome = f"the grader failed on this notebook: {type(error).__name__}: {error}"
    try:
        write_message(replies, json.dumps(outcome).encode())
    finally:
        # Its processes, stopped already, are reaped and their cgroup removed once the result has
        # left: the worker's next notebook, set up and waiting, starts in the meantime.
        notebook.close()
    return 0


def main() -> None:
    settings = json.loads(sys.argv[1])
    # The job pipe moves off fd 0 and nothing but results may reach the main process: the executor
    # keeps fds 0 to 2, which are then /dev/null.
    requests, replies = os.fdopen(os.dup(0), "rb"), os.fdopen(os.dup(1), "wb")
    _silence_stdio()
    shell = warm_up()
    # The template never reads a job: each notebook is graded by a child of its own, so no later
    # notebook's executor is forked from memory that held another student's cells or a test's source.
    # The next child is forked as soon as the current one has taken its job: it sets up its confined
    # executor while the current notebook runs, and waits for the job that follows (the pool sends a
    # worker one job at a time, so two children never read the pipe at once).
    child, taken = _fork_child(shell, settings, requests, replies)
    if settings.get("warm_torch_func", True):
        warm_up_later(shell)
    while True:
        took_a_job = os.read(taken, 1) == b"."
        os.close(taken)
        following = _fork_child(shell, settings, requests, replies) if took_a_job else None
        _, status = os.waitpid(child, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            # End of jobs, or a grading child that failed: the pool restarts a worker that stopped,
            # and the child waiting for a job ends with the worker's process group.
            return
        child, taken = following


def _fork_child(shell: executor.ExecutorShell, settings: dict, requests, replies) -> tuple[int, int]:
    """A grading child, and the pipe on which it says it has taken its job (or closes, having none)."""
    taken_read, taken_write = os.pipe()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            os.close(taken_read)
            code = _grade_one(shell, settings, requests, replies, taken_write)
        finally:
            os._exit(code)
    os.close(taken_write)
    return child, taken_read


if __name__ == "__main__":
    main()
    # Nothing is left to flush (results leave as whole messages), and tearing down torch's interpreter
    # state would cost a third of a second of every run's end, while the pool waits for this exit.
    os._exit(0)
