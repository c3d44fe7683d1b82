"""Every lesson graded two ways: through nbgrader's real pipeline, and by the class grader.

Under plain nbgrader, the solution and every correct answer written otherwise score full marks and the
untouched release scores zero. The class grader grades those and some of each lesson's mutants, all
lessons in one run: it must score each notebook exactly as nbgrader does, question for question, and
each mutant exactly as its checks judge it, reasons included. test_mutants.py judges every mutant so
(a second or so a mutant, where a whole notebook costs the class grader several and nbgrader ten); the
checks' plain-mode verdicts on every kind of mistake and forgery are pinned in test_checks.py and
test_check_result.py.
"""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from alternatives import ALTERNATIVES
from claims import CLAIMS
from filelock import FileLock
from grading_pipeline import Grades, autograde, solution_answers, submission
from judged_answers import first_failures
from mutants import MUTANTS
from notebook_runs import PNG, SVG, errors, rendered, unexplained_errors, wrote_to_stderr

from autograder.course.layout import assignments
from autograder.records.results import QuestionResult, one_line, read_csv

LESSONS = assignments()
_SOLUTION, _RELEASE = "solution", "release"
_graded: dict[str, Grades] = {}


def _packed(answers: list) -> list[list]:
    """`answers` packed into as few notebooks as their answer cells allow: each notebook answers every
    cell at most once, and no two of its answers lose the same test cell, so each question's grade is
    one answer's."""
    bundles: list[list] = []
    for answer in answers:
        bundle = next(
            (b for b in bundles if all(a.cell != answer.cell and not a.loses & answer.loses for a in b)), None
        )
        if bundle is None:
            bundles.append(bundle := [])
        bundle.append(answer)
    return bundles


def _bundles(lesson: str) -> dict[str, list]:
    """The lesson's alternatives, packed: the class grader grades every bundle; plain nbgrader (ten
    seconds a notebook) the first, the fullest."""
    bundles = _packed(ALTERNATIVES[lesson])
    return {f"alternatives{number}": bundle for number, bundle in enumerate(bundles, start=1)}


def _mutant_bundles(lesson: str) -> dict[str, list]:
    """The mutants plain nbgrader grades too, packed: those whose test runs differently in the student's
    kernel, one for each way it does. A bundle is named by its mutants."""
    mutants = [mutant for mutant in MUTANTS[lesson] if mutant.by_nbgrader]
    return {"-with-".join(mutant.name for mutant in bundle): bundle for bundle in _packed(mutants)}


def _mutants_by_nbgrader(lesson: str) -> list[str]:
    """The notebooks of mutants plain nbgrader grades."""
    return list(_mutant_bundles(lesson))


def _mutants_by_class_grader(lesson: str) -> list[str]:
    """The notebooks of mutants the class grader grades: those plain nbgrader grades, and for each answer
    cell the first mutant that says what its mistake is, where no bundle holds it."""
    bundled = {mutant.name for bundle in _mutant_bundles(lesson).values() for mutant in bundle}
    first = {}
    for mutant in MUTANTS[lesson]:
        if mutant.says:
            first.setdefault(mutant.cell, mutant.name)
    return [*_mutants_by_nbgrader(lesson), *(name for name in first.values() if name not in bundled)]


def _mutants_in(lesson: str, student: str) -> list:
    """The mutants a notebook of mutants makes."""
    return _mutant_bundles(lesson).get(student) or [m for m in MUTANTS[lesson] if m.name == student]


def _students(lesson: str) -> list[str]:
    """Every notebook the class grader grades for the lesson."""
    return [_SOLUTION, _RELEASE, *_bundles(lesson), *_mutants_by_class_grader(lesson)]


def _graded_by_nbgrader(lesson: str) -> list[str]:
    """The notebooks plain nbgrader grades too: the solution, the release, the first bundle of
    alternatives and the mutants chosen to be."""
    return [_SOLUTION, _RELEASE, *list(_bundles(lesson))[:1], *_mutants_by_nbgrader(lesson)]


def _answers(lesson: str, student: str) -> dict[str, str]:
    answers = solution_answers(lesson)
    if student == _SOLUTION:
        return answers
    if student == _RELEASE:
        return {}
    for rewrite in _bundles(lesson).get(student) or _mutants_in(lesson, student):
        answers = rewrite.apply(answers)
    return answers


def _cases(students_of):
    """(lesson, student) parameters; a lesson's nbgrader tests share an xdist group, so that one worker
    grades the lesson once."""
    return [
        pytest.param(lesson, student, marks=pytest.mark.xdist_group(lesson), id=f"{lesson}-{student}")
        for lesson in LESSONS
        for student in students_of(lesson)
    ]


