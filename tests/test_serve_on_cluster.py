"""`python -m autograder serve --scheduler` on a real Dask cluster of this machine's processes (a
scheduler and one worker): a student's `nbgrader submit` is graded on that worker, not by the service's
own workers, into the course's gradebook, and its feedback is fetched; SIGTERM stops it cleanly.

One submission: about 15 s on 2 cores, most of it the cluster's and the service's start and the
student's two `nbgrader` runs."""

import os
import shutil

import pytest
from classroom import LESSON, answers_of
from dask_cluster import DaskCluster
from exchange_course import Running, Student, graded_score, make_course, shared_exchange

pytestmark = pytest.mark.xdist_group("serve")


def test_on_a_dask_cluster_its_worker_grades_the_submission_and_the_student_fetches_feedback(tmp_path):
    assert os.geteuid() == 0, "run as root (as CI does): it makes the student's Unix user"
    course, exchange = tmp_path / "course", shared_exchange()
    try:
        make_course(course, exchange, due="2099-01-01 12:00:00 UTC")
        student = Student("gg-dana", exchange)
        student.answer(answers_of("solution"))
        with DaskCluster(tmp_path / "cluster") as cluster:
            worker, _ = cluster.add_worker("worker")
            service = Running(course, "--scheduler", cluster.address)
            try:
                service.wait_for("serving gradgrad")
                student.submit()
                service.wait_for(rf"^graded gg-dana {LESSON} 4/4 in [\d.]+ s$")
            finally:
                status, said, _ = service.stop()
        assert status == 0, said
        # The service counts each notebook by the address of the Dask worker whose task returned it.
        assert said.splitlines() == [
            f"graded by 1 Dask worker: {worker} (1 notebook)",
            "stopped; the same command grades what lands meanwhile",
        ]
        assert graded_score(course, "gg-dana") == 4.0
        (page,) = student.fetched_feedback()
        assert f"<h4>{LESSON} (Score: 4.0 / 4.0)</h4>" in page
    finally:
        shutil.rmtree(exchange)
