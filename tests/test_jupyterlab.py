"""Every lesson in JupyterLab, in a real browser, as a student works it: solved, it opens, runs, shows
its graphs and plots, and passes nbgrader's Validate button. (The untouched release, which must fail
only in its unanswered exercises, is run by nbgrader in test_grading.)

Screenshots of each page as it last looked, and of its first graph and plot, are saved in
build/screenshots/.
"""

import time

import nbformat
import pytest
from grading_pipeline import solution_answers, submission
from jupyterlab_server import Notebook, chromium, jupyterlab, notebook_page
from notebook_runs import PNG, SVG, errors, rendered

from autograder.course.layout import assignments

LESSONS = assignments()

pytestmark = pytest.mark.xdist_group("jupyterlab")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving each lesson solved (solved/): the release with the solution's answers, since
    running and saving in JupyterLab writes outputs into the notebooks."""
    root = tmp_path_factory.mktemp("lab")
    (root / "solved").mkdir()
    for lesson in LESSONS:
        nbformat.write(submission(lesson, solution_answers(lesson)), root / "solved" / f"{lesson}.ipynb")
    with jupyterlab(root, tmp_path_factory.mktemp("lab-state")) as server:
        yield server


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def _open_and_run(notebook: Notebook, record_property) -> nbformat.NotebookNode:
    """Open and run the notebook, timing both; what JupyterLab saved."""
    start = time.monotonic()
    notebook.open()
    notebook.run_all()
    record_property("seconds to open and run in JupyterLab", round(time.monotonic() - start, 1))
    # Checked after the run, so that a toast shown on start has had every chance to appear.
    assert not notebook.news_prompt_shown(), "JupyterLab asks about Jupyter news over the lesson"
    return notebook.save()


def _assert_pictures_shown(notebook: Notebook, saved: nbformat.NotebookNode, name: str) -> None:
    for mime in (SVG, PNG):
        assert rendered(saved, mime) >= 1, f"no {mime} output"
        assert notebook.pictures_shown(mime) == rendered(saved, mime), f"a {mime} output is not shown"
        notebook.screenshot_first_picture(mime, name)


@pytest.mark.parametrize("lesson", LESSONS)
def test_solved_lesson_runs_in_jupyterlab_and_passes_validate(lesson, lab, browser, record_property):
    with notebook_page(browser, lab, f"solved/{lesson}.ipynb", f"{lesson}-solved") as notebook:
        saved = _open_and_run(notebook, record_property)
        assert errors(saved) == {}
        _assert_pictures_shown(notebook, saved, f"{lesson}-solved")
        assert "Success! Your notebook passes all the tests." in notebook.validate()
