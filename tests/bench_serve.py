"""`make bench` (serve): from a submission landing in the exchange's inbound to its feedback being
fetchable, with `python -m autograder serve` and with the script nbgrader's users write, in one run.

Students are Unix users of their own (made once, as root) and hand in as `nbgrader submit` does: the
entry made in inbound as them, notebook first, then `timestamp.txt` and `submission_secret.txt`.
"Fetchable" is the moment the feedback file is where `nbgrader fetch_feedback` looks for it: the
exchange's `feedback/{notebook_hash(secret, notebook)}.html`.

- the baseline: the four-command loop (`nbgrader collect --update`, `autograde`, `generate_feedback`,
  `release_feedback` for each new entry, one process per step), one submission of lesson 01 at a time,
  each pass started the moment its entry lands (the loop's own polling interval is not counted);
- the service warm, at a steady rate (one submission every STEADY_GAP_S): lesson 01 alone, its median
  against the budget, and every lesson in turn; p50 and p95;
- a deadline rush: BENCH_RUSH submissions (default 200) of every lesson, many students, landing
  evenly within 60 s; the seconds until the last feedback is out, against the floor: the seconds
  their cells take (the class grader's timing.json, grading the same notebooks) over the workers.
"""

import base64
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import nbformat
from budgets import judged
from classroom import LESSON, write_submission
from exchange_course import COURSE_ID, student_user
from grading_pipeline import solution_answers, submission
from mutants import MUTANTS
from nbgrader.utils import notebook_hash

from autograder.course.layout import assignments
from autograder.course.nbgrader_api import course_config
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.course.release import add_lesson, write_config
from autograder.grading.options import default_workers

MEDIAN_BUDGET_S = 3.0
BASELINE_SAMPLES = 3
STEADY_SUBMISSIONS = 12
STEADY_GAP_S = 3.0
RUSH_WINDOW_S = 60.0
STUDENTS = 25
# Longer than anything here should take on a loaded machine; past it, the run says what the service said.
PATIENCE_S = 1200.0
# What nbgrader submit leaves: each file readable by all, the entry writable by all.
_HAND_IN = """set -e
mkdir "$1"
cat > "$1/$2"
printf %s "$3" > "$1/timestamp.txt"
printf %s "$4" > "$1/submission_secret.txt"
chmod 644 "$1"/*
chmod 777 "$1"
"""


@dataclass
class Landed:
    """One submission in inbound, and when its feedback was first seen where fetch_feedback looks."""

    at: float
    feedback: Path
    fetchable: float | None = None

    @property
    def seconds(self) -> float:
        return self.fetchable - self.at


def _answers(lesson: str, number: int) -> dict[str, str]:
    """The solution, or one of the lesson's known mistakes, in turn."""
    solution = solution_answers(lesson)
    kinds = [solution, *(mutant.apply(solution) for mutant in MUTANTS[lesson][:3])]
    return kinds[number % len(kinds)]


class Exchange:
    """A shared exchange whose course holds the given lessons, released, and its students."""

    def __init__(self, scratch: Path, lessons: list[str], name: str) -> None:
        # Inside the run's own folder, which students may pass through: nothing else removes it.
        scratch.chmod(0o755)
        self.root = scratch / f"{name}-exchange"
        self.root.mkdir(mode=0o777)
        self.root.chmod(0o777)
        self.course = scratch / name
        write_config(self.course, extra=f"\nc.Exchange.root = {str(self.root)!r}\n")
        from nbgrader.apps import NbGraderAPI
        from nbgrader.utils import temp_attrs

        api = NbGraderAPI(config=course_config(self.course))
        for lesson in lessons:
            add_lesson(self.course, lesson)
            with temp_attrs(api.coursedir, assignment_id=lesson):
                api.exchange.ReleaseAssignment(
                    coursedir=api.coursedir, authenticator=api.authenticator, parent=api
                ).start()
        self.inbound = self.root / COURSE_ID / "inbound"
        self.feedback = self.root / COURSE_ID / "feedback"
        self.landed: list[Landed] = []
        self._watching = threading.Event()
        self._watcher = threading.Thread(target=self._watch, daemon=True)

    def hand_in(self, student: str, lesson: str, notebook: bytes) -> Landed:
        """Make the student's entry in inbound as them, as `nbgrader submit` makes it."""
        user = student_user(student)
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
        suffix = base64.urlsafe_b64encode(os.urandom(9)).decode("ascii")
        entry = self.inbound / f"{student}+{lesson}+{stamp}+{suffix}"
        secret = secrets.token_hex(64)
        subprocess.run(
            ["/bin/sh", "-c", _HAND_IN, "hand-in", str(entry), f"{lesson}.ipynb", stamp, secret],
            input=notebook,
            user=user.pw_uid,
            group=user.pw_gid,
            extra_groups=[],
            check=True,
        )
        feedback = self.feedback / f"{notebook_hash(secret=secret, notebook_id=lesson)}.html"
        landed = Landed(time.time(), feedback)
        self.landed.append(landed)
        return landed

    def _watch(self) -> None:
        while self._watching.is_set():
            for landed in self.landed:
                if landed.fetchable is None and landed.feedback.exists():
                    landed.fetchable = time.time()
            time.sleep(0.02)

    def __enter__(self) -> "Exchange":
        self._watching.set()
        self._watcher.start()
        return self

    def __exit__(self, *exc) -> None:
        self._watching.clear()
        self._watcher.join()

    def wait(self, landed: list[Landed], said) -> None:
        """Until each of `landed` has its feedback out; SystemExit with what `said()` gives if not."""
        deadline = time.monotonic() + PATIENCE_S
        while any(each.fetchable is None for each in landed):
            if time.monotonic() > deadline:
                missing = sum(each.fetchable is None for each in landed)
                raise SystemExit(f"{missing} feedbacks never came out; it said:\n{said()}")
            time.sleep(0.05)


