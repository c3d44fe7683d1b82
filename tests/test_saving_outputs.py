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


def test_exp_hands_its_output_to_save_for_backward() -> None:
    """The lesson's forward test: autograd's pack hook must see the output itself, not x or nothing."""
    x = torch.linspace(-1.5, 1.2, 4, dtype=torch.float64, requires_grad=True)
    saved = []

    def keep(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor.detach())
        return tensor.detach()

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda tensor: tensor):
        out = Exp.apply(x)
    assert len(saved) == 1
    torch.testing.assert_close(saved[0], out.detach(), rtol=0, atol=0)


def test_exp_refuses_an_output_changed_in_place() -> None:
    """Saved with save_for_backward, the output is guarded by its version counter."""
    x = torch.linspace(-1.5, 1.2, 4, dtype=torch.float64, requires_grad=True)
    out = Exp.apply(x)
    out.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
