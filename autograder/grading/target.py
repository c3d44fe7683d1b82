"""What a run grades and where, checked before any work: the submissions, the output folder and what
it holds. Light to import, so that the command checks everything, and says so, within a second."""

import os
from dataclasses import dataclass
from pathlib import Path

from autograder.course.layout import COURSE_DIRECTORY, SOURCE, assignments
from autograder.course.submissions import Submission, discover
from autograder.course.version import lesson_version
from autograder.grading import staleness
from autograder.grading.errors import GradingError
from autograder.grading.options import Limits
from autograder.records.journal import Journal, Recorded
from autograder.records.results import QuestionResult
from autograder.records.run_file import RunFile

LAYOUT = (
    "SUBMITTED/<student>/<assignment>/<notebook>.ipynb, "
    "e.g. SUBMITTED/alice/01_saving_inputs/01_saving_inputs.ipynb"
)


@dataclass(frozen=True)
class Selection:
    """The students and assignments a run grades (None: all); every other row stays as it is."""

    students: frozenset[str] | None = None
    assignments: frozenset[str] | None = None

    def __call__(self, key: tuple[str, ...]) -> bool:
        student, assignment = key[:2]
        return (self.students is None or student in self.students) and (
            self.assignments is None or assignment in self.assignments
        )


@dataclass
class Target:
    """A class to grade into a folder, as found before any work, and what the run will do."""

    submitted: Path
    out: Path
    run_file: RunFile
    submissions: list[Submission]
    # Rows for what is handed in but cannot be graded: unknown assignments, extra notebooks.
    ungradable: list[QuestionResult]
    journal: Journal
    recorded: dict[tuple[str, ...], Recorded]
    selection: Selection
    # assignment -> the version of its lesson now.
    versions: dict[str, str]
    limits: Limits
    # An instructor's nbgrader course directory graded into (None: a class graded into `out` alone).
    course: Path | None
    # The options that can change a grade, now and as the folder's last run had them.
    options: dict
    previous_options: dict
    work: staleness.Plan

    def sandbox_settings(self) -> dict:
        """How workers confine notebooks: what they may use, the folders kept from them, and the name
        the run's cgroups carry (so that a stopped run removes those its killed notebooks left)."""
        excluded = [self.submitted, self.out] + ([self.course] if self.course else [])
        lessons = {submission.assignment for submission, _ in self.work.todo}
        source = lessons_source(self.course)
        return sandbox_settings(self.limits, excluded, any(uses_torch_func(a, source) for a in lessons))


def sandbox_settings(limits: Limits, excluded: list[Path], warm_torch_func: bool = True) -> dict:
    """How workers confine notebooks under `limits`, the folders besides the course's own that they
    never see, and the name this process's cgroups carry; `warm_torch_func` when a lesson to grade
    uses torch.func, whose first use the workers then pay once, not each notebook."""
    return {
        "memory_mb": limits.memory_mb,
        "excluded": [str(COURSE_DIRECTORY), *map(str, excluded)],
        "trusted": limits.trusted,
        "group": f"{os.getpid()}-",
        "warm_torch_func": warm_torch_func,
    }


def lessons_source(course: Path | None) -> Path:
    """Where the lessons' source notebooks are: the instructor's course directory's, or the course's."""
    return course / "source" if course else SOURCE


def uses_torch_func(assignment: str, source: Path) -> bool:
    """Whether the lesson's notebooks (its answers and its tests) use torch.func."""
    return any("torch.func" in path.read_text() for path in (source / assignment).glob("*.ipynb"))


EVERYONE = Selection()


def open_target(
    submitted: Path, out: Path, limits: Limits, seed: int | None = None, selection: Selection = EVERYONE
) -> Target:
    """The class and folder, and what is stale in it; or GradingError saying what to fix. Nothing is
    written."""
    submitted = submitted.resolve()
    if not submitted.is_dir():
        raise GradingError(f"{submitted} is not a folder of submissions")
    return _open(submitted, out.resolve(), limits, seed, selection)


def open_course_target(
    course: Path,
    assignment: str,
    limits: Limits,
    out: Path | None = None,
    seed: int | None = None,
    selection: Selection = EVERYONE,
) -> Target:
    """ASSIGNMENT of an instructor's nbgrader course directory, as `nbgrader collect` left it (in the
    default layout, `submitted/<student>/<assignment>/`); the run's records go to `out`, by default
    `COURSE/class_grader`."""
    course = course.resolve()
    if not (course / "nbgrader_config.py").is_file():
        raise GradingError(
            f"{course} is not an nbgrader course directory (it has no nbgrader_config.py); "
            "give the folder where you run nbgrader"
        )
    if not (course / "source" / assignment).is_dir():
        raise GradingError(f"{course} has no source/{assignment}: name an assignment of the course")
    if not (course / "release" / assignment).is_dir():
        raise GradingError(
            f"nbgrader has not generated {assignment} in {course}: run "
            f"`nbgrader generate_assignment {assignment}` there first"
        )
    out = (out or course / "class_grader").resolve()
    return _open(course / "submitted", out, limits, seed, selection, course, assignment)


def _open(
    submitted: Path,
    out: Path,
    limits: Limits,
    seed: int | None,
    selection: Selection,
    course: Path | None = None,
    only: str | None = None,
) -> Target:
    source = lessons_source(course)
    if out.exists() and not out.is_dir():
        raise GradingError(f"--out {out} is a file; name a folder for the grades")
    try:
        run_file = RunFile.open(out, seed)
    except ValueError as error:  # ForeignFolderError too
        raise GradingError(str(error)) from None
    submissions, ungradable = discover(submitted, source, only) if submitted.is_dir() else ([], [])
    if not submissions and course:
        raise GradingError(
            f"no submission of {only} in {submitted}: `nbgrader collect {only}` puts them there", 1
        )
    if not submissions:
        raise GradingError(f"no notebook of a lesson of this course in {submitted}: expected {LAYOUT}", 1)
    journal = Journal(out / "journal.jsonl", bytes.fromhex(run_file.journal_secret))
    recorded = journal.load()
    _check_selection(selection, {s.student for s in submissions} | {key[0] for key in recorded})
    versions = {a: lesson_version(a, source) for a in sorted({s.assignment for s in submissions})}
    changed = sorted(a for a in versions if run_file.lessons.get(a, versions[a]) != versions[a])
    if selection.students is not None and changed:
        raise GradingError(
            f"the course of {changed[0]} changed since {out} was graded: all its notebooks are graded "
            "again, so run without --student"
        )
    options = {
        "seed": run_file.seed,
        "cell_timeout": limits.cell_timeout,
        "notebook_timeout": limits.notebook_timeout,
        "memory_mb": limits.memory_mb,
        "trusted": limits.trusted,
    }
    work = staleness.plan(submissions, recorded, versions, options, run_file.options, selection)
    return Target(
        submitted,
        out,
        run_file,
        submissions,
        ungradable,
        journal,
        recorded,
        selection,
        versions,
        limits,
        course,
        options,
        run_file.options,
        work,
    )


def _check_selection(selection: Selection, students: set[str]) -> None:
    unknown = sorted((selection.students or set()) - students)
    if unknown:
        raise GradingError(f"--student {unknown[0]}: no such student in SUBMITTED or in --out")
    lessons = set(assignments())
    unknown = sorted((selection.assignments or set()) - lessons)
    if unknown:
        raise GradingError(
            f"--assignment {unknown[0]}: not a lesson of this course ({', '.join(sorted(lessons))})"
        )
