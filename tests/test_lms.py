"""Grades out to the LMS: `nbgrader export` with autograder.lms's plugins, run for real in a course
directory that plain `nbgrader autograde` graded, and each file read back the way its LMS reads it."""

import csv
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from grading_pipeline import solution_answers, submission

from autograder.course.nbgrader_cli import put_nbgrader_tools_on_path, run_nbgrader
from autograder.course.release import add_lesson, write_config
from autograder.lms.grades import read_grades
from autograder.records.gradebook import opened

# One xdist worker runs them all, so that the graded course directory is made once.
pytestmark = pytest.mark.xdist_group("lms")

LESSON = "01_saving_inputs"
# square_forward 1, square_first_derivative 1, square_second_derivative 2.
FULL_MARKS = 4.0

ROSTER = {
    "ada": {"first_name": "Ada", "last_name": "Lovelace", "email": "Ada.L@uni.example", "lms_user_id": "101"},
    "blaise": {
        "first_name": "Blaise",
        "last_name": "Pascal",
        "email": "bp@uni.example",
        "lms_user_id": "102",
    },
    "carl": {"first_name": "Carl", "last_name": "Gauss", "email": "cg@uni.example", "lms_user_id": "103"},
}
# ada hands in the solution, blaise the release untouched, carl nothing at all.
HANDED_IN = {"ada": solution_answers(LESSON), "blaise": {}}
EXPECTED = {"ada": FULL_MARKS, "blaise": 0.0, "carl": 0.0}

CANVAS_COLUMN = "Saving inputs (4821)"
SECTION = "Double backward 101"
MOODLE_ITEM = "Assignment: Saving inputs"
CONFIG = f"""
c.CanvasExporter.assignment_columns = {{{LESSON!r}: {CANVAS_COLUMN!r}}}
c.CanvasExporter.section = {SECTION!r}
c.CanvasExporter.sis_login_id = 'id'
c.MoodleExporter.grade_items = {{{LESSON!r}: {MOODLE_ITEM!r}}}
"""


def _db_url(course: Path) -> str:
    return f"sqlite:///{course / 'gradebook.db'}"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """A course directory with the lesson, a roster of three, and their hand-ins graded by nbgrader."""
    course = tmp_path_factory.mktemp("course")
    write_config(course, CONFIG)
    add_lesson(course, LESSON)
    with opened(_db_url(course)) as gradebook:
        for student, fields in ROSTER.items():
            gradebook.update_or_create_student(student, **fields)
    for student, answers in HANDED_IN.items():
        folder = course / "submitted" / student / LESSON
        folder.mkdir(parents=True)
        nbformat.write(submission(LESSON, answers), folder / f"{LESSON}.ipynb")
    run_nbgrader("autograde", LESSON, course=course)
    run_nbgrader("export", course=course)  # nbgrader's own grades.csv, to compare with
    return course


def _export(course: Path, exporter: str, to: Path, *options: str) -> subprocess.CompletedProcess:
    """`nbgrader export --exporter=autograder.lms.EXPORTER --to TO` as an instructor types it."""
    put_nbgrader_tools_on_path()
    command = [sys.executable, "-m", "nbgrader", "export", f"--exporter=autograder.lms.{exporter}"]
    return subprocess.run(
        [*command, "--to", str(to), *options], cwd=course, capture_output=True, text=True, check=False
    )


