"""Reference implementations of every Function the course teaches, one module per lesson.

Tests and hidden tests compare against these; student-facing code never imports them.
"""
