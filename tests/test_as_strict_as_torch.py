"""The checks are never more lenient than torch: every mutant and every correct answer of the lessons whose
exercises are Functions, judged by the class grader's checks and by torch's gradcheck (beside each check of
a first derivative) and gradgradcheck (beside each of a second) on that check's very inputs, visible and
hidden, with torch's defaults, check_undefined_grad included, and check_batched_grad for the Functions a
lesson runs under torch.func.vmap.

Torch rejects an answer on a check's inputs => the check fails. A correct answer passes both. Where a check
fails an answer torch accepts, on purpose, STRICTER names the case and the reason. Each answer runs in a
child of this process, on just the definitions it needs (tests/in_process.py): all of them in seconds.
"""

import pytest
from alternatives import ALTERNATIVES
from in_process import TORCH_CHECKS, Judged, planned
from judged_answers import SOLUTION, judged_answer, judged_params, mutant_names

from autograder.course.layout import assignments

# The lessons whose exercises are Functions: their test cells check derivatives.
LESSONS = [lesson for lesson in assignments() if any(c.kind in TORCH_CHECKS for _, c in planned(lesson))]

# Why a check fails an answer that torch's own checks pass.
_AGAINST_THE_REFERENCE = (
    "self-consistent but not the lesson's function: torch compares backward with the answer's own "
    "forward, the checks compare both with the reference"
)
_FIRST_ALREADY_WRONG = (
    "its gradient is already wrong against the reference, which the second-derivative check says first; "
    "gradgradcheck only differentiates that wrong gradient, and finds it consistent"
)
_FORWARD_ALREADY_WRONG = (
    "its forward is wrong against the reference, which the second-derivative check says first: a backward "
    "right for the reference earns nothing under a wrong forward; gradgradcheck differentiates backward alone"
)
_PART_CUT = (
    "one gradient is computed out of autograd's sight and does not require grad: gradgradcheck skips an "
    "output that does not, the check differentiates every gradient against the reference"
)
_MARKED_NON_DIFFERENTIABLE = (
    "forward marks its output non-differentiable, so it does not require grad: gradgradcheck skips an "
    "output that does not, the check differentiates it as the reference does"
)
_GRAD_OUT_CHANGED = (
    "backward changes grad_out in place: torch's checks make a fresh grad_out for each call, while autograd "
    "may hand the same tensor to other parts of the graph"
)
_OUTPUTS_OF_THE_EXERCISE = (
    "returns other outputs than the exercise asks for (one tensor where Sinh returns three, or a tuple "
    "where sinh returns one): torch checks whatever a function returns"
)
_FORGED = "replaces torch's gradcheck and allclose with functions that pass anything, and is wrong"
_SWITCHED_OFF = (
    "backward switches off requires_grad on the caller's own x: gradgradcheck then differentiates only "
    "against grad_out, skipping x, and passes; the check differentiates against x as the reference does"
)

