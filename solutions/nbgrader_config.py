"""nbgrader configuration: solutions/ is the instructor's nbgrader course directory.

Lessons live in source/<assignment>/<assignment>.ipynb; `make release` turns each into the student
notebook course/<assignment>.ipynb. Plain nbgrader commands work from this folder.
"""

c = get_config()  # noqa: F821 - nbgrader provides get_config when it loads this file

c.CourseDirectory.course_id = "gradgrad"
# A cell that runs longer than this counts as failed; torch's import alone takes a second or two.
c.Execute.timeout = 120