def _rows(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as exported:
        return list(csv.reader(exported))


def _nbgrader_scores(course: Path) -> dict[str, float]:
    """The scores plain `nbgrader export` wrote to grades.csv, by student."""
    with (course / "grades.csv").open(newline="") as exported:
        return {row["student_id"]: float(row["score"]) for row in csv.DictReader(exported)}


# --- Canvas ------------------------------------------------------------------------------------------
# The rules of Canvas's importer, canvas-lms app/models/gradebook_importer.rb.

CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def _canvas_assignment(column: str) -> tuple[str, str | None]:
    """(title, Canvas assignment id or None), as Assignment.title_and_id splits a column's title."""
    match = re.fullmatch(r"(.*)\s\((\d+)\)", column)
    return (match[1], match[2]) if match else (column, None)


def _read_as_canvas(path: Path) -> tuple[list[str], dict[str, float], list[dict[str, str]]]:
    """(assignment columns, their points possible, one dict per student row), as Canvas's importer reads
    the file: the student columns end at `Section`, a row whose first field holds `Points Possible`
    describes the assignments, and every other row is a student."""
    header, *rows = _rows(path)
    assert header[: len(CANVAS_STUDENT_COLUMNS)] == CANVAS_STUDENT_COLUMNS
    assignments = header[len(CANVAS_STUDENT_COLUMNS) :]
    (points_row,) = [row for row in rows if "Points Possible" in row[0]]
    points = dict(zip(assignments, map(float, points_row[len(CANVAS_STUDENT_COLUMNS) :]), strict=True))
    students = [dict(zip(header, row, strict=True)) for row in rows if row is not points_row]
    return assignments, points, students


@pytest.fixture(scope="module")
def canvas(course, tmp_path_factory):
    to = tmp_path_factory.mktemp("canvas") / "canvas.csv"
    result = _export(course, "CanvasExporter", to)
    assert result.returncode == 0, result.stderr
    return to


def test_canvas_file_has_canvas_header_then_points_possible(canvas):
    header, points_row, *_ = _rows(canvas)
    assert header == [*CANVAS_STUDENT_COLUMNS, CANVAS_COLUMN]
    assert _canvas_assignment(header[-1]) == ("Saving inputs", "4821")
    assert points_row == ["    Points Possible", "", "", "", "", "4"]


def test_canvas_reads_every_roster_student_by_id_with_nbgraders_score(course, canvas):
    _, points, students = _read_as_canvas(canvas)
    assert points == {CANVAS_COLUMN: FULL_MARKS}
    by_canvas_id = {row["ID"]: row for row in students}
    assert len(by_canvas_id) == len(students) == len(ROSTER)
    scores = {
        nbgrader_id: float(by_canvas_id[f["lms_user_id"]][CANVAS_COLUMN]) for nbgrader_id, f in ROSTER.items()
    }
    assert scores == EXPECTED == _nbgrader_scores(course)


def test_canvas_student_columns_name_and_identify_each_student(canvas):
    _, _, students = _read_as_canvas(canvas)
    assert {row["ID"]: [row[c] for c in CANVAS_STUDENT_COLUMNS] for row in students} == {
        f["lms_user_id"]: [f"{f['last_name']}, {f['first_name']}", f["lms_user_id"], "", student, SECTION]
        for student, f in ROSTER.items()
    }


# --- Moodle ------------------------------------------------------------------------------------------
# The rules of Moodle's grade import, grade/import/csv/classes/load_data.php, and of the mapping form of
# its paste-from-spreadsheet import (direct/classes/mapping_form.php), which preselects what it can.

# Moodle's user fields a column can identify users by, under the names its mapping form matches.
MOODLE_USER_FIELDS = {"Username": "username", "ID number": "useridnumber", "Email address": "useremail"}


def _read_as_moodle(path: Path) -> tuple[str, dict[str, dict[str, str]]]:
    """(the user field Moodle preselects, each row's grades by grade item, keyed by that identifier), as
    Moodle's import reads the file: the first row names the columns, the identifier is the column named
    like a user field (and first, where the CSV form starts), and a column `<item> (Real)` is
    preselected for the grade item `<item>`."""
    header, *rows = _rows(path)
    (identifier,) = [column for column in header if column in MOODLE_USER_FIELDS]
    assert header[0] == identifier
    items = {column: column.removesuffix(" (Real)") for column in header if column.endswith(" (Real)")}
    graded = {}
    for row in rows:
        fields = dict(zip(header, row, strict=True))
        graded[fields[identifier]] = {item: fields[column] for column, item in items.items()}
    assert len(graded) == len(rows), "two rows name the same user"
    return MOODLE_USER_FIELDS[identifier], graded


@pytest.fixture(scope="module")
def moodle(course, tmp_path_factory):
    to = tmp_path_factory.mktemp("moodle") / "moodle.csv"
    result = _export(course, "MoodleExporter", to)
    assert result.returncode == 0, result.stderr
    return to


def test_moodle_file_names_the_email_column_and_the_grade_item_as_moodle_does(moodle):
    header, *_ = _rows(moodle)
    assert header == ["Email address", "First name", "Last name", f"{MOODLE_ITEM} (Real)"]


def test_moodle_reads_every_roster_student_by_email_with_nbgraders_score(course, moodle):
    field, graded = _read_as_moodle(moodle)
    assert field == "useremail"
    # Blank or "-" would be "no grade" to Moodle: every student has a number.
    scores = {student: float(graded[f["email"]][MOODLE_ITEM]) for student, f in ROSTER.items()}
    assert len(graded) == len(ROSTER)
    assert scores == EXPECTED == _nbgrader_scores(course)


def test_moodle_identifies_students_by_id_number_when_configured(course, tmp_path):
    result = _export(
        course, "MoodleExporter", tmp_path / "moodle.csv", "--MoodleExporter.user_field=lms_user_id"
    )
    assert result.returncode == 0, result.stderr
    field, graded = _read_as_moodle(tmp_path / "moodle.csv")
    assert field == "useridnumber"
    assert {s: float(graded[f["lms_user_id"]][MOODLE_ITEM]) for s, f in ROSTER.items()} == EXPECTED


def test_moodle_export_refuses_a_roster_student_it_could_not_identify(course, tmp_path):
    """Moodle credits a row with a blank identifier to the user of the row before: no file instead."""
    copy = tmp_path / "course"
    shutil.copytree(course, copy)
    with opened(_db_url(copy)) as gradebook:
        gradebook.update_or_create_student("dora", first_name="Dora", last_name="Diaz")
    result = _export(copy, "MoodleExporter", tmp_path / "moodle.csv")
    assert result.returncode == 1
    assert "'Email address', which the roster leaves empty for dora" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "moodle.csv").exists()


