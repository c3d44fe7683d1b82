"""The class grader inside an instructor's nbgrader course directory: the semester's roster, due dates,
late penalties, formgrader and feedback, all nbgrader's own."""
