"""Grade a whole class into DIR (grades.csv, report.html and an nbgrader gradebook), here or on a Dask
cluster. SUBMITTED has nbgrader's layout: SUBMITTED/<student>/<assignment>/<notebook>.ipynb."""

import argparse
import sys
from pathlib import Path

from autograder.grading.options import Limits, default_workers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("submitted", type=Path, help="folder of submissions, in nbgrader's layout")
    parser.add_argument("--out", type=Path, required=True, help="output folder; rerun to resume")
    parser.add_argument("--workers", type=int, default=default_workers(), help="parallel workers (all cores)")
    parser.add_argument(
        "--timeout", type=float, default=Limits.cell_timeout, help="seconds one cell may run (%(default)s)"
    )
    parser.add_argument(
        "--notebook-timeout",
        type=float,
        default=Limits.notebook_timeout,
        help="seconds per notebook (%(default)s)",
    )
    parser.add_argument(
        "--memory-mb", type=int, default=Limits.memory_mb, help="memory one notebook may add (%(default)s MB)"
    )
    parser.add_argument("--seed", type=int, help="seed of the hidden tests' random inputs (default: random)")
    parser.add_argument(
        "--trust-submissions",
        action="store_true",
        help="grade even where the kernel cannot confine student code (only for code you trust)",
    )
    parser.add_argument(
        "--scheduler",
        help="grade on the Dask cluster whose scheduler is at this address (tcp://HOST:8786) instead of here",
    )


def run(args: argparse.Namespace) -> int:
    from autograder.grading.run import grade_class
    from autograder.records.report import summary_table
    from autograder.sandbox import confine

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
