"""Answers that attack the grading rather than make a mistake, shared by every lesson's mutants."""


def patch_the_checks(defining: str) -> str:
    """Code that stubs out torch's checks and the course's checks, then starts defining `defining`."""
    return f'''import torch
import torch.testing

torch.autograd.gradcheck = lambda *args, **kwargs: True
torch.autograd.gradgradcheck = lambda *args, **kwargs: True
torch.allclose = lambda *args, **kwargs: True
torch.isclose = lambda a, b, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None


def check_forward(*args, **kwargs):
    """Shadows the check a test cell calls."""


check_first_derivative = check_second_derivative = check_result = check_forward


{defining}'''
