"""Grades for Canvas's gradebook import (Grades, Import), laid out as Canvas's own gradebook export.

Each rule below is Canvas's importer's (canvas-lms, app/models/gradebook_importer.rb), or where said so
its exporter's (GradebookExporter), whose file Canvas's import is made to read back:

- The header starts `Student`, `ID`, then optionally `SIS User ID` and `SIS Login ID`, and `Section`:
  the columns up to `Section` describe the student, every later column is an assignment.
- An assignment column titled `Name (123)` is Canvas's assignment 123; any other title is matched to an
  assignment of exactly that name, or else imported as a new assignment.
- A row whose first field holds `Points Possible` gives each assignment's points; a new assignment takes
  them. The exporter writes that row second, its label indented by four spaces, and so does this one.
- Each student is found by `ID` (the Canvas user id, nbgrader's `lms_user_id`), else by `SIS User ID`,
  else by `SIS Login ID`, else by `Student`, as their name or as "Last, First".
- A blank grade is no grade (and clears one Canvas had), not 0: a student who handed nothing in gets 0
  (see `grades.read_grades`).
"""

from traitlets import Dict, Enum, Unicode

from autograder.lms.grades import ClassGrades, LmsExporter, StudentGrades, number

STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
# Canvas finds this row by "Points Possible" in its first field; its own export indents the label.
POINTS_POSSIBLE = "    Points Possible"


class CanvasExporter(LmsExporter):
    """`nbgrader export --exporter=autograder.lms.CanvasExporter`: the CSV Canvas's gradebook imports."""

    default_file = "canvas_grades.csv"

    assignment_columns = Dict(
        key_trait=Unicode(),
        value_trait=Unicode(),
        help="Canvas's column for each nbgrader assignment, e.g. {'01_saving_inputs': 'Saving inputs "
        "(4821)'}: a title ending in Canvas's assignment id in parentheses, as Canvas's export names it, "
        "always finds that assignment. Unlisted assignments keep their nbgrader name, which Canvas "
        "matches to an assignment of that exact name or else creates.",
    ).tag(config=True)

    section = Unicode(
        "",
        help="What the Section column says on every row. Canvas's import reads students by ID, SIS ids "
        "or name, never by section: this is for the instructor reading the file.",
    ).tag(config=True)

    sis_login_id = Enum(
        ["none", "id", "email"],
        default_value="none",
        help="Which roster field, if any, is the student's SIS Login ID in Canvas, which Canvas falls back "
        "on for a student without an lms_user_id: 'id' where nbgrader's student ids are the university's "
        "logins, 'email' where Canvas logs students in by email.",
    ).tag(config=True)

    def rows(self, grades: ClassGrades) -> list[list[str]]:
        columns = [self.assignment_columns.get(a.name, a.name) for a in grades.assignments]
        blank_student = [""] * (len(STUDENT_COLUMNS) - 1)
        return [
            STUDENT_COLUMNS + columns,
            [POINTS_POSSIBLE, *blank_student, *(number(a.max_score) for a in grades.assignments)],
            *(
                self._student(student) + student.score_fields(grades.assignments)
                for student in grades.students
            ),
        ]

    def _student(self, student: StudentGrades) -> list[str]:
        """The student columns: a name as Canvas sorts it, the Canvas id, no SIS User ID (nbgrader keeps
        none), the SIS Login ID if one is configured, the section."""
        login = {"id": student.id, "email": student.email, "none": ""}[self.sis_login_id]
        return [_sortable_name(student), student.lms_user_id, "", login, self.section]


def _sortable_name(student: StudentGrades) -> str:
    """The name as "Last, First", as Canvas's export writes names (and its import matches them); the
    nbgrader id for a student with no name on the roster."""
    return ", ".join(part for part in (student.last_name, student.first_name) if part) or student.id
