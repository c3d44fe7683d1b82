"""Command line for instructors: `python -m autograder release [--check]`."""

import argparse
import sys

from autograder import release


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    release_parser = commands.add_parser(
        "release", help="regenerate the student notebooks in course/ from solutions/source/"
    )
    release_parser.add_argument(
        "--check", action="store_true", help="change nothing; exit 1 if course/ is out of date"
    )
    args = parser.parse_args(argv)

    if args.check:
        outdated = release.stale()
        for name in outdated:
            print(f"course/{name} is out of date: run `make release`", file=sys.stderr)
        return 1 if outdated else 0
    for path in release.generate(release.STUDENT_NOTEBOOKS):
        print(f"wrote {path.relative_to(release.REPOSITORY)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
