"""nbgrader's own machinery in this process, for one submission at a time: its exchange collects an
admitted entry as `nbgrader collect --update` would, its converter makes the feedback, and its exchange
releases it where the student's `nbgrader fetch_feedback` looks.

Each step runs nbgrader's class directly rather than through `NbGraderAPI`'s log capture, whose bare
`except:` would turn the SIGTERM that stops the service into a step that failed.
"""

import html
import io
import logging
import os
import shutil
from datetime import datetime
from pathlib import Path

from nbgrader.apps import NbGraderAPI
from nbgrader.converters import GenerateFeedback
from nbgrader.exchange.default import Exchange as FileSystemExchange
from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.utils import notebook_hash, temp_attrs
from traitlets.config import Config

from autograder.course.nbgrader_api import course_config
from autograder.serve.inbound import Entry


class NbgraderStepError(Exception):
    """A step of nbgrader's failed; the message is nbgrader's own last words."""


class _CollectOne(ExchangeCollect):
    """`nbgrader collect --update` of the one entry `entry_path`, already admitted: nbgrader's copy
    (its ignore patterns, size limits and group sharing), without its glob over every entry the
    student's name matches, forged ones included."""

    def __init__(self, entry_path: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.entry_path = entry_path

    def init_src(self) -> None:
        self.inbound_path = os.path.dirname(self.entry_path)
        self.src_records = [self._path_to_record(self.entry_path)]


class _Feedback(GenerateFeedback):
    """`nbgrader generate_feedback` that keeps its HTML exporter, templates compiled, from one student
    to the next, as nbgrader's own keeps it across the students of one run: compiling them again took a
    third of each submission's feedback."""

    started = False

    def start(self) -> None:
        if not self.started:
            super().start()
            self.started = True
            return
        self.init_notebooks()
        current = os.getcwd()
        os.chdir(self.coursedir.root)
        try:
            self.convert_notebooks()
        finally:
            os.chdir(current)


class Exchange:
    """The course at `root`: its nbgrader configuration, folders and exchange."""

    def __init__(self, root: Path) -> None:
        self.root = root
        config = course_config(root)
        # The feedback template, as nbgrader's API sets it for generate_feedback.
        config.merge(Config({"HTMLExporter": {"template_name": "feedback"}}))
        self.api = NbGraderAPI(config=config)
        self._log = io.StringIO()
        self.api.log.handlers[:] = [logging.StreamHandler(self._log)]
        self.api.log.setLevel(logging.WARNING)
        self.api.log.propagate = False
        self.coursedir = self.api.coursedir
        self.course_id = self.coursedir.course_id
        # The course's folders in nbgrader's default layout, as course mode grades it.
        self.submitted = root / self.coursedir.submitted_directory
        self.released_assignments = root / self.coursedir.release_directory
        exchange_root = Path(FileSystemExchange(config=config).root)
        self.inbound = exchange_root / self.course_id / "inbound"
        self.outbound_feedback = exchange_root / self.course_id / "feedback"
        # nbgrader's feedback converter, one for each set of extra preprocessors.
        self._feedback: dict[tuple, _Feedback] = {}

    def release_folder(self, assignment: str) -> Path:
        return self.released_assignments / assignment

    def _run(self, app, what: str) -> None:
        self._log.seek(0)
        self._log.truncate()
        try:
            app.start()
        except Exception as error:
            said = self._log.getvalue().strip().splitlines()
            raise NbgraderStepError(f"nbgrader {what} failed: {said[-1] if said else error}") from error

    def collected_timestamp(self, student: str, assignment: str) -> datetime | None:
        return self.coursedir.get_existing_timestamp(str(self.submitted / student / assignment))

    def collect(self, entry: Entry) -> bool:
        """Copy the entry into submitted/ unless what is there is newer; False if it is. What is there
        from this same entry is copied again: a stop may have cut its copy short."""
        before = self.collected_timestamp(*entry.key)
        if before is not None and before > entry.timestamp:
            return False
        if before == entry.timestamp:
            shutil.rmtree(self.submitted / entry.student / entry.assignment)
        with temp_attrs(self.coursedir, assignment_id=entry.assignment, student_id=entry.student):
            app = _CollectOne(
                str(entry.path),
                coursedir=self.coursedir,
                authenticator=self.api.authenticator,
                parent=self.api,
            )
            app.update, app.check_owner = True, False
            self._run(app, f"collect {entry.assignment} for {entry.student}")
        return True

    def generate_feedback(self, student: str, assignment: str, preprocessors: tuple) -> None:
        """`nbgrader generate_feedback --force` of one student's assignment, with `preprocessors` run
        after nbgrader's own."""
        app = self._feedback.get(preprocessors)
        if app is None:
            app = self._feedback[preprocessors] = _Feedback(coursedir=self.coursedir, parent=self.api)
            app.force = True
            app.preprocessors = [*app.preprocessors, *preprocessors]
        with temp_attrs(self.coursedir, assignment_id=assignment, student_id=student):
            self._run(app, f"generate_feedback {assignment} for {student}")

    def release_feedback(self, student: str, assignment: str) -> None:
        """`nbgrader release_feedback` of one student's assignment."""
        with temp_attrs(self.coursedir, assignment_id=assignment, student_id=student):
            app = self.api.exchange.ReleaseFeedback(
                coursedir=self.coursedir, authenticator=self.api.authenticator, parent=self.api
            )
            self._run(app, f"release_feedback {assignment} for {student}")

    def release_notice(self, student: str, assignment: str, text: str) -> None:
        """Release `text` as the feedback of each notebook of the student's collected submission, in
        the folder `generate_feedback` writes, until its real feedback replaces it."""
        submitted = self.submitted / student / assignment
        feedback = Path(self.coursedir.format_path(self.coursedir.feedback_directory, student, assignment))
        feedback.mkdir(parents=True, exist_ok=True)
        for name in ("timestamp.txt", "submission_secret.txt"):
            shutil.copy(submitted / name, feedback / name)
        page = f"<!DOCTYPE html>\n<html><body><p>{html.escape(text)}</p></body></html>\n"
        for notebook in submitted.glob("*.ipynb"):
            (feedback / f"{notebook.stem}.html").write_text(page)
        self.release_feedback(student, assignment)

    def released(self, student: str, assignment: str) -> list[Path]:
        """Where the exchange holds (or would hold) the feedback of each notebook of the student's last
        collected submission; empty when it has no submission secret to find it by."""
        submitted = self.submitted / student / assignment
        try:
            secret = (submitted / "submission_secret.txt").read_text()
        except OSError:
            return []
        return [
            self.outbound_feedback / f"{notebook_hash(secret=secret, notebook_id=path.stem)}.html"
            for path in sorted(submitted.glob("*.ipynb"))
        ]
