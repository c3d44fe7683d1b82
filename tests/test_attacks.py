"""Hostile submissions graded in one class run beside classmates with correct answers.

For each attack (tests/hostile.py): it earns no mark, every classmate keeps full marks, the run
finishes, nothing it started is still running, and no protected byte (a secret planted in the files it
aims at, the hidden tests' text, the reference's) reaches its feedback or grades.csv. A second class of
notebooks whose only oddity is their text (a BOM, CRLF, a lone surrogate, nbgrader's markers, file
names) keeps full marks, and a run killed mid-way and resumed over a forged journal ends with exactly
the grades of an uninterrupted run. A smaller class is graded at Landlock ABI 1, the oldest, with the
attacks that later versions guard against and older ones keep out by other means.
"""

import csv
import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from classroom import LESSON, grade_command, write_submission
from grading_pipeline import submission
from hostile import (
    MARKER,
    RIGHT,
    WRONG,
    Paths,
    below_landlock_6,
    forgeries,
    outputs,
    processes,
    reads,
    writes,
)

from autograder.course.layout import STUDENT_NOTEBOOKS
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.records.journal import Journal
from autograder.records.results import Status, read_csv
from autograder.records.run_file import RunFile
from autograder.sandbox import landlock

REPOSITORY = Path(__file__).resolve().parent.parent
QUESTIONS = {"square_forward": 1.0, "square_first_derivative": 1.0, "square_second_derivative": 2.0}
FULL_MARKS = sum(QUESTIONS.values())
# Named to be graded early, mid-way and late among the attacks (students are graded in name order).
CLASSMATES = ["a_classmate", "hb_classmate", "p_classmate", "w_classmate"]
# The reference's docstring: only solutions/ holds it.
REFERENCE_TEXT = "whose backward uses only the saved input"
_SANDBOX_UIDS = 3_000_000_000


def _notebook(cells: list[str], student_secret: str | None = None):
    """The released notebook with `cells[0]` as its answer and the others as new cells after it."""
    notebook = submission(LESSON, {"square": cells[0]})
    answer = next(i for i, c in enumerate(notebook.cells) if c.metadata.get("nbgrader", {}).get("solution"))
    notebook.cells[answer + 1 : answer + 1] = [nbformat.v4.new_code_cell(code) for code in cells[1:]]
    if student_secret:
        # In a code cell too: the grader holds code cells, and an attack must not find them.
        secret_cells = [
            nbformat.v4.new_markdown_cell(student_secret),
            nbformat.v4.new_code_cell(f"# {student_secret}"),
        ]
        notebook.cells[0:0] = secret_cells
    return notebook


def _metadata_tricks() -> dict:
    """Notebooks that claim, in their cells' metadata, to be something else than the source says."""
    unmarked = _notebook([WRONG])
    for cell in unmarked.cells:
        if cell.metadata.get("nbgrader", {}).get("grade"):
            cell.metadata.nbgrader.update(grade=False, locked=False)
            cell.source = "print(open('/dev/null').read())"
    claims = _notebook([WRONG, "pass"])
    for cell in claims.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.metadata.nbgrader.update(grade=True, points=100)
        if cell.source == "pass":
            cell.metadata["nbgrader"] = {"grade": True, "grade_id": "bonus", "points": 50, "solution": False}
    return {"unmarks_its_test_cells": unmarked, "claims_points": claims}


def _grade_command(submitted: Path, out: Path, *extra: str) -> list[str]:
    return grade_command(submitted, out, "--workers", "2", "--seed", "11", *extra)


