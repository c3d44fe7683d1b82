"""`python -m autograder serve --course COURSE_DIR` beside a real nbgrader exchange: students who are
Unix users of their own hand in with `nbgrader submit` and read their feedback with `nbgrader
fetch_feedback`; the service grades each submission into the course's gradebook, credits it only to
its owner, and after SIGTERM and a restart grades what landed meanwhile and nothing twice.

One service runs for the module (and is restarted once); the tests follow one another as a semester
does. About two minutes on 2 cores, most of it the twelve runs of `nbgrader submit` and `nbgrader
fetch_feedback` as students (4 s each, mostly imports) and the restart."""

import html
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from classroom import LESSON, answers_of
from exchange_course import Running, Student, graded_score, make_course, shared_exchange
from nbgrader.utils import notebook_hash

from autograder.serve.feedback import NOTE

pytestmark = pytest.mark.xdist_group("serve")
# Far ahead: the feedback is the one students get before the due date.
DUE = "2099-01-01 12:00:00 UTC"
# Enough for every student here but one, whose flood meets the limit.
PER_HOUR = 3
GRADED = re.compile(r"graded (\S+) (\S+) ([\d.]+)/([\d.]+)(?: \(late penalty [\d.]+\))? in ([\d.]+) s")


# Seconds a submission may take to be collected, far more than it takes on a loaded machine.
_COLLECTED_WITHIN = 60


def _children(pid: int) -> set[int]:
    found = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(child) for child in (task / "children").read_text().split()}
    return found


@dataclass
class Semester:
    course: Path
    students: dict[str, Student]
    service: Running
    exchange: Path


@pytest.fixture(scope="module")
def semester(tmp_path_factory):
    """A course whose lesson is released to a shared exchange, four students, and the service."""
    assert os.geteuid() == 0, "run as root (as CI does): it makes the students' Unix users"
    course = tmp_path_factory.mktemp("serve") / "course"
    exchange = shared_exchange()
    make_course(course, exchange, due=DUE, extra=f"c.Serve.graded_per_hour = {PER_HOUR}\n")
    students = {name: Student(f"gg-{name}", exchange) for name in ("alice", "bob", "carol", "mallory")}
    semester = Semester(course, students, Running(course, "--workers", "2"), exchange)
    semester.service.wait_for("serving gradgrad")
    yield semester
    if semester.service.process.poll() is None:
        semester.service.stop()
    shutil.rmtree(exchange)


def test_a_correct_submission_gets_full_marks_and_feedback_the_student_fetches(semester):
    course, students, service = semester.course, semester.students, semester.service
    alice = students["alice"]
    alice.answer(answers_of("solution"))
    alice.submit()
    graded = service.wait_for(r"graded gg-alice ")
    assert GRADED.fullmatch(graded.string).group(3, 4) == ("4", "4")
    assert graded_score(course, "gg-alice") == 4.0
    (page,) = alice.fetched_feedback()
    assert "Score: 4.0 / 4.0" in page or "4.0 / 4.0" in page


def test_a_resubmission_is_graded_again_and_its_feedback_replaces_the_first(semester):
    course, students, service = semester.course, semester.students, semester.service
    alice = students["alice"]
    alice.answer(answers_of("detach_in_backward"))
    alice.submit()
    graded = GRADED.fullmatch(service.wait_for(r"graded gg-alice ").string)
    assert float(graded.group(3)) < 4
    assert graded_score(course, "gg-alice") == float(graded.group(3))
    pages = alice.fetched_feedback()
    assert len(pages) == 2
    assert pages[0] != pages[1]


def test_a_forged_entry_is_refused_and_the_named_student_keeps_their_grade(semester):
    course, students, service = semester.course, semester.students, semester.service
    bob, mallory = students["bob"], students["mallory"]
    bob.answer(answers_of("solution"))
    bob.submit()
    service.wait_for(r"graded gg-bob ")
    mallory.answer({})
    mallory.submit("--student=gg-bob")
    refused = service.wait_for(r"refused gg-bob\+")
    assert "forged: owned by gg-mallory" in refused.string
    assert graded_score(course, "gg-bob") == 4.0


