"""The checker process a notebook kernel asks for verdicts: it judges, and runs no code it was sent.

The kernel has run the student's code, so a check cannot be judged there. This process is started
from a fresh interpreter and imports torch once. For every check it forks two children: one unpickles
the reference (and the test's argument builder) and computes the plan, the other unpickles the
student's function and measures it on the plan's inputs. Each sends back plain numbers
(`autograder.wire.arrays`); this process compares them. It never unpickles anything itself, and no child
holds the pipe verdicts leave on, so code in what the kernel sent cannot write a verdict.

Requests arrive on stdin and verdicts leave on stdout, framed by `autograder.wire.protocol`.
"""

import json
import os
import select
import signal
import sys
import time

import cloudpickle
import torch

from autograder.checker.client import LOADED_ON_FIRST_USE
from autograder.judge import compare, plan
from autograder.probe import measure
from autograder.wire import arrays
from autograder.wire.protocol import read_message, write_message
from autograder.wire.verdict import Verdict, ended_early

# Unpickles what `autograder.checks` pickled, which registers torch._C._functions to travel by name.
sys.modules.setdefault("torch._C._functions", torch._C._functions)
# What a child may send back at most: a check's numbers are kilobytes.
_REPLY_LIMIT = 64 * 2**20


def _warm_up() -> None:
    """Run what every check runs once, so that forked children start with torch's lazy set-up done."""
    x = torch.rand(3, dtype=torch.double, requires_grad=True)
    torch.autograd.gradgradcheck(lambda t: (t**2).exp(), (x,))


def _one_double() -> torch.Tensor:
    return torch.rand((), dtype=torch.double)


# For each of LOADED_ON_FIRST_USE, a run of a transform that loads it. This process runs one only once the
# kernel says it has loaded its module (the header's "loaded"), or a child has: a child's exit code has bit
# i set for the i-th module it ended up with. Every later child then starts with it loaded. Believing the
# kernel or a child costs at most that run, once.
_RUN_TO_LOAD = dict(
    zip(
        LOADED_ON_FIRST_USE,
        [
            lambda: torch.func.grad(torch.sin)(_one_double()),
            lambda: torch.func.jvp(torch.sin, (_one_double(),), (_one_double(),)),
        ],
        strict=True,
    )
)


def _load(modules) -> None:
    """Load, by running what needs them, those of `modules` this process has not loaded yet."""
    for module in modules:
        if module in _RUN_TO_LOAD and module not in sys.modules:
            _RUN_TO_LOAD[module]()


def _loaded_bits() -> int:
    """A child's exit code: which of the modules in _RUN_TO_LOAD it has loaded."""
    return sum(1 << bit for bit, module in enumerate(_RUN_TO_LOAD) if module in sys.modules)


def _loaded_by(status: int) -> list[str]:
    """The modules in _RUN_TO_LOAD that a child, ended with `status`, has loaded."""
    bits = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 0
    return [module for bit, module in enumerate(_RUN_TO_LOAD) if bits & 1 << bit]


class ClientGoneError(Exception):
    """The kernel closed its end while a check ran: nobody is left to answer."""


class ChildFailedError(Exception):
    """A child ran out of time, died, or sent something that is not a measurement."""


def _in_child(work, reply_fd: int) -> None:
    """In a forked child: silence prints, do the work, send its plain result, exit without cleanup."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        payload = arrays.pack(work())
    except BaseException as error:  # noqa: BLE001 - the child must always answer, whatever it ran
        payload = arrays.pack(
            {"refused": f"The checker could not run your code: {type(error).__name__}: {error}"}
        )
    with os.fdopen(reply_fd, "wb") as reply:
        reply.write(payload)
    os._exit(_loaded_bits())


def _fork(work, keep: tuple[int, ...]) -> tuple[int, int]:
    """(pid, read end) of a child doing `work`; the child keeps no pipe but its own reply pipe."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        for fd in keep:
            os.close(fd)
        _in_child(work, write_fd)
    os.close(write_fd)
    return pid, read_fd


