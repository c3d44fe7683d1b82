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
    # Both calls save two tensors, so torch.func batches each rule's saved tensors rightly; neither reads x.
    _tanh(
        "tanh_saves_the_input_for_both",
        (_SAVE, "ctx.save_for_backward(inputs[0], output)\n        ctx.save_for_forward(inputs[0], output)"),
        (
            "(result,) = ctx.saved_tensors\n        return grad_out",
            "(_, result) = ctx.saved_tensors\n        return grad_out",
        ),
        (
            "(result,) = ctx.saved_tensors\n        return x_t",
            "(_, result) = ctx.saved_tensors\n        return x_t",
        ),
    ),
    # Counts that differ, save_for_backward last: its count serves backward, and no check runs jvp under
    # vmap but jacfwd(jacfwd(...)), which PyTorch does not support through a Function anyway.
    _tanh(
        "tanh_saves_the_input_for_backward_last",
        (_SAVE, "ctx.save_for_forward(output)\n        ctx.save_for_backward(inputs[0], output)"),
        (
            "(result,) = ctx.saved_tensors\n        return grad_out",
            "(_, result) = ctx.saved_tensors\n        return grad_out",
        ),
    ),
    _tanh(
        "tanh_from_the_saved_input",
        (_SAVE, "ctx.save_for_backward(inputs[0])\n        ctx.save_for_forward(inputs[0])"),
        (
            "(result,) = ctx.saved_tensors\n        return grad_out * (1 - result**2)",
            "(x,) = ctx.saved_tensors\n        return grad_out / torch.cosh(x) ** 2",
        ),
        (
            "(result,) = ctx.saved_tensors\n        return x_t * (1 - result**2)",
            "(x,) = ctx.saved_tensors\n        return x_t / torch.cosh(x) ** 2",
        ),
    ),
    # torch's own formula for tanh's derivative: torch.ops travels to the checker by name.
    _tanh(
        "tanh_tangent_by_torch_ops",
        ("return x_t * (1 - result**2)", "return torch.ops.aten.tanh_backward(x_t, result)"),
    ),
    # In place on a tensor made from x_t: it has x_t's batch dimension, and the saved output is left alone.
    _tanh(
        "tanh_tangent_scaled_in_place",
        (
            "return x_t * (1 - result**2)",
            "tangent = x_t * result\n        tangent.mul_(result)\n        return x_t - tangent",
        ),
    ),
    _tanh(
        "tanh_slope_as_a_product",
        ("return grad_out * (1 - result**2)", "return grad_out * (1 - result) * (1 + result)"),
        ("return x_t * (1 - result**2)", "return (1 - result) * (1 + result) * x_t"),
    ),
    _tanh(
        "tanh_by_exponentials",
        (
            "return torch.tanh(x)",
            "e = torch.exp(-2 * x.abs())\n        return torch.sign(x) * (1 - e) / (1 + e)",
        ),
    ),
    _tanh(
        "tanh_rules_by_addcmul",
        (
            "return grad_out * (1 - result**2)",
            "return torch.addcmul(grad_out, grad_out * result, result, value=-1)",
        ),
        ("return x_t * (1 - result**2)", "return torch.addcmul(x_t, x_t * result, result, value=-1)"),
    ),
]
