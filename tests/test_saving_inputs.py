"""Lesson 01_saving_inputs: the reference Square, checked against closed forms in float64."""

import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Shape

from solutions.saving_inputs import Square

SQUARE = Case(Square.apply, torch.square, lambda x: 2 * x, lambda x: torch.full_like(x, 2.0))


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_square_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(SQUARE, shape)
