"""Feedback on submit, in a real browser: a student, a Unix user of their own running JupyterLab as
themselves with the course's exchange configured, has the lesson with a mistake in it, presses Submit
in the Assignment List; `python -m autograder serve` grades it; the student presses Fetch Feedback,
opens the feedback, and reads the judge's message naming the mistake.

One lesson, one submission, one worker: about 30 s, most of it JupyterLab's and the service's start.
The page as it last looked is saved as build/screenshots/feedback-on-submit.png.
"""

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from classroom import LESSON, answers_of
from exchange_course import Student, make_course, shared_exchange
from jupyterlab_server import EXCHANGE_CONFIG, SCREENSHOTS, chromium, jupyterlab
from mutants import MUTANTS

pytestmark = pytest.mark.xdist_group("jupyterlab")
# Far ahead: the feedback is the one students get before the due date.
DUE = "2099-01-01 12:00:00 UTC"
# Failed by a visible test, whose message feedback shows before the due date.
MISTAKE = next(mutant for mutant in MUTANTS[LESSON] if mutant.name == "detach_in_backward")


def _wait_for_line(log: Path, pattern: str, service: subprocess.Popen, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not re.search(pattern, log.read_text(), re.MULTILINE):
        assert service.poll() is None, f"the service ended:\n{log.read_text()}"
        assert time.monotonic() < deadline, f"no {pattern!r} in {seconds} s; it said:\n{log.read_text()}"
        time.sleep(0.2)


def test_a_student_submits_in_jupyterlab_and_fetches_feedback_naming_the_mistake(tmp_path, record_property):
    assert os.geteuid() == 0, "run as root (as CI does): it makes the student's Unix user"
    course, exchange = tmp_path / "course", shared_exchange()
    log = tmp_path / "serve.log"
    make_course(course, exchange, due=DUE)
    student = Student("gg-lab", exchange)
    student.answer(answers_of(MISTAKE.name))
    # JupyterLab's settings and workspaces, fresh: none of an earlier run's tabs reopen.
    state = student.home / ".lab-state"
    shutil.rmtree(state, ignore_errors=True)
    state.mkdir()
    os.chown(state, student.user.pw_uid, student.user.pw_gid)
    with open(log, "w") as said:
        command = [sys.executable, "-m", "autograder", "serve", "--course", str(course), "--workers", "1"]
        service = subprocess.Popen(command, stderr=said)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    try:
        with (
            jupyterlab(student.home, state, EXCHANGE_CONFIG, student.user) as lab,
            chromium() as browser,
        ):
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            try:
                page.goto(f"{lab.url}/lab?token={lab.token}")
                page.get_by_role("menuitem", name="Nbgrader", exact=True).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile("^Assignment List$")).click()
                _wait_for_line(log, r"^serving gradgrad", service)
                started = time.monotonic()
                page.get_by_role("button", name="Submit", exact=True).click()
                _wait_for_line(log, rf"^graded {student.name} {LESSON} ", service)
                record_property("seconds from Submit to graded", round(time.monotonic() - started, 1))
                page.get_by_role("button", name="Fetch Feedback", exact=True).click()
                page.get_by_text("(view feedback)").click()
                page.locator(".jp-DirListing-item", has_text=f"{LESSON}.html").dblclick()
                feedback = page.frame_locator(".jp-HTMLViewer iframe")
                # The lesson's own text shows the same mistake: the message must be the test cell's.
                (lost,) = MISTAKE.loses
                test_cell = feedback.locator(".cell", has=feedback.locator(f'a[name="{lost}"]'))
                message = test_cell.locator(".output_error")
                message.scroll_into_view_if_needed(timeout=60_000)
                shown = " ".join(message.inner_text().split())
                assert all(phrase in shown for phrase in MISTAKE.phrases)
            finally:
                page.screenshot(path=SCREENSHOTS / "feedback-on-submit.png")
                page.close()
    finally:
        service.terminate()
        service.wait(timeout=60)
        shutil.rmtree(exchange)