def nbgrader_loop(course: Path, inbound: Path, seen: set[str]) -> None:
    """One pass of the script nbgrader's users write: the four commands for each new entry."""
    for name in sorted(os.listdir(inbound)):
        if name in seen:
            continue
        seen.add(name)
        student, assignment = name.split("+")[:2]
        for step in ("collect --update", "autograde", "generate_feedback", "release_feedback"):
            run_nbgrader(*step.split(), f"--student={student}", assignment, course=course)


def baseline(scratch: Path) -> list[float]:
    """Seconds from landing to feedback with the four-command loop, one submission at a time."""
    notebook = nbformat.writes(submission(LESSON, solution_answers(LESSON))).encode()
    with Exchange(scratch, [LESSON], "nbgrader-loop") as exchange:
        seen: set[str] = set()
        for number in range(BASELINE_SAMPLES):
            landed = exchange.hand_in(f"gg-bench{number:02d}", LESSON, notebook)
            nbgrader_loop(exchange.course, exchange.inbound, seen)
            exchange.wait([landed], lambda: "nbgrader's loop released nothing")
        return [landed.seconds for landed in exchange.landed]


class Service:
    """`python -m autograder serve` on the course, its log lines kept."""

    def __init__(self, course: Path, workers: int) -> None:
        command = [sys.executable, "-m", "autograder", "serve", "--course", str(course)]
        self.process = subprocess.Popen(
            [*command, "--workers", str(workers)], stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.serving = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.serving.wait(PATIENCE_S):
            raise SystemExit(f"the service did not start; it said:\n{self.said()}")

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))
            if line.startswith("serving "):
                self.serving.set()

    def said(self) -> str:
        return "\n".join(self.lines[-40:])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


@dataclass
class Rush:
    landed: list[Landed] = field(default_factory=list)
    seconds: float = 0.0
    cell_seconds: float = 0.0


def _notebooks(lessons: list[str]) -> dict[str, list[bytes]]:
    """Each lesson's solution and first mistakes, as handed in."""
    return {
        lesson: [nbformat.writes(submission(lesson, _answers(lesson, kind))).encode() for kind in range(4)]
        for lesson in lessons
    }


