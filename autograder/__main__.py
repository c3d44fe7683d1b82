"""Command line for instructors.

python -m autograder release [--check]      regenerate course/ from solutions/source/
python -m autograder grade SUBMITTED --out DIR [--workers N | --scheduler ADDRESS] [--timeout S]
                                            [--trust-submissions]
                                            grade a whole class into DIR (grades.csv, report.html,
                                            and an nbgrader gradebook), here or on a Dask cluster
"""

import argparse
import sys
from pathlib import Path

from autograder import release
from autograder.grading import confine
from autograder.grading.report import summary_table
from autograder.grading.run import Limits, default_workers, grade_class


def _release(args: argparse.Namespace) -> int:
    if args.check:
        outdated = release.stale()
        for name in outdated:
            print(f"course/{name} is out of date: run `make release`", file=sys.stderr)
        return 1 if outdated else 0
    for path in release.generate(release.STUDENT_NOTEBOOKS):
        print(f"wrote {path.relative_to(release.REPOSITORY)}")
    return 0


def _grade(args: argparse.Namespace) -> int:
    if not args.submitted.is_dir():
        print(f"{args.submitted} is not a folder of submissions", file=sys.stderr)
        return 2
    limits = Limits(
        cell_timeout=args.timeout,
        notebook_timeout=args.notebook_timeout,
        memory_mb=args.memory_mb,
        trusted=args.trust_submissions,
    )
    missing = confine.missing_features()
    if missing and not args.trust_submissions:
        print(
            "Refusing to grade: this host cannot confine student code. It lacks:\n- "
            + "\n- ".join(missing)
            + "\nGrade here only submissions you trust, with --trust-submissions.",
            file=sys.stderr,
        )
        return 3
    options = {"workers": args.workers, "limits": limits, "seed": args.seed, "scheduler": args.scheduler}
    rows = grade_class(args.submitted, args.out, **options)
    print(summary_table(rows))
    print(f"\nwrote {args.out / 'grades.csv'} and {args.out / 'report.html'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)

    release_parser = commands.add_parser("release", help="regenerate the student notebooks in course/")
    release_parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if course/ is stale"
    )
    release_parser.set_defaults(run=_release)

    grade_parser = commands.add_parser(
        "grade", help="grade a class: SUBMITTED/<student>/<assignment>/<notebook>.ipynb"
    )
    grade_parser.add_argument("submitted", type=Path, help="folder of submissions, in nbgrader's layout")
    grade_parser.add_argument("--out", type=Path, required=True, help="output folder; rerun to resume")
    grade_parser.add_argument(
        "--workers", type=int, default=default_workers(), help="parallel workers (all cores)"
    )
    grade_parser.add_argument(
        "--timeout", type=float, default=Limits.cell_timeout, help="seconds one cell may run (%(default)s)"
    )
    grade_parser.add_argument(
        "--notebook-timeout",
        type=float,
        default=Limits.notebook_timeout,
        help="seconds per notebook (%(default)s)",
    )
    grade_parser.add_argument(
        "--memory-mb", type=int, default=Limits.memory_mb, help="memory one notebook may add (%(default)s MB)"
    )
    grade_parser.add_argument(
        "--seed", type=int, help="seed of the hidden tests' random inputs (default: random)"
    )
    grade_parser.add_argument(
        "--trust-submissions",
        action="store_true",
        help="grade even where the kernel cannot confine student code (only for code you trust)",
    )
    grade_parser.add_argument(
        "--scheduler",
        help="grade on the Dask cluster whose scheduler is at this address (tcp://HOST:8786) instead of here",
    )
    grade_parser.set_defaults(run=_grade)

    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
