"""Grading on a Dask cluster: the same pool interface as the local workers, fed through a scheduler.

Each notebook is one Dask task whose job carries everything the notebook needs (its cells, seed and
limits), so the machines share no file system; only the main process reads submissions and writes the
journal, gradebook and grades.csv. Dask runs a task again elsewhere when the worker running it dies, and
a future's result is delivered once, so a lost worker costs time but no notebook is lost or counted
twice. A lost scheduler stops the run: what was recorded stays in the journal, and the same command
resumes.
"""

import logging
import queue
import sys
import threading
import time
import uuid
from collections import Counter

from distributed import Client, KilledWorker

from autograder.course.version import code_version
from autograder.grading.cluster_worker import (
    PLUGIN,
    REFUSED,
    GradingPlugin,
    grade_on_worker,
)

# The client's own log tells of reconnecting and closed connections, with tracebacks: this process says
# what went wrong in its own words, so only the client's warnings and errors are shown.
logging.getLogger("distributed").setLevel(logging.WARNING)
# How often the pool's size (threads on the cluster) is read again: workers join and leave mid-run.
_RECOUNT_SECONDS = 2.0


class _Results(queue.Queue):
    """(tag, outcome) pairs, as from the local pool; a fault that must stop the run is put here as an
    exception, and raised by `get` in the thread that records results."""

    def get(self, block: bool = True, timeout: float | None = None):
        item = super().get(block, timeout)
        if isinstance(item, BaseException):
            raise item
        return item


class DaskPool:
    """The grading workers of the Dask cluster whose scheduler is at `address`."""

    def __init__(self, address: str, settings: dict, stream=sys.stderr) -> None:
        self.address, self._stream = address, stream
        self.results: _Results = _Results()
        self.took_part: Counter[str] = Counter()
        self._futures: dict = {}
        self._lock = threading.Lock()
        self._refusals_shown: set[str] = set()
        try:
            self._client = Client(address, set_as_default=False)
        except OSError as error:
            raise SystemExit(f"could not reach the Dask scheduler at {address}: {error}") from None
        run = uuid.uuid4().hex
        self._client.subscribe_topic(REFUSED, lambda event: self._refused(run, event[1]))
        self._client.register_plugin(GradingPlugin(code_version(), run, settings), name=PLUGIN)
        # Refusals during registration may reach the scheduler before this client's subscription did.
        for _, message in self._client.get_events(REFUSED):
            self._refused(run, message)
        if not self._client.nthreads():
            print(f"waiting for a Dask worker to join the scheduler at {address}", file=stream)
            self._client.wait_for_workers(1)
        self._size, self._counted_at = self._count_threads(), time.monotonic()

    def _refused(self, run: str, message: dict) -> None:
        with self._lock:
            if message["run"] == run and message["message"] not in self._refusals_shown:
                self._refusals_shown.add(message["message"])
                print(message["message"], file=self._stream)

    def _count_threads(self) -> int:
        try:
            return max(1, sum(self._client.nthreads().values()))
        except OSError:
            raise SystemExit(self._lost()) from None

    @property
    def size(self) -> int:
        """Threads on the cluster now, each backed by one grading worker."""
        if time.monotonic() - self._counted_at >= _RECOUNT_SECONDS:
            self._size, self._counted_at = self._count_threads(), time.monotonic()
        return self._size

    def submit(self, tag, job: dict) -> None:
        future = self._client.submit(grade_on_worker, job, pure=False)
        self._futures[tag] = future
        future.add_done_callback(lambda done: self._finished(tag, done))

    def _finished(self, tag, future) -> None:
        """Called once per future, in the client's callback thread."""
        self._futures.pop(tag, None)
        if future.status == "finished":
            address, outcome = future.result()
            self.took_part[address] += 1
            self.results.put((tag, outcome))
        elif future.status == "error" and isinstance(future.exception(), KilledWorker):
            # The notebook took down every Dask worker that ran it: a local run would say its kernel died.
            self.results.put((tag, f"every Dask worker that ran this notebook died: {future.exception()}"))
        elif future.status == "error":
            error = future.exception()
            self.results.put(SystemExit(f"grading stopped: a Dask task failed: {error!r}"))
        else:
            self.results.put(SystemExit(self._lost()))

    def _lost(self) -> str:
        return (
            f"lost the Dask scheduler at {self.address}; every notebook graded so far is saved: start the "
            "scheduler and workers again, then run the same command to resume"
        )

    @property
    def graded_by(self) -> str:
        """'2 Dask workers: tcp://10.0.0.5:40123 (12 notebooks), ...', for the report."""
        workers = ", ".join(
            f"{address} ({_plural(count, 'notebook')})" for address, count in sorted(self.took_part.items())
        )
        return f"{_plural(len(self.took_part), 'Dask worker')}: {workers}"

    def close(self) -> None:
        """Free the cluster's grading workers, and say which workers took part."""
        for future in list(self._futures.values()):
            future.cancel()
        if self._client.status == "running":
            self._client.unregister_worker_plugin(PLUGIN)
            # Closing a client that lost its scheduler would log the reconnection it cancels as an error.
            self._client.close()
        if self.took_part:
            print(f"graded by {self.graded_by}", file=self._stream)

    def __enter__(self) -> "DaskPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
