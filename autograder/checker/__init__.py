"""The checker a notebook starts: where a lesson's test cells are judged in JupyterLab and plain nbgrader.

`client` runs in the student's kernel and only ships the answer and the test's reference; `server` is a
fresh interpreter that forks a child to plan the reference and one to measure the answer, and compares
the plain numbers they send back. The server decides verdicts; no child it forks holds their pipe.
"""
