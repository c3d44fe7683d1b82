"""`make bench`: one class covering every lesson graded here, and on a Dask cluster of one and of two
workers on this machine; then, from what a notebook measurably costs, how long a 50,000-student course
would take on K machines of C cores, and what would limit it first.

The class is the solution, the untouched release and BENCH_MUTANTS (default 2) mutants of every
lesson. Each run grades into a fresh folder with the same seed, in this process, so that the main
process's own cost can be measured: the time it spends recording (sanitising, saving grades, writing
feedback and the journal: the single writer's work) and its CPU time, which includes the Dask client's.
The scheduler's CPU time per notebook is read from /proc. Bytes per notebook are the JSON of a job
and of its results, which cross the scheduler's link on their way to a worker and back.
"""

import io
import json
import os
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from classroom import write_course_class
from dask_cluster import DaskCluster
from distributed import Client

from autograder.course.notebooks import GradingCourse
from autograder.grading import run
from autograder.grading.options import Limits
from autograder.grading.run import grade_class
from autograder.records.journal import Journal

STUDENTS, LESSONS = 50_000, 9
NOTEBOOKS = STUDENTS * LESSONS
# The network the projection assumes between the scheduler and the rest.
LINK_BYTES_PER_SECOND = 1e9 / 8
_WRITER = [(GradingCourse, "sanitize"), (GradingCourse, "record"), (GradingCourse, "record_unusable")]
_WRITER += [(Journal, "append")]


class _Meter:
    """While installed: the grading phase's wall time, the main process's CPU time in it and the
    scheduler's, the time spent recording, and the bytes of jobs and results."""

    def __init__(self, scheduler_pid: int | None) -> None:
        self.scheduler_pid = scheduler_pid
        self.seconds: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()

    @contextmanager
    def installed(self):
        wrapped = [(owner, name, self._timed(getattr(owner, name))) for owner, name in _WRITER]
        wrapped += [
            (run._Run, "grade", self._phase(run._Run.grade)),
            (run._Run, "_job", self._sized(run._Run._job)),
        ]
        originals = [(owner, name, getattr(owner, name)) for owner, name, _ in wrapped]
        for owner, name, method in wrapped:
            setattr(owner, name, method)
        try:
            yield self
        finally:
            for owner, name, original in originals:
                setattr(owner, name, original)

    def _scheduler_cpu(self) -> float:
        return _cpu_seconds(self.scheduler_pid) if self.scheduler_pid else 0.0

    def _phase(self, grade):
        def timed(*args, **kwargs):
            wall, cpu, scheduler = time.perf_counter(), time.process_time(), self._scheduler_cpu()
            grade(*args, **kwargs)
            self.seconds["grading"] += time.perf_counter() - wall
            self.seconds["main_cpu"] += time.process_time() - cpu
            self.seconds["scheduler_cpu"] += self._scheduler_cpu() - scheduler

        return timed

    def _timed(self, method):
        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds["recording"] += time.perf_counter() - started
                if method.__name__ == "record":
                    self.bytes["result"] += len(json.dumps(args[-1]))

        return timed

    def _sized(self, method):
        def sized(*args, **kwargs):
            job = method(*args, **kwargs)
            self.bytes["job"] += len(json.dumps(job))
            return job

        return sized


