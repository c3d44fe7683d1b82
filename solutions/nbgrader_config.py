"""nbgrader configuration: solutions/ is the instructor's nbgrader course directory.

Lessons live in source/<assignment>/<assignment>.ipynb; `make release` turns each into the student
notebook course/<assignment>.ipynb. Plain nbgrader commands work from this folder.
"""

c = get_config()  # noqa: F821 - nbgrader provides get_config when it loads this file

c.CourseDirectory.course_id = "gradgrad"
# A cell that runs longer than this counts as failed; torch's import alone takes a second or two.
c.Execute.timeout = 120
# What an answer cell holds in the release. Its message names the line to replace: a demo cell that runs an
# exercise before it is answered shows it, where a bare NotImplementedError would say nothing.
_STUB = 'raise NotImplementedError("not answered yet: replace this line with your code")'
c.ClearSolutions.code_stub = {"python": f"# YOUR CODE HERE\n{_STUB}"}
