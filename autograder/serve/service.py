"""The service's loop: watch inbound, admit and collect each settled entry, grade what is queued on
workers kept warm for its whole life, make and release the feedback, log one line per submission.

One thread does it all, so the course's gradebook has one writer. At most one submission per student
and assignment waits (the newest collected: collecting it replaces the older one in submitted/), and
the queue is graded in batches, oldest first, so a classmate waits at most one batch whoever floods.
"""

import io
import shutil
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.api import MissingEntry

from autograder.grading.errors import GradingError
from autograder.grading.options import Limits
from autograder.grading.target import Selection, open_course_target, sandbox_settings
from autograder.records import gradebook
from autograder.records.run_file import NAME as RUN_FILE
from autograder.records.run_file import RunFile
from autograder.serve import inbound
from autograder.serve.exchange import Exchange, NbgraderStepError
from autograder.serve.feedback import WithheldBeforeDueDate
from autograder.serve.settings import Serve
from autograder.serve.state import State, Status

# How often inbound is looked at when nothing is queued.
POLL_SECONDS = 0.1
# How often the status file is written while nothing is graded (its waiting times keep growing).
STATUS_SECONDS = 1.0


@dataclass
class _Waiting:
    entry: inbound.Entry
    landed: float


def _again(student: str) -> str:
    return f"{student} handed in again before it was graded"