def test_links_strange_files_large_notebooks_and_half_written_entries_never_reach_a_kernel(semester):
    course, students, service = semester.course, semester.students, semester.service
    mallory = students["mallory"]
    notebook = f"{LESSON}/{LESSON}.ipynb"
    half_written = mallory.hand_in_by_hand(f"""
entry = make_entry("half")
shutil.copy("{notebook}", entry)
print(entry)
""")
    for suffix, files in {
        "link": f'(entry / "{LESSON}.ipynb").symlink_to("/etc/passwd")',
        "extra": f'shutil.copy("{notebook}", entry); (entry / "notes.py").write_text("import os")',
        "large": f'(entry / "{LESSON}.ipynb").write_bytes(b" " * (17 * 2**20))',
    }.items():
        mallory.hand_in_by_hand(f"""
entry = make_entry("{suffix}")
{files}
(entry / "submission_secret.txt").write_text("secret")
(entry / "timestamp.txt").write_text(entry.name.split("+")[2])
""")
    said = {service.wait_for(r"refused gg-mallory\+.+\+(link|extra|large): ").group(1) for _ in range(3)}
    assert said == {"link", "extra", "large"}
    assert not any("+half" in line for line in service.seen)
    refused = "".join(line for line in service.seen if line.startswith("refused gg-mallory"))
    assert f"link: {LESSON}.ipynb is a symbolic link" in refused
    assert "extra: notes.py is not a file of" in refused
    assert f"large: {LESSON}.ipynb is larger than 16 MB" in refused
    assert not (course / "submitted" / "gg-mallory").exists()
    mallory.hand_in_by_hand(f"""
entry = pathlib.Path({half_written.strip()!r})
(entry / "submission_secret.txt").write_text("secret")
(entry / "timestamp.txt").write_text(entry.name.split("+")[2])
""")
    service.wait_for(r"graded gg-mallory ")
    assert (course / "submitted" / "gg-mallory" / LESSON / "timestamp.txt").is_file()


def test_a_flood_from_one_student_delays_a_classmate_by_one_grading_at_most(semester):
    course, students, service = semester.course, semester.students, semester.service
    carol, mallory = students["carol"], students["mallory"]
    mallory.answer(answers_of("solution"))
    flood = mallory.flood(80)
    carol.answer(answers_of("solution"))
    carol.submit()
    service.drain()  # what the service said before carol's submission landed
    flood.communicate(timeout=60)
    between = []
    while not (line := service.wait_for(r"graded gg-(carol|mallory) ").string).startswith("graded gg-carol"):
        between.append(line)
    # Mallory's entry being graded when carol's landed, and her newest beside carol's.
    assert len(between) <= 2, between
    assert graded_score(course, "gg-carol") == 4.0
    state = course / "class_grader" / "serve.json"
    while len(outcomes := _flood_outcomes(state)) < 80 or outcomes.count("collected") > 1:
        time.sleep(0.1)
    # Never more than one of hers queued: every other entry was superseded before it was graded.
    assert outcomes.count("superseded") >= 80 - PER_HOUR, outcomes


def test_the_hourly_limit_holds_a_submission_and_its_feedback_says_when_it_will_be_graded(semester):
    mallory, service = semester.students["mallory"], semester.service
    service.drain()
    for attempt in range(PER_HOUR + 1):
        mallory.hand_in_by_hand(f"""
entry = make_entry("again{attempt}")
shutil.copy("{LESSON}/{LESSON}.ipynb", entry)
(entry / "submission_secret.txt").write_text("limited{attempt}")
(entry / "timestamp.txt").write_text(entry.name.split("+")[2])
""")
        said = service.wait_for(rf"graded gg-mallory |held .*\+again{attempt}: ").string
        if said.startswith("held"):
            break
    assert re.fullmatch(
        rf"held .*\+again{attempt}: gg-mallory had {PER_HOUR} submissions graded per hour; "
        r"it will be graded at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC",
        said,
    ), said
    notice = (
        semester.exchange
        / "gradgrad"
        / "feedback"
        / f"{notebook_hash(secret=f'limited{attempt}', notebook_id=LESSON)}.html"
    )
    assert "this submission will be graded at" in notice.read_text()
    # The instructor sees it waiting, from the status the service writes each second.
    status = [sys.executable, "-m", "autograder", "serve", "--course", str(semester.course), "--status"]
    deadline = time.monotonic() + 10
    while " 0 queued" in (line := subprocess.run(status, capture_output=True, text=True).stdout):
        assert time.monotonic() < deadline, line
    assert re.fullmatch(
        r"serving since [\d :-]+ \(pid \d+\): 1 queued, oldest waiting \d+ s; "
        r"\d+ graded, [1-9]\d* refused, [1-9]\d* superseded\n",
        line,
    ), line


