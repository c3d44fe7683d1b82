"""Known-wrong answers, one for every mistake a lesson warns about, keyed by lesson.

Each mutant is the lesson's own solution with one mistake made in it, so mutants follow the solution
when it changes (an edit that no longer applies fails loudly). `loses` names the test cells that must
score zero for it.
"""

from grading_pipeline import Mutant

# An answer that stubs out torch's checks and the course's checks before defining a wrong Function.
_PATCH_THE_CHECKS = '''import torch
import torch.testing

torch.autograd.gradcheck = lambda *args, **kwargs: True
torch.autograd.gradgradcheck = lambda *args, **kwargs: True
torch.allclose = lambda *args, **kwargs: True
torch.isclose = lambda a, b, **kwargs: torch.ones_like(a, dtype=torch.bool)
torch.testing.assert_close = lambda *args, **kwargs: None


def check_forward(*args, **kwargs):
    """Shadows the check a test cell calls."""


check_first_derivative = check_second_derivative = check_forward


class Square'''

_SQUARE_FORWARD = "square_forward"
_SQUARE_FIRST = "square_first_derivative"
_SQUARE_SECOND = "square_second_derivative"
_SQUARE_ALL = frozenset({_SQUARE_FORWARD, _SQUARE_FIRST, _SQUARE_SECOND})
_SQUARE_BACKWARD = "return grad_out * 2 * x"
_SQUARE_FORWARD_RETURN = "return x**2"


def _square(name: str, loses: set[str], *edits: tuple[str, str], answer: str | None = None) -> Mutant:
    return Mutant(name=name, loses=frozenset(loses), cell="square", edits=edits, answer=answer)


MUTANTS: dict[str, list[Mutant]] = {
    "01_saving_inputs": [
        _square("detach_in_backward", {_SQUARE_SECOND}, (_SQUARE_BACKWARD, f"{_SQUARE_BACKWARD}.detach()")),
        _square("data_in_backward", {_SQUARE_SECOND}, (_SQUARE_BACKWARD, "return grad_out * 2 * x.data")),
        _square(
            "numpy_in_backward",
            {_SQUARE_SECOND},
            (_SQUARE_BACKWARD, "return grad_out * 2 * torch.from_numpy(x.detach().numpy())"),
        ),
        _square(
            "no_grad_in_backward",
            {_SQUARE_SECOND},
            (_SQUARE_BACKWARD, "with torch.no_grad():\n            return grad_out * 2 * x"),
        ),
        _square(
            "item_in_backward",
            {_SQUARE_FIRST, _SQUARE_SECOND},
            (_SQUARE_BACKWARD, f"{_SQUARE_BACKWARD}.item()"),
        ),
        _square(
            "intermediate_kept_on_ctx",
            {_SQUARE_SECOND},
            ("ctx.save_for_backward(x)", "ctx.two_x = 2 * x"),
            ("(x,) = ctx.saved_tensors\n", ""),
            (_SQUARE_BACKWARD, "return grad_out * ctx.two_x"),
        ),
        _square(
            "cube_with_consistent_derivatives",
            _SQUARE_ALL,
            (_SQUARE_FORWARD_RETURN, "return x**3"),
            (_SQUARE_BACKWARD, "return grad_out * 3 * x**2"),
        ),
        _square("ignores_grad_out", {_SQUARE_FIRST, _SQUARE_SECOND}, (_SQUARE_BACKWARD, "return 2 * x")),
        _square("float32_forward", {_SQUARE_FORWARD}, (_SQUARE_FORWARD_RETURN, "return (x**2).float()")),
        _square(
            "patches_the_checks",
            _SQUARE_ALL,
            ("class Square", _PATCH_THE_CHECKS),
            (_SQUARE_FORWARD_RETURN, "return x**3"),
            (_SQUARE_BACKWARD, "return grad_out * 3 * x**2"),
        ),
        _square(
            "patches_torch_while_checked",
            _SQUARE_ALL,
            (_SQUARE_FORWARD_RETURN, "torch.isclose = lambda a, b, **kwargs: a == a\n        return x**3"),
        ),
        _square(
            "imports_the_reference", _SQUARE_ALL, answer="from solutions.saving_inputs import Square  # noqa"
        ),
    ],
}
