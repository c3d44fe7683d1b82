"""`python -m autograder grade --course COURSE_DIR ASSIGNMENT` inside an instructor's nbgrader course
directory: the results are the ones `nbgrader autograde` writes there (scores, timestamps, late
penalties, roster), so nbgrader's own export, API and feedback work on them."""

import csv
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from classroom import LESSON, answers_of, write_submission
from grading_pipeline import submission

from autograder.course.nbgrader_api import course_config
from autograder.course.nbgrader_cli import run_nbgrader
from autograder.course.release import add_lesson, write_config
from autograder.records import gradebook

pytestmark = pytest.mark.xdist_group("course_mode")
DUE = "2026-11-20 12:00:00 UTC"
# A late-penalty plugin of the course's own, as an instructor writes one in nbgrader_config.py.
HALF_OFF = '''
from nbgrader.plugins import LateSubmissionPlugin


class HalfOff(LateSubmissionPlugin):
    """Late work loses half its score."""

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        return score / 2


c.AssignLatePenalties.plugin_class = HalfOff
'''


def _hand_in(course: Path, student: str, kind: str, at: str) -> None:
    answers = {} if kind == "blank" else answers_of(kind)
    path = write_submission(course / "submitted", student, submission(LESSON, answers))
    (path.parent / "timestamp.txt").write_text(at)
    # What nbgrader's exchange leaves beside a submission, which release_feedback reads back.
    (path.parent / "submission_secret.txt").write_text(f"secret-of-{student}")


@pytest.fixture(scope="module")
def semester(tmp_path_factory) -> Path:
    """A course with a roster and a due date: alice hands in on time, bob late, carol nothing, and dave,
    not on the roster, on time."""
    course = tmp_path_factory.mktemp("semester") / "course"
    write_config(course, extra=HALF_OFF)
    add_lesson(course, LESSON)
    with gradebook.opened(f"sqlite:///{course / 'gradebook.db'}") as book:
        book.update_or_create_assignment(LESSON, duedate=DUE)
        for student, first, last in (
            ("alice", "Alice", "Ng"),
            ("bob", "Bob", "Ode"),
            ("carol", "Carol", "Li"),
        ):
            book.update_or_create_student(
                student, first_name=first, last_name=last, email=f"{student}@uni.edu"
            )
    _hand_in(course, "alice", "solution", "2026-11-19 09:00:00.000000 UTC")
    _hand_in(course, "bob", "solution", "2026-11-21 09:00:00.000000 UTC")
    _hand_in(course, "dave", "detach_in_backward", "2026-11-20 11:00:00.000000 UTC")
    return course


def _copy(course: Path, to: Path) -> Path:
    shutil.copytree(course, to)
    return to


def _grade_course(course: Path, *options: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "autograder", "grade", "--course", str(course), LESSON, *options]
    return subprocess.run(command, capture_output=True, text=True, cwd=course.parent)


def _exported(course: Path) -> list[dict[str, str]]:
    """`nbgrader export`'s rows, less what differs between any two runs (the export's own time)."""
    run_nbgrader("export", "--to", "export.csv", course=course)
    with open(course / "export.csv", newline="") as exported:
        rows = list(csv.DictReader(exported))
    return sorted(
        ({k: v for k, v in row.items() if k != "timestamp"} | {"t": row["timestamp"]} for row in rows),
        key=lambda r: r["student_id"],
    )


@pytest.fixture(scope="module")
def graded(semester, tmp_path_factory) -> tuple[Path, Path, subprocess.CompletedProcess]:
    """The semester graded by nbgrader autograde, and by the class grader."""
    root = tmp_path_factory.mktemp("graded")
    by_nbgrader = _copy(semester, root / "nbgrader")
    run_nbgrader("autograde", LESSON, course=by_nbgrader)
    ours = _copy(semester, root / "ours")
    result = _grade_course(ours, "--workers", "2")
    assert result.returncode == 0, result.stderr
    return by_nbgrader, ours, result


def test_export_gives_the_rows_of_nbgrader_autograde_late_penalty_and_absent_student_included(graded):
    by_nbgrader, ours, _ = graded
    rows = _exported(ours)
    assert rows == _exported(by_nbgrader)
    scores = {row["student_id"]: (float(row["score"]), float(row["late_submission_penalty"])) for row in rows}
    # nbgrader's export counts the penalty in the score: bob's 4 points, halved for being late.
    assert scores == {"alice": (4.0, 0.0), "bob": (2.0, 2.0), "carol": (0.0, 0.0), "dave": (2.0, 0.0)}


def test_a_student_not_on_the_roster_is_added_and_the_instructor_told(graded):
    _, _, result = graded
    assert "not on the course's roster, so added to it as nbgrader autograde does: dave" in result.stderr