def _flood_outcomes(state: Path) -> list[str]:
    entries = json.loads(state.read_text())["entries"]
    return [outcome for name, outcome in entries.items() if "+flood" in name]


def test_before_the_due_date_feedback_withholds_what_a_hidden_test_said(semester):
    course, students, service = semester.course, semester.students, semester.service
    alice = students["alice"]
    # Right on the visible test's inputs, in [-2, 2]; wrong on the hidden test's, in [-5, 5]: the hidden
    # forward check fails (1 point), and so does the second derivative's (2 points), which a wrong forward
    # does not earn.
    answer = answers_of("solution")["square"].replace(
        "return x**2", "return torch.where(x.abs() <= 2, x**2, x**2 + 1)"
    )
    alice.answer({"square": answer})
    alice.submit()
    graded = GRADED.fullmatch(service.wait_for(r"graded gg-alice ").string)
    assert graded.group(3, 4) == ("1", "4")
    autograded = nbformat.read(course / "autograded" / "gg-alice" / LESSON / f"{LESSON}.ipynb", as_version=4)
    (said,) = [
        output.evalue
        for cell in autograded.cells
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "square_forward"
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]
    page = alice.fetched_feedback()[-1]
    assert NOTE in page
    assert html.escape(said.splitlines()[0]) not in page
    assert said.splitlines()[0] not in page


def test_sigterm_then_a_restart_grades_what_landed_meanwhile_nothing_twice_and_keeps_held_ones(semester):
    course, students, service = semester.course, semester.students, semester.service
    carol, bob = students["carol"], students["bob"]
    # Carol's answer takes seconds to grade, so that the stop comes while it is being graded.
    slow = answers_of("detach_in_backward")
    first = next(iter(slow))
    carol.answer({**slow, first: f"{slow[first]}\nimport time\ntime.sleep(5)"})
    carol.submit()
    state = course / "class_grader" / "serve.json"
    deadline = time.monotonic() + _COLLECTED_WITHIN
    while not any(
        name.startswith("gg-carol+") and outcome == "collected"
        for name, outcome in json.loads(state.read_text())["entries"].items()
    ):
        assert time.monotonic() < deadline, f"carol's submission was not collected: {state.read_text()}"
        time.sleep(0.05)
    workers = _children(service.process.pid)
    status, said, _ = service.stop()
    assert status == 0, said
    assert "Traceback" not in said, said
    assert said.strip().endswith("stopped; the same command grades what lands meanwhile")
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers)

    bob.answer(answers_of("detach_in_backward"))
    bob.submit()
    semester.service = restarted = Running(course, "--workers", "2")
    restarted.wait_for("serving gradgrad")
    regraded = {line.split()[1] for line in restarted.seen if line.endswith("after a restart")}
    # Carol's, stopped mid-grading, and bob's, landed meanwhile; mallory's stays held by the hourly limit.
    assert regraded == {"gg-carol", "gg-bob"}
    restarted.wait_for(rf"held gg-mallory\+{LESSON}\+.*: gg-mallory had {PER_HOUR} submissions graded")
    assert graded_score(course, "gg-bob") < 4
    assert graded_score(course, "gg-carol") < 4
    assert len(carol.fetched_feedback()) == 2
    only = ["--student", "gg-carol", "--student", "gg-bob"]
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "grade",
            "--course",
            str(course),
            LESSON,
            "--workers",
            "1",
            *only,
        ],
        capture_output=True,
        text=True,
    )
    # Everything is graded as `grade --course` would grade it, but for the one submission still held.
    assert again.stderr.startswith(
        "nothing to grade for --student/--assignment; "
        "1 changed notebook outside --student/--assignment left as they are"
    ), again.stderr
