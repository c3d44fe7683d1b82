"""The judge draws a hidden test's inputs from the run's seed and the check's place among the notebook's
checks, counted whether or not the checks before it ran: a failure earlier in a notebook changes no
later check's inputs (and the in-process judge of tests/in_process.py, which plans every check, draws
the class grader's)."""

import os

import torch

from autograder.judge import test_cells
from autograder.wire import arrays
from autograder.wire.protocol import read_message, write_message

SEED = 11
_TWO_CHECKS = """from autograder import check_forward

check_forward(Square.apply, lambda x: x**2)
check_forward(Square.apply, lambda x: x**2, randomized=True)
"""
_HIDDEN = """from autograder import check_forward

check_forward(Square.apply, lambda x: x**2, randomized=True)
"""


def _inputs(request: dict) -> list[torch.Tensor]:
    return [x for sample in request["samples"] for x in sample["inputs"]]


def _judged_after_a_failure() -> dict:
    """The request the judge (in a child, as in the class grader) makes for _HIDDEN's check, after
    _TWO_CHECKS failed at its first check."""
    to_judge, from_judge = os.pipe(), os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(to_judge[1])
            os.close(from_judge[0])
            test_cells.serve(to_judge[0], from_judge[1])
        finally:
            os._exit(0)
    os.close(to_judge[0])
    os.close(from_judge[1])
    with os.fdopen(to_judge[1], "wb") as requests, os.fdopen(from_judge[0], "rb") as replies:
        write_message(requests, str(SEED).encode())
        write_message(requests, _TWO_CHECKS.encode())
        assert "probe" in arrays.unpack(read_message(replies))
        write_message(requests, b"not a measurement")
        outputs = arrays.unpack(read_message(replies))["outputs"]
        assert [output["output_type"] for output in outputs] == ["error"], outputs
        write_message(requests, _HIDDEN.encode())
        request = arrays.unpack(read_message(replies))["probe"]
    os.waitpid(pid, 0)
    return request


def test_a_hidden_check_draws_the_same_inputs_after_an_earlier_failure():
    after_a_failure = _inputs(_judged_after_a_failure())
    _, planned = test_cells.checks_of(_HIDDEN, SEED, first_number=2)
    after_a_pass = _inputs(next(planned).request)
    _, numbered_by_checks_run = test_cells.checks_of(_HIDDEN, SEED, first_number=1)
    assert len(after_a_failure) == len(after_a_pass) > 0
    assert all(torch.equal(a, b) for a, b in zip(after_a_failure, after_a_pass, strict=True))
    assert not all(
        torch.equal(a, b)
        for a, b in zip(after_a_failure, _inputs(next(numbered_by_checks_run).request), strict=True)
    )
