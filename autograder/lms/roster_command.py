"""Turn an LMS's roster export into the CSV `nbgrader db student import` takes (id, first_name,
last_name, email, lms_user_id): Canvas's gradebook export, or Moodle's grade export as plain text."""

import argparse
import sys
from pathlib import Path

LMSS = ("canvas", "moodle")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("lms", choices=LMSS, help="the LMS the export comes from")
    parser.add_argument("export", type=Path, help="the CSV the LMS exported")
    parser.add_argument("--out", type=Path, required=True, help="where to write the roster CSV")
    parser.add_argument(
        "--id-column",
        help="the export's column holding each student's nbgrader id, their JupyterHub login "
        "(default: Canvas's 'ID', Moodle's 'Email address', which JupyterHub's LTI login takes by default)",
    )


def run(args: argparse.Namespace) -> int:
    from autograder.lms.roster import RosterExportError, read_roster, write_roster

    try:
        students = read_roster(args.lms, args.export, args.id_column)
    except (OSError, RosterExportError) as error:
        print(f"python -m autograder roster: {error}", file=sys.stderr)
        return 1
    write_roster(students, args.out)
    print(f"wrote {len(students)} students to {args.out}; then run: nbgrader db student import {args.out}")
    return 0