def _marked_processes(marker: str) -> list[str]:
    """Command lines of processes that name `marker` (every process forked from the run's workers does:
    their settings name the submissions folder) or run as a sandbox's user and name it."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            uid = int((entry / "status").read_text().split("\nUid:")[1].split()[0])
        except (OSError, IndexError, ValueError):
            continue
        if marker in command and (uid >= _SANDBOX_UIDS or "autograder" in command):
            found.append(f"uid {uid}: {command[:200]}")
    return found


class AttackRun:
    """The attack class, graded once: its grades, outputs and what was left running."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.submitted, self.out = root / "submitted", root / "out"
        self.secret = f"planted-{secrets.token_hex(8)}"
        self.paths = Paths(REPOSITORY, self.submitted, self.out, self._classmate(CLASSMATES[0]))
        self.attacks = {name: [code] for name, code in {**reads(self.paths), **writes(self.paths)}.items()}
        self.attacks |= {name: [code] for name, code in {**processes(), **forgeries()}.items()}
        self.attacks |= outputs()
        notebooks = {name: _notebook(cells) for name, cells in self.attacks.items()}
        notebooks |= _metadata_tricks()
        self.students = list(notebooks)
        for name, notebook in notebooks.items():
            write_submission(self.submitted, name, notebook)
        for classmate in CLASSMATES:
            write_submission(self.submitted, classmate, _notebook([RIGHT], student_secret=self.secret))
        # The command's own folder (its run.json made first), holding a file the attacks go after.
        RunFile.open(self.out, seed=None).save(self.out)
        self.paths.planted.write_text(self.secret)
        self.protected = {path: _digest(path) for path in self._instructor_files()}

    def _classmate(self, name: str) -> Path:
        return self.submitted / name / LESSON / f"{LESSON}.ipynb"

    def _instructor_files(self) -> list[Path]:
        classmates = [self._classmate(name) for name in CLASSMATES]
        return [self.paths.hidden_tests, self.paths.reference, *classmates]

    def grade(self) -> None:
        started = time.monotonic()
        report = self.root / "outlived.json"
        command = _grade_command(self.submitted, self.out, "--timeout", "10", "--notebook-timeout", "60")
        with open(self.root / "grade.log", "wb") as log:
            subprocess.run(
                [sys.executable, str(Path(__file__).parent / "outlived.py"), str(report), "--", *command],
                stdout=log,
                stderr=log,
                timeout=600,
                check=True,
            )
        self.seconds = time.monotonic() - started
        self.outcome = json.loads(report.read_text())
        self.still_running = _marked_processes(str(self.root))
        self.rows = read_csv(self.out / "grades.csv") if (self.out / "grades.csv").exists() else []

    def questions(self, student: str) -> dict:
        return {row.question: row for row in self.rows if row.student == student}

    def leaked(self, student: str) -> list[str]:
        """The protected texts found in what the student gets back."""
        feedback = self.out / "autograded" / student / LESSON / f"{LESSON}.ipynb"
        # Messages are wrapped to a notebook's width: a text is looked for across their line breaks too.
        text = feedback.read_text(errors="replace").replace("\\n", " ") if feedback.exists() else ""
        text += "\n".join(row.reason for row in self.questions(student).values())
        return [s for s in (self.secret, MARKER, REFERENCE_TEXT, "BEGIN HIDDEN TESTS") if s in text]


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def attack_run(tmp_path_factory) -> AttackRun:
    run = AttackRun(tmp_path_factory.mktemp("attacks"))
    run.grade()
    return run


def test_the_secrets_are_secret_to_begin_with():
    """Finding a marker in an attack's outputs means a leak only if the student could not see it."""
    released = (STUDENT_NOTEBOOKS / f"{LESSON}.ipynb").read_text()
    assert MARKER not in released
    assert REFERENCE_TEXT not in released
    assert MARKER in (REPOSITORY / "solutions" / "source" / LESSON / f"{LESSON}.ipynb").read_text()


pytestmark = pytest.mark.xdist_group("attacks")


def test_the_run_finishes_and_leaves_nothing_running(attack_run):
    assert attack_run.outcome["returncode"] == 0, (attack_run.root / "grade.log").read_text()[-3000:]
    assert attack_run.outcome["left_running"] == []
    assert attack_run.still_running == []
    print(f"attack class graded in {attack_run.seconds:.1f} s")


def test_every_classmate_keeps_full_marks(attack_run):
    for classmate in CLASSMATES:
        rows = attack_run.questions(classmate)
        assert {q: (r.score, r.status) for q, r in rows.items()} == {
            q: (points, Status.OK) for q, points in QUESTIONS.items()
        }, classmate


ATTACKS = [
    *reads(Paths(REPOSITORY, Path("/s"), Path("/o"), Path("/c"))),
    *writes(Paths(REPOSITORY, Path("/s"), Path("/o"), Path("/c"))),
    *processes(),
    *forgeries(),
    *outputs(),
    "unmarks_its_test_cells",
    "claims_points",
]


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_attack_earns_nothing_and_gets_nothing_protected(attack_run, attack):
    rows = attack_run.questions(attack)
    assert set(rows) == set(QUESTIONS), rows
    assert {q: r.score for q, r in rows.items()} == dict.fromkeys(QUESTIONS, 0.0), rows
    assert attack_run.leaked(attack) == []


def test_the_instructors_files_and_the_output_folder_are_intact(attack_run):
    assert {path: _digest(path) for path in attack_run.protected} == attack_run.protected
    assert not (attack_run.paths.reference.parent / "planted_by_student.py").exists()
    out = attack_run.out
    assert "/tmp/owned" not in (out / "nbgrader_config.py").read_text()
    assert not Path("/tmp/owned").exists()
    secret = bytes.fromhex(json.loads((out / "run.json").read_text())["journal_secret"])
    lines = (out / "journal.jsonl").read_text().splitlines()
    assert len(Journal(out / "journal.jsonl", secret).load()) == len(lines) == len(attack_run.students) + 4
    run_nbgrader("export", course=out)
    with open(out / "nbgrader_totals.csv", newline="") as exported:
        totals = {row["student_id"]: float(row["score"]) for row in csv.DictReader(exported)}
    assert totals == {student: 0.0 for student in attack_run.students} | dict.fromkeys(CLASSMATES, FULL_MARKS)