def rush(exchange: Exchange, service: Service, size: int, scratch: Path, workers: int) -> Rush:
    """`size` submissions of every lesson, from STUDENTS students, landing evenly within the window;
    each (student, lesson) at most once, so that none supersedes another."""
    lessons = assignments()
    notebooks = _notebooks(lessons)
    result = Rush()
    started = time.time()
    handed_in = scratch / "rush-class"
    for number in range(size):
        # STUDENTS and the number of lessons share no factor: the pairs repeat only after their product.
        student, lesson = f"gg-bench{number % STUDENTS:02d}", lessons[number % len(lessons)]
        notebook = notebooks[lesson][number // len(lessons) % len(notebooks[lesson])]
        result.landed.append(exchange.hand_in(student, lesson, notebook))
        write_submission(handed_in, student, nbformat.reads(notebook.decode(), as_version=4), lesson, lesson)
        time.sleep(max(0.0, started + (number + 1) * RUSH_WINDOW_S / size - time.time()))
    exchange.wait(result.landed, service.said)
    result.seconds = max(each.fetchable for each in result.landed) - result.landed[0].at
    _progress(f"rush of {size}, until the last feedback", [result.seconds])
    out = scratch / "rush-floor"
    command = [sys.executable, "-m", "autograder", "grade", str(handed_in), "--out", str(out)]
    subprocess.run([*command, "--workers", str(workers)], check=True, capture_output=True)
    result.cell_seconds = json.loads((out / "timing.json").read_text())["cell_seconds"]
    return result


def _progress(phase: str, seconds: list[float]) -> None:
    """What a phase measured, as soon as it is known: the whole run takes minutes."""
    print(f"{phase}: " + ", ".join(f"{s:.1f}" for s in seconds) + " s", file=sys.stderr, flush=True)


def _percentile(values: list[float], fraction: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[round(fraction * 100) - 1]


def steady(exchange: Exchange, service: Service, lessons: list[str], count: int) -> list[Landed]:
    """`count` submissions of `lessons` in turn, one every STEADY_GAP_S whatever the service does, as
    students hand in."""
    notebooks = _notebooks(lessons)
    landed = []
    for number in range(count):
        lesson = lessons[number % len(lessons)]
        started = time.time()
        notebook = notebooks[lesson][number // len(lessons) % len(notebooks[lesson])]
        landed.append(exchange.hand_in(f"gg-bench{number % STUDENTS:02d}", lesson, notebook))
        time.sleep(max(0.0, started + STEADY_GAP_S - time.time()))
    exchange.wait(landed, service.said)
    return [each.seconds for each in landed]


def main() -> int:
    if os.geteuid() != 0:
        print("run as root: the students hand in as Unix users of their own, which it makes once")
        return 1
    size = int(os.environ.get("BENCH_RUSH", "200"))
    workers = default_workers()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as folder:
        scratch = Path(folder)
        loop = baseline(scratch)
        _progress("four-command loop", loop)
        with Exchange(scratch, assignments(), "course") as exchange:
            service = Service(exchange.course, workers)
            try:
                # Warm: each lesson graded once before anything is timed.
                warming = [
                    exchange.hand_in("gg-bench00", lesson, nbformat.writes(submission(lesson, {})).encode())
                    for lesson in assignments()
                ]
                exchange.wait(warming, service.said)
                one_lesson = steady(exchange, service, [LESSON], STEADY_SUBMISSIONS)
                _progress(f"service, {LESSON} alone", one_lesson)
                every_lesson = steady(exchange, service, assignments(), 2 * len(assignments()))
                _progress("service, every lesson in turn", every_lesson)
                rushed = rush(exchange, service, size, scratch, workers)
            finally:
                service.stop()

    floor = rushed.cell_seconds / workers
    median = statistics.median(one_lesson)
    rows = [
        (
            "four-command nbgrader loop",
            f"{statistics.median(loop):7.2f} s  (median of {len(loop)}: "
            + ", ".join(f"{s:.1f}" for s in loop)
            + f"; lesson {LESSON})",
        ),
        (f"service (x{workers}), lesson 01 every {STEADY_GAP_S:g} s: p50", judged(median, MEDIAN_BUDGET_S)),
        ("  p95", f"{_percentile(one_lesson, 0.95):7.2f} s  ({len(one_lesson)} submissions)"),
        ("  every lesson in turn: p50", f"{statistics.median(every_lesson):7.2f} s"),
        ("  p95", f"{_percentile(every_lesson, 0.95):7.2f} s  ({len(every_lesson)} submissions)"),
        ("  speed-up on the loop (p50)", f"{statistics.median(loop) / median:7.1f}x"),
        (
            f"rush: {size} submissions in {RUSH_WINDOW_S:g} s",
            f"{rushed.seconds:7.1f} s  until the last feedback is out",
        ),
        (
            "  floor (cells' own compute / workers)",
            f"{floor:7.1f} s  ({rushed.cell_seconds:.0f} s of cells over {workers} workers)",
        ),
        ("  rush over floor", f"{rushed.seconds / floor:7.2f}x"),
        (
            "  the loop would take",
            f"{size * statistics.median(loop):7.0f} s  ({size} x its median, one at a time)",
        ),
        (
            "  rush latency p50, p95",
            f"{statistics.median(s := [each.seconds for each in rushed.landed]):7.1f} s, "
            f"{_percentile(s, 0.95):.1f} s",
        ),
    ]
    # The machine is shared: what else ran says how far the seconds are from an idle one's.
    rows.append(("load average (1, 5, 15 min)", ", ".join(f"{load:.1f}" for load in os.getloadavg())))
    for label, value in rows:
        print(f"{label + ':':<44}{value}")
    return 0 if median <= MEDIAN_BUDGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
