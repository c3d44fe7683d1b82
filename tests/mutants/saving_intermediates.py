"""Lesson 03: mistakes in Sinh and its wrapper sinh."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "03_saving_intermediates"

_APPLY_FORWARD = "sinh_apply_forward"
_APPLY_FIRST = "sinh_apply_first_derivative"
_APPLY_SECOND = "sinh_apply_second_derivative"
_SINH_FORWARD = "sinh_forward"
_SINH_FIRST = "sinh_first_derivative"
_SINH_SECOND = "sinh_second_derivative"
_APPLY_ALL = {_APPLY_FORWARD, _APPLY_FIRST, _APPLY_SECOND}
_SINH_ALL = {_SINH_FORWARD, _SINH_FIRST, _SINH_SECOND}

_SAVE = "ctx.save_for_backward(expx, expnegx)"
_FORWARD_RETURN = "return (expx - expnegx) / 2, expx, expnegx"
_BACKWARD_SIGNATURE = "def backward(ctx, grad_out, grad_expx, grad_expnegx):"
_UNPACK = "expx, expnegx = ctx.saved_tensors"
_BACKWARD_RETURN = "return grad_out * (expx + expnegx) / 2 + grad_expx * expx - grad_expnegx * expnegx"
_COSH_TERM = "grad_out * (expx + expnegx) / 2"
_WRAPPER_RETURN = "return Sinh.apply(x)[0]"


_sinh = mistakes_in("sinh")


MUTANTS = [
    # With gradients left unmaterialized, gradcheck, which differentiates one output at a time, hands
    # backward None for grad_out: this backward answers it with int 0, which autograd refuses. Behind
    # the wrapper, gradcheck's check_undefined_grad hands it None for every output.
    _sinh(
        "returns_zero_for_a_missing_gradient",
        _APPLY_ALL - {_APPLY_FORWARD} | _SINH_ALL - {_SINH_FORWARD},
        (_SAVE, f"ctx.set_materialize_grads(False)\n        {_SAVE}"),
        (_UNPACK, f"if grad_out is None:\n            return 0\n        {_UNPACK}"),
        (
            _BACKWARD_RETURN,
            "pairs = ((1, grad_expx, expx), (-1, grad_expnegx, expnegx))\n"
            f"        return {_COSH_TERM} + sum(sign * g * t for sign, g, t in pairs if g is not None)",
        ),
        says="backward returns a number (such as 0) where a gradient belongs",
    ),
    # Unmaterialized gradients met with no check for None: the extra outputs' terms multiply None.
    _sinh(
        "unmaterialized_gradients_used_as_tensors",
        _APPLY_ALL - {_APPLY_FORWARD} | _SINH_ALL - {_SINH_FORWARD},
        (_SAVE, f"ctx.set_materialize_grads(False)\n        {_SAVE}"),
        says="a term whose gradient is None is zero",
    ),
    # The cosh term computed into the saved expx: the caller's output 1 changes, and so do the terms
    # read after it.
    _sinh(
        "changes_a_saved_output_in_place_in_backward",
        _APPLY_ALL - {_APPLY_FORWARD} | _SINH_ALL - {_SINH_FORWARD},
        (_UNPACK, f"{_UNPACK}\n        cosh = expx.add_(expnegx).div_(2)"),
        (_COSH_TERM, "grad_out * cosh"),
        says="that tensor is one of the Function's outputs, the very tensor the caller holds",
    ),
    # SinhBad: intermediates kept as ctx attributes, one output; the wrapper returns that output.
    _sinh(
        "intermediates_on_ctx",
        _APPLY_ALL | {_SINH_SECOND},
        (_SAVE, "ctx.expx = expx\n        ctx.expnegx = expnegx"),
        (_FORWARD_RETURN, "return (expx - expnegx) / 2"),
        (_BACKWARD_SIGNATURE, "def backward(ctx, grad_out):"),
        (_UNPACK, "expx, expnegx = ctx.expx, ctx.expnegx"),
        (_BACKWARD_RETURN, f"return {_COSH_TERM}"),
        (_WRAPPER_RETURN, "return Sinh.apply(x)"),
    ),
    # Saved with save_for_backward, but not returned: still intermediates without history.
    _sinh(
        "intermediates_saved_not_returned",
        _APPLY_ALL | {_SINH_SECOND},
        (_FORWARD_RETURN, "return (expx - expnegx) / 2"),
        (_BACKWARD_SIGNATURE, "def backward(ctx, grad_out):"),
        (_BACKWARD_RETURN, f"return {_COSH_TERM}"),
        (_WRAPPER_RETURN, "return Sinh.apply(x)"),
        says="it should return 3",
    ),
    # Saved with save_for_backward and not returned, with backward and wrapper left for three outputs: the
    # wrapper's [0] indexes into sinh(x) itself, which for a 0-dim x raises IndexError.
    _sinh(
        "returns_sinh_alone_to_a_wrapper_taking_its_first_output",
        _APPLY_ALL | _SINH_ALL,
        (_FORWARD_RETURN, "return (expx - expnegx) / 2"),
        says="Sinh.apply returns one tensor, not three, so sinh's [0] indexes into sinh(x) itself",
    ),
    # backward copied from SinhBad, one gradient only: autograd passes three and Python refuses the call.
    _sinh(
        "backward_takes_one_gradient",
        _APPLY_ALL - {_APPLY_FORWARD} | _SINH_ALL - {_SINH_FORWARD},
        (_BACKWARD_SIGNATURE, "def backward(ctx, grad_out):"),
        (_BACKWARD_RETURN, f"return {_COSH_TERM}"),
        says="Sinh.forward returns 3 outputs, so Sinh.backward must take 3 gradients, where it takes 1",
    ),
    _sinh(
        "drops_extra_output_gradients",
        {_APPLY_FIRST, _APPLY_SECOND, _SINH_SECOND},
        (_BACKWARD_RETURN, f"return {_COSH_TERM}"),
        says="ignores the gradients that arrive for its extra outputs",
    ),
    _sinh(
        "drops_grad_expnegx",
        {_APPLY_FIRST, _APPLY_SECOND, _SINH_SECOND},
        (_BACKWARD_RETURN, f"return {_COSH_TERM} + grad_expx * expx"),
        says="the term of grad_expnegx, the gradient of output 2, is left out",
    ),
    _sinh(
        "wrong_sign_on_exp_neg_x",
        {_APPLY_FIRST, _APPLY_SECOND, _SINH_SECOND},
        (_BACKWARD_RETURN, f"return {_COSH_TERM} + grad_expx * expx + grad_expnegx * expnegx"),
        says="the term of grad_expnegx, the gradient of output 2, has the wrong sign",
    ),
    _sinh(
        "wrong_sign_on_both_extra_outputs",
        {_APPLY_FIRST, _APPLY_SECOND, _SINH_SECOND},
        (_BACKWARD_RETURN, f"return {_COSH_TERM} - grad_expx * expx + grad_expnegx * expnegx"),
        says="has the wrong sign, and the term of grad_expnegx, the gradient of output 2, has the wrong sign",
    ),
    # sinh(x) computed into expx: outputs 0 and 1 are one tensor, and the saved expx holds sinh(x), so a
    # right backward gives a wrong gradient, through the wrapper too.
    _sinh(
        "computes_sinh_in_place_in_forward",
        _APPLY_ALL | _SINH_ALL - {_SINH_FORWARD},
        (_FORWARD_RETURN, "return expx.sub_(expnegx).div_(2), expx, expnegx"),
        says="outputs 0 and 1 of Sinh.forward are one tensor",
    ),
    _sinh(
        "wrapper_returns_the_tuple",
        _SINH_ALL,
        (_WRAPPER_RETURN, "return Sinh.apply(x)"),
        says="the first: `.apply(x)[0]`",
    ),
    # Every value right, but Sinh is never used: the tests refuse a result that is not Sinh's.
    _sinh(
        "wrapper_calls_torch_sinh",
        _SINH_ALL,
        (_WRAPPER_RETURN, "return torch.sinh(x)"),
        says="not from SinhBackward",
    ),
    _sinh(
        "detaches_saved_tensors_in_backward",
        {_APPLY_SECOND, _SINH_SECOND},
        (_UNPACK, "expx, expnegx = (t.detach() for t in ctx.saved_tensors)"),
        says="backward uses `.detach()`",
    ),
    # The outputs are new tensors, so the saved ones are untracked intermediates again.
    _sinh(
        "returns_detached_extra_outputs",
        {_APPLY_SECOND, _SINH_SECOND},
        (_FORWARD_RETURN, "return (expx - expnegx) / 2, expx.detach(), expnegx.detach()"),
        says="forward returns a tensor made with `.detach()` in place of a tensor it saved",
    ),
    _sinh(
        "returns_cloned_extra_outputs",
        {_APPLY_SECOND, _SINH_SECOND},
        (_FORWARD_RETURN, "return (expx - expnegx) / 2, expx.clone(), expnegx.clone()"),
        says="Return the very tensors you save",
    ),
    # The derivatives are right, as the outputs kept are the ones returned, but ctx and the outputs hold
    # each other.
    _sinh(
        "outputs_kept_on_ctx",
        {_APPLY_SECOND},
        (_SAVE, "ctx.expx, ctx.expnegx = expx, expnegx"),
        (_UNPACK, "expx, expnegx = ctx.expx, ctx.expnegx"),
        says="a reference cycle",
    ),
    # Right derivatives, at the cost of the exp calls the exercise saves.
    _sinh(
        "saves_x_and_recomputes",
        {_APPLY_SECOND},
        (_SAVE, "ctx.save_for_backward(x)"),
        (_UNPACK, "(x,) = ctx.saved_tensors\n        expx, expnegx = torch.exp(x), torch.exp(-x)"),
        says="forward saves x (the input) but not expx (output 1) and expnegx (output 2)",
    ),
    _sinh(
        "keeps_x_on_ctx_and_recomputes",
        {_APPLY_SECOND},
        (_SAVE, f"{_SAVE}\n        ctx.x = x"),
        (_UNPACK, "expx, expnegx = torch.exp(ctx.x), torch.exp(-ctx.x)"),
        says="from which backward can compute exp again",
    ),
    _sinh(
        "unpacks_the_saved_in_the_other_order",
        {_APPLY_FIRST, _APPLY_SECOND, _SINH_SECOND},
        (_SAVE, "ctx.save_for_backward(expnegx, expx)"),
        says="either it unpacks ctx.saved_tensors in another order than it passed them",
    ),
    # The same values from the unpacking right and each extra gradient paired with the other exponential:
    # the message names both places to look.
    _sinh(
        "pairs_each_extra_gradient_with_the_other_exponential",
        {_APPLY_FIRST, _APPLY_SECOND, _SINH_SECOND},
        (_BACKWARD_RETURN, f"return {_COSH_TERM} + grad_expx * expnegx - grad_expnegx * expx"),
        says="or its terms multiply each output's gradient by the other tensor",
    ),
    # The second-derivative check names forward too, as the cells before it do, not a term of backward.
    _sinh(
        "returns_the_exponentials_swapped",
        _APPLY_ALL,
        (_FORWARD_RETURN, "return (expx - expnegx) / 2, expnegx, expx"),
        says="Sinh's forward is wrong (see the forward check); fix it first",
    ),
    # The same swap in backward's parameters: backward matches forward, and only the order is wrong.
    _sinh(
        "returns_the_exponentials_swapped_consistently",
        _APPLY_ALL,
        (_FORWARD_RETURN, "return (expx - expnegx) / 2, expnegx, expx"),
        (_BACKWARD_SIGNATURE, "def backward(ctx, grad_out, grad_expnegx, grad_expx):"),
        says="outputs 1 and 2 are swapped",
    ),
    # The three outputs rotated, each holding what another should: the forward check names the order.
    _sinh(
        "returns_the_outputs_rotated",
        _APPLY_ALL | _SINH_ALL,
        (_FORWARD_RETURN, "return expx, expnegx, (expx - expnegx) / 2"),
        says="the outputs are out of order: output 0 holds the value output 1 should",
    ),
    # Exponentials recorded under enable_grad, so the derivatives are right, then computed again for the
    # outputs: what forward saves is not what it returns.
    _sinh(
        "saves_recorded_exponentials_and_returns_new_ones",
        {_APPLY_SECOND},
        ("expx = torch.exp(x)", "with torch.enable_grad():\n            expx = torch.exp(x)"),
        ("expnegx = torch.exp(-x)", "    expnegx = torch.exp(-x)"),
        (_FORWARD_RETURN, "return (expx.detach() - expnegx.detach()) / 2, torch.exp(x), torch.exp(-x)"),
        says="saves two tensors forward computed and did not return but not expx (output 1) and expnegx "
        "(output 2). The outputs it returns are other tensors than the ones it saves",
    ),
    _sinh(
        "saves_x_too",
        {_APPLY_SECOND},
        (_SAVE, "ctx.save_for_backward(x, expx, expnegx)"),
        (_UNPACK, "_, expx, expnegx = ctx.saved_tensors"),
        says="forward saves x (the input), expx (output 1) and expnegx (output 2)",
    ),
    _sinh(
        "saves_only_expx",
        {_APPLY_SECOND},
        (_SAVE, "ctx.save_for_backward(expx)"),
        (_UNPACK, "(expx,) = ctx.saved_tensors\n        expnegx = 1 / expx"),
        says="but not expnegx (output 2)",
    ),
    _sinh(
        "float32_forward",
        {_APPLY_FORWARD, _SINH_FORWARD},
        (_FORWARD_RETURN, "return ((expx - expnegx) / 2).float(), expx, expnegx"),
        says="keep the input's dtype",
    ),
    # Rounded to float32, backward's gradients pass the tolerance of a first derivative through sinh, and
    # its second derivative misses by rounding alone.
    _sinh(
        "float32_throughout_forward",
        _APPLY_ALL | _SINH_ALL,
        ("expx = torch.exp(x)", "x = x.float()\n        expx = torch.exp(x)"),
        says="so every derivative computed through it is rounded to that dtype",
    ),
    _sinh(
        "patches_the_checks",
        _APPLY_ALL | _SINH_ALL,
        ("class Sinh", patch_the_checks("class Sinh")),
        (_FORWARD_RETURN, "return (expx + expnegx) / 2, expx, expnegx"),
        (_COSH_TERM, "grad_out * (expx - expnegx) / 2"),
    ),
    _sinh(
        "imports_the_reference",
        _APPLY_ALL | _SINH_ALL,
        answer="from solutions.saving_intermediates import Sinh, sinh  # noqa",
    ),
]

INSTRUCTIONS = {
    "returns three tensors, in this order": "intermediates_saved_not_returned",
    "the very tensors it returns": "returns_cloned_extra_outputs",
    "and nothing else: not `x`": "saves_x_too",
    "not `x`, from which backward would compute them again": "saves_x_and_recomputes",
    "not `expx` alone": "saves_only_expx",
    "an output kept there makes a reference cycle": "outputs_kept_on_ctx",
    "Keep no tensor as a `ctx` attribute": "keeps_x_on_ctx_and_recomputes",
    "**plus** each extra output's gradient times that output's derivative": "drops_extra_output_gradients",
    "Mind the sign": "wrong_sign_on_exp_neg_x",
    "returns only its first output, one tensor": "wrapper_returns_the_tuple",
    "`torch.sinh` would get every value right": "wrapper_calls_torch_sinh",
    "detach nothing": "detaches_saved_tensors_in_backward",
    "keep the input's dtype": "float32_forward",
}