def _collect(pid: int, reply_fd: int, requests_fd: int, timeout: float):
    """The child's plain result; a child that hangs is killed, one that dies is reported."""
    chunks, size = [], 0
    deadline = time.monotonic() + timeout
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ChildFailedError(
                    f"Your code did not finish within {timeout:g} s. Look for a loop that never ends "
                    "in forward or backward."
                )
            ready, _, _ = select.select([reply_fd, requests_fd], [], [], remaining)
            if requests_fd in ready:
                # The kernel never writes while it waits for a verdict: readable means it has gone.
                raise ClientGoneError
            if not ready:
                continue
            chunk = os.read(reply_fd, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > _REPLY_LIMIT:
                raise ChildFailedError("Your code's results were too large to check.")
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    finally:
        os.close(reply_fd)
    _, status = os.waitpid(pid, 0)
    _load(_loaded_by(status))
    if not chunks:
        raise ChildFailedError(ended_early(status))
    try:
        return arrays.unpack(b"".join(chunks))
    except ValueError:
        raise ChildFailedError("The checker received a malformed answer from your code's process.") from None


def _plan_in_child(header: dict, test: bytes):
    """Child work: the reference's plan, from the test's pickled (reference, builder, mistakes)."""

    def work():
        reference, builder, mistakes = cloudpickle.loads(test)
        if header["kind"] == "result":
            return plan.plan_result(reference, builder, header["built_by"], header["randomized"], mistakes)
        return plan.plan_function(
            header["kind"],
            reference,
            header["randomized"],
            header["low"],
            header["high"],
            header["batched"],
            mistakes,
        )

    return work


def _measure_in_child(header: dict, test: bytes, answer: bytes, probe: dict, names: list[str]):
    """Child work: the student's function measured on the plan's inputs."""

    def work():
        measure.stand_in_for_the_reference()
        try:
            function = cloudpickle.loads(answer)
        except measure.UsesReference:
            return {"refused": measure.USES_REFERENCE}
        _, builder, _ = cloudpickle.loads(test) if header["kind"] == "result" else (None, None, None)
        request = probe | {
            "kind": header["kind"],
            "name": header["name"],
            "names": names,
            "function": header.get("function", {}),
        }
        return measure.measure(request | {"where": header["where"]}, function, builder)

    return work


def judge(header: dict, test: bytes, answer: bytes, keep: tuple[int, ...], requests_fd: int) -> Verdict:
    """One check: the plan from one child, the measurement from another, the verdict from here."""
    timeout = header["timeout"]
    _load(header.get("loaded", []))
    try:
        made = _collect(*_fork(_plan_in_child(header, test), keep), requests_fd, timeout)
        if not isinstance(made, dict) or "refused" in made:
            reason = made.get("refused", "") if isinstance(made, dict) else ""
            return Verdict.failed(f"The test's reference could not be computed. {reason}".strip())
        work = _measure_in_child(header, test, answer, made["probe"], made["names"])
        measured = _collect(*_fork(work, keep), requests_fd, timeout)
    except ChildFailedError as failure:
        return Verdict.failed(str(failure))
    return compare.verdict(header["kind"], header["name"], made, measured, header["where"])


def serve(requests, replies) -> None:
    """Answer requests until the kernel closes its end; a request is a header and two pickles."""
    keep = (replies.fileno(),)
    while (header := read_message(requests)) is not None:
        test, answer = read_message(requests), read_message(requests)
        if test is None or answer is None:
            return
        try:
            verdict = judge(json.loads(header), test, answer, keep, requests.fileno())
        except ClientGoneError:
            return
        write_message(replies, verdict.to_bytes())


def serve_forked(requests_fd: int, replies_fd: int) -> None:
    """A checker forked from a process that cannot start one; it never returns."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        serve(os.fdopen(requests_fd, "rb"), os.fdopen(replies_fd, "wb"))
    finally:
        os._exit(0)


def main() -> None:
    # One thread: no OpenMP pool exists when we fork, and checks stay cheap on a 1-CPU Binder.
    torch.set_num_threads(1)
    _warm_up()
    sys.modules[measure.REFERENCE_PACKAGE] = None  # forked children may not import the reference
    replies = os.fdopen(os.dup(1), "wb")
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
