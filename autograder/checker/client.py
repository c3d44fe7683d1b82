"""The notebook kernel's side of the checker: starts the checker process and asks it for verdicts."""

import os
import subprocess
import sys
from typing import BinaryIO

from autograder.wire.protocol import read_message, write_message
from autograder.wire.verdict import Verdict

# Modules torch loads on the first use of a transform, each slow to load (torch._dynamo, for torch.func's
# grad, vjp, jacrev and hessian: 0.6 s on one core; forward mode's decompositions, for jvp and jacfwd) and
# needed by few lessons' checks: the checker loads one only once the kernel or a check has used it.
LOADED_ON_FIRST_USE = ("torch._dynamo", "torch._decomp.decompositions_for_jvp")


class CheckerProcess:
    """One pristine checker process per kernel, started early so torch is imported by the first check."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._attached: tuple[BinaryIO, BinaryIO] | None = None
        # Where no interpreter may be started (a confined notebook), the checker is forked instead.
        self.fork_instead = False

    def attach(self, requests: BinaryIO, replies: BinaryIO) -> None:
        """Use a checker someone else started (a grading worker forks one per notebook)."""
        self.stop()
        self._attached = (requests, replies)

    def _pipes(self) -> tuple[BinaryIO, BinaryIO]:
        if self._attached is None and self.fork_instead:
            self._fork()
        if self._attached is not None:
            return self._attached
        self.start()
        return self._process.stdin, self._process.stdout

    def _fork(self) -> None:
        """A checker forked from this process. It is not pristine (this process ran the notebook), which
        is why the class grader never grades by it: it only answers the checks a lesson's own cells make."""
        requests_read, requests_write = os.pipe()
        replies_read, replies_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(requests_write)
            os.close(replies_read)
            from autograder.checker import server

            server.serve_forked(requests_read, replies_write)
        os.close(requests_read)
        os.close(replies_write)
        self.attach(os.fdopen(requests_write, "wb"), os.fdopen(replies_read, "rb"))

    def start(self) -> None:
        """Start the process unless it is running; cheap to call again."""
        if self._process is not None and self._process.poll() is None:
            return
        self.stop()
        self._process = subprocess.Popen(
            [sys.executable, "-m", "autograder.checker.server"],
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

    def ask(self, header: bytes, test: bytes, answer: bytes) -> Verdict:
        """Send one check: its header, the pickled (reference, builder) and the pickled answer."""
        requests, replies = self._pipes()
        try:
            for message in (header, test, answer):
                write_message(requests, message)
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
