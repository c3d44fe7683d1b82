"""Lesson 01: Square, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "01_saving_inputs"

_FORWARD = "        ctx.save_for_backward(x)\n        return x**2"
_BACKWARD = "return grad_out * 2 * x"

_square = rewrites_of("square")


ALTERNATIVES = [
    _square(
        "new_style_square",
        answer='''class Square(torch.autograd.Function):
    """x**2 in the new style: forward computes, setup_context saves the input."""

    @staticmethod
    def forward(x):
        return x**2

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_out):
        (x,) = ctx.saved_tensors
        return grad_out * 2 * x''',
    ),
    _square(
        "square_without_materialized_grads",
        (_FORWARD, "        ctx.set_materialize_grads(False)\n" + _FORWARD),
        (_BACKWARD, f"if grad_out is None:\n            return None\n        {_BACKWARD}"),
    ),
    _square(
        "square_grad_accumulated_in_place",
        (
            _BACKWARD,
            "grad_x = torch.zeros_like(x)\n        grad_x += 2 * x * grad_out\n        return grad_x",
        ),
    ),
    # Section 2 prefers save_for_backward, but an input kept on ctx is the input itself, history and all.
    _square(
        "square_input_kept_on_ctx",
        ("ctx.save_for_backward(x)", "ctx.x = x"),
        ("(x,) = ctx.saved_tensors\n", ""),
        (_BACKWARD, "return grad_out * 2 * ctx.x"),
    ),
    _square(
        "square_as_a_product",
        ("return x**2", "return torch.mul(x, x)"),
        (_BACKWARD, "return grad_out * (x + x)"),
    ),
]