class Service:
    """Feedback on submit for the nbgrader course at `root`."""

    def __init__(self, root: Path, limits: Limits, log) -> None:
        self.root, self.limits, self.log = root, limits, log
        self.exchange = Exchange(root)
        self.settings = Serve(config=self.exchange.api.config)
        self.out = root / "class_grader"
        # Where an admitted entry is copied to, from what was checked, before nbgrader collects it.
        self.staging = self.out / "admitted"
        try:
            # The class grader's own folder, marked as its own before the service's files join it.
            run_file = RunFile.open(self.out, None)
        except ValueError as error:
            raise GradingError(str(error)) from None
        if not (self.out / RUN_FILE).exists():
            run_file.save(self.out)
        shutil.rmtree(self.staging, ignore_errors=True)  # copies a stop left half made
        self.state = State.load(self.out / "serve.json")
        self.status = Status()
        self.queue: dict[tuple[str, str], _Waiting] = {}
        # Entries waiting for the hourly limit whose student was told when they will be graded.
        self.held: set[str] = set()

    def sandbox_settings(self) -> dict:
        excluded = [self.exchange.submitted, self.out, self.root, self.exchange.inbound.parent.parent]
        return sandbox_settings(self.limits, excluded)

    def say(self, line: str) -> None:
        print(line, file=self.log, flush=True)

    def serve(self, pool) -> None:
        """Grade what went stale while the service was down, then serve until stopped."""
        if not self.exchange.inbound.is_dir():
            raise GradingError(
                f"{self.exchange.inbound} does not exist: make the exchange as nbgrader's docs say "
                "(a folder writable by everyone, c.Exchange.root in nbgrader_config.py), then start again"
            )
        self.pool = pool
        self.scan(time.time())
        self.catch_up()
        self.say(f"serving {self.exchange.course_id}: watching {self.exchange.inbound}")
        while True:
            now = time.time()
            self.scan(now)
            batch = self.take(now)
            if batch:
                self.grade(batch)
            if batch or time.time() - self.status.updated >= STATUS_SECONDS:
                self.write_status(time.time())
            if not batch:
                time.sleep(POLL_SECONDS)

    # -- inbound ------------------------------------------------------------------------------------

    def scan(self, now: float) -> None:
        """Admit every settled entry not dealt with yet, then collect the newest admitted of each student
        and assignment."""
        found: list[_Waiting] = []
        for path in inbound.entries(self.exchange.inbound):
            if path.name in self.state.entries:
                continue
            entry = inbound.parse(path)
            try:
                if entry is None:
                    raise inbound.RefusedError("not an entry nbgrader submit names")
                if not self.exchange.release_folder(entry.assignment).is_dir():
                    raise inbound.RefusedError(f"{entry.assignment} is not an assignment the course released")
                if inbound.settled(entry, now, self.settings):
                    found.append(self.admit(entry))
            except inbound.RefusedError as refusal:
                shutil.rmtree(self.staging / path.name, ignore_errors=True)
                self.refuse(path.name, str(refusal))
            except FileNotFoundError:
                continue  # taken away while looked at
        newest: dict[tuple[str, str], _Waiting] = {}
        for waiting in sorted(found, key=lambda w: w.entry.timestamp):
            earlier = newest.get(waiting.entry.key)
            if earlier is not None:
                shutil.rmtree(earlier.entry.path)
                self.supersede(earlier.entry.name, _again(waiting.entry.student))
            newest[waiting.entry.key] = waiting
        for waiting in newest.values():
            self.take_in(waiting)

    def admit(self, entry: inbound.Entry) -> _Waiting:
        """The entry as admitted: a copy of what was checked, in the service's own staging folder."""
        landed = entry.path.lstat().st_ctime
        staged = self.staging / entry.name
        shutil.rmtree(staged, ignore_errors=True)
        self.staging.mkdir(exist_ok=True)
        released = inbound.released_files(self.exchange.release_folder(entry.assignment))
        inbound.admit(entry, released, self.settings, staged)
        return _Waiting(replace(entry, path=staged), landed)

    def refuse(self, name: str, reason: str) -> None:
        self.say(f"refused {name}: {reason}")
        self.status.refused += 1
        self.state.mark(name, "refused")

    def supersede(self, name: str, reason: str) -> None:
        self.say(f"superseded {name}: {reason}")
        self.status.superseded += 1
        self.state.mark(name, "superseded")

    def take_in(self, waiting: _Waiting) -> None:
        entry = waiting.entry
        try:
            copied = self.exchange.collect(entry)
        except (OSError, NbgraderStepError) as error:
            return self.refuse(entry.name, f"could not be collected: {error}")
        finally:
            shutil.rmtree(entry.path, ignore_errors=True)
        if not copied:
            return self.supersede(entry.name, f"a newer submission of {entry.student} was collected")
        earlier = self.queue.get(entry.key)
        if earlier is not None:
            self.supersede(earlier.entry.name, _again(entry.student))
        self.queue[entry.key] = waiting
        self.state.mark(entry.name, "collected")

    # -- grading ------------------------------------------------------------------------------------

    def take(self, now: float) -> list[_Waiting]:
        """The queued submissions to grade now, oldest first: one per student and assignment, those
        of students at their hourly limit left waiting (and told when they will be graded). No more
        than keep every worker busy with one more waiting (as a class run feeds them): in a rush the
        oldest submissions' feedback goes out while later ones queue, not after the whole queue."""
        batch = []
        for key, waiting in sorted(self.queue.items(), key=lambda item: item[1].landed):
            if len(batch) == 2 * self.pool.size:
                break
            at = self.state.next_grading(key[0], self.settings.graded_per_hour, now)
            if at is None:
                batch.append(waiting)
            elif waiting.entry.name not in self.held:
                self.held.add(waiting.entry.name)
                when = datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
                limit = f"{self.settings.graded_per_hour} submissions graded per hour"
                notice = f"This course grades {limit}: this submission will be graded at {when}."
                try:
                    self.exchange.release_notice(*key, notice)
                except (OSError, NbgraderStepError) as error:
                    self.say(f"could not tell {key[0]} when: {error}")
                self.say(f"held {waiting.entry.name}: {key[0]} had {limit}; it will be graded at {when}")
        for waiting in batch:
            del self.queue[waiting.entry.key]
        return batch

    def grade(self, batch: list[_Waiting]) -> None:
        for assignment in dict.fromkeys(waiting.entry.assignment for waiting in batch):  # oldest first
            waiting = [w for w in batch if w.entry.assignment == assignment]
            try:
                self.grade_assignment(assignment, frozenset(w.entry.student for w in waiting))
            except GradingError as error:
                for each in waiting:
                    self.say(f"not graded {each.entry.name}: {error}")
                continue
            now = time.time()
            for each in waiting:
                self.state.graded(each.entry.student, now)
                self.state.mark(each.entry.name, "graded")
                self.release(each.entry.student, assignment, landed=each.landed)

    def grade_assignment(self, assignment: str, students: frozenset[str] | None) -> set[tuple[str, str]]:
        """Grade what is stale of the students' submissions (every student's with None) as `grade
        --course` does; the (student, assignment) pairs graded. A lesson whose course changed is
        graded whole."""
        from autograder.grading.run import grade

        try:
            target = open_course_target(self.root, assignment, self.limits, selection=Selection(students))
        except GradingError as error:
            if students is None or "run without --student" not in str(error):
                raise
            target = open_course_target(self.root, assignment, self.limits)
        graded = {submission.key[:2] for submission, _ in target.work.todo}
        if graded:
            grade(target, self.pool, stream=io.StringIO(), report=False)
        return graded

    def catch_up(self) -> None:
        """What landed or changed while the service was down: graded as `grade --course` would, and
        every collected submission whose feedback is not out gets it; but a submission of a student at
        the hourly limit stays queued, to be graded when the limit allows, as if no restart happened."""
        now = time.time()
        self._queue_held(now)
        held = {key for key in self.queue if self._limited(key[0], now)}
        for release in sorted(self.exchange.released_assignments.glob("*")):
            assignment = release.name
            collected = set(self._collected(assignment))
            waiting = {student for student, of in held if of == assignment}
            students = frozenset(collected - waiting) if waiting else None
            try:
                graded = self.grade_assignment(assignment, students)
            except GradingError:
                continue  # nothing of it collected yet
            for student in sorted(collected - waiting):
                self.queue.pop((student, assignment), None)
                if (student, assignment) in graded or self.feedback_missing(student, assignment):
                    self.release(student, assignment, landed=None)
        queued = {waiting.entry.name for waiting in self.queue.values()}
        for name, outcome in list(self.state.entries.items()):
            if outcome == "collected" and name not in queued:
                self.state.mark(name, "graded")

    def _limited(self, student: str, now: float) -> bool:
        return self.state.next_grading(student, self.settings.graded_per_hour, now) is not None

    def _queue_held(self, now: float) -> None:
        """Queue again what a student at the hourly limit had collected and not yet graded when the
        service stopped, unless a newer submission of theirs is queued already."""
        collected = [name for name, outcome in self.state.entries.items() if outcome == "collected"]
        entries = [entry for name in collected if (entry := inbound.parse(self.exchange.inbound / name))]
        for entry in sorted(entries, key=lambda entry: entry.timestamp, reverse=True):
            if not self._limited(entry.student, now):
                continue
            newer = self.queue.get(entry.key)
            if newer is None:
                try:
                    landed = entry.path.lstat().st_ctime
                except FileNotFoundError:
                    landed = now
                self.queue[entry.key] = _Waiting(entry, landed)
            elif newer.entry.name != entry.name:
                self.supersede(entry.name, _again(entry.student))

    def _collected(self, assignment: str) -> list[str]:
        return [path.parent.name for path in self.exchange.submitted.glob(f"*/{assignment}") if path.is_dir()]

    def feedback_missing(self, student: str, assignment: str) -> bool:
        """A submission from the exchange whose feedback is not out (a stop between grading and release)."""
        return not all(place.exists() for place in self.exchange.released(student, assignment))

    # -- feedback -----------------------------------------------------------------------------------

    def release(self, student: str, assignment: str, landed: float | None) -> None:
        """Make and release the feedback of a graded submission; its log line."""
        with gradebook.opened(self.exchange.coursedir.db_url) as book:
            try:
                submission = book.find_submission(assignment, student)
            except MissingEntry:  # nothing graded to feed back
                return
            score, points, due = submission.score, submission.max_score, submission.duedate
            penalty = submission.late_submission_penalty
        # nbgrader keeps due dates as naive UTC.
        before_due = due is None or datetime.now(UTC).replace(tzinfo=None) <= due
        hidden_shown = not before_due or self.settings.hidden_tests_feedback == "always"
        withheld = () if hidden_shown else (WithheldBeforeDueDate,)
        if not self.exchange.released(student, assignment):
            self.say(f"graded {student} {assignment} {score:g}/{points:g}: no submission secret, no feedback")
            return
        try:
            self.exchange.generate_feedback(student, assignment, withheld)
            self.exchange.release_feedback(student, assignment)
        except NbgraderStepError as error:
            self.say(f"graded {student} {assignment} {score:g}/{points:g}; feedback not released: {error}")
            return
        self.status.graded += 1
        late = f" (late penalty {penalty:g})" if penalty else ""
        took = f" in {time.time() - landed:.1f} s" if landed is not None else " after a restart"
        self.say(f"graded {student} {assignment} {score - penalty:g}/{points:g}{late}{took}")

    def write_status(self, now: float) -> None:
        self.status.queued = len(self.queue)
        self.status.oldest_wait_seconds = max((now - w.landed for w in self.queue.values()), default=0.0)
        self.status.save(self.out / "serve-status.json")
