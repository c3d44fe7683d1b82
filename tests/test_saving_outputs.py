"""Lesson 02_saving_outputs: the reference Exp, checked against closed forms in float64."""

import pytest
import torch
from closed_forms import CLOSED_FORM_CHECKS, SHAPES, Case, Check, Shape

from solutions.saving_outputs import Exp

EXP = Case(Exp.apply, torch.exp, torch.exp, torch.exp)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("check", CLOSED_FORM_CHECKS)
def test_exp_matches_closed_forms(check: Check, shape: Shape) -> None:
    check(EXP, shape)
