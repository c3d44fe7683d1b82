"""Code that runs beside student code: it calls the student's function and measures what it does.

Everything here runs in a process the student's code also runs in, so nothing here decides a verdict.
It turns what the student's function returns into plain numbers (`autograder.wire.arrays`) for the judge,
and adds the likely cause of a mistake, read off the student's own objects, as text.
"""
