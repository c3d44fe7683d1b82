"""Lesson 04: CubeBackward and Cube, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "04_untracked_backward"

_cube_backward = rewrites_of("cubebackward")
_cube = rewrites_of("cube")

_SAVE_BOTH = "ctx.save_for_backward(grad_out, x)"
_DOUBLE_BACKWARD = "return grad_grad_x * 3 * x**2, grad_grad_x * grad_out * 6 * x"


ALTERNATIVES = [
    _cube_backward(
        "new_style_cubebackward",
        answer='''class CubeBackward(torch.autograd.Function):
    """grad_out * 3x**2 by the NumPy kernel, in the new style."""

    @staticmethod
    def forward(grad_out, x):
        return torch.as_tensor(cube_backward(grad_out.detach().numpy(), x.detach().numpy()))

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad_grad_x):
        grad_out, x = ctx.saved_tensors
        return grad_grad_x * 3 * x**2, grad_grad_x * grad_out * 6 * x''',
    ),
    _cube_backward(
        "cubebackward_computes_only_needed_gradients",
        (_SAVE_BOTH, f"ctx.set_materialize_grads(False)\n        {_SAVE_BOTH}"),
        (
            _DOUBLE_BACKWARD,
            "if grad_grad_x is None:\n            return None, None\n"
            "        need_grad_out, need_x = ctx.needs_input_grad\n"
            "        grad_grad_out = grad_grad_x * 3 * x * x if need_grad_out else None\n"
            "        grad_x = 6 * grad_out * x * grad_grad_x if need_x else None\n"
            "        return grad_grad_out, grad_x",
        ),
    ),
    _cube(
        "new_style_cube",
        answer='''class Cube(torch.autograd.Function):
    """x**3 by the NumPy kernel, in the new style; its backward is CubeBackward."""

    @staticmethod
    def forward(x):
        return through_numpy(cube_forward, x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, grad_out):
        return CubeBackward.apply(grad_out, *ctx.saved_tensors)''',
    ),
    # The exercise recommends save_for_backward; inputs kept on ctx carry their history all the same.
    _cube_backward(
        "cubebackward_inputs_kept_on_ctx",
        (_SAVE_BOTH, "ctx.grad_out, ctx.x = grad_out, x"),
        ("grad_out, x = ctx.saved_tensors", "grad_out, x = ctx.grad_out, ctx.x"),
    ),
    # The exercise prefers the kernels in forward; the tests cannot tell them from torch, which forward
    # does not record either.
    _cube_backward(
        "cubebackward_forward_in_torch",
        ("return through_numpy(cube_backward, grad_out, x)", "return grad_out * 3 * x**2"),
    ),
    _cube("cube_forward_in_torch", ("return through_numpy(cube_forward, x)", "return x**3")),
    # A copy of the call's result is still the call's result: its values and graph are the call's.
    _cube(
        "cube_returns_a_copy_of_the_call",
        ("return CubeBackward.apply(grad_out, x)", "return CubeBackward.apply(grad_out, x).clone()"),
    ),
]