# --- What both share ---------------------------------------------------------------------------------


def test_scores_are_nbgraders_final_scores_late_penalty_included_never_negative(course, tmp_path):
    copy = tmp_path / "gradebook.db"
    shutil.copy(course / "gradebook.db", copy)
    with opened(f"sqlite:///{copy}") as gradebook:
        for student, penalty in {"ada": 1.5, "blaise": 1.0}.items():
            gradebook.find_submission_notebook(LESSON, LESSON, student).late_submission_penalty = penalty
        gradebook.db.commit()
        grades = read_grades(gradebook)
    assert {s.id: s.scores[LESSON] for s in grades.students} == {"ada": 2.5, "blaise": 0.0, "carl": 0.0}


def test_export_keeps_to_the_students_named(course, tmp_path):
    result = _export(course, "CanvasExporter", tmp_path / "canvas.csv", "--student=['ada']")
    assert result.returncode == 0, result.stderr
    _, _, students = _read_as_canvas(tmp_path / "canvas.csv")
    assert [(row["SIS Login ID"], float(row[CANVAS_COLUMN])) for row in students] == [("ada", FULL_MARKS)]


# --- The roster from the LMS -------------------------------------------------------------------------

# Canvas's gradebook export: a byte-order mark, the Points Possible row, Canvas's read-only totals, and
# the Student View account; Canvas and its export know no email.
CANVAS_EXPORT = (
    "\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,Saving inputs (4821),Current Score,Final Score\n"
    "    Points Possible,,,,,4.00,(read only),(read only)\n"
    '"Lovelace, Ada",101,S-1,ada,Double backward 101,,,\n'
    '"de Pascal, Blaise",102,S-2,blaise,Double backward 101,3.00,75.00,75.00\n'
    '"Student, Test",999,,,Double backward 101,,,\n'
)
# Moodle's grade export as a plain text file.
MOODLE_EXPORT = (
    '"First name","Last name","ID number",Institution,Department,"Email address",'
    '"Assignment: Saving inputs (Real)","Last downloaded from this course"\n'
    "Ada,Lovelace,S-1,,,Ada.L@uni.example,-,1767225600\n"
    'Blaise,"de Pascal",S-2,,,bp@uni.example,3.00,1767225600\n'
)


def _roster_command(lms: str, export: Path, out: Path, *options: str) -> subprocess.CompletedProcess:
    """`python -m autograder roster LMS EXPORT --out OUT` as an instructor types it."""
    command = [sys.executable, "-m", "autograder", "roster", lms, str(export), "--out", str(out), *options]
    return subprocess.run(command, capture_output=True, text=True, check=False)