STRICTER: dict[tuple[str, str], tuple[frozenset[str], str]] = {
    ("01_saving_inputs", "cube_with_consistent_derivatives"): (
        frozenset({"square_first_derivative", "square_second_derivative"}),
        _AGAINST_THE_REFERENCE,
    ),
    ("01_saving_inputs", "ignores_grad_out"): (frozenset({"square_second_derivative"}), _FIRST_ALREADY_WRONG),
    ("01_saving_inputs", "grad_switched_off_in_backward"): (
        frozenset({"square_second_derivative"}),
        _SWITCHED_OFF,
    ),
    ("01_saving_inputs", "patches_the_checks"): (
        frozenset({"square_first_derivative", "square_second_derivative"}),
        _FORGED,
    ),
    ("01_saving_inputs", "patches_torch_while_checked"): (
        frozenset({"square_second_derivative"}),
        _FORWARD_ALREADY_WRONG,
    ),
    ("02_saving_outputs", "input_saved_with_the_output_formula"): (
        frozenset({"exp_second_derivative"}),
        _FIRST_ALREADY_WRONG,
    ),
    ("02_saving_outputs", "grad_out_changed_in_place"): (
        frozenset({"exp_first_derivative"}),
        _GRAD_OUT_CHANGED,
    ),
    ("02_saving_outputs", "output_marked_non_differentiable"): (
        frozenset({"exp_second_derivative"}),
        _MARKED_NON_DIFFERENTIABLE,
    ),
    ("02_saving_outputs", "patches_the_checks"): (
        frozenset({"exp_first_derivative", "exp_second_derivative"}),
        _FORGED,
    ),
    ("03_saving_intermediates", "intermediates_on_ctx"): (
        frozenset({"sinh_apply_first_derivative"}),
        _OUTPUTS_OF_THE_EXERCISE,
    ),
    ("03_saving_intermediates", "intermediates_saved_not_returned"): (
        frozenset({"sinh_apply_first_derivative"}),
        _OUTPUTS_OF_THE_EXERCISE,
    ),
    ("03_saving_intermediates", "wrapper_returns_the_tuple"): (
        frozenset({"sinh_first_derivative"}),
        _OUTPUTS_OF_THE_EXERCISE,
    ),
    ("03_saving_intermediates", "returns_the_exponentials_swapped_consistently"): (
        frozenset({"sinh_apply_first_derivative", "sinh_apply_second_derivative"}),
        _AGAINST_THE_REFERENCE,
    ),
    ("03_saving_intermediates", "patches_the_checks"): (
        frozenset(
            {
                "sinh_apply_first_derivative",
                "sinh_apply_second_derivative",
                "sinh_first_derivative",
                "sinh_second_derivative",
            }
        ),
        _FORGED,
    ),
    ("04_untracked_backward", "kernel_arguments_swapped_in_forward"): (
        frozenset({"cubebackward_second_derivative"}),
        _FORWARD_ALREADY_WRONG,
    ),
    ("04_untracked_backward", "apply_arguments_swapped"): (
        frozenset({"cube_second_derivative"}),
        _FIRST_ALREADY_WRONG,
    ),
    **{
        ("04_untracked_backward", mutant): (
            frozenset({"cubebackward_second_derivative"}),
            _FIRST_ALREADY_WRONG,
        )
        for mutant in (
            "drops_the_grad_out_gradient",
            "gradients_in_wrong_order",
            "forgets_to_save_grad_out",
            "wrong_factor_3_for_6",
            "ignores_grad_grad_x",
            "returns_zeros_for_grad_out",
            "incoming_gradient_for_unsaved_grad_out",
        )
    },
    ("04_untracked_backward", "kernel_in_double_backward"): (
        frozenset({"cubebackward_second_derivative"}),
        _PART_CUT,
    ),
    ("04_untracked_backward", "patches_the_checks"): (
        frozenset(
            {
                "cube_first_derivative",
                "cube_second_derivative",
                "cubebackward_first_derivative",
                "cubebackward_second_derivative",
            }
        ),
        _FORGED,
    ),
    **{
        ("06_beyond_the_basics", mutant): (
            frozenset({"scaledsquare_second_derivative"}),
            _FIRST_ALREADY_WRONG,
        )
        for mutant in (
            "grad_x_without_grad_out",
            "grad_w_without_grad_out",
            "grad_w_with_the_wrong_sign",
            "gradients_in_wrong_order",
            "grad_x_without_w",
            "grad_w_with_grad_xs_formula",
            "grad_x_without_the_factor_2",
            "saves_the_inputs_in_reverse",
            "unpacks_the_inputs_swapped",
            "multiplies_by_grad_out_summed",
        )
    },
    **{
        ("06_beyond_the_basics", mutant): (frozenset({"scaledsquare_second_derivative"}), _PART_CUT)
        for mutant in ("detaches_grad_x", "computes_grad_x_under_no_grad")
    },
    ("06_beyond_the_basics", "patches_the_checks"): (
        frozenset({"scaledsquare_first_derivative", "scaledsquare_second_derivative"}),
        _FORGED,
    ),
    ("07_forward_mode", "saves_the_input_with_the_output_formula"): (
        frozenset({"tanh_second_derivative"}),
        _FIRST_ALREADY_WRONG,
    ),
    ("07_forward_mode", "patches_the_checks"): (
        frozenset({"tanh_first_derivative", "tanh_second_derivative"}),
        _FORGED,
    ),
}


def _judged(lesson: str, name: str) -> list[Judged]:
    """The checks of derivatives on one answer ('solution', a mutant or an alternative)."""
    return [result for result in judged_answer(lesson, name) if result.kind in TORCH_CHECKS]


@pytest.mark.parametrize(("lesson", "name"), judged_params(LESSONS, mutant_names))
def test_an_answer_torch_rejects_fails_that_check(lesson, name):
    lenient = [r for r in _judged(lesson, name) if r.torch_rejects and r.verdict.passed]
    assert lenient == [], [(r.cell, r.kind, [e for e in r.torch_errors if e]) for r in lenient]


@pytest.mark.parametrize(
    ("lesson", "name"),
    judged_params(LESSONS, lambda lesson: [SOLUTION, *(a.name for a in ALTERNATIVES[lesson])]),
)
def test_a_correct_answer_passes_torchs_checks_and_ours(lesson, name):
    results = _judged(lesson, name)
    assert results, "no check of a derivative ran"
    assert [(r.cell, r.kind, e) for r in results for e in r.torch_errors if e] == []
    assert [(r.cell, r.kind, r.verdict.message) for r in results if not r.verdict.passed] == []


@pytest.mark.parametrize(("lesson", "name"), judged_params(LESSONS, mutant_names))
def test_checks_are_stricter_than_torch_only_where_named(lesson, name):
    stricter = {r.cell for r in _judged(lesson, name) if not r.verdict.passed and not r.torch_rejects}
    named, reason = STRICTER.get((lesson, name), (frozenset(), ""))
    assert stricter == named, reason


def test_every_named_case_is_a_mutant():
    assert [key for key in STRICTER if key[0] not in LESSONS or key[1] not in mutant_names(key[0])] == []
