"""An nbgrader course with the default file-system exchange, and students who are Unix users of their
own: each hands in with a real `nbgrader submit` run as them and reads back with `nbgrader
fetch_feedback`, as their JupyterLab's Assignment List would; and `python -m autograder serve` on the
course, as a process whose log lines a test waits for.

As root (as in CI) the students are made once with useradd. They run the system's Python 3.11 with
this venv's packages: the venv's own interpreter lies under root's home, which they cannot enter.
"""

import contextlib
import os
import pwd
import queue
import re
import shutil
import signal
import site
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat
from classroom import LESSON
from grading_pipeline import submission

from autograder.course.nbgrader_api import course_config
from autograder.course.release import add_lesson, write_config
from autograder.records import gradebook

REPO = Path(__file__).resolve().parent.parent
COURSE_ID = "gradgrad"


def student_user(name: str) -> pwd.struct_passwd:
    """A Unix user named like the student, made once on a machine that lacks it."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(name)
    subprocess.run(["useradd", "--create-home", "--shell", "/usr/sbin/nologin", name], check=True)
    return pwd.getpwnam(name)


def shared_exchange() -> Path:
    """An exchange root as nbgrader's docs make it: a folder everyone may write, outside root's home."""
    root = Path(tempfile.mkdtemp(prefix="gradgrad-exchange-", dir="/var/tmp"))
    root.chmod(0o777)
    return root


def graded_score(course: Path, student: str) -> float:
    """The student's score for the lesson in the course's gradebook."""
    with gradebook.opened(f"sqlite:///{course / 'gradebook.db'}") as book:
        return book.find_submission(LESSON, student).score


def make_course(course: Path, exchange: Path, due: str, extra: str = "") -> None:
    """A course with the lesson generated, due at `due` and released to the exchange, as an instructor
    does it."""
    write_config(course, extra=f"\nc.Exchange.root = {str(exchange)!r}\n{extra}")
    add_lesson(course, LESSON)
    with gradebook.opened(f"sqlite:///{course / 'gradebook.db'}") as book:
        book.update_or_create_assignment(LESSON, duedate=due)
    from nbgrader.apps import NbGraderAPI
    from nbgrader.utils import temp_attrs

    api = NbGraderAPI(config=course_config(course))
    with temp_attrs(api.coursedir, assignment_id=LESSON):
        release = api.exchange.ReleaseAssignment(
            coursedir=api.coursedir, authenticator=api.authenticator, parent=api
        )
        release.start()


class Student:
    """A student whose home holds their copy of the lesson and an nbgrader config naming the exchange."""

    def __init__(self, name: str, exchange: Path) -> None:
        self.user = student_user(name)
        self.name = name
        self.home = Path(self.user.pw_dir)
        self.exchange = exchange
        for child in self.home.iterdir():
            if not child.name.startswith(".") or child.name in (".local", ".jupyter"):
                shutil.rmtree(child) if child.is_dir() else child.unlink()
        config = f"c.Exchange.root = {str(exchange)!r}\nc.CourseDirectory.course_id = {COURSE_ID!r}\n"
        self._write(self.home / "nbgrader_config.py", config)

    def _write(self, path: Path, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        for made in [path, *path.relative_to(self.home).parents]:
            os.chown(self.home / made, self.user.pw_uid, self.user.pw_gid)

    def answer(self, answers: dict[str, str]) -> None:
        """Fill in the released lesson with `answers` (answer cell grade_id -> code) and save it."""
        self._write(self.home / LESSON / f"{LESSON}.ipynb", nbformat.writes(submission(LESSON, answers)))

    def _python(self, *arguments: str) -> subprocess.Popen:
        """The system's Python 3.11 with the venv's packages, run as this student in their home."""
        environment = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(self.home),
            "PYTHONPATH": os.pathsep.join([*site.getsitepackages(), str(REPO)]),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        return subprocess.Popen(
            ["/usr/bin/python3", *arguments],
            cwd=self.home,
            env=environment,
            user=self.user.pw_uid,
            group=self.user.pw_gid,
            extra_groups=[],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def nbgrader(self, *arguments: str) -> subprocess.CompletedProcess:
        """`nbgrader ARGUMENTS` run as this student in their home, raising with its output on failure."""
        process = self._python("-m", "nbgrader", *arguments)
        stdout, stderr = process.communicate(timeout=120)
        result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        if result.returncode != 0:
            raise RuntimeError(
                f"nbgrader {' '.join(arguments)} as {self.name}:\n{result.stdout}{result.stderr}"
            )
        return result

    def flood(self, count: int) -> subprocess.Popen:
        """Start putting `count` entries of their lesson into inbound, one every 0.1 s, as a script of
        the student's own can: each whole, with a timestamp newer than the last."""
        script = f"""
import time
for number in range({count}):
    entry = make_entry(f"flood{{number}}")
    shutil.copy("{LESSON}/{LESSON}.ipynb", entry)
    (entry / "submission_secret.txt").write_text(f"secret{{number}}")
    (entry / "timestamp.txt").write_text(entry.name.split("+")[2])
    time.sleep(0.1)
"""
        return self._python("-c", self._entries + script)

    def hand_in_by_hand(self, script: str) -> str:
        """Run `script` as the student, with `make_entry(suffix)` making them a new entry in inbound
        (`shutil` and `pathlib` imported); what it prints."""
        stdout, stderr = self._python("-c", self._entries + script).communicate(timeout=60)
        assert not stderr, stderr
        return stdout

    @property
    def _entries(self) -> str:
        return f"""
import datetime, pathlib, shutil
def make_entry(suffix):
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f UTC")
    inbound = pathlib.Path({str(self.exchange / COURSE_ID / "inbound")!r})
    entry = inbound / f"{self.name}+{LESSON}+{{stamp}}+{{suffix}}"
    entry.mkdir()
    return entry
"""

    def submit(self, *options: str) -> None:
        self.nbgrader("submit", LESSON, *options)

    def fetched_feedback(self) -> list[str]:
        """`nbgrader fetch_feedback`, then the text of every feedback page it has fetched, newest last."""
        self.nbgrader("fetch_feedback", LESSON)
        pages = sorted((self.home / LESSON / "feedback").glob("*/*.html"))
        return [page.read_text() for page in pages]


class Running:
    """`python -m autograder serve --course COURSE OPTIONS` as a process, its log lines as they come."""

    def __init__(self, course: Path, *options: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder", "serve", "--course", str(course), *options],
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.process.stderr:
            self.lines.put(line.rstrip("\n"))

    def wait_for(self, pattern: str, timeout: float = 60.0) -> re.Match:
        """The first line from now on that matches `pattern`."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(line)
            if found := re.search(pattern, line):
                return found
        raise AssertionError(
            f"no line matching {pattern!r} in {timeout} s; the service said:\n" + "\n".join(self.seen)
        )

    def drain(self) -> None:
        """Take in every line said so far."""
        while not self.lines.empty():
            self.seen.append(self.lines.get())

    def stop(self) -> tuple[int, str, float]:
        """SIGTERM: the exit status, what it said after, and the seconds it took."""
        started = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=30)
        took = time.monotonic() - started
        self._reader.join()
        self.process.stderr.close()
        rest = []
        while not self.lines.empty():
            rest.append(self.lines.get())
        return status, "\n".join(rest), took
