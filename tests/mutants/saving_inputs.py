"""Lesson 01: mistakes in Square."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "01_saving_inputs"

_SQUARE_FORWARD = "square_forward"
_SQUARE_FIRST = "square_first_derivative"
_SQUARE_SECOND = "square_second_derivative"
_SQUARE_ALL = frozenset({_SQUARE_FORWARD, _SQUARE_FIRST, _SQUARE_SECOND})
_SQUARE_BACKWARD = "return grad_out * 2 * x"
_SQUARE_FORWARD_RETURN = "return x**2"


_square = mistakes_in("square")


MUTANTS = [
    _square(
        "detach_in_backward",
        {_SQUARE_SECOND},
        (_SQUARE_BACKWARD, f"{_SQUARE_BACKWARD}.detach()"),
        says="backward uses `.detach()`",
    ),
    _square(
        "data_in_backward",
        {_SQUARE_SECOND},
        (_SQUARE_BACKWARD, "return grad_out * 2 * x.data"),
        says="backward uses `.data`",
    ),
    _square(
        "numpy_in_backward",
        {_SQUARE_SECOND},
        (_SQUARE_BACKWARD, "return grad_out * 2 * torch.from_numpy(x.detach().numpy())"),
        says="backward computes with NumPy: it takes the values out of torch (`.detach()` and `.numpy()`)",
    ),
    _square(
        "no_grad_in_backward",
        {_SQUARE_SECOND},
        (_SQUARE_BACKWARD, "with torch.no_grad():\n            return grad_out * 2 * x"),
        says="backward uses `torch.no_grad()`",
    ),
    _square(
        "grad_switched_off_in_backward",
        {_SQUARE_FIRST, _SQUARE_SECOND},
        (_SQUARE_BACKWARD, f"x.requires_grad_(False)\n        {_SQUARE_BACKWARD}"),
        says="backward calls `.requires_grad_()` on a saved tensor",
    ),
    _square(
        "item_in_backward",
        {_SQUARE_FIRST, _SQUARE_SECOND},
        (_SQUARE_BACKWARD, f"{_SQUARE_BACKWARD}.item()"),
        says="backward uses `.item()`",
    ),
    _square(
        # ctx.saved_tensors gives back the caller's x: changing it in place is named as that, not as
        # the general list of in-place changes autograd refuses.
        "saved_input_changed_in_backward",
        {_SQUARE_FIRST, _SQUARE_SECOND},
        (_SQUARE_BACKWARD, "return grad_out * x.mul_(2)"),
        says="backward applies `.mul_()` to a saved input",
    ),
    _square(
        # forward is never recorded: what .item() costs there is the shape and the dtype, not the graph.
        "item_in_forward",
        _SQUARE_ALL,
        (_SQUARE_FORWARD_RETURN, "return torch.tensor(x.item() ** 2)"),
        says="torch.tensor(...) of a Python number is float32",
    ),
    _square(
        # NumPy's square of a 0-dim array is a NumPy scalar, which torch.from_numpy refuses; NumPy in
        # forward is no cut, and the message must not say it is.
        "forward_in_numpy",
        _SQUARE_ALL,
        (_SQUARE_FORWARD_RETURN, "return torch.from_numpy(x.numpy() ** 2)"),
        says="NumPy in forward does not stop double backward",
    ),
    _square(
        "intermediate_kept_on_ctx",
        {_SQUARE_SECOND},
        ("ctx.save_for_backward(x)", "ctx.two_x = 2 * x"),
        ("(x,) = ctx.saved_tensors\n", ""),
        (_SQUARE_BACKWARD, "return grad_out * ctx.two_x"),
        says="forward kept ctx.two_x as a plain attribute",
    ),
    _square(
        # Forward changes the caller's x in place and returns it: the derivative checks name the call.
        "input_squared_in_place",
        _SQUARE_ALL,
        (_SQUARE_FORWARD_RETURN, "return x.pow_(2)"),
        says="forward calls `.pow_()`, which changes its input in place",
    ),
    _square(
        "input_multiplied_in_place",
        _SQUARE_ALL,
        (_SQUARE_FORWARD_RETURN, "return x.mul_(x)"),
        says="Square's forward changed its input x in place",
    ),
    _square(
        "grad_out_detached",
        {_SQUARE_SECOND},
        (_SQUARE_BACKWARD, "return grad_out.detach() * 2 * x"),
        says="Second derivative with respect to grad_out is wrong",
    ),
    _square(
        "computed_tensor_saved",
        {_SQUARE_SECOND},
        ("ctx.save_for_backward(x)", "ctx.save_for_backward(2 * x)"),
        ("(x,) = ctx.saved_tensors\n", "(two_x,) = ctx.saved_tensors\n"),
        (_SQUARE_BACKWARD, "return grad_out * two_x"),
        says="forward saved a tensor with no history",
    ),
    _square(
        "cube_with_consistent_derivatives",
        _SQUARE_ALL,
        (_SQUARE_FORWARD_RETURN, "return x**3"),
        (_SQUARE_BACKWARD, "return grad_out * 3 * x**2"),
        says="Forward value is wrong",
    ),
    _square(
        "ignores_grad_out",
        {_SQUARE_FIRST, _SQUARE_SECOND},
        (_SQUARE_BACKWARD, "return 2 * x"),
        says="without multiplying by grad_out",
    ),
    _square(
        # Right in formula, but gradcheck's finite differences of a float32 forward miss it.
        "float32_forward",
        _SQUARE_ALL,
        (_SQUARE_FORWARD_RETURN, "return (x**2).float()"),
        says="keep the input's dtype",
    ),
    _square(
        # The engine casts the first derivative back to float64; the second is taken through float32.
        "float32_backward",
        {_SQUARE_SECOND},
        (_SQUARE_BACKWARD, f"return ({_SQUARE_BACKWARD.removeprefix('return ')}).float()"),
        says="backward returns a dtype of lower precision than its input",
    ),
    _square(
        "patches_the_checks",
        _SQUARE_ALL,
        ("class Square", patch_the_checks("class Square")),
        (_SQUARE_FORWARD_RETURN, "return x**3"),
        (_SQUARE_BACKWARD, "return grad_out * 3 * x**2"),
    ),
    _square(
        "patches_torch_while_checked",
        # Its backward is Square's, so its second derivative is right: the patch buys nothing anywhere.
        {_SQUARE_FORWARD, _SQUARE_FIRST},
        (_SQUARE_FORWARD_RETURN, "torch.isclose = lambda a, b, **kwargs: a == a\n        return x**3"),
    ),
    _square(
        "imports_the_reference", _SQUARE_ALL, answer="from solutions.saving_inputs import Square  # noqa"
    ),
]

INSTRUCTIONS = {
    # A Square keeping ctx.x = x is right to every order: the exercise can only prefer save_for_backward.
    "prefer `ctx.save_for_backward`, as section 2 explains": "square_input_kept_on_ctx",
    "return `x**2`": "cube_with_consistent_derivatives",
    "By the chain rule that is `grad_out` times the derivative of `x**2`": "ignores_grad_out",
    # The exercise forbids in backward "the cuts listed in section 6", the list that follows there.
    "`.detach()` is one way to cut a gradient off": "detach_in_backward",
    "`.data` or `.item()`": "data_in_backward",
    "`.item()` inside backward": "item_in_backward",
    "`.detach().numpy()` runs but cuts": "numpy_in_backward",
    "computing backward under `torch.no_grad()`": "no_grad_in_backward",
    "using an intermediate that forward computed": "intermediate_kept_on_ctx",
    "whether kept as a `ctx` attribute or saved with `save_for_backward`": "computed_tensor_saved",
    "leave `grad_out` attached too": "grad_out_detached",
    "Keep the input's dtype": "float32_forward",
}
