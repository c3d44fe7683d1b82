"""The course as nbgrader knows it: the student notebooks generated from the sources (`release`), what
a class handed in (`submissions`), and each notebook restored, recorded and turned into feedback by
nbgrader's own preprocessors (`notebooks`). `nbgrader_cli` runs nbgrader as an instructor would.
"""
