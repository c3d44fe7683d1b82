"""Command line for instructors: `python -m autograder COMMAND`, each command living with its concern.

A command module defines `add_arguments(parser)` and `run(args) -> int` (the exit status), and imports
what it needs inside `run`, so that `--help` and a mistyped option answer at once.
"""

import argparse
import gc
import importlib
import sys

# jsonschema, under nbformat, tries this optional package for a format the notebook schema never uses;
# importing it builds a grammar, seconds of every command's start. Marked absent, it is skipped.
sys.modules.setdefault("rfc3987_syntax", None)

# name: (module, one line of help)
COMMANDS = {
    "release": ("autograder.course.release_command", "regenerate the student notebooks in course/"),
    "grade": ("autograder.grading.grade_command", "grade a class: SUBMITTED/<student>/<assignment>/*.ipynb"),
    "roster": ("autograder.lms.roster_command", "turn an LMS's roster export into nbgrader's student CSV"),
    "serve": (
        "autograder.serve.command",
        "grade each submission as it lands in an nbgrader exchange, and release its feedback",
    ),
    "doctor": (
        "autograder.sandbox.doctor_command",
        "how this host confines student code, and what it lacks",
    ),
}


class _Parser(argparse.ArgumentParser):
    """A mistyped command line gets one line saying what is wrong, not the whole usage."""

    def error(self, message: str) -> None:
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def main(argv: list[str] | None = None) -> int:
    parser = _Parser(prog="python -m autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    for name, (module_name, summary) in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = commands.add_parser(name, help=summary, description=module.__doc__)
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    status = main()
    # A command's results are in files by now. Tearing down the libraries a run loads (nbgrader,
    # SQLAlchemy, nbconvert, matplotlib) collects their millions of objects: about a second of the
    # command's time. Frozen, the collector leaves them to the end of the process; exit handlers,
    # open files and the output streams are finished as always.
    gc.freeze()
    sys.exit(status)
