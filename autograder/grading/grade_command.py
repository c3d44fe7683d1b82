"""Grade a whole class into DIR (grades.csv, report.html and an nbgrader gradebook), here or on a Dask
cluster. SUBMITTED has nbgrader's layout: SUBMITTED/<student>/<assignment>/<notebook>.ipynb. With
--course COURSE_DIR ASSIGNMENT, grade an assignment of an nbgrader course directory as `nbgrader
autograde` would, into that course (roster, timestamps, late penalties, formgrader, feedback).

Run the same command again at any time: it grades again exactly what changed since (a notebook handed
in again or no longer, a lesson's source or the grading code, an option), and nothing else."""

import argparse
import contextlib
import errno
import gc
import signal
import sys
import traceback
from pathlib import Path
from urllib.parse import urlsplit

from autograder.grading.errors import GradingError, StoppedError
from autograder.grading.options import Limits, default_workers
from autograder.grading.staleness import counted
from autograder.grading.stop import listen as stop_on_ctrl_c_and_sigterm

_SCHEMES = ("tcp", "tls", "ws", "wss", "ucx", "inproc")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "target",
        metavar="SUBMITTED|ASSIGNMENT",
        help="folder of submissions in nbgrader's layout; with --course, the assignment to grade",
    )
    parser.add_argument(
        "--course",
        type=Path,
        metavar="COURSE_DIR",
        help="grade ASSIGNMENT into this nbgrader course directory",
    )
    parser.add_argument(
        "--out",
        type=Path,
        help="output folder; rerun to regrade what changed (with --course: COURSE_DIR/class_grader)",
    )
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
    parser.add_argument("--seed", type=int, help="seed of the hidden tests' random inputs (default: DIR's)")
    parser.add_argument(
        "--student",
        action="append",
        metavar="NAME",
        help="grade only this student (repeatable); every other row stays as it is",
    )
    parser.add_argument(
        "--assignment", action="append", metavar="ID", help="grade only this lesson (repeatable)"
    )
    parser.add_argument(
        "--trust-submissions",
        action="store_true",
        help="grade even where the kernel cannot confine student code (only for code you trust)",
    )
    parser.add_argument(
        "--scheduler",
        help="grade on the Dask cluster whose scheduler is at this address (tcp://HOST:8786) instead of here",
    )


def _check_options(args: argparse.Namespace) -> None:
    """Every option that cannot be right, before any work: GradingError naming it."""
    if args.out is None and args.course is None:
        raise GradingError("say where the grades go: --out DIR (or --course COURSE_DIR ASSIGNMENT)")
    for flag, value in (
        ("--workers", args.workers),
        ("--timeout", args.timeout),
        ("--notebook-timeout", args.notebook_timeout),
        ("--memory-mb", args.memory_mb),
    ):
        if not value > 0:  # NaN too
            raise GradingError(f"{flag} must be a positive number, not {value}")
    if args.scheduler is not None:
        check_scheduler(args.scheduler)


def check_scheduler(scheduler: str) -> None:
    """GradingError unless `scheduler` reads as a Dask scheduler's address."""
    address = urlsplit(scheduler if "://" in scheduler else f"tcp://{scheduler}")
    try:
        port = address.port
    except ValueError:
        port = None
    if address.scheme not in _SCHEMES or not address.hostname or port is None:
        raise GradingError(
            f"--scheduler {scheduler} is not a Dask scheduler's address; give one like tcp://HOST:8786"
        )


def confinement_refused(trusted: bool) -> GradingError | None:
    """Why this host will not grade student code (None: it will, or `trusted` says grade anyway)."""
    from autograder.sandbox import confine

    try:
        missing = confine.missing_features()
    except ValueError as error:  # the Landlock cap is not a version
        return GradingError(str(error))
    if missing and not trusted:
        return GradingError(
            "Refusing to grade: this host cannot confine student code. It lacks:\n- "
            + "\n- ".join(missing)
            + "\nGrade here only submissions you trust, with --trust-submissions.",
            3,
        )
    return None


