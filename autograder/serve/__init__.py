"""Feedback on submit: each submission that lands in the course's nbgrader exchange is admitted (its
owner, whole, only the released notebooks), collected, graded by the class grader into the course's
gradebook, and its feedback released through the exchange, within seconds."""
