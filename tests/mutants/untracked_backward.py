"""Lesson 04: mistakes in CubeBackward (the double backward) and in Cube (which must call it)."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "04_untracked_backward"

_BACKWARD_FORWARD = "cubebackward_forward"
_BACKWARD_FIRST = "cubebackward_first_derivative"
_BACKWARD_SECOND = "cubebackward_second_derivative"
_CUBE_FORWARD = "cube_forward"
_CUBE_FIRST = "cube_first_derivative"
_CUBE_SECOND = "cube_second_derivative"
_CUBE_ALL = frozenset({_CUBE_FORWARD, _CUBE_FIRST, _CUBE_SECOND})
# A wrong double backward: CubeBackward's own derivative, and so Cube's second and third derivatives.
_DOUBLE_BACKWARD = frozenset({_BACKWARD_FIRST, _BACKWARD_SECOND, _CUBE_SECOND})

_SAVE_BOTH = "ctx.save_for_backward(grad_out, x)"
_LOAD_BOTH = "grad_out, x = ctx.saved_tensors"
_GRAD_GRAD_OUT = "grad_grad_x * 3 * x**2"
_GRAD_X = "grad_grad_x * grad_out * 6 * x"
_BACKWARD_RETURN = f"return {_GRAD_GRAD_OUT}, {_GRAD_X}"
_KERNEL_CALL = "return through_numpy(cube_backward, grad_out, x)"
_CUBE_RETURN = "return CubeBackward.apply(grad_out, x)"
_BACKWARD_SIGNATURE = "    @staticmethod\n    def backward(ctx, grad_grad_x):"
_CUBE_SIGNATURE = "    @staticmethod\n    def backward(ctx, grad_out):"
_SAVE_X = "ctx.save_for_backward(x)\n        return through_numpy(cube_forward, x)"
_SAVE_Y = "y = through_numpy(cube_forward, x)\n        ctx.save_for_backward(y)\n        return y"
_LOAD_X = "(x,) = ctx.saved_tensors"


_cube_backward = mistakes_in("cubebackward")


_cube = mistakes_in("cube")


MUTANTS = [
    _cube(
        "numpy_kernel_in_cube_backward",
        {_CUBE_SECOND},
        (_CUBE_RETURN, _KERNEL_CALL),
        says=("backward calls a NumPy kernel", "wrap it in a second torch.autograd.Function"),
    ),
    _cube(
        "apply_arguments_swapped",
        {_CUBE_FIRST, _CUBE_SECOND},
        (_CUBE_RETURN, "return CubeBackward.apply(x, grad_out)"),
        says="x and grad_out are exchanged",
    ),
    _cube(
        "cube_backward_in_torch",
        {_CUBE_SECOND},
        (_CUBE_RETURN, "return grad_out * 3 * x**2"),
        says="backward must hand the gradient to CubeBackward.apply(grad_out, x)",
    ),
    # The node is in the graph, but the gradient is computed around it in torch.
    _cube(
        "adds_a_torch_formula_to_the_call",
        {_CUBE_SECOND},
        (_CUBE_RETURN, "return grad_out * 3 * x**2 + 0 * CubeBackward.apply(grad_out, x)"),
        says="Cube's gradient is not the output of CubeBackward.apply",
    ),
    _cube(
        "multiplies_grad_out_after_a_call_on_ones",
        {_CUBE_SECOND},
        (_CUBE_RETURN, "return grad_out * CubeBackward.apply(torch.ones_like(grad_out), x)"),
        says="grad_out multiplied after a call on ones",
    ),
    # A cut graph in Cube.backward: the fix is the call itself, not a torch formula.
    _cube(
        "detaches_x_before_the_call",
        {_CUBE_SECOND},
        (_CUBE_RETURN, "return CubeBackward.apply(grad_out, x.detach())"),
        says="Pass grad_out and the saved tensors themselves to CubeBackward.apply",
    ),
    _cube(
        "once_differentiable_cube",
        {_CUBE_SECOND},
        (
            _CUBE_SIGNATURE,
            _CUBE_SIGNATURE.replace("def", "@torch.autograd.function.once_differentiable\n    def"),
        ),
        says="autograd then records the call to CubeBackward.apply",
    ),
    # Lesson 02 saves outputs: the right formula, evaluated at the output.
    _cube(
        "passes_the_output_to_cube_backward",
        {_CUBE_FIRST, _CUBE_SECOND},
        (_SAVE_X, _SAVE_Y),
        (_LOAD_X, "(y,) = ctx.saved_tensors"),
        (_CUBE_RETURN, "return CubeBackward.apply(grad_out, y)"),
        says="the derivative is evaluated at x**3",
    ),
    _cube(
        "cube_root_of_the_output",
        {_CUBE_FIRST, _CUBE_SECOND},
        (_SAVE_X, _SAVE_Y),
        (_LOAD_X, "(y,) = ctx.saved_tensors"),
        (_CUBE_RETURN, "return CubeBackward.apply(grad_out, y ** (1 / 3))"),
        says="backward computes nan where the right value is finite",
    ),
    _cube(
        "saved_tensors_not_unpacked",
        {_CUBE_FIRST, _CUBE_SECOND},
        (_LOAD_X, "x = ctx.saved_tensors"),
        says="unpack it, `(x,) = ctx.saved_tensors`",
    ),
    _cube(
        "keeps_a_detached_input_on_ctx",
        {_CUBE_SECOND},
        ("ctx.save_for_backward(x)", "ctx.x = x.detach()"),
        (_LOAD_X, "x = ctx.x"),
        says="ctx.x holds a detached copy of an input",
    ),
    _cube_backward(
        "changes_grad_grad_x_in_place",
        {_BACKWARD_FIRST, _BACKWARD_SECOND},
        (_BACKWARD_RETURN, f"return grad_grad_x.mul_(3 * x**2), {_GRAD_X}"),
        says="changes grad_grad_x in place",
    ),
    _cube_backward(
        "drops_the_grad_out_gradient",
        _DOUBLE_BACKWARD,
        (_BACKWARD_RETURN, f"return None, {_GRAD_X}"),
        says="returned None for grad_out",
    ),
    _cube_backward(
        "returns_only_the_x_gradient",
        _DOUBLE_BACKWARD,
        (_BACKWARD_RETURN, f"return {_GRAD_X}"),
        says="returned an incorrect number of gradients",
    ),
    _cube_backward(
        "gradients_in_wrong_order",
        _DOUBLE_BACKWARD,
        (_BACKWARD_RETURN, f"return {_GRAD_X}, {_GRAD_GRAD_OUT}"),
        says="backward returns the gradient for x in the place of grad_out",
    ),
    _cube_backward(
        "forgets_to_save_grad_out",
        _DOUBLE_BACKWARD,
        (_SAVE_BOTH, "ctx.save_for_backward(x)"),
        (_LOAD_BOTH, "(x,) = ctx.saved_tensors"),
        (_GRAD_X, "grad_grad_x * 6 * x"),
        # Cube's cell, whose backward is right, sends the student to CubeBackward's checks.
        says=("missing the factor grad_out", "CubeBackward.backward, which leaves grad_out out"),
    ),
    # Section 4's slip, zero in place of None: told in the same words.
    _cube_backward(
        "returns_zeros_for_grad_out",
        _DOUBLE_BACKWARD,
        (_BACKWARD_RETURN, f"return torch.zeros_like(grad_out), {_GRAD_X}"),
        says="backward returned zero for grad_out",
    ),
    # grad_out never saved, and the one gradient backward has written in its place.
    _cube_backward(
        "incoming_gradient_for_unsaved_grad_out",
        _DOUBLE_BACKWARD,
        (_SAVE_BOTH, "ctx.save_for_backward(x)"),
        (_LOAD_BOTH, "(x,) = ctx.saved_tensors"),
        (_GRAD_X, "grad_grad_x * grad_grad_x * 6 * x"),
        says=(
            "uses grad_grad_x, the gradient fed to backward, where grad_out belongs",
            "Save grad_out in forward",
        ),
    ),
    # Mistakes in CubeBackward's forward: Cube's cells name CubeBackward, not Cube.backward.
    _cube_backward(
        "forward_returns_the_kernels_numpy_value",
        {_BACKWARD_FORWARD, _BACKWARD_FIRST, _BACKWARD_SECOND, _CUBE_FIRST, _CUBE_SECOND},
        (_KERNEL_CALL, "return cube_backward(grad_out.detach().numpy(), x.detach().numpy())"),
        says="forward must return a tensor: wrap the kernel with through_numpy",
    ),
    _cube_backward(
        "kernel_arguments_swapped_in_forward",
        {_BACKWARD_FORWARD, _BACKWARD_FIRST, _BACKWARD_SECOND, _CUBE_FIRST, _CUBE_SECOND},
        (_KERNEL_CALL, "return through_numpy(cube_backward, x, grad_out)"),
        says="Forward value is wrong: CubeBackward (called by Cube.backward)",
    ),
    _cube_backward("wrong_factor_3_for_6", _DOUBLE_BACKWARD, (_GRAD_X, "grad_grad_x * grad_out * 3 * x")),
    _cube_backward(
        "ignores_grad_grad_x",
        _DOUBLE_BACKWARD,
        (_BACKWARD_RETURN, "return 3 * x**2, grad_out * 6 * x"),
        says="The chain rule needs, for each input, grad_grad_x * (d output / d input)",
    ),
    # Right values, but a double backward autograd cannot record: Cube's third derivative is lost.
    _cube_backward(
        "kernel_in_double_backward",
        {_BACKWARD_SECOND},
        (_BACKWARD_RETURN, f"return through_numpy(cube_backward, grad_grad_x, x), {_GRAD_X}"),
        says="backward computes with NumPy",
    ),
    _cube_backward(
        "detaches_in_double_backward",
        {_BACKWARD_SECOND},
        (_LOAD_BOTH, "grad_out, x = (saved.detach() for saved in ctx.saved_tensors)"),
        says="backward uses `.detach()`",
    ),
    _cube_backward(
        "once_differentiable_double_backward",
        {_BACKWARD_SECOND},
        (
            "class CubeBackward",
            "from torch.autograd.function import once_differentiable\n\n\nclass CubeBackward",
        ),
        (_BACKWARD_SIGNATURE, _BACKWARD_SIGNATURE.replace("def", "@once_differentiable\n    def")),
        says="backward is marked @once_differentiable",
    ),
    _cube_backward(
        "patches_the_checks",
        {_BACKWARD_FORWARD, _BACKWARD_FIRST, _BACKWARD_SECOND, _CUBE_FIRST, _CUBE_SECOND},
        ("class CubeBackward", patch_the_checks("class CubeBackward")),
        (_KERNEL_CALL, "return grad_out * 2 * x"),
        (_BACKWARD_RETURN, "return grad_grad_x * 2 * x, grad_grad_x * 2 * grad_out"),
    ),
    _cube("imports_the_reference", _CUBE_ALL, answer="from solutions.untracked_backward import Cube  # noqa"),
    # Cube's own forward keeps its mark; its derivatives, which call the reference, do not.
    _cube_backward(
        "imports_the_reference_cube_backward",
        {_BACKWARD_FORWARD, _BACKWARD_FIRST, _BACKWARD_SECOND, _CUBE_FIRST, _CUBE_SECOND},
        answer="from solutions.untracked_backward import CubeBackward  # noqa",
    ),
]

INSTRUCTIONS = {
    # Inputs kept on ctx carry their history, and forward is not recorded whatever computes it: the
    # exercise can only prefer save_for_backward and the kernels.
    "prefer `ctx.save_for_backward`, as lesson 01 explains": "cubebackward_inputs_kept_on_ctx",
    "prefer the kernels in forward": "cubebackward_forward_in_torch",
    "each multiplied by `grad_grad_x`": "ignores_grad_grad_x",
    "return two gradients": "returns_only_the_x_gradient",
    "for `grad_out` first and for `x` second": "gradients_in_wrong_order",
    "The gradient for `grad_out` is not `None`": "drops_the_grad_out_gradient",
    "the one for `x` needs the saved `grad_out`": "forgets_to_save_grad_out",
    "computed with torch operations": "kernel_in_double_backward",
    "no kernel, no NumPy": "kernel_in_double_backward",
    "no `.detach()`": "detaches_in_double_backward",
    "no `@once_differentiable`": "once_differentiable_double_backward",
    "in the order `CubeBackward.forward` takes them": "apply_arguments_swapped",
    "Calling `cube_backward` here directly is the mistake of section 2": "numpy_kernel_in_cube_backward",
    "Do not write `grad_out * 3 * x**2` in torch either": "cube_backward_in_torch",
    "checks that your gradient is the output of `CubeBackwardBackward`": "adds_a_torch_formula_to_the_call",
    "return the call's result as it is, with nothing added or multiplied in torch": (
        "multiplies_grad_out_after_a_call_on_ones"
    ),
}
