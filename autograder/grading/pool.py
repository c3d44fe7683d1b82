"""The main process's side of the workers: start them, feed them jobs, collect their results."""

import contextlib
import json
import os
import queue
import select
import signal
import subprocess
import sys
import threading

from autograder.sandbox import cgroup
from autograder.wire.protocol import read_message, write_message

# A worker enforces every time limit itself; this much longer and the worker is presumed stuck.
_WORKER_GRACE = 60.0
# A worker told there are no more jobs ends its waiting notebook and exits within this; else it is killed.
_FINISH_GRACE = 5.0


class _Worker:
    """One worker process, restarted when it dies; `settings` say how it confines notebooks.

    It leads a process group of its own: a Ctrl-C at the terminal reaches the command alone, which
    then ends every worker with its group (the notebook's processes die with their parent)."""

    def __init__(self, settings: dict) -> None:
        self._settings = json.dumps(settings)
        self.killed = False
        self._process = self._start()

    def _start(self) -> subprocess.Popen:
        cgroup.prepare()  # with cgroup v2, the worker is born in the grader's leaf
        return subprocess.Popen(
            [sys.executable, "-m", "autograder.grading.worker", self._settings],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )

    def grade(self, job: dict) -> list[dict] | str:
        """The worker's per-cell results, or why it could not produce them."""
        try:
            write_message(self._process.stdin, json.dumps(job).encode())
            ready, _, _ = select.select(
                [self._process.stdout], [], [], job["notebook_timeout"] + _WORKER_GRACE
            )
            reply = read_message(self._process.stdout) if ready else None
        except OSError:
            reply = None
        if reply is None:
            if self.killed:
                return "the run was stopped while grading this notebook"
            self.stop()
            self._process = self._start()
            return "the grading worker stopped while running this notebook"
        return json.loads(reply)

    def kill(self) -> None:
        """End the worker and everything it started, now."""
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self._process.pid, signal.SIGKILL)

    def stop(self) -> None:
        """End the worker now: it is stuck, or its notebook must not finish."""
        self.kill()
        self._process.wait()
        self._process.stdin.close()
        self._process.stdout.close()

    def finish(self) -> None:
        """End the worker once it has no job: told there are no more (its job pipe closes), its child
        waiting for one ends the notebook it had set up, cgroup included, and the worker exits. Killed
        instead, that notebook's cgroup would outlive the run."""
        with contextlib.suppress(BrokenPipeError):
            self._process.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(_FINISH_GRACE)
        self.stop()


class WorkerPool:
    """`size` workers, each fed by its own thread; results arrive on `results` as (tag, outcome)."""

    def __init__(self, size: int, settings: dict) -> None:
        self.size, self._settings = size, settings
        self.jobs: queue.Queue = queue.Queue()
        self.results: queue.Queue = queue.Queue()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._serve, daemon=True) for _ in range(size)]
        for thread in self._threads:
            thread.start()

    def _serve(self) -> None:
        worker = _Worker(self._settings)
        with self._lock:
            self._workers.append(worker)
        try:
            while (item := self.jobs.get()) is not None:
                tag, job = item
                self.results.put((tag, worker.grade(job)))
        finally:
            worker.finish()

    def submit(self, tag, job: dict) -> None:
        self.jobs.put((tag, job))

    def close(self, now: bool = False) -> None:
        """Stop the workers once their notebooks are done, or `now`: killed mid-notebook. Then remove
        the cgroups that notebooks of killed workers could not remove (the run's name is on them)."""
        for _ in self._threads:
            self.jobs.put(None)
        if now:
            with self._lock:
                for worker in self._workers:
                    worker.kill()
        for thread in self._threads:
            thread.join()
        cgroup.remove_leftovers(self._settings["group"])

    def __enter__(self) -> "WorkerPool":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        # An interruption, or any error, stops the run at once: no notebook is left running.
        self.close(now=exc_type is not None)


def workers_for(target, workers: int, scheduler: str | None = None, stream=sys.stderr):
    """The pool to grade `target` (an `autograder.grading.target.Target`) on, warming from now on: the
    local workers, or a Dask cluster's (Dask is imported only for a run that asks for it). None when
    there is nothing to grade."""
    if not target.work.todo:
        return contextlib.nullcontext()
    if scheduler is None:
        return WorkerPool(workers, target.sandbox_settings())
    from autograder.grading.cluster import DaskPool

    return DaskPool(scheduler, target.sandbox_settings(), stream)
