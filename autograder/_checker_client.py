"""The notebook kernel's side of the checker: starts the checker process and asks it for verdicts."""

import subprocess
import sys
from typing import BinaryIO

from autograder._protocol import encode_request, read_message, write_message
from autograder._verdict import Verdict


class CheckerProcess:
    """One pristine checker process per kernel, started early so torch is imported by the first check."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._attached: tuple[BinaryIO, BinaryIO] | None = None

    def attach(self, requests: BinaryIO, replies: BinaryIO) -> None:
        """Use a checker someone else started (a grading worker forks one per notebook)."""
        self.stop()
        self._attached = (requests, replies)

    def _pipes(self) -> tuple[BinaryIO, BinaryIO]:
        if self._attached is not None:
            return self._attached
        self.start()
        return self._process.stdin, self._process.stdout

    def start(self) -> None:
        """Start the process unless it is running; cheap to call again."""
        if self._process is not None and self._process.poll() is None:
            return
        self.stop()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "autograder._checker_server"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            # Anything on stderr would make nbgrader zero the test cell that triggered it.
            stderr=subprocess.DEVNULL,
            # Outside the kernel's process group, so the kernel's shutdown does not wait for it: the
            # checker exits by itself when the kernel closes its end of the pipe.
            start_new_session=True,
        )

    def stop(self) -> None:
        """End the process and release its pipes; the next check starts a fresh one."""
        if self._attached is not None:
            for pipe in self._attached:
                pipe.close()
            self._attached = None
        if self._process is None:
            return
        self._process.kill()
        self._process.wait()
        self._process.stdin.close()
        self._process.stdout.close()
        self._process = None

    def ask(self, check: bytes, timeout: float) -> Verdict:
        """Send one pickled check; the checker enforces `timeout` on the student's code."""
        requests, replies = self._pipes()
        try:
            write_message(requests, encode_request(timeout, check))
            reply = read_message(replies)
        except OSError:
            reply = None
        except BaseException:
            # Interrupted mid-check: its late reply must not be read as the next check's answer.
            self.stop()
            raise
        if reply is None:
            self.stop()
            return Verdict.failed("The checker process stopped unexpectedly; run this cell again.")
        return Verdict.from_bytes(reply)
