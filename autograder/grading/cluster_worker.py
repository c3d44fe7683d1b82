"""The Dask worker's side of grading on a cluster: warmed grading workers, and the course version check.

A Dask worker runs Python functions in threads; student code must not run there. So a plugin, set up
on every Dask worker that joins, starts one grading worker (the same warmed, confining process as a
local run's) per thread the Dask worker offers, and each grading task borrows one for its notebook.
The grading worker's death is its own outcome string, as in a local run, so a notebook that kills its
process is graded "kernel died" and is not retried by Dask.

Grades must not depend on which machine ran a notebook, so a Dask worker whose installed course
differs from the grading machine's is refused: it reports why and shuts down, and no task runs there.
"""

import logging
import queue
import threading

from distributed import Reschedule, WorkerPlugin, get_worker

from autograder.course.version import code_version
from autograder.grading.pool import _Worker
from autograder.sandbox import confine

PLUGIN = "autograder-grading"
# The scheduler's event topic on which refused Dask workers say why.
REFUSED = "autograder-refused-worker"
logger = logging.getLogger(__name__)


class GradingPlugin(WorkerPlugin):
    """Lends each grading task one of this Dask worker's grading workers.

    `expected` is the grading machine's code version; `run` names the grading run, so that the
    run reports only the refusals meant for it.
    """

    def __init__(self, expected: str, run: str, settings: dict) -> None:
        self.expected, self.run, self.settings = expected, run, settings

    def setup(self, worker) -> None:
        self.refusal = ""
        self._idle: queue.SimpleQueue[_Worker] = queue.SimpleQueue()
        self._lock, self._closed = threading.Lock(), False
        installed = code_version()
        lacking = [] if self.settings.get("trusted") else confine.missing_features()
        if installed != self.expected:
            self.refusal = (
                f"refused Dask worker {worker.address}: its course version ({installed}) is not the grading "
                f"machine's ({self.expected}); install the same commit of the course there"
            )
        elif lacking:
            self.refusal = (
                f"refused Dask worker {worker.address}: it cannot confine student code; it lacks: "
                + "; ".join(lacking)
            )
        if self.refusal:
            logger.error(self.refusal)
            worker.log_event(REFUSED, {"run": self.run, "message": self.refusal})
            worker.loop.add_callback(worker.close, nanny=True, reason="cannot grade for this run")
            return
        for _ in range(worker.state.nthreads):
            self._idle.put(_Worker(self.settings))

    def teardown(self, worker) -> None:
        """Stop the idle grading workers now; a busy one stops when its notebook is done."""
        with self._lock:
            self._closed = True
            while not self._idle.empty():
                self._idle.get().finish()

    def grade(self, job: dict) -> list[dict] | str:
        if self.refusal:
            # Tasks may reach a refused Dask worker before it has closed: they go elsewhere.
            raise Reschedule()
        grading_worker = self._idle.get()
        try:
            return grading_worker.grade(job)
        finally:
            with self._lock:
                if self._closed:
                    grading_worker.finish()
                else:
                    self._idle.put(grading_worker)


def grade_on_worker(job: dict) -> tuple[str, list[dict] | str]:
    """The grading task: which Dask worker graded the notebook, and the grading worker's outcome."""
    worker = get_worker()
    return worker.address, worker.plugins[PLUGIN].grade(job)