def test_output_is_cut_and_the_feedback_stays_small(attack_run):
    for student in ("prints_without_end", "displays_giant_data"):
        feedback = attack_run.out / "autograded" / student / LESSON / f"{LESSON}.ipynb"
        assert feedback.stat().st_size < 8 * 2**20, student
    printed = (attack_run.out / "autograded" / "prints_without_end" / LESSON / f"{LESSON}.ipynb").read_text()
    assert "output cut" in printed


class OldestLandlockRun:
    """A class graded at Landlock ABI 1 (Linux 5.13): the attacks on what ABI 3, 4 and 6 guard, and a
    classmate with the right answer; a server on loopback and an abstract unix socket wait for them."""

    def __init__(self, root: Path) -> None:
        self.submitted, self.out = root / "submitted", root / "out"
        self.server = socket.create_server(("127.0.0.1", 0))
        self.unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        abstract = f"\0gradgrad-attacks-{os.getpid()}"
        self.unix.bind(abstract)
        for listening in (self.server, self.unix):
            listening.listen()
            listening.setblocking(False)
        classmate = self.submitted / CLASSMATES[0] / LESSON / f"{LESSON}.ipynb"
        self.paths = Paths(REPOSITORY, self.submitted, self.out, classmate)
        self.attacks = below_landlock_6(self.paths, self.server.getsockname()[1], abstract)
        for name, code in self.attacks.items():
            write_submission(self.submitted, name, _notebook([code]))
        write_submission(self.submitted, CLASSMATES[0], _notebook([RIGHT]))
        RunFile.open(self.out, seed=None).save(self.out)
        self.paths.planted.write_text("planted")
        targets = [self.paths.grader_code, self.paths.hidden_tests, self.paths.reference, classmate]
        targets.append(self.paths.planted)
        self.protected = {path: (_digest(path), path.stat().st_mtime_ns) for path in targets}

    def grade(self) -> None:
        started = time.monotonic()
        command = _grade_command(self.submitted, self.out, "--timeout", "10")
        environment = os.environ | {landlock.CAP_VARIABLE: "1"}
        self.run = subprocess.run(command, capture_output=True, text=True, timeout=300, env=environment)
        self.seconds = time.monotonic() - started
        self.rows = read_csv(self.out / "grades.csv") if (self.out / "grades.csv").exists() else []
        self.connections = [_accepted(listening) for listening in (self.server, self.unix)]
        self.server.close()
        self.unix.close()

    def feedback(self, student: str) -> str:
        return (self.out / "autograded" / student / LESSON / f"{LESSON}.ipynb").read_text()


def _accepted(listening: socket.socket) -> bool:
    try:
        listening.accept()[0].close()
    except BlockingIOError:
        return False
    return True


@pytest.fixture(scope="module")
def oldest_landlock_run(tmp_path_factory) -> OldestLandlockRun:
    run = OldestLandlockRun(tmp_path_factory.mktemp("oldest-landlock"))
    run.grade()
    return run


def test_at_the_oldest_landlock_the_run_finishes_with_the_classmates_marks(oldest_landlock_run):
    run = oldest_landlock_run
    assert run.run.returncode == 0, run.run.stderr[-3000:]
    assert json.loads((run.out / "run.json").read_text())["confinement"]["landlock_abi"] == 1
    marks = {(row.student, row.question): (row.score, row.status) for row in run.rows}
    assert {q: marks[CLASSMATES[0], q] for q in QUESTIONS} == {
        q: (p, Status.OK) for q, p in QUESTIONS.items()
    }
    assert {student for student, _ in marks} == {CLASSMATES[0], *run.attacks}
    print(f"class graded at Landlock ABI 1 in {run.seconds:.1f} s")


def test_at_the_oldest_landlock_no_file_is_truncated_and_nothing_outside_is_reached(oldest_landlock_run):
    run = oldest_landlock_run
    assert {path: (_digest(path), path.stat().st_mtime_ns) for path in run.protected} == run.protected
    assert run.connections == [False, False]
    # The grader's code is visible, and read-only; the rest is hidden from notebooks altogether.
    truncations = run.feedback("truncates_files")
    assert f"O_TRUNC {run.paths.grader_code} -x OSError [Errno 30] Read-only file system" in truncations
    assert f"truncate {run.paths.reference} -x FileNotFoundError" in truncations
    assert "Network is unreachable" in run.feedback("connects_to_loopback")
    assert "Connection refused" in run.feedback("connects_to_an_abstract_socket")
    for attack in run.attacks:
        assert {row.score for row in run.rows if row.student == attack} == {0.0}, attack