@pytest.fixture
def grades(lesson: str, tmp_path_factory) -> Grades:
    """The grades of the lesson's notebooks that nbgrader grades, from one plain nbgrader run."""
    if lesson not in _graded:
        submissions = {
            name: submission(lesson, _answers(lesson, name)) for name in _graded_by_nbgrader(lesson)
        }
        _graded[lesson] = autograde(lesson, submissions, tmp_path_factory.mktemp(lesson))
    return _graded[lesson]


def test_every_lesson_has_mutants():
    assert sorted(MUTANTS) == LESSONS
    assert all(MUTANTS[lesson] for lesson in LESSONS)


def test_every_lesson_has_alternatives():
    assert sorted(ALTERNATIVES) == LESSONS
    assert all(ALTERNATIVES[lesson] for lesson in LESSONS)
    for lesson in LESSONS:
        names = _students(lesson)
        assert len(names) == len(set(names)), f"{lesson}: two students share a name"


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: [_SOLUTION]))
def test_solution_scores_full_marks(lesson, student, grades):
    assert grades.cells[student] == grades.max_points
    assert grades.exported_totals[student] == grades.max_total > 0


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: [_RELEASE]))
def test_untouched_release_scores_zero(lesson, student, grades):
    assert set(grades.cells[student]) == set(grades.max_points)
    assert grades.total(student) == 0
    assert grades.exported_totals[student] == 0


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: list(_bundles(lesson))[:1]))
def test_alternative_answers_score_full_marks(lesson, student, grades):
    assert grades.cells[student] == grades.max_points, [answer.name for answer in _bundles(lesson)[student]]
    assert grades.exported_totals[student] == grades.max_total


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: list(_bundles(lesson))))
def test_class_grader_gives_alternative_answers_full_marks(lesson, student, class_grades):
    results = class_grades[(lesson, student)]
    lost = {
        question: result.reason for question, result in results.items() if result.score < result.max_score
    }
    assert results, "the class grader graded no question"
    assert lost == {}, [answer.name for answer in _bundles(lesson)[student]]


@pytest.mark.parametrize(("lesson", "student"), _cases(_mutants_by_nbgrader))
def test_mutant_loses_the_marks_for_its_mistake_under_nbgrader(lesson, student, grades):
    """As the class grader pins below: the lost questions score zero, their errors naming the mistake (in
    lines wrapped to the notebook's width)."""
    for mutant in _mutants_in(lesson, student):
        lost = {cell: grades.cells[student][cell] for cell in mutant.loses}
        assert lost == dict.fromkeys(mutant.loses, 0), mutant.name
        shown = " ".join(
            " ".join(output.get("evalue", "").split())
            for cell in grades.notebooks[student].cells
            if cell.metadata.get("nbgrader", {}).get("grade_id") in mutant.loses
            for output in cell.get("outputs", [])
        )
        assert all(phrase in shown for phrase in mutant.phrases), (mutant.name, shown)


@pytest.mark.parametrize(("lesson", "student"), _cases(lambda lesson: [_RELEASE]))
def test_untouched_release_fails_only_in_its_unanswered_exercises(lesson, student, grades):
    """As nbgrader ran it: every error is an unanswered exercise's, and nothing wrote to stderr."""
    ran = grades.notebooks[student]
    assert errors(ran), "the untouched release raised nothing"
    assert unexplained_errors(ran) == {}
    assert not wrote_to_stderr(ran), "a cell wrote to stderr"
    assert rendered(ran, SVG) >= 1
    assert rendered(ran, PNG) >= 1


@pytest.mark.parametrize(
    ("lesson", "student"), _cases(lambda lesson: [_SOLUTION] if CLAIMS.get(lesson) else [])
)
def test_every_number_the_text_states_is_what_its_cell_prints(lesson, student, grades):
    ran = grades.notebooks[student]
    assert [problem for claim in CLAIMS[lesson] if (problem := claim.disagreement(ran))] == []


def _class_grader_root(tmp_path_factory) -> Path:
    """The folder of the class grader's one run, common to the xdist workers."""
    basetemp = tmp_path_factory.getbasetemp()
    return (basetemp.parent if "PYTEST_XDIST_WORKER" in os.environ else basetemp) / "class-grader"


