"""The course's notebooks: generated from their sources, complete, and valid for nbgrader.

Running them is pinned where they run: in JupyterLab, released and solved, with nbgrader's Validate
button (test_jupyterlab); solved in a fresh Binder environment (test_binder); and through nbgrader's
autograde with the hidden tests, where the solution scores full marks and the release zero
(test_grading).
"""

import ast
import re

import nbformat
import pytest
from alternatives import ALTERNATIVES
from claims import CLAIMS
from grading_pipeline import nbgrader_cells
from mutants import INSTRUCTIONS, MUTANTS

from autograder.course.layout import REPOSITORY, SOURCE, STUDENT_NOTEBOOKS, assignments
from autograder.course.release import stale

LESSONS = assignments()
_GRADE_ID = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def _source(lesson: str) -> nbformat.NotebookNode:
    return nbformat.read(SOURCE / lesson / f"{lesson}.ipynb", as_version=4)


def _release(lesson: str) -> nbformat.NotebookNode:
    return nbformat.read(STUDENT_NOTEBOOKS / f"{lesson}.ipynb", as_version=4)


def _topic(lesson: str) -> str:
    """'saving_inputs' for '01_saving_inputs': the name a lesson's module and tests share."""
    return lesson.split("_", 1)[1]


def test_course_matches_what_the_sources_generate():
    assert stale() == [], "run `make release` to regenerate course/ from solutions/source/"


def test_course_holds_exactly_one_notebook_per_lesson():
    assert LESSONS, "no lessons found in solutions/source/"
    assert sorted(path.stem for path in STUDENT_NOTEBOOKS.glob("*.ipynb")) == LESSONS


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_lesson_has_its_reference_module_and_tests(lesson):
    assert (REPOSITORY / "solutions" / f"{_topic(lesson)}.py").is_file()
    assert (REPOSITORY / "tests" / f"test_{_topic(lesson)}.py").is_file()


@pytest.mark.parametrize("lesson", LESSONS)
def test_release_contains_no_solution_and_no_hidden_test(lesson):
    released = "\n".join(cell.source for cell in _release(lesson).cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "randomized=True"):
        assert marker not in released
    answers = {
        grade_id: cell.source for grade_id, cell in nbgrader_cells(_release(lesson), "solution").items()
    }
    for cell in nbgrader_cells(_source(lesson), "solution").values():
        grade_id = cell.metadata.nbgrader.grade_id
        inside = re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", cell.source, flags=re.S)
        assert inside, f"answer cell {grade_id} marks no solution"
        solution_lines = {line.strip() for line in "".join(inside).splitlines()} - {""}
        released_lines = {line.strip() for line in answers[grade_id].splitlines()}
        assert solution_lines.isdisjoint(released_lines), (grade_id, solution_lines & released_lines)


@pytest.mark.parametrize("lesson", LESSONS)
def test_answer_cells_are_named_for_the_exercise_they_define(lesson):
    for cell in nbgrader_cells(_source(lesson), "solution").values():
        grade_id = cell.metadata.nbgrader.grade_id
        defined = {
            node.name
            for node in ast.parse(cell.source).body
            if isinstance(node, ast.ClassDef | ast.FunctionDef)
        }
        assert grade_id in {name.lower() for name in defined}, (grade_id, defined)


@pytest.mark.parametrize("lesson", LESSONS)
def test_test_cells_have_meaningful_ids_a_docstring_and_hidden_randomized_tests(lesson):
    cells = list(nbgrader_cells(_source(lesson), "grade").values())
    assert cells
    for cell in cells:
        grade_id = cell.metadata.nbgrader.grade_id
        assert _GRADE_ID.fullmatch(grade_id), grade_id
        assert cell.metadata.nbgrader.points > 0
        body = ast.parse(cell.source).body
        assert isinstance(body[0], ast.Expr), f"{grade_id} does not open with a docstring"
        assert isinstance(body[0].value, ast.Constant)
        assert "\n" not in body[0].value.value
        # Imported in the cell itself, so an answer that shadows the name cannot fool the test.
        assert "from autograder import" in cell.source
        hidden = cell.source.split("### BEGIN HIDDEN TESTS", 1)[-1]
        assert "### END HIDDEN TESTS" in hidden, grade_id
        assert "randomized=True" in hidden, grade_id


@pytest.mark.parametrize("lesson", LESSONS)
def test_source_notebooks_are_stored_without_outputs(lesson):
    for cell in _source(lesson).cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], cell.id
            assert cell.execution_count is None, cell.id


def test_every_lesson_has_its_instruction_table_and_its_claims():
    """A lesson missing from either table would have its instructions or its numbers checked by nothing."""
    assert sorted(lesson for lesson in LESSONS if INSTRUCTIONS.get(lesson)) == LESSONS
    assert sorted(CLAIMS) == LESSONS


@pytest.mark.parametrize("lesson", sorted(INSTRUCTIONS))
def test_every_instruction_is_in_the_text_and_broken_by_a_mutant_that_names_it(lesson):
    """The words are the lesson's own, and test_grading pins that the mutant loses marks with feedback
    holding its `says`: an instruction the grader does not enforce cannot hide in the table. A preference
    maps instead to a correct answer that ignores it, which test_grading pins keeps full marks: the text
    must then say "prefer", so that a student is not told "never" where the tests cannot tell."""
    text = " ".join(
        " ".join(cell.source for cell in _source(lesson).cells if cell.cell_type == "markdown").split()
    )
    mutants = {mutant.name: mutant for mutant in MUTANTS[lesson]}
    alternatives = {answer.name for answer in ALTERNATIVES[lesson]}
    for instruction, name in INSTRUCTIONS[lesson].items():
        assert " ".join(instruction.split()) in text, f"{instruction!r} is not in {lesson}'s text"
        if name in alternatives:
            assert "prefer" in instruction.lower(), (
                f"{instruction!r}: {name} keeps its marks, so say 'prefer'"
            )
            continue
        assert name in mutants, f"{instruction!r}: {name} is neither a mutant nor an alternative of {lesson}"
        assert mutants[name].says, f"{instruction!r}: {name} does not say what its feedback must name"
