"""Lesson 02: mistakes in Exp."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "02_saving_outputs"

_EXP_FORWARD = "exp_forward"
_EXP_FIRST = "exp_first_derivative"
_EXP_SECOND = "exp_second_derivative"
_EXP_ALL = frozenset({_EXP_FORWARD, _EXP_FIRST, _EXP_SECOND})
_SAVE = "ctx.save_for_backward(result)"
_LOAD = "(result,) = ctx.saved_tensors"
_EXP_BACKWARD = "return grad_out * result"
_EXP_FORWARD_RETURN = "return result\n"


_exp = mistakes_in("exp")


MUTANTS = [
    # Right derivatives, since ctx.result is the output itself; only the forward test's hook sees it.
    _exp(
        "output_kept_on_ctx",
        {_EXP_FORWARD},
        (_SAVE, "ctx.result = result"),
        (_LOAD, "result = ctx.result"),
        says="did not save its output with ctx.save_for_backward",
    ),
    # Saved, so the pack hook sees the output, and kept on ctx too: the node's attributes show it.
    _exp(
        "output_saved_and_kept_on_ctx",
        {_EXP_FORWARD},
        (_SAVE, "ctx.save_for_backward(result)\n        ctx.result = result"),
        (_LOAD, "result = ctx.result"),
        says="saves its output but keeps it as ctx.result as well",
    ),
    # Right derivatives from the saved input, exp computed again: only the forward test's hook sees it.
    _exp(
        "input_saved_instead_of_output",
        {_EXP_FORWARD},
        (_SAVE, "ctx.save_for_backward(x)"),
        (_LOAD, "(x,) = ctx.saved_tensors"),
        (_EXP_BACKWARD, "return grad_out * torch.exp(x)"),
        says="saved its input x and not its output",
    ),
    # A copy of the output has its values but not its grad_fn: the forward test's hook sees that, and the
    # second derivative is cut off.
    _exp(
        "output_detached_when_saved",
        {_EXP_FORWARD, _EXP_SECOND},
        (_SAVE, "ctx.save_for_backward(result.detach())"),
        says=("saved a copy of its output", "made with `.detach()`"),
    ),
    # The saved tensor is the output itself, but marked non-differentiable it gets no grad_fn: the pack hook
    # sees the very output, with requires_grad False.
    _exp(
        "output_marked_non_differentiable",
        _EXP_ALL,
        (_SAVE, "ctx.mark_non_differentiable(result)\n        ctx.save_for_backward(result)"),
        says="marked its output non-differentiable",
    ),
    _exp(
        "copy_of_output_saved",
        {_EXP_FORWARD, _EXP_SECOND},
        (_SAVE, "ctx.save_for_backward(result.clone())"),
        says=("saved a copy of its output", "forward saved a tensor with no history"),
    ),
    _exp(
        "exp_recomputed_in_forward",
        {_EXP_FORWARD, _EXP_SECOND},
        (_SAVE, "ctx.save_for_backward(torch.exp(x))"),
        says=(
            "saves a second tensor, computed with `torch.exp()` inside ctx.save_for_backward",
            "forward saved a tensor with no history, computed with `torch.exp()`",
        ),
    ),
    # The saved result never becomes an output: the clone returned in its place gets Exp's node.
    _exp(
        "clone_of_saved_output_returned",
        {_EXP_FORWARD, _EXP_SECOND},
        (_EXP_FORWARD_RETURN, "return result.clone()\n"),
        says="returns a tensor made from it with `.clone()`",
    ),
    # A view shares the saved result's memory, but it is a tensor of its own, and it gets Exp's node.
    _exp(
        "view_of_saved_output_returned",
        {_EXP_FORWARD, _EXP_SECOND},
        (_EXP_FORWARD_RETURN, "return result.view_as(result)\n"),
        says=(
            "returns a tensor made from it with `.view_as()`",
            "forward returns a tensor made with `.view_as()` in place of a tensor it saved",
        ),
    ),
    # .reshape() of a tensor in its own shape is a view: the view gets Exp's node, the saved result none.
    _exp(
        "reshaped_saved_output_returned",
        {_EXP_FORWARD, _EXP_SECOND},
        (_EXP_FORWARD_RETURN, "return result.reshape(x.shape)\n"),
        says=("returns a view of it", "forward returns a view of a tensor it saved"),
    ),
    # A new tensor made from the saved result has its values: forward's return statement names the operator.
    _exp(
        "product_with_saved_output_returned",
        {_EXP_FORWARD, _EXP_SECOND},
        (_EXP_FORWARD_RETURN, "return result * 1\n"),
        says=("returns a new tensor computed from it with `*`", "computed with `*` in its return statement"),
    ),
    # The derivative checks unpack a 1-tuple; the forward test asks for the tensor itself.
    _exp(
        "output_returned_in_a_tuple",
        {_EXP_FORWARD},
        (_EXP_FORWARD_RETURN, "return (result,)\n"),
        says="Exp.apply(x) returned a tuple",
    ),
    # Right values, but the caller's x is overwritten with exp(x).
    _exp(
        "input_changed_in_place_in_forward",
        {_EXP_FORWARD, _EXP_FIRST, _EXP_SECOND},
        ("result = torch.exp(x)", "result = x.exp_()"),
        says="changed its input x in place",
    ),
    # ctx.saved_tensors is a tuple even with one tensor saved; grad_out * tuple reads it as an index.
    _exp(
        "saved_tensors_not_unpacked",
        {_EXP_FIRST, _EXP_SECOND},
        (_LOAD, "result = ctx.saved_tensors"),
        says="keeps the whole tuple, even when one tensor was saved",
    ),
    _exp("detach_in_backward", {_EXP_SECOND}, (_EXP_BACKWARD, "return grad_out * result.detach()")),
    _exp(
        "recomputed_under_no_grad",
        {_EXP_FORWARD, _EXP_SECOND},
        (_SAVE, "ctx.save_for_backward(x)"),
        (_LOAD, "(x,) = ctx.saved_tensors"),
        (_EXP_BACKWARD, "with torch.no_grad():\n            return grad_out * torch.exp(x)"),
    ),
    _exp(
        "input_saved_with_the_output_formula",
        _EXP_ALL,
        (_SAVE, "ctx.save_for_backward(x)"),
        (_LOAD, "(x,) = ctx.saved_tensors"),
        (_EXP_BACKWARD, "return grad_out * x"),
    ),
    _exp(
        "output_treated_as_input",
        {_EXP_FIRST, _EXP_SECOND},
        (_EXP_BACKWARD, "return grad_out * torch.exp(result)"),
    ),
    _exp(
        "ignores_grad_out",
        {_EXP_FIRST, _EXP_SECOND},
        (_EXP_BACKWARD, "return result"),
        says="without multiplying by grad_out",
    ),
    _exp(
        "output_changed_in_place_in_backward",
        {_EXP_FIRST, _EXP_SECOND},
        (_EXP_BACKWARD, "return result.mul_(grad_out)"),
        says="backward changes a tensor in place",
    ),
    # Right for Exp alone, but any other node handed the same grad_out receives the changed one; a double
    # backward, where grad_out requires grad, refuses the change.
    _exp(
        "grad_out_changed_in_place",
        {_EXP_FIRST, _EXP_SECOND},
        (_EXP_BACKWARD, "return grad_out.mul_(result)"),
        says=(
            "First derivative: the backward of Exp changes grad_out in place",
            "Second derivative: the backward of Exp changes grad_out in place",
        ),
    ),
    _exp(
        "patches_the_checks",
        _EXP_ALL,
        ("class Exp", patch_the_checks("class Exp")),
        ("torch.exp(x)", "torch.exp(2 * x)"),
        (_EXP_BACKWARD, "return 2 * grad_out * result"),
    ),
    _exp(
        "patches_torch_while_checked",
        # Its derivatives are those of its own forward, exp(x) + 1, and right: only forward is wrong, and
        # the patch does not hide it.
        {_EXP_FORWARD},
        (_EXP_FORWARD_RETURN, "torch.isclose = lambda a, b, **kwargs: a == a\n        return result + 1\n"),
    ),
    _exp("imports_the_reference", _EXP_ALL, answer="from solutions.saving_outputs import Exp  # noqa"),
]

INSTRUCTIONS = {
    # exp computed again from a saved input is right too: the exercise can only prefer the saved result.
    "Prefer to write it with the saved result, taken from `ctx.saved_tensors`": (
        "exp_recomputed_from_a_saved_input"
    ),
    "save **it** with `ctx.save_for_backward`": "input_saved_instead_of_output",
    "`grad_out` times the derivative of `exp`": "ignores_grad_out",
    "Do not change `grad_out`": "grad_out_changed_in_place",
    "or the saved result in place": "output_changed_in_place_in_backward",
    "do not keep the result as a `ctx` attribute": "output_kept_on_ctx",
    "do not save a copy of it": "copy_of_output_saved",
    "or return a copy or view of it": "view_of_saved_output_returned",
    "not `x.exp_()`, which would overwrite the caller's `x`": "input_changed_in_place_in_forward",
}
