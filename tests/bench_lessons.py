"""`make bench` (lessons): every solved lesson run top to bottom on one core, against the course's budgets.

A student's laptop or Binder (about one CPU) runs each lesson in a fresh kernel, so each run here starts
its own kernel, and is pinned with it to a single core. Budgets: 15 s per lesson, kernel start and imports
included, and 1 GiB of peak memory per lesson (the kernel plus the checker it starts): what a student waits
for and holds at a "Run all". The whole course's time is printed, with no budget of its own: a student
runs one lesson at a time, each in its own kernel, so nobody waits for the sum, of which nine kernel and
checker start-ups are about 40 s. The baseline, run the same way in the same session, is a notebook that
only imports what every lesson imports: a lesson's ratio to it is what the lesson costs beyond the fixed
start-up.
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from grading_pipeline import solution_answers, submission
from jupyter_client import AsyncKernelManager
from nbformat.v4 import new_code_cell, new_notebook
from notebook_runs import errors, execute, record_peaks

from autograder.course.layout import assignments

LESSON_BUDGET_S = 15.0
MEMORY_BUDGET_MIB = 1024
_IMPORTS_ONLY = "import matplotlib.pyplot as plt\nimport torch\n\nfrom autograder import check_forward"


def _run(notebook: nbformat.NotebookNode, workdir: Path) -> tuple[float, int]:
    """Seconds from starting a kernel to the last cell's end, and peak memory of the kernel's processes."""
    kernels = AsyncKernelManager(kernel_name="python3")
    peaks: dict[int, int] = {}
    started = time.perf_counter()
    execute(
        notebook,
        workdir,
        # The kernel's own start-up notices are not the lesson's output.
        kernel_options={"stderr": subprocess.DEVNULL},
        km=kernels,
        on_cell_executed=lambda **_: record_peaks(kernels.provisioner.pid, peaks),
    )
    elapsed = time.perf_counter() - started
    if errors(notebook):
        raise SystemExit(f"a cell raised: {errors(notebook)}")
    return elapsed, sum(peaks.values())


def main() -> int:
    # The kernels started below inherit this affinity: everything runs on one core, as on Binder.
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    with tempfile.TemporaryDirectory() as scratch:
        workdir = Path(scratch)
        baseline, baseline_memory = _run(new_notebook(cells=[new_code_cell(_IMPORTS_ONLY)]), workdir)
        rows = [
            (lesson, *_run(submission(lesson, solution_answers(lesson)), workdir)) for lesson in assignments()
        ]
    print(f"{'lesson':28} {'time':>7} {'x baseline':>10} {'peak MiB':>9}  within budget")
    print(f"{'baseline (imports only)':28} {baseline:6.1f}s {1:9.1f}x {baseline_memory:9d}")
    within = True
    for lesson, seconds, memory in rows:
        ok = seconds <= LESSON_BUDGET_S and memory <= MEMORY_BUDGET_MIB
        within &= ok
        print(f"{lesson:28} {seconds:6.1f}s {seconds / baseline:9.1f}x {memory:9d}  {'yes' if ok else 'NO'}")
    course = sum(seconds for _, seconds, _ in rows)
    print(
        f"{'whole course':28} {course:6.1f}s {course / baseline:9.1f}x {'':9}  "
        "(no budget: a student runs one lesson at a time)"
    )
    print(
        f"budgets: {LESSON_BUDGET_S:.0f} s per lesson, {MEMORY_BUDGET_MIB} MiB per lesson's kernel and "
        "checker; one core"
    )
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
