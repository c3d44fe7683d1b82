"""Lesson 07: mistakes in Tanh, the Function with both rules, and in TanhInPlace, which works in place."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "07_forward_mode"

_FORWARD = "tanh_forward"
_FIRST = "tanh_first_derivative"
_SECOND = "tanh_second_derivative"
_FORWARD_MODE = "tanh_forward_mode"
_FORWARD_OVER_REVERSE = "tanh_forward_over_reverse"
_REVERSE_OVER_FORWARD = "tanh_reverse_over_forward"
_ALL = frozenset({_FORWARD, _FIRST, _SECOND, _FORWARD_MODE, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD})
# Every way forward mode meets the Function: its tangent, forward over reverse, reverse over forward.
_EVERY_FORWARD_MODE = {_FORWARD_MODE, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD}
_IN_PLACE_DERIVATIVES = "tanhinplace_derivatives"
_IN_PLACE_CALLER = "tanhinplace_updates_the_caller"

_SAVE = "ctx.save_for_backward(output)\n        ctx.save_for_forward(output)"
_SAVE_FOR_FORWARD = "        ctx.save_for_forward(output)\n"
_LOAD = "(result,) = ctx.saved_tensors"
_BACKWARD = "return grad_out * (1 - result**2)"
_JVP = "return x_t * (1 - result**2)"
_JVP_METHOD = (
    "\n\n    @staticmethod\n    def jvp(ctx, x_t):\n        (result,) = ctx.saved_tensors\n"
    "        return x_t * (1 - result**2)"
)
_MARK_DIRTY = "        ctx.mark_dirty(x)\n"

_tanh = mistakes_in("tanh")
_tanh_in_place = mistakes_in("tanhinplace")


MUTANTS = [
    # The tangent is right, so forward mode and forward over reverse pass; only reverse over forward,
    # which differentiates the tangent, finds it constant.
    _tanh(
        "jvp_under_no_grad",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "with torch.no_grad():\n            return x_t * (1 - result**2)"),
    ),
    _tanh(
        "jvp_detaches_the_saved_output",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "return x_t * (1 - result.detach() ** 2)"),
    ),
    _tanh(
        "jvp_wrong_at_second_order",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "return x_t * (1 - result * result.detach())"),
    ),
    _tanh("jvp_ignores_the_tangent", _EVERY_FORWARD_MODE, (_JVP, "return 1 - result**2")),
    _tanh("forgets_save_for_forward", _EVERY_FORWARD_MODE, (_SAVE_FOR_FORWARD, "")),
    _tanh("no_jvp", _EVERY_FORWARD_MODE, (_JVP_METHOD, "")),
    # jacfwd, torch.func.hessian and jacrev over jacfwd all run jvp under vmap.
    _tanh("no_vmap_rule", _EVERY_FORWARD_MODE, ("    generate_vmap_rule = True\n\n", "")),
    _tanh(
        "backward_wrong_at_second_order",
        {_SECOND, _FORWARD_OVER_REVERSE},
        (_BACKWARD, "return grad_out * (1 - result * result.detach())"),
    ),
    _tanh(
        "saves_a_detached_output",
        {_SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE, "ctx.save_for_backward(output.detach())\n        ctx.save_for_forward(output.detach())"),
    ),
    _tanh(
        "recomputes_from_the_input_under_no_grad",
        {_SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE, "ctx.save_for_backward(inputs[0])\n        ctx.save_for_forward(inputs[0])"),
        (
            _LOAD,
            "(x,) = ctx.saved_tensors\n        with torch.no_grad():\n            result = torch.tanh(x)",
        ),
    ),
    _tanh(
        "saves_the_input_with_the_output_formula",
        _ALL - {_FORWARD},
        (_SAVE, "ctx.save_for_backward(inputs[0])\n        ctx.save_for_forward(inputs[0])"),
    ),
    _tanh(
        "patches_the_checks",
        _ALL,
        ("class Tanh", patch_the_checks("class Tanh")),
        ("return torch.tanh(x)", "return torch.sin(x)"),
    ),
    _tanh("imports_the_reference", _ALL, answer="from solutions.forward_mode import Tanh  # noqa"),
    # The new style refuses to save an unmarked input that is returned as the output.
    _tanh_in_place("forgets_mark_dirty", {_IN_PLACE_DERIVATIVES, _IN_PLACE_CALLER}, (_MARK_DIRTY, "")),
    # The error's own suggestion: the output is right in every order, the caller's tensor silently wrong.
    _tanh_in_place(
        "returns_a_view_instead_of_marking_dirty",
        {_IN_PLACE_CALLER},
        (_MARK_DIRTY, ""),
        ("return x.tanh_()", "return x.tanh_().view_as(x)"),
    ),
]
