"""Lesson 07: Tanh, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "07_forward_mode"

_SAVE = "ctx.save_for_backward(output)\n        ctx.save_for_forward(output)"

_tanh = rewrites_of("tanh")


ALTERNATIVES = [
    _tanh(
        "tanh_with_its_own_vmap_rule",
        ("    generate_vmap_rule = True\n\n", ""),
        (
            "        return x_t * (1 - result**2)",
            '''        return x_t * (1 - result**2)

    @staticmethod
    def vmap(info, in_dims, x):
        """tanh works element by element, so the batch keeps its dimension."""
        return Tanh.apply(x), in_dims[0]''',
        ),
    ),
    _tanh(
        "tanh_through_a_helper",
        answer='''def tanh_slope(result):
    """d tanh / dx, written with the output tanh(x)."""
    return 1 - result * result


class Tanh(torch.autograd.Function):
    """tanh(x); both rules read the saved output through tanh_slope."""

    generate_vmap_rule = True

    @staticmethod
    def forward(x):
        return x.tanh()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(output)
        ctx.save_for_forward(output)

    @staticmethod
    def backward(ctx, grad_out):
        if grad_out is None:
            return None
        (result,) = ctx.saved_tensors
        return grad_out * tanh_slope(result)

    @staticmethod
    def jvp(ctx, x_t):
        (result,) = ctx.saved_tensors
        return tanh_slope(result) * x_t''',
    ),
]
