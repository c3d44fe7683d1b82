"""A roster from the LMS: the CSV an LMS exports, turned into the one `nbgrader db student import` takes
(columns id, first_name, last_name, email, lms_user_id).

- Canvas: its gradebook export (Grades, Export). `Student` is "Last, First", `ID` is the Canvas user id
  (lms_user_id, which CanvasExporter writes back as `ID`), and the second row, `Points Possible`, is no
  student; nor is "Student, Test", the account behind Canvas's Student View. It holds no email.
- Moodle: its grade export as a plain text file (Grades, Export), or any CSV with its column names:
  `First name`, `Last name` (`Surname` in some versions), `Email address` and `ID number`, which becomes
  lms_user_id (MoodleExporter can find students by it).

nbgrader's student id is the name a student hands work in under, usually their JupyterHub login; which
column of the export holds it depends on how JupyterHub logs students in, so it can be chosen. By default
it is what JupyterHub's LTI authenticator (jupyterhub-ltiauthenticator) takes as the username by default:
Canvas's `ID` (its LTI 1.1 launch's custom_canvas_user_id) and Moodle's `Email address` (the email claim
of an LTI 1.3 launch).
"""

import csv
from collections.abc import Callable
from pathlib import Path

NBGRADER_COLUMNS = ["id", "first_name", "last_name", "email", "lms_user_id"]
# Canvas's Student View account, in its gradebook export like a student.
CANVAS_TEST_STUDENT = "Student, Test"


class RosterExportError(Exception):
    """An LMS export this cannot turn into a roster; the message says what is wrong and where."""


def _canvas_student(row: dict[str, str]) -> dict[str, str] | None:
    """The roster fields of a row of Canvas's gradebook export, or None for a row that is no student."""
    if not row.get("ID") or "Points Possible" in row["Student"] or row["Student"] == CANVAS_TEST_STUDENT:
        return None
    last_name, _, first_name = row["Student"].partition(", ")
    return {"first_name": first_name, "last_name": last_name, "email": "", "lms_user_id": row["ID"]}


def _moodle_student(row: dict[str, str]) -> dict[str, str]:
    """The roster fields of a row of Moodle's grade export."""
    return {
        "first_name": row.get("First name", ""),
        "last_name": row.get("Last name") or row.get("Surname", ""),
        "email": row.get("Email address", ""),
        "lms_user_id": row.get("ID number", ""),
    }


# Per LMS: how a row reads, and the column that holds nbgrader's student id by default.
READERS: dict[str, tuple[Callable[[dict[str, str]], dict[str, str] | None], str]] = {
    "canvas": (_canvas_student, "ID"),
    "moodle": (_moodle_student, "Email address"),
}


def read_roster(lms: str, export: Path, id_column: str | None = None) -> list[dict[str, str]]:
    """One roster entry per student of the LMS's export, with nbgrader's fields, in the export's order."""
    read_row, default_id_column = READERS[lms]
    id_column = id_column or default_id_column
    # utf-8-sig: both LMSs can start their exports with a byte-order mark.
    with export.open(newline="", encoding="utf-8-sig") as exported:
        reader = csv.DictReader(exported)
        if id_column not in (reader.fieldnames or []):
            raise RosterExportError(
                f"{export} has no column {id_column!r} to take student ids from (its columns: "
                f"{', '.join(reader.fieldnames or [])}); choose one with --id-column"
            )
        students = [
            {"id": row[id_column].strip(), **fields}
            for row in reader
            if (fields := read_row(row)) is not None
        ]
    _check_ids(students, export, id_column)
    return students


def _check_ids(students: list[dict[str, str]], export: Path, id_column: str) -> None:
    """Every student needs an id, and a different one: nbgrader would merge two students into one."""
    nameless = [f"{s['last_name']}, {s['first_name']}" for s in students if not s["id"]]
    if nameless:
        raise RosterExportError(
            f"{export} gives no {id_column!r} for {'; '.join(nameless)}: choose another --id-column"
        )
    ids = [s["id"] for s in students]
    shared = sorted({i for i in ids if ids.count(i) > 1})
    if shared:
        raise RosterExportError(
            f"{export} gives several students the same {id_column!r}: {', '.join(shared)}"
        )


def write_roster(students: list[dict[str, str]], out: Path) -> None:
    """The CSV `nbgrader db student import` reads."""
    with out.open("w", newline="", encoding="utf-8") as roster:
        writer = csv.DictWriter(roster, NBGRADER_COLUMNS)
        writer.writeheader()
        writer.writerows(students)