@pytest.fixture
def empty_course(tmp_path) -> Path:
    """A course directory with the lesson and no student yet."""
    course = tmp_path / "course"
    write_config(course)
    add_lesson(course, LESSON)
    return course


def _import_roster(lms: str, export_text: str, course: Path, *options: str) -> dict[str, dict[str, str]]:
    """Run the roster command on the LMS's export, then `nbgrader db student import` on what it wrote;
    the roster nbgrader then holds, by student id."""
    export, roster = course / f"{lms}_export.csv", course / "students.csv"
    export.write_text(export_text, encoding="utf-8")
    result = _roster_command(lms, export, roster, *options)
    assert result.returncode == 0, result.stderr
    run_nbgrader("db", "student", "import", str(roster), course=course)
    with opened(_db_url(course)) as gradebook:
        return {s.id: {k: v for k, v in s.to_dict().items() if "score" not in k} for s in gradebook.students}


def test_canvas_roster_becomes_nbgraders_and_its_grades_go_back_to_the_same_canvas_ids(empty_course):
    roster = _import_roster("canvas", CANVAS_EXPORT, empty_course)
    assert roster == {
        "101": {
            "id": "101",
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": None,
            "lms_user_id": "101",
        },
        "102": {
            "id": "102",
            "first_name": "Blaise",
            "last_name": "de Pascal",
            "email": None,
            "lms_user_id": "102",
        },
    }
    canvas = empty_course / "canvas.csv"
    assert _export(empty_course, "CanvasExporter", canvas).returncode == 0
    _, _, students = _read_as_canvas(canvas)
    assert {row["ID"]: (row["Student"], float(row[LESSON])) for row in students} == {
        "101": ("Lovelace, Ada", 0.0),
        "102": ("de Pascal, Blaise", 0.0),
    }


def test_canvas_roster_takes_student_ids_from_the_column_named(empty_course):
    roster = _import_roster("canvas", CANVAS_EXPORT, empty_course, "--id-column", "SIS Login ID")
    assert {student: fields["lms_user_id"] for student, fields in roster.items()} == {
        "ada": "101",
        "blaise": "102",
    }


def test_moodle_roster_becomes_nbgraders_and_its_grades_go_back_to_the_same_moodle_users(empty_course):
    roster = _import_roster("moodle", MOODLE_EXPORT, empty_course)
    assert roster == {
        "Ada.L@uni.example": {
            "id": "Ada.L@uni.example",
            "first_name": "Ada",
            "last_name": "Lovelace",
            "email": "Ada.L@uni.example",
            "lms_user_id": "S-1",
        },
        "bp@uni.example": {
            "id": "bp@uni.example",
            "first_name": "Blaise",
            "last_name": "de Pascal",
            "email": "bp@uni.example",
            "lms_user_id": "S-2",
        },
    }
    moodle = empty_course / "moodle.csv"
    assert _export(empty_course, "MoodleExporter", moodle).returncode == 0
    field, graded = _read_as_moodle(moodle)
    assert (field, graded) == (
        "useremail",
        {"Ada.L@uni.example": {LESSON: "0"}, "bp@uni.example": {LESSON: "0"}},
    )


@pytest.mark.parametrize(
    ("export", "options", "says"),
    [
        (CANVAS_EXPORT, ("--id-column", "Login"), "has no column 'Login' to take student ids from"),
        (
            CANVAS_EXPORT.replace(",S-2,blaise,", ",S-2,,"),
            ("--id-column", "SIS Login ID"),
            "no 'SIS Login ID' for de Pascal, Blaise",
        ),
        (
            CANVAS_EXPORT.replace(",S-2,", ",S-1,"),
            ("--id-column", "SIS User ID"),
            "several students the same 'SIS User ID': S-1",
        ),
    ],
    ids=["no such column", "a blank id", "a shared id"],
)
def test_roster_command_refuses_an_export_without_one_id_per_student_in_one_line(
    tmp_path, export, options, says
):
    (tmp_path / "export.csv").write_text(export, encoding="utf-8")
    result = _roster_command("canvas", tmp_path / "export.csv", tmp_path / "students.csv", *options)
    assert (result.returncode, result.stdout) == (1, "")
    assert says in result.stderr
    assert len(result.stderr.splitlines()) == 1
    assert not (tmp_path / "students.csv").exists()
