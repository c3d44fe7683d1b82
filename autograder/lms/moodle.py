"""Grades for Moodle's grade import: "CSV file", or "Paste from spreadsheet" (Grades, Import).

Each rule below is Moodle's importer's (moodle, grade/import: csv/classes/load_data.php, which both
imports run, grade_import_form.php and direct/classes/mapping_form.php) or its documentation's
(docs.moodle.org, "Grade import"):

- The first row names the columns; every later row is one user.
- The instructor maps one column to a user field ("Map from", "Map to": user id, username, ID number or
  email address). The CSV form starts "Map from" on the first column, so the identifier comes first; the
  paste form preselects a column named like a field, so it carries Moodle's name for its field
  (`Email address`, `ID number`, `Username`). Moodle's documentation warns that emails are matched
  case-sensitively: they are written as the roster has them.
- Every other column is mapped to a grade item or ignored. Columns are named `<grade item> (Real)`, as
  Moodle's grade export names them, which the paste form preselects for that item.
- A user the identifier does not find stops the whole import; a row whose identifier is blank is
  credited to the user of the row before it. So a roster student without one stops the export instead.
- A blank or `-` grade means "no grade", not 0: a student who handed nothing in gets 0 (see
  `grades.read_grades`).
"""

from traitlets import Dict, Enum, Unicode

from autograder.lms.grades import ClassGrades, LmsExporter, RosterError

# The roster field that identifies a student to Moodle, and Moodle's name for that user field.
IDENTIFIER_COLUMNS = {"email": "Email address", "lms_user_id": "ID number", "id": "Username"}


class MoodleExporter(LmsExporter):
    """`nbgrader export --exporter=autograder.lms.MoodleExporter`: the CSV Moodle's grade import takes."""

    default_file = "moodle_grades.csv"

    grade_items = Dict(
        key_trait=Unicode(),
        value_trait=Unicode(),
        help="Moodle's grade item for each nbgrader assignment, named as Moodle's import lists it, e.g. "
        "{'01_saving_inputs': 'Assignment: Saving inputs'} for an assignment activity, or a manual "
        "item's own name. Unlisted assignments keep their nbgrader name.",
    ).tag(config=True)

    user_field = Enum(
        list(IDENTIFIER_COLUMNS),
        default_value="email",
        help="The roster field Moodle finds each student by: their email (Moodle's 'Email address'), "
        "lms_user_id holding Moodle's 'ID number', or nbgrader's student id as Moodle's 'Username'.",
    ).tag(config=True)

    def rows(self, grades: ClassGrades) -> list[list[str]]:
        identifiers = {student.id: getattr(student, self.user_field) for student in grades.students}
        unidentified = [student for student, identifier in identifiers.items() if not identifier]
        if unidentified:
            raise RosterError(
                f"Moodle finds each student by {IDENTIFIER_COLUMNS[self.user_field]!r}, which the roster "
                f"leaves empty for {', '.join(unidentified)}: add their {self.user_field} to the roster "
                "(nbgrader db student import, or formgrader's Manage Students), or set "
                "MoodleExporter.user_field"
            )
        items = [self.grade_items.get(a.name, a.name) for a in grades.assignments]
        return [
            [IDENTIFIER_COLUMNS[self.user_field], "First name", "Last name", *(f"{i} (Real)" for i in items)],
            *(
                [identifiers[s.id], s.first_name, s.last_name, *s.score_fields(grades.assignments)]
                for s in grades.students
            ),
        ]
