"""The pristine checker process: imports torch once, then forks one child per check.

A student's notebook kernel has run the student's code, which may have replaced `torch.allclose`,
`gradgradcheck` or anything else. Checks therefore never run there. This process is started from a
fresh interpreter, so nothing a student ran has touched it; each check runs in a child forked from it,
so one check's student code cannot touch the next. Forking from a warmed process makes a check cost
milliseconds instead of the second or two an interpreter with torch takes to start.

Requests arrive on stdin and verdicts leave on stdout, framed by `_protocol`.
"""

import os
import select
import signal
import sys
import time

import torch

from autograder import _integrity, _samples, _verify
from autograder._protocol import decode_request, read_message, write_message
from autograder._verdict import Verdict


def _warm_up() -> None:
    """Run each kind of operation once, so that forked children start with torch's lazy set-up done."""
    x = torch.rand(3, dtype=torch.double, requires_grad=True)
    torch.autograd.gradgradcheck(lambda t: (t**2).exp(), (x,))
    # The first torch.func call imports torch._dynamo, which wraps torch functions such as
    # torch.manual_seed; done here, before the integrity snapshot, that is not mistaken for tampering.
    torch.func.grad(torch.sin)(x[0])


def _run_child(request: bytes, reply_fd: int) -> None:
    """In the forked child: silence the student's prints, run the check, send the verdict, exit."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        verdict = _verify.run(request)
    except BaseException as error:  # noqa: BLE001 - the child must always answer, whatever the student did
        verdict = Verdict.failed(f"The checker could not run your code: {type(error).__name__}: {error}")
    with os.fdopen(reply_fd, "wb") as reply:
        reply.write(verdict.to_bytes())
    os._exit(0)


class ClientGoneError(Exception):
    """The kernel closed its end while a check ran: nobody is left to answer."""


def _collect(pid: int, reply_fd: int, requests_fd: int, timeout: float) -> Verdict:
    """Wait for the child's verdict; a child that hangs is killed, one that dies is reported."""
    chunks = []
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(reply_fd)
            return Verdict.failed(
                f"Your code did not finish within {timeout:g} s. Look for a loop that never ends "
                "in forward or backward."
            )
        ready, _, _ = select.select([reply_fd, requests_fd], [], [], remaining)
        if requests_fd in ready:
            # The kernel never writes while it waits for a verdict: readable means it has gone.
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise ClientGoneError
        if not ready:
            continue
        chunk = os.read(reply_fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(reply_fd)
    _, status = os.waitpid(pid, 0)
    if chunks:
        return Verdict.from_bytes(b"".join(chunks))
    if os.WIFSIGNALED(status):
        cause = signal.Signals(os.WTERMSIG(status)).name
    else:
        cause = f"exit code {os.WEXITSTATUS(status)}"
    return Verdict.failed(
        f"Your code ended the checker process ({cause}) before it could answer. "
        "Does it call sys.exit, os._exit, or use too much memory?"
    )


def serve(requests, replies, seed: int | None = None, audit=None) -> None:
    """Answer requests until the kernel closes its end: one forked child per request.

    With a seed, the n-th randomized check draws the same inputs on every run, so that grading a
    class twice gives the same grades; without one, hidden tests draw fresh inputs every time. With an
    `audit` stream (which the kernel cannot reach), every verdict is also written there, one JSON line
    each: a grading worker credits a test only for checks that really reached the checker.
    """
    number = 0
    while (request := read_message(requests)) is not None:
        number += 1
        timeout, payload = decode_request(request)
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            if seed is not None:
                _samples.reproducible(hash((seed, number)))
            # The child keeps only its own reply pipe: student code must not reach the kernel's, nor
            # the audit that vouches for verdicts.
            os.close(read_fd)
            os.close(replies.fileno())
            if audit is not None:
                os.close(audit.fileno())
            _run_child(payload, write_fd)
        os.close(write_fd)
        try:
            verdict = _collect(pid, read_fd, requests.fileno(), timeout)
        except ClientGoneError:
            return
        if audit is not None:
            audit.write(verdict.to_bytes() + b"\n")
            audit.flush()
        write_message(replies, verdict.to_bytes())


def main() -> None:
    # One thread: no OpenMP pool exists when we fork, and checks stay cheap on a 1-CPU Binder.
    torch.set_num_threads(1)
    _warm_up()
    _integrity.take_snapshot()
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