@pytest.fixture(scope="session")
def class_grades(tmp_path_factory) -> dict[tuple[str, str], dict[str, QuestionResult]]:
    """Per (lesson, student), the class grader's result for each question, from one run over every lesson.

    The xdist workers share one run: the first to get here grades, under a lock in their common folder.
    """
    root = _class_grader_root(tmp_path_factory)
    grades_csv = root / "out" / "grades.csv"
    with FileLock(f"{root}.lock"):
        if not grades_csv.exists():
            for lesson in LESSONS:
                for student in _students(lesson):
                    folder = root / "submitted" / student / lesson
                    folder.mkdir(parents=True)
                    nbformat.write(submission(lesson, _answers(lesson, student)), folder / f"{lesson}.ipynb")
            command = [sys.executable, "-m", "autograder", "grade", str(root / "submitted")]
            subprocess.run(
                [*command, "--out", str(root / "out"), "--workers", "2", "--seed", "11"],
                check=True,
                capture_output=True,
            )
    results: dict[tuple[str, str], dict[str, QuestionResult]] = {}
    for row in read_csv(grades_csv):
        results.setdefault((row.assignment, row.student), {})[row.question] = row
    return results


def _scores(results: dict[str, QuestionResult]) -> dict[str, float]:
    return {question: result.score for question, result in results.items()}


@pytest.mark.parametrize(("lesson", "student"), _cases(_graded_by_nbgrader))
def test_class_grader_scores_every_question_as_nbgrader_does(lesson, student, grades, class_grades):
    assert _scores(class_grades[(lesson, student)]) == grades.cells[student]


def _autograded_by_class_grader(tmp_path_factory, lesson: str, student: str) -> nbformat.NotebookNode:
    """The notebook the class grader hands back to the student, its test cells' outputs filled in."""
    autograded = _class_grader_root(tmp_path_factory) / "out" / "autograded"
    return nbformat.read(autograded / student / lesson / f"{lesson}.ipynb", as_version=4)


def _passing_lines(notebook: nbformat.NotebookNode) -> dict[str, list[str]]:
    """Per test cell, the lines its passing checks printed on stdout (a kernel may send a line and its end
    in two messages)."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: "".join(
            output["text"] for output in cell.get("outputs", []) if output.get("name") == "stdout"
        ).splitlines()
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")
    }


@pytest.mark.parametrize(("lesson", "student"), _cases(_graded_by_nbgrader))
def test_class_grader_shows_the_lines_each_passing_check_printed_under_nbgrader(
    lesson, student, grades, class_grades, tmp_path_factory
):
    """The class grader judges the test cells without running them, and shows what the kernel would have
    printed: a line per passing check, up to the first failure."""
    by_class_grader = _passing_lines(_autograded_by_class_grader(tmp_path_factory, lesson, student))
    assert by_class_grader == _passing_lines(grades.notebooks[student])
    assert any(by_class_grader.values()) == (student != _RELEASE)


def _failures_shown(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """Per test cell that failed, the message it shows."""
    return {
        cell.metadata["nbgrader"]["grade_id"]: output["evalue"]
        for cell in notebook.cells
        if cell.metadata.get("nbgrader", {}).get("grade") and not cell.metadata["nbgrader"].get("solution")
        for output in cell.get("outputs", [])
        if output.get("output_type") == "error"
    }


@pytest.mark.parametrize(("lesson", "student"), _cases(_mutants_by_nbgrader))
def test_class_grader_shows_each_failed_cell_the_message_nbgrader_shows(
    lesson, student, grades, class_grades, tmp_path_factory
):
    """Word for word, a cause that an earlier cell showed in full told by its first sentence in both: the
    student's kernel keeps what it has shown as the class grader's judge does."""
    shown = _failures_shown(grades.notebooks[student])
    assert shown, "the mutants fail no test cell"
    assert _failures_shown(_autograded_by_class_grader(tmp_path_factory, lesson, student)) == shown


@pytest.mark.parametrize(("lesson", "student"), _cases(_mutants_by_class_grader))
def test_class_grader_grades_a_mutant_as_its_checks_judge_it(lesson, student, class_grades):
    """Where test_mutants.py judges the mutant in-process, the class grader runs the whole notebook,
    confined: the same questions lose their marks, for the same reasons."""
    results = class_grades[(lesson, student)]
    failures = {
        question: message
        for mutant in _mutants_in(lesson, student)
        for question, message in first_failures(lesson, mutant.name).items()
    }
    assert failures, "the mutant loses nothing"
    lost = {question for question, result in results.items() if result.score < result.max_score}
    assert lost == set(failures)
    for question, message in failures.items():
        assert one_line(results[question].reason).startswith(one_line(message)), question
