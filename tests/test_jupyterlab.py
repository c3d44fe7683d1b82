"""Every lesson in JupyterLab, in a real browser, as a student works it: solved, it opens, runs and shows
its graphs and plots; nbgrader's Validate button passes a solved lesson and shows a failed check's
message whole. (The untouched release, which must fail only in its unanswered exercises, is run by
nbgrader in test_grading.)

Screenshots of each page as it last looked, and of its first graph and plot, are saved in
build/screenshots/.
"""

import time
import urllib.error
import urllib.request

import nbformat
import pytest
from grading_pipeline import nbgrader_cells, solution_answers, submission
from jupyterlab_server import INSTRUCTOR_CONFIG, Notebook, chromium, jupyterlab, notebook_page
from mutants import MUTANTS
from notebook_runs import PNG, SVG, errors, rendered
from widths import fits

from autograder.course.layout import assignments

LESSONS = assignments()
# A mistake whose message takes several lines, which Validate's dialog must show whole.
MISTAKE = next(mutant for mutant in MUTANTS[LESSONS[0]] if mutant.name == "hidden_forgets_create_graph")

pytestmark = pytest.mark.xdist_group("jupyterlab")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """JupyterLab serving each lesson solved (solved/): the release with the solution's answers, since
    running and saving in JupyterLab writes outputs into the notebooks."""
    root = tmp_path_factory.mktemp("lab")
    (root / "solved").mkdir()
    for lesson in LESSONS:
        nbformat.write(submission(lesson, solution_answers(lesson)), root / "solved" / f"{lesson}.ipynb")
    (root / "mistaken").mkdir()
    nbformat.write(_mistaken(), root / "mistaken" / f"{LESSONS[0]}.ipynb")
    with jupyterlab(root, tmp_path_factory.mktemp("lab-state")) as server:
        yield server


def _mistaken() -> nbformat.NotebookNode:
    """MISTAKE's answer, after the one import it needs, and the test cell it fails, and nothing else of
    the lesson: Validate runs these three cells only (about 9 s of CPU, 3 of them nbgrader's and the
    kernel's start)."""
    notebook = submission(LESSONS[0], MISTAKE.apply(solution_answers(LESSONS[0])))
    answer = nbgrader_cells(notebook, "solution")[MISTAKE.cell]
    test = nbgrader_cells(notebook, "grade")[min(MISTAKE.loses)]
    notebook.cells = [nbformat.v4.new_code_cell("import torch"), answer, test]
    return notebook


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
def test_solved_lesson_runs_in_jupyterlab_and_shows_its_pictures(lesson, lab, browser, record_property):
    with notebook_page(browser, lab, f"solved/{lesson}.ipynb", f"{lesson}-solved") as notebook:
        saved = _open_and_run(notebook, record_property)
        assert errors(saved) == {}
        _assert_pictures_shown(notebook, saved, f"{lesson}-solved")


def test_validate_passes_a_solved_lesson(lab, browser):
    """Validate runs the whole notebook again on the server, as nbgrader does for every solved lesson in
    test_grading: its button and its dialog of success are tried here once."""
    with notebook_page(browser, lab, f"solved/{LESSONS[1]}.ipynb", "validate-solved") as notebook:
        notebook.open()
        assert "Success! Your notebook passes all the tests." in notebook.validate()


def _formgrader_status(lab) -> int:
    """What the server answers at nbgrader's formgrader: 404 where its server extension is off."""
    request = urllib.request.Request(f"{lab.url}/formgrader", headers={"Authorization": f"token {lab.token}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


@pytest.fixture(scope="module")
def instructor_lab(tmp_path_factory):
    """JupyterLab as `make lab-instructor` configures it, on a copy of the first lesson's release."""
    root = tmp_path_factory.mktemp("instructor")
    nbformat.write(submission(LESSONS[0], {}), root / f"{LESSONS[0]}.ipynb")
    with jupyterlab(root, tmp_path_factory.mktemp("instructor-state"), config=INSTRUCTOR_CONFIG) as server:
        yield server


def test_a_students_jupyterlab_has_validate_and_none_of_the_instructors_tools(lab, browser, record_property):
    """`make lab` (and Binder, which runs the same lab-settings/for-students): no Nbgrader menu with its
    formgrader, create assignment, course list and assignment list, and no formgrader on the server. Its
    Validate shows a failed check's message whole: every line fits the columns messages are made for, and
    the dialog shows it on one line, inside what it leaves visible."""
    with notebook_page(browser, lab, f"mistaken/{LESSONS[0]}.ipynb", "student-menus") as notebook:
        notebook.open()
        assert notebook.has_validate_button()
        assert notebook.menu_items("File"), "the menu bar cannot be read"
        assert notebook.menu_items("Nbgrader") == []
        start = time.monotonic()
        notebook.validate()
        record_property("seconds to validate a mistake in JupyterLab", round(time.monotonic() - start, 1))
        message = notebook.validation_error().split("AssertionError: ", 1)[1].strip("\n")
        assert all(phrase in " ".join(message.split()) for phrase in MISTAKE.phrases)
        lines = message.split("\n")
        assert len(lines) > 1, message
        assert fits(message), message
        assert notebook.lines_cut_in_validation(lines) == []
        # The same dialog made too narrow for them: the longest lines are seen cut.
        notebook.page.add_style_tag(content=".jp-Dialog-content { max-width: 400px !important; }")
        assert max(lines, key=len) in notebook.lines_cut_in_validation(lines)
    assert _formgrader_status(lab) == 404


def test_the_instructors_jupyterlab_has_nbgrader_s_menu(instructor_lab, browser):
    with notebook_page(browser, instructor_lab, f"{LESSONS[0]}.ipynb", "instructor-menus") as notebook:
        notebook.open()
        assert notebook.has_validate_button()
        items = notebook.menu_items("Nbgrader")
    assert {"Formgrader", "Create assignment", "Course List", "Assignment List"} <= set(items), items
    assert _formgrader_status(instructor_lab) != 404
