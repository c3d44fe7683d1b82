"""Feedback on submit, beside an nbgrader course's exchange, until SIGINT or SIGTERM: each submission
that lands in `{Exchange.root}/{course_id}/inbound/` is admitted (its owner, whole, only the released
files), collected as `nbgrader collect --update` would, graded into the course's gradebook as `grade
--course` grades, and its feedback released for `nbgrader fetch_feedback`. One line per submission.

Stopped or crashed, the same command grades what landed meanwhile and nothing graded already.
`--status` prints what a running service reports in COURSE_DIR/class_grader/serve-status.json."""

import argparse
import json
import signal
import sys
from pathlib import Path

from autograder.grading.errors import GradingError, StoppedError
from autograder.grading.options import Limits, default_workers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--course", type=Path, required=True, metavar="COURSE_DIR", help="the nbgrader course directory"
    )
    parser.add_argument("--workers", type=int, default=default_workers(), help="parallel workers (all cores)")
    parser.add_argument(
        "--scheduler", help="grade on the Dask cluster whose scheduler is at this address (tcp://HOST:8786)"
    )
    parser.add_argument(
        "--trust-submissions",
        action="store_true",
        help="grade even where the kernel cannot confine student code (only for code you trust)",
    )
    parser.add_argument("--status", action="store_true", help="print the running service's status and exit")


def _status(course: Path) -> int:
    from autograder.serve.state import Status

    path = course / "class_grader" / "serve-status.json"
    try:
        status = Status(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        print(f"no status in {path}: start `python -m autograder serve --course {course}`", file=sys.stderr)
        return 1
    print(status.line())
    return 0


def run(args: argparse.Namespace) -> int:
    from autograder.grading.grade_command import check_scheduler, confinement_refused
    from autograder.grading.stop import stop_on_signal

    course = args.course.resolve()
    if args.status:
        return _status(course)
    signal.signal(signal.SIGTERM, stop_on_signal)
    try:
        if not (course / "nbgrader_config.py").is_file():
            raise GradingError(
                f"{course} is not an nbgrader course directory (it has no nbgrader_config.py); "
                "give the folder where you run nbgrader"
            )
        if not args.workers > 0:
            raise GradingError(f"--workers must be a positive number, not {args.workers}")
        if args.scheduler is not None:
            check_scheduler(args.scheduler)
        refused = confinement_refused(args.trust_submissions)
        if refused is not None:
            raise refused
        return _serve(course, args)
    except GradingError as error:
        print(error, file=sys.stderr)
        return error.status
    except (KeyboardInterrupt, StoppedError):
        print("stopped; the same command grades what lands meanwhile", file=sys.stderr)
        return 0
    except Exception:  # noqa: BLE001 - a bug of the grader's: one line here, the traceback in a file
        from autograder.grading.grade_command import internal_error

        print(internal_error(course / "class_grader"), file=sys.stderr)
        return 1


def _serve(course: Path, args: argparse.Namespace) -> int:
    from traitlets import TraitError

    from autograder.grading.pool import WorkerPool
    from autograder.serve.service import Service

    try:
        service = Service(course, Limits(trusted=args.trust_submissions), sys.stderr)
    except TraitError as error:
        raise GradingError(f"{course / 'nbgrader_config.py'}: {error}") from None
    settings = service.sandbox_settings()
    if args.scheduler is None:
        pool = WorkerPool(args.workers, settings)
    else:
        from autograder.grading.cluster import DaskPool

        pool = DaskPool(args.scheduler, settings, sys.stderr)
    with pool:
        service.serve(pool)
    return 0
