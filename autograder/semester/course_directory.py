"""An instructor's nbgrader course directory, graded into as `nbgrader autograde` grades into it.

Its configuration is loaded as nbgrader loads it; the test cells come from its `source/` and its
gradebook; each submission's `timestamp.txt` goes into the gradebook and beside the graded notebook;
the course's own late-submission plugin (nbgrader's `AssignLatePenalties`, configured by the course)
decides the penalty. The class grader's own records (journal, run.json, grades.csv, report.html) go
in `class_grader/` inside it.
"""

import shutil
import sys
from pathlib import Path

from nbgrader.api import MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import AssignLatePenalties
from nbgrader.utils import find_all_files

from autograder.course.nbgrader_api import course_config
from autograder.course.notebooks import GradingCourse
from autograder.grading.errors import GradingError
from autograder.records import gradebook


class InstructorCourse(GradingCourse):
    """The course directory at `root`, whose gradebook and folders nbgrader's configuration names."""

    def __init__(self, root: Path, stream=sys.stderr) -> None:
        self.config = course_config(root)
        directory = CourseDirectory(config=self.config)
        super().__init__(root, root / directory.source_directory, directory.db_url)
        self.submitted = root / directory.submitted_directory
        self.stream = stream

    def prepare(self, versions: dict[str, str], registered: dict[str, str]) -> dict[str, str]:
        """Check that nbgrader generated each assignment, and put every student on the roster, as
        `nbgrader autograde` does; nothing of the course is registered again."""
        with gradebook.opened(self.db_url) as book:
            for assignment in versions:
                try:
                    book.find_assignment(assignment)
                except MissingEntry:
                    raise GradingError(
                        f"nbgrader has not generated {assignment} in {self.root}: run "
                        f"`nbgrader generate_assignment {assignment}` there first"
                    ) from None
            roster = {student.id for student in book.students}
            handed_in = {p.parent.name for a in versions for p in self.submitted.glob(f"*/{a}")}
            added = sorted(handed_in - roster)
            for student in added:
                book.update_or_create_student(student)
        if added:
            print(
                "not on the course's roster, so added to it as nbgrader autograde does: " + ", ".join(added),
                file=self.stream,
            )
        return registered | versions

    def _open_submission(self, book, student: str, assignment: str) -> None:
        """The submission with the time `nbgrader collect` stamped it with, which the late penalty
        counts from."""
        folder = self.submitted / student / assignment
        directory = CourseDirectory(config=self.config)
        timestamp = directory.get_existing_timestamp(str(folder))
        book.update_or_create_student(student)
        if timestamp:
            book.update_or_create_submission(assignment, student, timestamp=timestamp)
        else:
            book.update_or_create_submission(assignment, student)

    def _grades_saved(self, notebook, student: str, assignment: str, name: str) -> None:
        """The course's late penalty, and the submission's other files beside the graded notebook."""
        penalties = AssignLatePenalties(config=self.config)
        penalties.log.setLevel("ERROR")
        penalties.preprocess(notebook, self._resources(student, assignment, name))
        self._copy_files(student, assignment)

    def _copy_files(self, student: str, assignment: str) -> None:
        """What `nbgrader autograde` copies into autograded/: the submission's files that are not
        notebooks (`timestamp.txt`, the exchange's `submission_secret.txt` that release_feedback reads),
        then the source's, over them. A link is not followed: it is not a file the student handed in."""
        folder = self.root / "autograded" / student / assignment
        ignored = [*CourseDirectory(config=self.config).ignore, "*.ipynb"]
        for origin in (self.submitted / student / assignment, self.source / assignment):
            for found in find_all_files(str(origin), ignored):
                path = Path(found)
                if path.is_symlink() or not path.is_file():
                    continue
                target = folder / path.relative_to(origin)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.unlink(missing_ok=True)
                shutil.copy(path, target)
