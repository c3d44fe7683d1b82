"""Lesson 05: mistakes in hvp, gradient_penalty and loss_with_gradient."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "05_applications"

_HVP_VALUE = "hvp_value"
_HVP_ONCE = "hvp_without_hessian"
_HVP_ALL = frozenset({_HVP_VALUE, _HVP_ONCE})
_PENALTY_VALUE = "gradient_penalty_value"
_PENALTY_REACHES = "gradient_penalty_reaches_critic"
_PENALTY_ALL = frozenset({_PENALTY_VALUE, _PENALTY_REACHES})
_PENALTY_VALUE_ONLY = frozenset({_PENALTY_VALUE})
_LOSS = frozenset({"loss_with_gradient_flows"})

_HVP_LEAF = "    x = x.detach().requires_grad_()\n"
_HVP_FIRST = "(grad_x,) = torch.autograd.grad(f(x), x, create_graph=True)"
_HVP_SECOND = "(product,) = torch.autograd.grad(grad_x, x, grad_outputs=v)"
_PENALTY_LEAF = "points = points.detach().requires_grad_()"
_PENALTY_GRADIENTS = "(gradients,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)"
_PENALTY_RETURN = "return ((gradients.norm(dim=1) - 1) ** 2).mean()"
_LOSS_SLOPE = "(slope,) = torch.autograd.grad(f(x), x, create_graph=True)"


_hvp = mistakes_in("hvp")


_penalty = mistakes_in("gradient_penalty")


_loss = mistakes_in("loss_with_gradient", _LOSS)


MUTANTS = [
    _hvp(
        "hvp_without_create_graph",
        _HVP_ALL,
        (_HVP_FIRST, "(grad_x,) = torch.autograd.grad(f(x), x)"),
        says="no graph: a gradient computed without create_graph=True is a constant to autograd",
    ),
    _hvp(
        "hvp_weighted_by_ones",
        _HVP_ALL,
        (_HVP_SECOND, "(product,) = torch.autograd.grad(grad_x, x, grad_outputs=torch.ones_like(v))"),
        # The cell that counts backward passes shows the numbers too, where the value's cell names why.
        says=("grad_outputs=v", "but its H·v is wrong: expected 8.5, got"),
    ),
    _hvp(
        "hvp_builds_the_hessian_row_by_row",
        frozenset({_HVP_ONCE}),
        (
            _HVP_SECOND,
            "rows = [torch.autograd.grad(g, x, retain_graph=True)[0] for g in grad_x]\n"
            "    product = torch.stack(rows) @ v",
        ),
    ),
    _hvp(
        "hvp_uses_torch_hessian",
        frozenset({_HVP_ONCE}),
        (_HVP_LEAF, "    return torch.autograd.functional.hessian(f, x) @ v\n"),
        says="hvp: your code ran the backward through f's gradient for more than one vector",
    ),
    # vectorize=True and is_grads_batched=True apply the second derivative to every unit vector in one call.
    _hvp(
        "hvp_uses_the_vectorized_hessian",
        frozenset({_HVP_ONCE}),
        (_HVP_LEAF, "    return torch.autograd.functional.hessian(f, x, vectorize=True) @ v\n"),
        says="or in one batch",
    ),
    _hvp(
        "hvp_batches_the_unit_vectors",
        frozenset({_HVP_ONCE}),
        (
            _HVP_SECOND,
            "unit_vectors = torch.eye(len(x), dtype=x.dtype)\n"
            "    (hessian,) = torch.autograd.grad(grad_x, x, unit_vectors, is_grads_batched=True)\n"
            "    product = hessian @ v",
        ),
    ),
    # torch.func builds the Hessian in one call under vmap: the batch counts as one product per row.
    _hvp(
        "hvp_uses_torch_func_hessian",
        frozenset({_HVP_ONCE}),
        (_HVP_LEAF, "    return torch.func.hessian(f)(x) @ v\n"),
    ),
    _hvp(
        "hvp_builds_the_hessian_by_jacfwd",
        frozenset({_HVP_ONCE}),
        (_HVP_LEAF, "    return torch.func.jacfwd(torch.func.grad(f))(x) @ v\n"),
    ),
    _hvp(
        "hvp_returns_the_gradient",
        _HVP_ALL,
        ("return product", "return grad_x"),
        says="the result is ∇f(x), the gradient",
    ),
    _hvp(
        "hvp_weighted_by_x",
        _HVP_ALL,
        (_HVP_SECOND, "(product,) = torch.autograd.grad(grad_x, x, grad_outputs=x.detach())"),
        says="grad_outputs=x, which gives H·x",
    ),
    # Marks the caller's x, then unmarks it: right for an x that did not require grad, wrong for one that did.
    _hvp(
        "hvp_marks_then_unmarks_the_callers_x",
        frozenset({_HVP_VALUE}),
        (
            _HVP_LEAF + "    " + _HVP_FIRST + "\n    " + _HVP_SECOND,
            "    x.requires_grad_(True)\n    (grad_x,) = torch.autograd.grad(f(x), x, create_graph=True)\n"
            "    (product,) = torch.autograd.grad(grad_x, x, grad_outputs=v)\n    x.requires_grad_(False)",
        ),
        says="requires_grad",
    ),
    _hvp(
        "hvp_weights_by_v_afterwards",
        _HVP_ALL,
        (_HVP_SECOND, "(product,) = torch.autograd.grad(grad_x.sum(), x)\n    product = product * v"),
        says="v weighs the product afterwards",
    ),
    # Each element differentiated only with respect to its own x[i]: the Hessian's diagonal, one row a pass.
    _hvp(
        "hvp_keeps_the_diagonal_only",
        _HVP_ALL,
        (
            _HVP_SECOND,
            "rows = [torch.autograd.grad(g, x, retain_graph=True)[0] for g in grad_x]\n"
            "    product = torch.stack([row[i] for i, row in enumerate(rows)]) * v",
        ),
        says="the result is diag(H)·v",
    ),
    # .grad adds up: after the second backward it holds the gradient plus H·v.
    _hvp(
        "hvp_returns_x_grad_after_two_backwards",
        _HVP_ALL,
        (_HVP_FIRST, "f(x).backward(create_graph=True)"),
        (_HVP_SECOND, "x.grad.backward(v)"),
        ("return product", "return x.grad"),
        says=".grad adds up",
    ),
    # Gradients at two points, no backward through the gradient: right for a quadratic, approximate otherwise.
    _hvp(
        "hvp_by_finite_difference",
        frozenset({_HVP_ONCE}),
        (
            _HVP_FIRST + "\n    " + _HVP_SECOND,
            "eps = 1e-6\n"
            "    ahead, behind = (x.detach() + sign * eps * v for sign in (1, -1))\n"
            "    slopes = [torch.autograd.grad(f(p.requires_grad_()), p)[0] for p in (ahead, behind)]\n"
            "    product = (slopes[0] - slopes[1]) / (2 * eps)",
        ),
        says="your code ran no backward through f's gradient, as a finite difference of gradients",
    ),
    # Section 2's forward difference: off by about εv·∇(H·v), enough for the values to fail as well.
    _hvp(
        "hvp_by_forward_difference",
        _HVP_ALL,
        (
            _HVP_FIRST + "\n    " + _HVP_SECOND,
            "eps = 1e-6\n"
            "    ahead = (x + eps * v).requires_grad_()\n"
            "    slopes = [torch.autograd.grad(f(p), p)[0] for p in (ahead, x)]\n"
            "    product = (slopes[0] - slopes[1]) / eps",
        ),
        says="a finite difference",
    ),
    # The product is right, but x.grad holds a gradient whose graph holds x: a reference cycle.
    _hvp(
        "hvp_backward_then_autograd_grad",
        _HVP_ALL,
        (_HVP_FIRST, "f(x).backward(create_graph=True)\n    grad_x = x.grad"),
        says="hvp leaks memory",
    ),
    _hvp(
        "hvp_detaches_the_first_gradient",
        _HVP_ALL,
        (_HVP_SECOND, "(product,) = torch.autograd.grad(grad_x.detach(), x, grad_outputs=v)"),
        says="no graph: your code uses `.detach()`, which leaves what it computes out of the graph",
    ),
    _hvp(
        "hvp_differentiates_the_callers_x",
        _HVP_ALL,
        (_HVP_LEAF, ""),
        says="the first gradient your code takes is of something built from inputs that do not require grad",
    ),
    _hvp(
        "hvp_marks_the_callers_x",
        _HVP_ALL,
        (_HVP_LEAF, "    x.requires_grad_()\n"),
        says="it modified the caller's tensor",
    ),
    _hvp(
        "hvp_of_the_gradient_times_v",
        _HVP_ALL,
        (_HVP_SECOND, "product = grad_x * v"),
        says="the result is ∇f(x) multiplied by v element by element",
    ),
    # The outer product of the gradient with itself, applied to v: first derivatives only.
    _hvp(
        "hvp_of_the_gradients_outer_product",
        _HVP_ALL,
        (_HVP_SECOND, "product = grad_x * (grad_x @ v)"),
        says="the gradient's outer product with itself applied to v",
    ),
    # torch.func.linearize is exact, but on torch 2.13 its jvp fails at a point that requires grad.
    _hvp(
        "hvp_linearizes_at_the_callers_x",
        {_HVP_VALUE},
        answer=(
            "def hvp(f, x, v):\n"
            "    _, hessian_times = torch.func.linearize(torch.func.grad(f), x)\n"
            "    return hessian_times(v)\n"
        ),
        says="torch.func.linearize was given a point that requires grad",
    ),
    _hvp(
        "hvp_multiplies_by_v_again",
        _HVP_ALL,
        ("return product", "return product @ v"),
        says="the result is a number, vᵀHv",
    ),
    # x and v swapped: the Hessian at v, applied to x.
    _hvp(
        "hvp_swaps_x_and_v",
        _HVP_ALL,
        (_HVP_LEAF, "    x, v = v.detach().requires_grad_(), x\n"),
        says="x and v are swapped: the result is H(v)·x",
    ),
    _hvp(
        "hvp_differentiates_with_respect_to_v",
        _HVP_ALL,
        (
            _HVP_SECOND,
            "v = v.detach().requires_grad_()\n    (product,) = torch.autograd.grad((grad_x * v).sum(), v)",
        ),
        says="the derivative of ∇f·v with respect to v",
    ),
    _hvp(
        "hvp_dots_the_gradient_with_x",
        _HVP_ALL,
        (_HVP_SECOND, "(product,) = torch.autograd.grad((grad_x * x).sum(), x)"),
        says="the gradient is dotted with x, not v",
    ),
    _hvp(
        "hvp_squares_the_dot_product",
        _HVP_ALL,
        (_HVP_SECOND, "(product,) = torch.autograd.grad((grad_x * v).sum() ** 2, x)"),
        says="the dot product ∇f·v is squared before it is differentiated",
    ),
    # torch refuses to multiply the float32 copy by section 2's float64 S.
    _hvp(
        "hvp_works_in_float32",
        _HVP_ALL,
        (_HVP_LEAF, "    x = x.detach().float().requires_grad_()\n"),
        says="your code makes a float32 tensor (with .float()",
    ),
    # A copy under torch.no_grad() cuts nothing: only the missing create_graph=True is named.
    _hvp(
        "hvp_copies_x_under_no_grad_without_create_graph",
        _HVP_ALL,
        (_HVP_LEAF, "    with torch.no_grad():\n        start = x.clone()\n    x = start.requires_grad_()\n"),
        (_HVP_FIRST, "(grad_x,) = torch.autograd.grad(f(x), x)"),
        says="pass create_graph=True where you take the gradient that you differentiate again.",
    ),
    _hvp("hvp_returns_a_column", _HVP_ALL, ("return product", "return product[:, None]"), says="shape"),
    _hvp(
        "patches_the_checks",
        _HVP_ALL,
        ("def hvp", patch_the_checks("def hvp")),
        ("return product", "return grad_x"),
    ),
    _hvp("imports_the_reference", _HVP_ALL, answer="from solutions.applications import hvp  # noqa"),
    _penalty(
        "penalty_without_create_graph",
        frozenset({_PENALTY_REACHES}),
        (_PENALTY_GRADIENTS, "(gradients,) = torch.autograd.grad(critic(points).sum(), points)"),
        says="create_graph=True",
    ),
    _penalty(
        "penalty_norm_over_the_whole_batch",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.norm() - 1) ** 2).mean()"),
        says="the norm is taken over the whole batch at once",
    ),
    # keepdim=True, then a mean over dim=0: the right value, in shape (1,).
    _penalty(
        "penalty_keeps_a_dimension_of_size_one",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.norm(dim=1, keepdim=True) - 1) ** 2).mean(dim=0)"),
        says="the result is one value, but in shape (1,): a reduction with dim= or keepdim=True",
    ),
    _penalty(
        "penalty_l1_norm",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.abs().sum(dim=1) - 1) ** 2).mean()"),
        says="the norm is the sum of absolute values (L1)",
    ),
    _penalty(
        "penalty_without_minus_one",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return (gradients.norm(dim=1) ** 2).mean()"),
        says="the 1 is not subtracted",
    ),
    _penalty(
        "penalty_without_the_square",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return (gradients.norm(dim=1) - 1).mean()"),
        says="the difference is not squared",
    ),
    _penalty(
        "penalty_takes_the_absolute_difference",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return (gradients.norm(dim=1) - 1).abs().mean()"),
        says="the difference is taken in absolute value",
    ),
    # The squares summed without the square root: the norm squared.
    _penalty(
        "penalty_of_the_squared_norm",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.pow(2).sum(dim=1) - 1) ** 2).mean()"),
        says="the norm is squared before 1 is subtracted",
    ),
    _penalty(
        "penalty_sums_over_the_batch",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.norm(dim=1) - 1) ** 2).sum()"),
        says="the points' terms are added up",
    ),
    _penalty(
        "penalty_norm_over_the_batch_dimension",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.norm(dim=0) - 1) ** 2).mean()"),
        says="the norm is taken over the batch (dim=0)",
    ),
    _penalty(
        "penalty_of_the_mean_score",
        _PENALTY_ALL,
        (_PENALTY_GRADIENTS, _PENALTY_GRADIENTS.replace(".sum()", ".mean()")),
        says="the scores are averaged (critic(points).mean())",
    ),
    _penalty(
        "penalty_points_without_grad",
        _PENALTY_ALL,
        (_PENALTY_LEAF, "points = points.detach()"),
        says="a copy that does: points = points.detach().requires_grad_()",
    ),
    _penalty(
        "penalty_marks_the_callers_points",
        _PENALTY_ALL,
        (_PENALTY_LEAF, "points.requires_grad_()"),
        says="it modified the caller's tensor",
    ),
    _penalty(
        "penalty_fills_the_critics_grad",
        _PENALTY_ALL,
        (_PENALTY_GRADIENTS, "critic(points).sum().backward(create_graph=True)\n    gradients = points.grad"),
        says=("which should stay None", "Swap .backward(create_graph=True) for torch.autograd.grad"),
    ),
    # The gradient recorded as asked, then a backward of the penalty's own: the training loop's to run.
    _penalty(
        "penalty_runs_its_own_backward",
        _PENALTY_ALL,
        (
            _PENALTY_RETURN,
            "penalty = ((gradients.norm(dim=1) - 1) ** 2).mean()\n"
            "    penalty.backward(retain_graph=True)\n"
            "    return penalty",
        ),
        says="take every gradient here that way and call no .backward()",
    ),
    # Section 2 suggests .grad = None after .backward(create_graph=True): it erases the caller's .grad.
    _penalty(
        "penalty_backward_then_zero_grad",
        _PENALTY_ALL,
        (
            _PENALTY_GRADIENTS,
            "critic(points).sum().backward(create_graph=True)\n    gradients = points.grad\n"
            "    critic.zero_grad()",
        ),
        says="emptied critic.weight.grad",
    ),
    # With inputs=, the critic's .grad stays None, but the points' .grad holds its own graph: a leak.
    _penalty(
        "penalty_backward_into_its_own_points",
        _PENALTY_ALL,
        (
            _PENALTY_GRADIENTS,
            "critic(points).sum().backward(create_graph=True, inputs=[points])\n    gradients = points.grad",
        ),
        says="leaks memory",
    ),
    _penalty(
        "penalty_of_the_parameters_gradient",
        _PENALTY_ALL,
        (
            _PENALTY_GRADIENTS,
            "parameters = list(critic.parameters())\n"
            "    gradients = torch.autograd.grad(critic(points).sum(), parameters, create_graph=True)",
        ),
        (_PENALTY_RETURN, "return (torch.cat([g.flatten() for g in gradients]).norm() - 1) ** 2"),
        says="the critic is differentiated with respect to its parameters",
    ),
    _penalty(
        "penalty_abs_in_place_of_the_norm",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.abs() - 1) ** 2).mean()"),
        says="each element of the gradients is taken in absolute value (.abs()) in place of each point",
    ),
    _penalty(
        "penalty_root_mean_square",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return ((gradients.pow(2).mean(dim=1).sqrt() - 1) ** 2).mean()"),
        says="each gradient's root mean square is taken",
    ),
    _penalty(
        "penalty_squares_the_mean_norm",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return (gradients.norm(dim=1).mean() - 1) ** 2"),
        says="the norms are averaged before 1 is subtracted",
    ),
    # Right wherever points have two or more features; squeezed, one feature's column is the whole batch.
    _penalty(
        "penalty_squeezes_before_the_norm",
        _PENALTY_VALUE_ONLY,
        (_PENALTY_RETURN, "return ((gradients.squeeze().norm(dim=-1) - 1) ** 2).mean()"),
        says="with one feature, the gradients are a single column",
    ),
    _penalty(
        "penalty_times_lambda",
        _PENALTY_ALL,
        (_PENALTY_RETURN, "return 10 * ((gradients.norm(dim=1) - 1) ** 2).mean()"),
        says="the penalty is multiplied by λ = 10",
    ),
    _loss(
        "loss_backward_then_grad_none",
        (_LOSS_SLOPE, "f(x).backward(create_graph=True)\n    slope = x.grad\n    x.grad = None"),
        says="the result includes the value x.grad held before the call",
    ),
    # Saving x.grad and putting it back hides the .backward() from x, not from the leaves f holds.
    _loss(
        "loss_backward_then_restores_x_grad",
        (
            _LOSS_SLOPE,
            "before = x.grad\n    x.grad = None\n    f(x).backward(create_graph=True)\n"
            "    slope = x.grad\n    x.grad = before",
        ),
        says="filled f.w.grad, which should stay None",
    ),
    # hvp's and gradient_penalty's copy, here cutting the loss off from the parameter being optimized.
    _loss(
        "loss_differentiates_a_copy_of_x",
        (_LOSS_SLOPE, f"x = x.detach().requires_grad_()\n    {_LOSS_SLOPE}"),
        says="differentiate with respect to x itself, with no copy",
    ),
    # The copy for f' alone: the loss still reaches x through -2x, but not through f'(x).
    _loss(
        "loss_differentiates_a_copy_of_x_for_the_slope",
        (
            _LOSS_SLOPE,
            "copy = x.detach().requires_grad_()\n"
            "    (slope,) = torch.autograd.grad(f(copy), copy, create_graph=True)",
        ),
        says="f' was taken at a copy of x, a new leaf",
    ),
    _loss(
        "loss_without_create_graph",
        (_LOSS_SLOPE, "(slope,) = torch.autograd.grad(f(x), x)"),
        says="create_graph=True",
    ),
    # Forward mode gives the slope too, but under torch.no_grad() autograd records none of it.
    _loss(
        "loss_slope_by_jvp_under_no_grad",
        (
            _LOSS_SLOPE,
            "with torch.no_grad():\n        _, slope = torch.func.jvp(f, (x,), (torch.ones_like(x),))",
        ),
        says="uses `torch.no_grad()`, which leaves what it computes out of the graph",
    ),
    _loss(
        "loss_fills_x_grad",
        (_LOSS_SLOPE, "f(x).backward(create_graph=True)\n    slope = x.grad"),
        says="filled x.grad",
    ),
    # A 0-dim loss has nothing to reduce: the call that gave it a dimension is the one to drop.
    _loss(
        "loss_reshaped_to_one_value",
        ("return slope - 2 * x + 1", "return (slope - 2 * x + 1).reshape(1)"),
        says="`.reshape()` in your code, if applied to the value you return",
    ),
    _loss(
        "loss_adds_two_x",
        ("return slope - 2 * x + 1", "return slope + 2 * x + 1"),
        says="2x is added instead of subtracted",
    ),
    _loss(
        "loss_swaps_the_signs",
        ("return slope - 2 * x + 1", "return slope + 2 * x - 1"),
        says="the signs of 2x and 1 are swapped",
    ),
    _loss(
        "loss_differentiates_x_cubed",
        (_LOSS_SLOPE, "(slope,) = torch.autograd.grad(x**3, x, create_graph=True)"),
        says="the derivative is that of x**3, not of f(x)",
    ),
    _loss(
        "loss_without_the_one",
        ("return slope - 2 * x + 1", "return slope - 2 * x"),
        says="the + 1 is missing",
    ),
    _loss(
        "loss_subtracts_one",
        ("return slope - 2 * x + 1", "return slope - 2 * x - 1"),
        says="1 is subtracted instead of added",
    ),
    _loss(
        "loss_of_f_itself",
        (f"{_LOSS_SLOPE}\n    return slope - 2 * x + 1", "return f(x) - 2 * x + 1"),
        says="the result uses f(x) itself, not its derivative f'(x)",
    ),
    _loss(
        "loss_differentiates_twice",
        (
            "return slope - 2 * x + 1",
            "(curvature,) = torch.autograd.grad(slope, x, create_graph=True)\n"
            "    return curvature - 2 * x + 1",
        ),
        says="the result uses f''(x)",
    ),
    _loss(
        "loss_keeps_the_tuple",
        (_LOSS_SLOPE, _LOSS_SLOPE.replace("(slope,) =", "slope =")),
        says="torch.autograd.grad returns a tuple, one gradient per input",
    ),
    _loss(
        "loss_by_hand",
        (f"{_LOSS_SLOPE}\n    return slope - 2 * x + 1", "return (x - 1) ** 2"),
        says="right only for f = x**3 / 3",
    ),
    # Within the tests' tolerance in value, and in derivative too: only where f is evaluated tells.
    _loss(
        "loss_by_central_difference",
        (_LOSS_SLOPE, "h = 1e-5\n    slope = (f(x + h) - f(x - h)) / (2 * h)"),
        says="f was evaluated away from x",
    ),
    _loss(
        "loss_takes_the_absolute_value",
        ("return slope - 2 * x + 1", "return (slope - 2 * x + 1).abs()"),
        says="the .abs() in your code: the result is the right one's absolute value",
    ),
    _loss(
        "loss_returns_a_number",
        ("return slope - 2 * x + 1", "return (slope - 2 * x + 1).item()"),
        says="`.item()` turns the tensor into a Python number, which has no graph",
    ),
]

INSTRUCTIONS = {
    "differentiate with respect to a leaf of your own, `x = x.detach().requires_grad_()`": (
        "hvp_differentiates_the_callers_x"
    ),
    "its `requires_grad` must stay as it was": "hvp_marks_the_callers_x",
    "take the gradient of `f(x)` with `create_graph=True`": "hvp_without_create_graph",
    "differentiate it once more with `v` as the incoming gradient (`grad_outputs=v`)": "hvp_weighted_by_ones",
    "Prefer `torch.autograd.grad`, which returns the product and stores nothing": (
        "hvp_returns_x_grad_after_two_backwards"
    ),
    "leave no `.grad` whose graph leads back to its own tensor": "hvp_backward_then_autograd_grad",
    "shaped like `x`": "hvp_returns_a_column",
    "do not build the Hessian, not even with one of torch's functions": "hvp_uses_the_vectorized_hessian",
    "Differentiate with respect to a copy of your own, `points.detach().requires_grad_()`": (
        "penalty_marks_the_callers_points"
    ),
    "Pass `create_graph=True`, so that the penalty can be differentiated": "penalty_without_create_graph",
    "Take each point's own norm (over the features, `dim=1`)": "penalty_norm_over_the_whole_batch",
    "subtract 1": "penalty_without_minus_one",
    "square, then average": "penalty_without_the_square",
    "then average over the batch": "penalty_sums_over_the_batch",
    "the training loop's backward fills it, so a plain `.backward()` here would write into it": (
        "penalty_fills_the_critics_grad"
    ),
    "as `.backward(create_graph=True)` leaves in your copy of `points`": (
        "penalty_backward_into_its_own_points"
    ),
    "Take $f'(x)$ from `f(x)` with `create_graph=True`": "loss_without_create_graph",
    "(not a copy, unlike in `hvp` and `gradient_penalty`)": "loss_differentiates_a_copy_of_x",
    "a derivative written by hand cannot pass": "loss_by_hand",
    "return `derivative - 2 * x + 1`": "loss_adds_two_x",
    "`x.grad` as you found it": "loss_backward_then_grad_none",
    "the tests want it left None, and a plain `.backward()` fills the `.grad` of every leaf it reaches": (
        "loss_backward_then_restores_x_grad"
    ),
    "prefer `torch.autograd.grad`, which fills no leaf's `.grad`": (
        "loss_backward_into_x_then_restores_x_grad"
    ),
    "whatever $h$, the tests refuse it": "loss_by_central_difference",
    "forward as in section 2": "hvp_by_forward_difference",
    "section 2 or central: it is only approximate": "hvp_by_finite_difference",
    "prefer writing the two calls yourself": "hvp_by_autograd_functional_hvp",
}
