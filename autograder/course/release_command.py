"""Regenerate the student notebooks in course/ from the lessons' sources in solutions/source/."""

import argparse
import sys


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if course/ is stale")


def run(args: argparse.Namespace) -> int:
    from autograder.course import release
    from autograder.course.layout import REPOSITORY

    if args.check:
        outdated = release.stale()
        for name in outdated:
            print(f"course/{name} is out of date: run `make release`", file=sys.stderr)
        return 1 if outdated else 0
    written, removed = release.release()
    for path in written:
        print(f"wrote {path.relative_to(REPOSITORY)}")
    for path in removed:
        print(f"removed {path.relative_to(REPOSITORY)}, whose lesson is gone")
    if not written and not removed:
        print("course/ is up to date: no lesson's source or configuration changed")
    return 0
