"""Lesson 06: mistakes in ScaledSquare, the new-style Function that skips the gradients nobody needs."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "06_beyond_the_basics"

_FORWARD = "scaledsquare_forward"
_FIRST = "scaledsquare_first_derivative"
_SECOND = "scaledsquare_second_derivative"
_TORCH_FUNC = "scaledsquare_torch_func"
_NEEDS_INPUT_GRAD = "scaledsquare_needs_input_grad"
_ALL = frozenset({_FORWARD, _FIRST, _SECOND, _TORCH_FUNC, _NEEDS_INPUT_GRAD})

_NEW_STYLE_FORWARD = "def forward(x, w):\n        return w * x**2"
_SETUP_CONTEXT = (
    "    @staticmethod\n    def setup_context(ctx, inputs, output):\n"
    "        x, w = inputs\n        ctx.save_for_backward(x, w)\n\n"
)
_OLD_STYLE_FORWARD = "def forward(ctx, x, w):\n        ctx.save_for_backward(x, w)\n        return w * x**2"
_BACKWARD = "    @staticmethod\n    def backward(ctx, grad_out):"
_SAVED = "x, w = ctx.saved_tensors"
_GRAD_X = "grad_x = grad_out * 2 * w * x if ctx.needs_input_grad[0] else None"
_GRAD_W = "grad_w = grad_out * x**2 if ctx.needs_input_grad[1] else None"


_scaled_square = mistakes_in("scaledsquare")


MUTANTS = [
    # Fine for torch.autograd, refused by torch.func: its transforms need forward apart from setup_context.
    _scaled_square(
        "old_style_forward_with_ctx",
        {_TORCH_FUNC},
        (_NEW_STYLE_FORWARD, _OLD_STYLE_FORWARD),
        (_SETUP_CONTEXT, ""),
    ),
    _scaled_square("missing_setup_context", _ALL, (_SETUP_CONTEXT, "")),
    _scaled_square("no_vmap_rule", {_TORCH_FUNC}, ("    generate_vmap_rule = True\n\n", "")),
    _scaled_square(
        "ignores_needs_input_grad",
        {_NEEDS_INPUT_GRAD},
        (_GRAD_X, "grad_x = grad_out * 2 * w * x"),
        (_GRAD_W, "grad_w = grad_out * x**2"),
    ),
    _scaled_square(
        "zeros_instead_of_none",
        {_NEEDS_INPUT_GRAD},
        (_GRAD_X, _GRAD_X.replace("else None", "else torch.zeros_like(x)")),
        (_GRAD_W, _GRAD_W.replace("else None", "else torch.zeros_like(w)")),
    ),
    # once_differentiable comes from the notebook's first cell, as a student's answer would find it.
    _scaled_square(
        "once_differentiable_backward",
        {_SECOND, _TORCH_FUNC},
        (_BACKWARD, "    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_out):"),
    ),
    _scaled_square(
        "detach_in_backward",
        {_SECOND, _TORCH_FUNC},
        (_SAVED, "x, w = (saved.detach() for saved in ctx.saved_tensors)"),
    ),
    # Right one gradient at a time; under vmap (torch.func.jacrev, gradcheck's check_batched_grad) the
    # tensor it creates has no batch dimension, so adding a batch of gradients into it in place fails.
    _scaled_square(
        "adds_in_place_into_a_tensor_it_created",
        {_FIRST},
        (
            _GRAD_X,
            "grad_x = torch.zeros_like(x) if ctx.needs_input_grad[0] else None\n"
            "        if grad_x is not None:\n"
            "            grad_x += grad_out * 2 * w * x",
        ),
        says="adds in place (grad_x += ...) into a tensor it created",
    ),
    _scaled_square(
        "patches_the_checks",
        _ALL,
        ("class ScaledSquare", patch_the_checks("class ScaledSquare")),
        ("return w * x**2", "return w * x**3"),
        (_GRAD_X, "grad_x = grad_out * 3 * w * x**2"),
        (_GRAD_W, "grad_w = grad_out * x**3"),
    ),
    _scaled_square(
        "imports_the_reference",
        _ALL,
        answer="from solutions.beyond_the_basics import ScaledSquare  # noqa",
    ),
]