def _cpu_seconds(pid: int) -> float:
    """User and system time of a process, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _grade(
    submitted: Path, out: Path, scheduler: str | None = None, scheduler_pid: int | None = None
) -> dict:
    """Grade the class into `out`: wall times, and costs per notebook."""
    meter = _Meter(scheduler_pid)
    started = time.perf_counter()
    with meter.installed():
        grade_class(
            submitted, out, workers=len(os.sched_getaffinity(0)), limits=Limits(), seed=1,
            stream=io.StringIO(), scheduler=scheduler,
        )  # fmt: skip
    notebooks = json.loads((out / "timing.json").read_text())["notebooks"]
    per_notebook = {name: seconds / notebooks for name, seconds in meter.seconds.items()}
    return per_notebook | {
        "wall": time.perf_counter() - started,
        "grading": meter.seconds["grading"],
        "notebooks": notebooks,
        "bytes": (meter.bytes["job"] + meter.bytes["result"]) / notebooks,
        "job_bytes": meter.bytes["job"] / notebooks,
        "csv": (out / "grades.csv").read_text(),
    }


def _on_cluster(root: Path, submitted: Path, workers: int) -> dict:
    with DaskCluster(root / f"cluster-{workers}") as cluster:
        for number in range(workers):
            cluster.add_worker(f"worker{number}")
        graded = _grade(submitted, root / f"dask-{workers}", cluster.address, cluster.scheduler.pid)
        return graded | {"per_task": _scheduler_per_task(cluster, round(graded["job_bytes"]))}


def _scheduler_per_task(cluster: DaskCluster, payload: int, tasks: int = 2000) -> float:
    """The scheduler's CPU seconds per task, for tasks that carry a job's bytes and do nothing: its
    cost per notebook apart from its idle ticking, which a slow notebook would add to."""
    with Client(cluster.address, set_as_default=False) as client:
        before = _cpu_seconds(cluster.scheduler.pid)
        client.gather(client.map(len, ["x" * payload] * tasks, pure=False))
        return (_cpu_seconds(cluster.scheduler.pid) - before) / tasks


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:6.1f} h" if seconds >= 3600 else f"{seconds / 60:6.1f} min"


def _projection(core_seconds: float, writer: float, scheduler: float, link: float, start: float) -> list[str]:
    """The course's time on K machines of C cores: the start-up, then the slowest of the workers'
    cores, the single writer, the scheduler and the scheduler's link, each taking every notebook."""
    lines = [f"{'K machines':>10} {'C cores':>8} {'time':>10}  limited by (next: how much faster it is)"]
    for machines in (1, 4, 16, 64, 256):
        for cores in (8, 32):
            limits = {
                "the workers' cores": NOTEBOOKS * core_seconds / (machines * cores),
                "the single writer": NOTEBOOKS * writer,
                "the scheduler": NOTEBOOKS * scheduler,
                "the network": NOTEBOOKS * link,
            }
            first, second = sorted(limits, key=limits.get, reverse=True)[:2]
            margin = f"{second} {limits[first] / limits[second]:.1f}x"
            lines.append(f"{machines:>10} {cores:>8} {_hours(start + limits[first]):>10}  {first} ({margin})")
    return lines


def main() -> int:
    mutants = int(os.environ.get("BENCH_MUTANTS", "2"))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        write_course_class(root / "submitted", mutants)
        local_workers = len(os.sched_getaffinity(0))
        local = _grade(root / "submitted", root / "local")
        one = _on_cluster(root, root / "submitted", 1)
        two = _on_cluster(root, root / "submitted", 2)
    notebooks = local["notebooks"]
    print(f"class: {notebooks} notebooks, every lesson ({2 + mutants} students), on {os.cpu_count()} cores")
    # The cores may be shared: a load above their number slows every figure below.
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{load:.1f}" for load in os.getloadavg()))
    runs = ((f"local, {local_workers} workers", local), ("Dask, 1 worker", one), ("Dask, 2 workers", two))
    for name, result in runs:
        same = "same grades.csv" if result["csv"] == local["csv"] else "GRADES DIFFER"
        rate = notebooks / result["grading"]
        print(
            f"{name:<18} {result['wall']:6.1f} s in all, grading {result['grading']:6.1f} s: "
            f"{rate:5.2f} notebooks/s  ({same})"
        )
    # One Dask worker of one thread grades one notebook at a time: its grading time per notebook is
    # what a notebook costs a core, with the cluster's overhead in it.
    core_seconds = one["grading"] / notebooks
    start = max(r["wall"] - r["grading"] for r in (one, two))
    # The main thread sanitises and records one notebook at a time: its wall time is the writer's pace.
    writer = max(r["recording"] for r in (local, one, two))
    scheduler = max(r["per_task"] for r in (one, two))
    link = 2 * two["bytes"] / LINK_BYTES_PER_SECOND
    print(f"a notebook costs a core {core_seconds:.2f} s; start-up (gradebook, warm-up) {start:.0f} s")
    print(
        f"main process per notebook: {writer * 1000:.0f} ms recording (main thread), "
        f"{two['main_cpu'] * 1000:.0f} ms CPU in all threads: one writer keeps up with {1 / writer:.0f} "
        f"notebooks/s, the pace of {core_seconds / writer:.0f} cores"
    )
    print(
        f"scheduler per notebook: {two['scheduler_cpu'] * 1000:.0f} ms CPU while grading, idle ticks in it; "
        f"{scheduler * 1000:.2f} ms per task of a burst: {1 / scheduler:.0f} notebooks/s"
    )
    print(
        f"network per notebook: {two['bytes'] / 1000:.0f} kB of job and results, twice through the "
        f"scheduler's link: {1 / link:.0f} notebooks/s at 1 Gbit/s"
    )
    print(f"\n{STUDENTS:,} students x {LESSONS} lessons = {NOTEBOOKS:,} notebooks:")
    print("\n".join(_projection(core_seconds, writer, scheduler, link, start)))
    return 0 if one["csv"] == two["csv"] == local["csv"] else 1


if __name__ == "__main__":
    sys.exit(main())
