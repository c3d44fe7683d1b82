"""What stops a grading run in an instructor's hands, as one line that says what to do."""


class GradingError(Exception):
    """A mistake the instructor can fix (an option, a folder, the host): its message is the one line
    to print, and `status` the command's exit status."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


class StoppedError(BaseException):
    """The run was stopped by a signal (SIGTERM here; Ctrl-C is Python's KeyboardInterrupt). Like
    KeyboardInterrupt it is no Exception, so no `except Exception` on its way takes it for a
    notebook's fault."""

    def __init__(self, signal_number: int) -> None:
        super().__init__(signal_number)
        self.signal_number = signal_number