def test_nbgrader_lists_the_submissions_as_autograded_and_makes_their_feedback(graded, tmp_path):
    _, ours, _ = graded
    course = _copy(ours, tmp_path / "course")
    from nbgrader.apps import NbGraderAPI

    api = NbGraderAPI(config=course_config(course))
    submissions = {s["student"]: s for s in api.get_submissions(LESSON)}
    assert {student for student, s in submissions.items() if s["autograded"]} == {"alice", "bob", "dave"}
    assert submissions["bob"]["score"] == 4.0
    for student in ("alice", "bob", "dave"):
        assert (course / "autograded" / student / LESSON / "timestamp.txt").is_file()
    run_nbgrader("generate_feedback", LESSON, course=course)
    pages = sorted(path.parent.parent.name for path in course.glob(f"feedback/*/{LESSON}/*.html"))
    assert pages == ["alice", "bob", "dave"]
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)  # nbgrader's exchange is writable by everyone
    with open(course / "nbgrader_config.py", "a") as config:
        config.write(f"\nc.Exchange.root = {str(exchange)!r}\n")
    run_nbgrader("release_feedback", LESSON, course=course)
    assert len(list(exchange.glob("gradgrad/feedback/*.html"))) == 3


def test_a_newer_timestamp_is_regraded_with_its_penalty(graded, tmp_path):
    _, ours, _ = graded
    course = _copy(ours, tmp_path / "course")
    (course / "submitted" / "alice" / LESSON / "timestamp.txt").write_text("2026-11-22 09:00:00.000000 UTC")
    result = _grade_course(course, "--workers", "1")
    assert result.stderr.splitlines()[0] == "regrading 1 resubmitted notebook; 2 unchanged"
    alice = next(row for row in _exported(course) if row["student_id"] == "alice")
    assert float(alice["late_submission_penalty"]) == 2.0


def test_a_folder_that_is_not_a_course_and_an_assignment_not_generated_get_one_line(semester, tmp_path):
    result = _grade_course(tmp_path)
    assert (result.returncode, result.stderr.count("\n")) == (2, 1)
    assert "is not an nbgrader course directory (it has no nbgrader_config.py)" in result.stderr
    course = _copy(semester, tmp_path / "course")
    shutil.rmtree(course / "release")
    result = _grade_course(course)
    assert (result.returncode, result.stderr.count("\n")) == (2, 1)
    assert f"run `nbgrader generate_assignment {LESSON}` there first" in result.stderr


def _saving_a_grade(response) -> bool:
    """Whether a browser's response is formgrader's answer to saving a grade."""
    return response.request.method == "PUT" and "/formgrader/api/grade/" in response.url


def test_formgrader_in_a_browser_shows_the_grades_and_takes_a_manual_grade(graded, tmp_path):
    """The instructor reviews the class grader's results in formgrader (in the JupyterLab `make
    lab-instructor` serves) and adds extra credit by hand."""
    from jupyterlab_server import INSTRUCTOR_CONFIG, chromium, jupyterlab

    _, ours, _ = graded
    course = _copy(ours, tmp_path / "course")
    db_url = f"sqlite:///{course / 'gradebook.db'}"
    with gradebook.opened(db_url) as book:
        alice = book.find_submission_notebook(LESSON, LESSON, "alice").id
    (tmp_path / "lab").mkdir()
    with jupyterlab(course, tmp_path / "lab", config=INSTRUCTOR_CONFIG) as lab, chromium() as browser:
        page = browser.new_page()
        # Logging in through JupyterLab's page gives the browser the cookie formgrader's API asks for.
        page.goto(f"{lab.url}/lab?token={lab.token}")
        page.get_by_text("Launcher").first.wait_for(timeout=60_000)
        page.goto(f"{lab.url}/formgrader/gradebook/{LESSON}/{LESSON}")
        names = page.locator("table tbody a.name-shown")
        names.nth(2).wait_for(state="attached", timeout=60_000)
        rows = page.locator("table tbody tr").evaluate_all(
            "rows => rows.map(row => [...row.cells].map(cell => cell.textContent.trim()))"
        )
        shown = {name.split("#", 1)[1].lstrip("0123456789"): score for _, name, score, *_ in rows}
        # Formgrader shows the score before the late penalty, as it does after nbgrader autograde.
        assert shown == {"Ode, Bob": "4 / 4", "Ng, Alice": "4 / 4", "dave": "2 / 4"}

        # Once the page has fetched its grades: a value typed earlier is overwritten when they arrive.
        page.goto(f"{lab.url}/formgrader/submissions/{alice}", wait_until="networkidle")
        extra = page.locator("#square_second_derivative_extra_credit")
        # Formgrader saves a grade with a PUT that answers once the gradebook has committed it.
        with page.expect_response(_saving_a_grade, timeout=30_000):
            extra.fill("1")
            extra.press("Tab")
    with gradebook.opened(db_url) as book:
        grades = {g.name: g for g in book.find_submission_notebook(LESSON, LESSON, "alice").grades}
        assert grades["square_second_derivative"].extra_credit == 1
        assert book.find_submission_notebook(LESSON, LESSON, "alice").score == 5