def run(args: argparse.Namespace) -> int:
    stop_on_ctrl_c_and_sigterm()
    try:
        _check_options(args)
    except GradingError as error:
        print(error, file=sys.stderr)
        return error.status
    refused = confinement_refused(args.trust_submissions)
    if refused is not None:
        print(refused, file=sys.stderr)
        return refused.status
    try:
        return _grade(args)
    except GradingError as error:
        print(error, file=sys.stderr)
        return error.status
    except (KeyboardInterrupt, StoppedError) as stop:
        number = stop.signal_number if isinstance(stop, StoppedError) else signal.SIGINT
        print(f"stopped: {_saved(_records(args))}; the same command finishes the class", file=sys.stderr)
        return 128 + number
    except OSError as error:
        print(_system_error(error, args), file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - a bug of the grader's: one line here, the traceback in a file
        print(internal_error(_records(args)), file=sys.stderr)
        return 1


@contextlib.contextmanager
def _collector_paused():
    """nbgrader, SQLAlchemy and nbconvert load as millions of objects that live as long as the command:
    the collector, run over and over while they load, costs a tenth of the command's start. It pauses
    while they load, then leaves them alone (frozen) and collects what the run makes as always."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _grade(args: argparse.Namespace) -> int:
    from autograder.grading.pool import workers_for
    from autograder.grading.target import Selection, open_course_target, open_target

    limits = Limits(
        cell_timeout=args.timeout,
        notebook_timeout=args.notebook_timeout,
        memory_mb=args.memory_mb,
        trusted=args.trust_submissions,
    )
    selection = Selection(
        students=frozenset(args.student) if args.student else None,
        assignments=frozenset(args.assignment) if args.assignment else None,
    )
    if args.course is None:
        target = open_target(Path(args.target), args.out, limits, args.seed, selection)
    else:
        target = open_course_target(args.course, args.target, limits, args.out, args.seed, selection)
    print(target.work.line, file=sys.stderr, flush=True)
    # The workers start first: they import torch and warm up while this process imports nbgrader.
    with workers_for(target, args.workers, args.scheduler) as pool:
        if pool is not None and args.scheduler is None:
            print(
                f"warming {counted(args.workers, 'worker')} while nbgrader prepares the gradebook",
                file=sys.stderr,
            )
        with _collector_paused():
            from autograder.grading.run import grade

        rows = grade(target, pool)
    from autograder.records.report import summary_table

    print(summary_table(rows))
    print(f"\nwrote {target.out / 'grades.csv'} and {target.out / 'report.html'}")
    return 0


def _records(args: argparse.Namespace) -> Path:
    """The folder that holds the run's journal."""
    return args.out or args.course / "class_grader"


def _saved(out: Path) -> str:
    """'12 notebooks are saved in DIR', from the folder's journal."""
    journal = out / "journal.jsonl"
    try:
        count = len(journal.read_bytes().splitlines()) if journal.exists() else 0
    except OSError:
        count = 0
    return f"{counted(count, 'graded notebook')} saved in {out}"


def _system_error(error: OSError, args: argparse.Namespace) -> str:
    """An error of the machine's, in one line with what to do."""
    where = f" ({error.filename})" if error.filename else ""
    if error.errno == errno.ENOSPC:
        return f"the disk is full{where}; free space, then run the same command to finish"
    if error.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return (
            f"permission denied{where}: SUBMITTED must be readable and --out writable by you; "
            "fix that, then run the same command"
        )
    return f"{error.strerror or error}{where}; fix that, then run the same command"


def internal_error(out: Path) -> str:
    """Write the traceback where the instructor can send it; the line says where."""
    details = traceback.format_exc()
    for place in (out / "error.log", Path.cwd() / "autograder-error.log"):
        try:
            place.write_text(details)
        except OSError:
            continue
        return (
            f"the grader failed (a bug, not your doing): {sys.exc_info()[1]!r}; the traceback is in {place}"
        )
    return f"the grader failed (a bug, not your doing):\n{details}"
