"""Closed-form checks shared by the reference tests: each lesson declares its Case, these helpers check it.

Not a test module. A lesson's tests parametrize over CLOSED_FORM_CHECKS and SHAPES and call each check
with their Case, so every Function is held to the same forward, first and second derivative, and
gradcheck/gradgradcheck assertions.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pytest
import torch
from torch import autograd

Fn = Callable[[torch.Tensor], torch.Tensor]
Shape = tuple[int, ...]


class Case(NamedTuple):
    """A Function's apply and the closed forms of its value, first and second derivative, elementwise."""

    fn: Fn
    value: Fn
    first: Fn
    second: Fn


Check = Callable[[Case, Shape], None]

SHAPES = [pytest.param((), id="scalar"), pytest.param((3,), id="vector"), pytest.param((2, 3), id="matrix")]


def make_x(shape: Shape) -> torch.Tensor:
    """Float64 inputs on both sides of zero (a scalar gets the negative end), none exactly zero."""
    count = int(np.prod(shape))
    return torch.linspace(-1.5, 1.2, count, dtype=torch.float64).reshape(shape).requires_grad_()


def make_grad(shape: Shape, seed: int) -> torch.Tensor:
    """A reproducible float64 incoming gradient, different for each seed."""
    return torch.randn(shape, dtype=torch.float64, generator=torch.Generator().manual_seed(seed))


def assert_forward_matches(case: Case, shape: Shape) -> None:
    x = make_x(shape)
    torch.testing.assert_close(case.fn(x), case.value(x.detach()))


def assert_first_derivative_matches(case: Case, shape: Shape) -> None:
    x = make_x(shape)
    grad_out = make_grad(shape, seed=1)
    (grad_x,) = autograd.grad(case.fn(x), x, grad_out)
    torch.testing.assert_close(grad_x, grad_out * case.first(x.detach()))


def assert_second_derivative_matches(case: Case, shape: Shape) -> None:
    x = make_x(shape)
    grad_out = make_grad(shape, seed=1)
    grad_grad_x = make_grad(shape, seed=2)
    (grad_x,) = autograd.grad(case.fn(x), x, grad_out, create_graph=True)
    (second,) = autograd.grad(grad_x, x, grad_grad_x)
    torch.testing.assert_close(second, grad_grad_x * grad_out * case.second(x.detach()))


def assert_gradcheck_and_gradgradcheck_pass(case: Case, shape: Shape) -> None:
    x = make_x(shape)
    assert autograd.gradcheck(case.fn, x)
    assert autograd.gradgradcheck(case.fn, x)


CLOSED_FORM_CHECKS = [
    pytest.param(assert_forward_matches, id="forward"),
    pytest.param(assert_first_derivative_matches, id="first_derivative"),
    pytest.param(assert_second_derivative_matches, id="second_derivative"),
    pytest.param(assert_gradcheck_and_gradgradcheck_pass, id="gradcheck_gradgradcheck"),
]
