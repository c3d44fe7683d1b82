"""Where the course's files are: the repository, its nbgrader course directory, the lessons' sources
and the student notebooks generated from them."""

from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
COURSE_DIRECTORY = REPOSITORY / "solutions"
SOURCE = COURSE_DIRECTORY / "source"
STUDENT_NOTEBOOKS = REPOSITORY / "course"


def assignments() -> list[str]:
    """Lesson ids, in course order: the folders of solutions/source/."""
    return sorted(path.name for path in SOURCE.iterdir() if (path / f"{path.name}.ipynb").is_file())
