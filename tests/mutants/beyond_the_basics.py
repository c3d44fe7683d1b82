"""Lesson 06: mistakes in ScaledSquare, the new-style Function that skips the gradients nobody needs, and in
TanhInPlace, which works in place."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "06_beyond_the_basics"

_FORWARD = "scaledsquare_forward"
_FIRST = "scaledsquare_first_derivative"
_SECOND = "scaledsquare_second_derivative"
_TORCH_FUNC = "scaledsquare_torch_func"
_NEEDS_INPUT_GRAD = "scaledsquare_needs_input_grad"
_SAVES = "scaledsquare_saves_its_inputs"
_ALL = frozenset({_FORWARD, _FIRST, _SECOND, _TORCH_FUNC, _NEEDS_INPUT_GRAD, _SAVES})

_NEW_STYLE_FORWARD = "def forward(x, w):\n        return w * x**2"
_SETUP_CONTEXT = (
    "    @staticmethod\n    def setup_context(ctx, inputs, output):\n"
    "        x, w = inputs\n        ctx.save_for_backward(x, w)\n\n"
)
_OLD_STYLE_FORWARD = "def forward(ctx, x, w):\n        ctx.save_for_backward(x, w)\n        return w * x**2"
_BACKWARD = "    @staticmethod\n    def backward(ctx, grad_out):"
_SAVED = "x, w = ctx.saved_tensors"
_IN_PLACE_DERIVATIVES = "tanhinplace_derivatives"
_IN_PLACE_TORCH_FUNC = "tanhinplace_torch_func"
_IN_PLACE_CALLER = "tanhinplace_updates_the_caller"
_IN_PLACE_SAVES = "tanhinplace_saves_its_output"
_MARK_DIRTY = "        ctx.mark_dirty(x)\n"
_GRAD_X = "grad_x = grad_out * 2 * w * x if ctx.needs_input_grad[0] else None"
_GRAD_W = "grad_w = grad_out * x**2 if ctx.needs_input_grad[1] else None"
_IN_PLACE_SLOPE = "return grad_out * (1 - result**2)"


_scaled_square = mistakes_in("scaledsquare")
_tanh_in_place = mistakes_in("tanhinplace")


MUTANTS = [
    # Fine for torch.autograd, refused by torch.func: its transforms need forward apart from setup_context.
    _scaled_square(
        "old_style_forward_with_ctx",
        {_TORCH_FUNC},
        (_NEW_STYLE_FORWARD, _OLD_STYLE_FORWARD),
        (_SETUP_CONTEXT, ""),
        says="forward takes ctx (the old style), which torch.func cannot transform",
    ),
    _scaled_square("missing_setup_context", _ALL, (_SETUP_CONTEXT, "")),
    # setup_context records nothing: a product computed there is a constant to autograd.
    _scaled_square(
        "computes_an_intermediate_in_setup_context",
        {_SECOND, _TORCH_FUNC},
        (
            "        ctx.save_for_backward(x, w)\n",
            "        ctx.save_for_backward(x, w)\n        ctx.two_wx = 2 * w * x\n",
        ),
        (_GRAD_X, "grad_x = grad_out * ctx.two_wx if ctx.needs_input_grad[0] else None"),
        says="setup_context computed ctx.two_wx and kept it on ctx",
    ),
    # torch.func refuses .data, which forward never needs: autograd records nothing forward computes.
    _scaled_square(
        "forward_reads_data",
        {_TORCH_FUNC},
        ("return w * x**2", "return w.data * x.data**2"),
        says="reads .data, which torch.func refuses",
    ),
    _scaled_square(
        "forward_in_numpy",
        {_FORWARD, _FIRST, _SECOND, _TORCH_FUNC},
        ("return w * x**2", "return torch.from_numpy(w.detach().numpy() * x.detach().numpy() ** 2)"),
        says=("forward computes in NumPy", "Likely cause: forward calls `.numpy()`"),
    ),
    # autograd wants the tensors themselves, and refuses the tuple that holds them.
    _scaled_square(
        "saves_the_inputs_tuple",
        _ALL,
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(inputs)"),
        says="such as the tuple inputs: pass the tensors themselves, one argument each",
    ),
    # ctx takes x, so w goes missing: every call fails, and the feedback names the old style's ctx.
    _scaled_square(
        "forward_takes_ctx_beside_setup_context",
        _ALL,
        (_NEW_STYLE_FORWARD, _NEW_STYLE_FORWARD.replace("forward(x, w)", "forward(ctx, x, w)")),
        says=(
            "ScaledSquare defines setup_context, so autograd calls forward with the inputs alone, "
            "forward(x, w), and its first parameter `ctx` took x"
        ),
    ),
    _scaled_square(
        "no_vmap_rule", {_TORCH_FUNC}, ("    generate_vmap_rule = True\n\n", ""), says="vmap support"
    ),
    # Saved in order, unpacked the other way round: backward's x holds w, and its w holds x.
    _scaled_square(
        "unpacks_the_inputs_swapped",
        {_FIRST, _SECOND},
        (_SAVED, "w, x = ctx.saved_tensors"),
        says="backward computes with x and w exchanged",
    ),
    # A second save_for_backward replaces the first: backward finds one tensor where it unpacks two.
    _scaled_square(
        "saves_x_then_w_in_two_calls",
        {_FIRST, _SECOND, _TORCH_FUNC, _NEEDS_INPUT_GRAD, _SAVES},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(x)\n        ctx.save_for_backward(w)"),
        says="each call replaces the one before",
    ),
    # ctx.saved_tensors keeps the order saved: backward's x holds w, and its w holds x.
    _scaled_square(
        "saves_the_inputs_in_reverse",
        {_FIRST, _SECOND},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(w, x)"),
        says="backward computes with x and w exchanged",
    ),
    # Every derivative is right: only a change in place between forward and backward goes unnoticed.
    _scaled_square(
        "saves_the_inputs_on_ctx",
        {_SAVES},
        ("ctx.save_for_backward(x, w)", "ctx.x, ctx.w = x, w"),
        (_SAVED, "x, w = ctx.x, ctx.w"),
        says="pass x itself to ctx.save_for_backward, not as ctx.x",
    ),
    # The copies have no history either, so the second derivatives are lost with the version check.
    _scaled_square(
        "saves_copies_of_the_inputs",
        {_SAVES, _SECOND, _TORCH_FUNC},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(x.clone(), w.clone())"),
        says=(
            "setup_context saved a copy of x (as x.clone() makes), not x itself. Autograd's version check, "
            "which makes backward refuse, watches the copy",
            "setup_context saved a tensor with no history",
        ),
    ),
    # .data shares the input's memory but not its version counter: backward runs on the changed values.
    _scaled_square(
        "saves_the_data_of_the_inputs",
        {_SAVES, _SECOND, _TORCH_FUNC},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(x.data, w.data)"),
        says="setup_context saved a tensor that shares x's memory, as x.data does",
        by_nbgrader=True,
    ),
    # w, rebuilt from the saved output, is never watched by the version check; x runs through 0 in the
    # visible tests, where out / x**2 is nan.
    _scaled_square(
        "recomputes_w_from_the_output",
        {_SAVES, _FIRST, _SECOND},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(x, output)"),
        (_SAVED, "x, out = ctx.saved_tensors\n        w = out / x**2"),
        says=(
            "pass w itself to ctx.save_for_backward. After the caller changed w in place, backward still "
            "ran, so w itself was not saved that way"
        ),
    ),
    # The formula is right, but torch's batched gradients (gradcheck's check_batched_grad) cannot batch
    # einsum, and the brief asks for a batch of grad_outs.
    _scaled_square(
        "einsum_in_backward",
        {_FIRST},
        (
            _GRAD_X,
            "grad_x = 2 * torch.einsum('...,...,...->...', grad_out, w, x)"
            " if ctx.needs_input_grad[0] else None",
        ),
        says="have no batching rule for aten::einsum, which backward uses",
    ),
    # autograd takes a tensor or None for each input: a number raises, even where no gradient is needed.
    _scaled_square(
        "returns_zero_for_x_when_it_needs_none",
        {_NEEDS_INPUT_GRAD},
        ("return grad_x, grad_w", "return (0.0 if grad_x is None else grad_x), grad_w"),
        says="backward returned the float 0.0 in x's place, where autograd takes a tensor or None",
    ),
    # x rebuilt from the output is |x|: every gradient through x has the wrong sign where x is negative.
    _scaled_square(
        "recomputes_x_from_the_output",
        {_FIRST, _SECOND, _SAVES},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(output, w)"),
        (_SAVED, "out, w = ctx.saved_tensors\n        x = torch.sqrt(out / w)"),
        says="backward computes with |x| in place of x",
    ),
    # A special case at x == 0 makes grad_x the constant 0 there, so its derivative in x is 0, not 2w; the
    # second-derivative test's x runs through 0. torch.func gives that 0 too, as autograd does.
    _scaled_square(
        "grad_x_special_cased_at_zero",
        {_SECOND},
        (
            _GRAD_X,
            "grad_x = torch.where(x != 0, grad_out * 2 * w * x, 0.0) if ctx.needs_input_grad[0] else None",
        ),
        says="the value is wrong only where x is 0, right everywhere else",
    ),
    # Right wherever both inputs require grad; where w is data, backward returns grad_x alone.
    _scaled_square(
        "returns_grad_x_alone_when_w_needs_none",
        {_TORCH_FUNC, _NEEDS_INPUT_GRAD},
        (
            "return grad_x, grad_w",
            "if grad_w is None:\n            return grad_x\n        return grad_x, grad_w",
        ),
        says=(
            "backward returned one tensor where autograd wants one gradient per input, a tuple of two",
            "Autograd counts a list, or a tensor returned alone, as one",
        ),
        by_nbgrader=True,
    ),
    _scaled_square(
        "returns_a_list_of_gradients",
        {_FIRST, _SECOND, _TORCH_FUNC, _NEEDS_INPUT_GRAD},
        ("return grad_x, grad_w", "return [grad_x, grad_w]"),
        says=("Autograd counts a list, or a tensor returned alone, as one", "backward returned a list of 2"),
    ),
    _scaled_square(
        "sums_grad_w_to_a_scalar",
        {_FIRST, _SECOND},
        (_GRAD_W, "grad_w = (grad_out * x**2).sum() if ctx.needs_input_grad[1] else None"),
        says="each gradient backward returns has the shape of its input",
    ),
    # Every derivative is right one gradient at a time; vmap has no batching rule for detach, so the batched
    # backward of gradcheck's check_batched_grad raises, and the second derivatives are lost.
    _scaled_square(
        "detaches_grad_x",
        {_FIRST, _SECOND, _TORCH_FUNC},
        (_GRAD_X, "grad_x = (grad_out * 2 * w * x).detach() if ctx.needs_input_grad[0] else None"),
        says=(
            "backward calls .detach() on the incoming gradient or on a gradient computed from it",
            "torch's gradcheck with check_batched_grad=True fails on it too",
            "backward uses `.detach()`",
        ),
        by_nbgrader=True,
    ),
    # forward must leave the caller's x alone: the new style refuses to save x returned as the output.
    _scaled_square(
        "forward_squares_x_in_place",
        _ALL,
        ("return w * x**2", "return x.pow_(2).mul_(w)"),
        says=(
            "Build a new tensor (`.mul()` or `.pow()`",
            "no trailing underscore), unless the Function is meant to work in place",
            # The needs_input_grad test calls backward, but the error came from apply: it names the Function.
            # autograd's error is cut to its first sentence: the cause that follows gives its advice, in full
            # in the first cell alone.
            "ScaledSquare raised RuntimeError: An input that has been returned as-is as output is being "
            "saved for backward. Likely cause: forward calls `.mul_()` or `.pow_()`, which changes its "
            "input in place and returns it. The first test above that failed with it says more. when called "
            "with the x, w, grad_out that `x_is_data` builds",
        ),
        by_nbgrader=True,
    ),
    # The result is a new tensor, right in value; only the caller's x is changed.
    _scaled_square(
        "forward_changes_x_in_place_and_returns_a_new_tensor",
        {_FORWARD, _FIRST, _SECOND},
        ("return w * x**2", "x.mul_(1)\n        return w * x**2"),
        says="forward changed x in place (as x.pow_(2) or x.mul_(1) do), which the caller still holds",
    ),
    # Marked dirty, the in-place forward runs, but torch refuses to change a leaf that requires grad; the
    # version check's test calls it on copies, where it may, and backward refuses as it should.
    _scaled_square(
        "forward_squares_x_in_place_marked_dirty",
        _ALL - {_SAVES},
        ("return w * x**2", "return x.pow_(2).mul_(w)"),
        ("x, w = inputs\n", "x, w = inputs\n        ctx.mark_dirty(x)\n"),
        says=(
            "If a Function's setup_context marks that input with ctx.mark_dirty, its forward changed it",
            "ScaledSquare gave the caller's x a history",
        ),
        by_nbgrader=True,
    ),
    _scaled_square(
        "grad_w_without_grad_out",
        {_FIRST, _SECOND},
        (_GRAD_W, "grad_w = x**2 if ctx.needs_input_grad[1] else None"),
        says="without multiplying by grad_out",
    ),
    _scaled_square(
        "grad_x_without_grad_out",
        {_FIRST, _SECOND},
        (_GRAD_X, "grad_x = 2 * w * x if ctx.needs_input_grad[0] else None"),
        says="without multiplying by grad_out",
    ),
    _scaled_square(
        "grad_w_with_the_wrong_sign",
        {_FIRST, _SECOND},
        (_GRAD_W, "grad_w = -grad_out * x**2 if ctx.needs_input_grad[1] else None"),
        says="this derivative has the wrong sign",
    ),
    # The right order with a wrong formula in w's place: the feedback blames that formula, not the order,
    # and the needs_input_grad test does not take the gradient returned for w for a grad_x thrown away.
    _scaled_square(
        "grad_w_with_grad_xs_formula",
        {_FIRST, _SECOND},
        (_GRAD_W, "grad_w = grad_out * 2 * w * x if ctx.needs_input_grad[1] else None"),
        says=(
            "First derivative with respect to w is wrong",
            "grad_w is grad_out * 2 * w * x, grad_x's formula",
        ),
    ),
    # Under torch.func's grad, which differentiates x alone, grad_x comes back in w's place and x gets none.
    _scaled_square(
        "gradients_in_wrong_order",
        {_FIRST, _SECOND, _TORCH_FUNC, _NEEDS_INPUT_GRAD},
        ("return grad_x, grad_w", "return grad_w, grad_x"),
        says=(
            "the gradient for w in the place of x: it returns them in the wrong order",
            "(grad_w, grad_x), in the wrong order: backward returns one gradient per forward input, in "
            "forward's order",
        ),
    ),
    # Its gradients are right; autograd may hand the grad_out it changed to other nodes, and in a double
    # backward, where grad_out requires grad, refuses the change.
    # torch.func's grad hands backward a grad_out expanded from a single 1, which refuses the change.
    _scaled_square(
        "changes_grad_out_in_place",
        {_FIRST, _SECOND, _TORCH_FUNC},
        (_GRAD_X, "grad_x = grad_out.mul_(2 * w * x) if ctx.needs_input_grad[0] else None"),
        says=(
            "First derivative: the backward of ScaledSquare changes grad_out in place",
            "Second derivative: the backward of ScaledSquare changes grad_out in place",
            "in a double backward grad_out requires grad (gradgradcheck makes it a leaf)",
            "a tensor expanded from a single value, as torch.func's grad does",
        ),
    ),
    _scaled_square(
        "ignores_needs_input_grad",
        {_NEEDS_INPUT_GRAD},
        (_GRAD_X, "grad_x = grad_out * 2 * w * x"),
        (_GRAD_W, "grad_w = grad_out * x**2"),
        says="return None in x's place: ctx.needs_input_grad[0] says x does not require grad",
    ),
    # Right wherever x requires grad, as it does whenever w is the data.
    _scaled_square(
        "always_computes_grad_x",
        {_NEEDS_INPUT_GRAD},
        (_GRAD_X, "grad_x = grad_out * 2 * w * x"),
        says="ctx.needs_input_grad[0] says x does not require grad",
    ),
    # Each gradient assigned only under its if: the one whose input needs none is never assigned.
    _scaled_square(
        "assigns_each_gradient_only_under_its_if",
        {_TORCH_FUNC, _NEEDS_INPUT_GRAD},
        (
            f"        {_GRAD_X}\n        {_GRAD_W}",
            "        if ctx.needs_input_grad[0]:\n            grad_x = grad_out * 2 * w * x\n"
            "        if ctx.needs_input_grad[1]:\n            grad_w = grad_out * x**2",
        ),
        says="give it its other value first (grad_x = grad_w = None)",
    ),
    # grad_out summed to one number: right only for one element, as torch.func's grad gives backward.
    _scaled_square(
        "multiplies_by_grad_out_summed",
        {_FIRST, _SECOND},
        (_GRAD_X, "grad_x = grad_out.sum() * 2 * w * x if ctx.needs_input_grad[0] else None"),
        says="reduced to one number (.sum())",
    ),
    # Right in every value and in what it returns: only the work skipped is not.
    _scaled_square(
        "computes_grad_x_then_drops_it",
        {_NEEDS_INPUT_GRAD},
        (
            _GRAD_X,
            "grad_x = grad_out * 2 * w * x\n        grad_x = grad_x if ctx.needs_input_grad[0] else None",
        ),
        # The helper's finding reads as its own words, not as an error the answer raised.
        says="ScaledSquare: backward computed a tensor equal to the gradient for x, then returned None for x",
    ),
    # Half of grad_x, shared as grad_out * w * x, computed whether x needs a gradient or not.
    _scaled_square(
        "computes_half_of_grad_x_then_drops_it",
        {_NEEDS_INPUT_GRAD},
        (
            _GRAD_X,
            "shared = grad_out * w * x\n        grad_x = 2 * shared if ctx.needs_input_grad[0] else None",
        ),
        says="backward computed a tensor equal to 0.5 times the gradient for x, then returned None for x",
    ),
    _scaled_square(
        "computes_grad_w_then_drops_it",
        {_NEEDS_INPUT_GRAD},
        (_GRAD_W, "grad_w = grad_out * x**2\n        grad_w = grad_w if ctx.needs_input_grad[1] else None"),
        says="backward computed a tensor equal to the gradient for w, then returned None for w",
    ),
    # grad_out is multiplied only where needed, but both partial derivatives are computed every time.
    _scaled_square(
        "computes_both_partial_derivatives",
        {_NEEDS_INPUT_GRAD},
        (
            _GRAD_X,
            "dx, dw = 2 * w * x, x * x\n        grad_x = grad_out * dx if ctx.needs_input_grad[0] else None",
        ),
        (_GRAD_W, "grad_w = grad_out * dw if ctx.needs_input_grad[1] else None"),
        says="backward computed a tensor equal to the partial derivative in x, 2wx, without grad_out, then",
    ),
    # Right wherever both require grad; torch.func's grad differentiates x alone, so grad_x is None there.
    _scaled_square(
        "reads_the_other_inputs_flag",
        {_TORCH_FUNC, _NEEDS_INPUT_GRAD},
        (_GRAD_X, _GRAD_X.replace("needs_input_grad[0]", "needs_input_grad[1]")),
        (_GRAD_W, _GRAD_W.replace("needs_input_grad[1]", "needs_input_grad[0]")),
        says=(
            "backward returned a tensor in x's place and None in w's, the reverse of ctx.needs_input_grad",
            "it reads the flags swapped, needs_input_grad[1] (w's flag) for x",
        ),
    ),
    # A slip in a formula costs the tests of values; which gradients backward returns is still right, and
    # torch.func gives what torch.autograd gives through it.
    _scaled_square(
        "grad_x_without_the_factor_2",
        {_FIRST, _SECOND},
        (_GRAD_X, "grad_x = grad_out * w * x if ctx.needs_input_grad[0] else None"),
        says="this derivative is half the right one: a factor 2 left out",
    ),
    # forward saved w, so the feedback blames the formula, not the saving.
    _scaled_square(
        "grad_x_without_w",
        {_FIRST, _SECOND},
        (_GRAD_X, "grad_x = grad_out * 2 * x if ctx.needs_input_grad[0] else None"),
        says="missing the factor w: multiplied by w, it would be right. Forward saved w",
    ),
    # Right wherever x is not 0: the visible tests' x runs through 0, where out / x is nan.
    _scaled_square(
        "grad_x_divides_the_output_by_x",
        {_FIRST, _SECOND},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(x, w, output)"),
        (_SAVED, "x, w, out = ctx.saved_tensors"),
        (_GRAD_X, _GRAD_X.replace("grad_out * 2 * w * x", "grad_out * 2 * out / x")),
        says="a division by x, which is 0 there",
    ),
    # Right wherever w is not 0: the first-derivative tests' x and w run through 0, where out / w is nan.
    _scaled_square(
        "grad_w_divides_the_output_by_w",
        {_FIRST},
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(x, w, output)"),
        (_SAVED, "x, w, out = ctx.saved_tensors"),
        (_GRAD_W, _GRAD_W.replace("grad_out * x**2", "grad_out * out / w")),
        says="Likely cause: a division by w, which is 0 there",
    ),
    _scaled_square(
        "zeros_instead_of_none",
        {_NEEDS_INPUT_GRAD},
        (_GRAD_X, _GRAD_X.replace("else None", "else torch.zeros_like(x)")),
        (_GRAD_W, _GRAD_W.replace("else None", "else torch.zeros_like(w)")),
    ),
    # Right whenever both inputs require grad; torch.func's grad, which asks for x alone, gets None.
    _scaled_square(
        "grad_x_reads_ws_flag",
        {_TORCH_FUNC, _NEEDS_INPUT_GRAD},
        (_GRAD_X, _GRAD_X.replace("needs_input_grad[0]", "needs_input_grad[1]")),
        says="backward returned None for x, so torch.func finds no gradient for x",
    ),
    # once_differentiable comes from the notebook's first cell, as a student's answer would find it.
    _scaled_square(
        "once_differentiable_backward",
        {_SECOND, _TORCH_FUNC},
        (_BACKWARD, "    @staticmethod\n    @once_differentiable\n    def backward(ctx, grad_out):"),
        says=(
            "@once_differentiable",
            "so torch.func, which this test uses, gives 0 for the second derivative through it, silently",
        ),
    ),
    _scaled_square(
        "detach_in_backward",
        {_SECOND, _TORCH_FUNC},
        (_SAVED, "x, w = (saved.detach() for saved in ctx.saved_tensors)"),
        says=(
            "backward uses `.detach()`",
            "so torch.func, which this test uses, gives 0 for the second derivative through it, silently",
        ),
    ),
    # grad_w still leads back to x, so torch.autograd's second derivative is wrong but not 0; torch.func's
    # grad(grad(...)) in x follows grad_x alone, cut from x, and gets 0.
    _scaled_square(
        "detaches_x_in_grad_x",
        {_SECOND, _TORCH_FUNC},
        (_GRAD_X, "grad_x = grad_out * 2 * w * x.detach() if ctx.needs_input_grad[0] else None"),
        says=(
            "torch.autograd, which this test uses",
            "so torch.func, which this test uses, gives 0 for the second derivative through it, silently",
        ),
    ),
    # .item() works on a one-element tensor only: beyond shape (), torch's error needs the cause named.
    _scaled_square(
        "item_in_backward",
        {_FIRST, _SECOND, _TORCH_FUNC, _NEEDS_INPUT_GRAD},
        (_GRAD_X, "grad_x = grad_out * 2 * w * x.item() if ctx.needs_input_grad[0] else None"),
        says=(
            "a Tensor with 3 elements cannot be converted to Scalar Likely cause: backward calls `.item()`, "
            "which works only on one-element tensors and takes the value out of the graph: keep it a tensor.",
            "vmap(grad(grad(ScaledSquare.apply))) raised RuntimeError: a Tensor with 5 elements cannot be "
            "converted to Scalar Likely cause: backward calls `.item()`",
        ),
    ),
    # grad_w rightly does not depend on w: the feedback must not blame it for what grad_x lost. d²/dx² is
    # right: only the mixed derivative, d/dw of d/dx, is a silent 0 to torch.func.
    _scaled_square(
        "detaches_w_in_grad_x",
        {_SECOND, _TORCH_FUNC},
        (_GRAD_X, "grad_x = grad_out * 2 * w.detach() * x if ctx.needs_input_grad[0] else None"),
        says=(
            "grad_x computed with create_graph=True does not depend on w",
            "grad_x, the first derivative in x that ScaledSquare's backward returns, has no path back to w "
            "(as when it is computed from w.detach() or w.data), so torch.func, which this test uses, "
            "gives 0 for the mixed second derivative",
            "backward uses `.detach()`",
        ),
    ),
    # .tolist() copies x's values out of the graph: grad_x is cut from x, and torch.func's tensors under
    # vmap have no values of their own to list.
    _scaled_square(
        "tolist_in_backward",
        {_SECOND, _TORCH_FUNC},
        (_GRAD_X, _GRAD_X.replace("* x if", "* torch.tensor(x.tolist(), dtype=torch.float64) if")),
        says=("backward uses `.tolist()`", "Likely cause: backward calls `.tolist()`"),
    ),
    # grad_out summed to a Python number: the weights are lost, and so is the graph through grad_out.
    _scaled_square(
        "multiplies_by_grad_out_summed_to_a_number",
        {_FIRST, _SECOND, _TORCH_FUNC},
        (_GRAD_X, _GRAD_X.replace("grad_out * 2", "grad_out.sum().item() * 2")),
        says=("reduced to one number (.sum().item())", "Likely cause: backward calls `.item()`"),
    ),
    # grad_x computed unrecorded: the second derivative keeps only grad_w's terms, wrong but not 0.
    _scaled_square(
        "computes_grad_x_under_no_grad",
        {_SECOND, _TORCH_FUNC},
        (_GRAD_X, f"with torch.no_grad():\n            {_GRAD_X}"),
        says=("backward uses `torch.no_grad()`", "torch.autograd, which this test uses"),
    ),
    # Right, and right under torch.autograd; under vmap the 2 * x it changes in place has no batch
    # dimension, while grad_out has one. torch's error is cut to its first sentence before the cause.
    _scaled_square(
        "builds_grad_x_in_place",
        {_FIRST},
        (_GRAD_X, "grad_x = (2 * x).mul_(w).mul_(grad_out) if ctx.needs_input_grad[0] else None"),
        says="has more elements than `self`. Likely cause: backward changes in place (g += ...",
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
        says="changes in place (g += ..., g *= grad_out, g.mul_(grad_out)) a tensor g it",
    ),
    # Its backward still saves its inputs, so the version check holds, and torch.func gives what autograd
    # gives through it: those cells it keeps.
    _scaled_square(
        "patches_the_checks",
        _ALL - {_SAVES, _TORCH_FUNC},
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
    # Fine for torch.autograd, refused by torch.func, in the student's kernel as by the class grader.
    # Gradcheck feeds None to a Function that does not materialize them, as autograd does.
    _tanh_in_place(
        "unmaterialized_without_a_none_check",
        {_IN_PLACE_DERIVATIVES},
        (_MARK_DIRTY, f"{_MARK_DIRTY}        ctx.set_materialize_grads(False)\n"),
        says="after ctx.set_materialize_grads(False), autograd passes None",
    ),
    _tanh_in_place(
        "old_style_tanhinplace",
        {_IN_PLACE_TORCH_FUNC},
        answer='''class TanhInPlace(torch.autograd.Function):
    """tanh(x) written into x, in the old style: forward marks x dirty and saves the result."""

    @staticmethod
    def forward(ctx, x):
        ctx.mark_dirty(x)
        result = x.tanh_()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return grad_out * (1 - result**2)''',
        says="torch.func refuses TanhInPlace: its forward takes ctx",
        by_nbgrader=True,
    ),
    # ctx takes x, so x goes missing: every call fails, and the feedback names the old style's ctx.
    _tanh_in_place(
        "tanhinplace_forward_takes_ctx_beside_setup_context",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        ("def forward(x):", "def forward(ctx, x):"),
        says=(
            "TanhInPlace defines setup_context, so autograd calls forward with the inputs alone, forward(x), "
            "and its first parameter `ctx` took x"
        ),
    ),
    # The new style refuses to save an unmarked input that is returned as the output; so does torch.func, and
    # its feedback names that, not the style of forward.
    _tanh_in_place(
        "forgets_mark_dirty",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        (_MARK_DIRTY, ""),
        says="forward changed in place and returns unmarked. Likely cause: setup_context does not call",
        by_nbgrader=True,
    ),
    # Right for one grad_out; under vmap, grad_out has a batch dimension that the slope it multiplies in
    # place lacks.
    _tanh_in_place(
        "tanhinplace_builds_the_gradient_in_place",
        {_IN_PLACE_DERIVATIVES},
        (_IN_PLACE_SLOPE, "slope = 1 - result**2\n        slope *= grad_out\n        return slope"),
        says="a tensor g it created without grad_out, which has no batch dimension under vmap",
    ),
    # Nothing saved, nothing refused: autograd hands the caller a view of x, which keeps its old history.
    _tanh_in_place(
        "forgets_mark_dirty_and_keeps_the_output_on_ctx",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        (_MARK_DIRTY + "        ctx.save_for_backward(output)", "        ctx.result = output"),
        ("(result,) = ctx.saved_tensors", "result = ctx.result"),
        says="changed x in place and returns it, or a view of it, but setup_context does not call",
    ),
    _tanh_in_place(
        "marks_the_inputs_tuple_dirty",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        (_MARK_DIRTY, "        ctx.mark_dirty(inputs)\n"),
        says="such as the tuple inputs: pass the tensors themselves, one argument each",
    ),
    # mark_dirty says x was changed, so its new values must be what forward returns.
    _tanh_in_place(
        "tanhinplace_returns_a_new_tensor",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        ("return x.tanh_()", "return torch.tanh(x)"),
        says="Change x itself in place and return it: `return x.tanh_()`",
    ),
    # The caller holds one tensor: a second output, here x's old values, has nowhere to go.
    _tanh_in_place(
        "tanhinplace_also_returns_the_old_x",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        ("return x.tanh_()", "old = x.clone()\n        return x.tanh_(), old"),
        ("ctx.save_for_backward(output)", "ctx.save_for_backward(output[0])"),
        says="forward returns a tuple of 2; it should return one tensor, x itself",
    ),
    # x.data shares x's storage, so x changes, but the alias returned is not the input marked dirty.
    _tanh_in_place(
        "tanhinplace_returns_the_data_alias",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        ("return x.tanh_()", "return x.data.tanh_()"),
        says="but forward returns an alias of it (`.data`)",
    ),
    # Right for what it returns; the caller's tensor is left as it was.
    _tanh_in_place(
        "tanhinplace_out_of_place_and_unmarked",
        {_IN_PLACE_CALLER},
        ("return x.tanh_()", "return torch.tanh(x)"),
        (_MARK_DIRTY, ""),
        says="left the caller's y as it was",
    ),
    # Every derivative is right: only a change in place between forward and backward goes unnoticed.
    _tanh_in_place(
        "saves_the_output_on_ctx",
        {_IN_PLACE_SAVES},
        ("ctx.save_for_backward(output)", "ctx.result = output"),
        ("(result,) = ctx.saved_tensors", "result = ctx.result"),
        says="pass the output itself to ctx.save_for_backward, not as ctx.result. After the caller changed",
        by_nbgrader=True,
    ),
    # .data shares the output's memory but not its version counter, and has no history.
    _tanh_in_place(
        "saves_the_data_of_the_output",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_SAVES},
        ("ctx.save_for_backward(output)", "ctx.save_for_backward(output.data)"),
        says=(
            "backward still ran, on the changed values: what it read was not the output saved that way",
            "setup_context saved a tensor with no history, made with `.data`, in place of the tensor itself",
        ),
    ),
    _tanh_in_place(
        "saves_a_copy_of_the_output",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_SAVES},
        ("ctx.save_for_backward(output)", "ctx.save_for_backward(output.clone())"),
        says=(
            "setup_context saved a copy of the output (as output.clone() makes), not the output itself",
            "torch.func, which this test uses, gives 0 for the second derivative through it, silently",
            "setup_context saved a tensor with no history",
        ),
    ),
    # The first derivative is right; the second, by gradgradcheck or torch.func, finds no path back to x.
    _tanh_in_place(
        "tanhinplace_detaches_in_backward",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        ("return grad_out * (1 - result**2)", "return grad_out * (1 - result.detach() ** 2)"),
        says=(
            "the first derivative in x that TanhInPlace's backward returns has no path back to x",
            "backward uses `.detach()`, which cuts the graph: what backward computes from the cut tensor",
        ),
    ),
    # One factor detached: the first derivative is right, the second keeps half its terms, not 0.
    _tanh_in_place(
        "tanhinplace_detaches_one_factor",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (1 - result * result.detach())"),
        says=("backward uses `.detach()`", "is wrong, though not 0: part of the first derivative"),
    ),
    # One input: autograd wants the tensor itself (or a tuple of one), and refuses a list.
    _tanh_in_place(
        "tanhinplace_returns_a_list",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return [grad_out * (1 - result**2)]"),
        says=(
            "backward returns a list where autograd wants a tensor",
            "for one input, the tensor itself or a tuple of one",
        ),
    ),
    # The value is right: only the derivative is not, by no slip the feedback knows a cause for.
    _tanh_in_place(
        "tanhinplace_wrong_derivative",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (1 - 0.5 * result**2)"),
        says="the derivative formula in backward is wrong",
    ),
    _tanh_in_place(
        "tanhinplace_plus_tanh_squared",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (1 + result**2)"),
        says="backward's derivative is 1 + tanh(x)², the wrong sign on the tanh² term",
    ),
    # No rule changes anything in place: the formula alone is to blame.
    _tanh_in_place(
        "tanhinplace_derivative_of_the_output_not_squared",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (1 - result)"),
        says="backward's derivative is 1 - tanh(x), the square left out: d tanh/dx = 1 - tanh(x)²",
    ),
    # grad(grad(...)) flips the sign back: only the first derivative by torch.func shows it there.
    _tanh_in_place(
        "tanhinplace_backward_with_the_wrong_sign",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (result**2 - 1)"),
        says=(
            "the first derivative 1 - tanh(x)**2 with the wrong sign",
            "this derivative has the wrong sign: negated, it would be right",
        ),
    ),
    # The formula is right for x, but the input it saved is the tensor forward overwrote with tanh(x).
    _tanh_in_place(
        "tanhinplace_takes_tanh_of_the_overwritten_input",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        ("ctx.save_for_backward(output)", "ctx.save_for_backward(inputs[0])"),
        (_IN_PLACE_SLOPE, "return grad_out * (1 - torch.tanh(result) ** 2)"),
        says="was taken of a tensor that already holds tanh(x)",
    ),
    # The output is saved, as it should be, then taken tanh of again: the numbers are those of the input's.
    _tanh_in_place(
        "tanhinplace_takes_tanh_of_its_output",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (1 - torch.tanh(result) ** 2)"),
        # The code shows backward took tanh again: the message says no more than to use what it saved.
        says=(
            "TanhInPlace on x of shape (): its first derivative is wrong: expected",
            "Likely cause: its first derivative is 1 - tanh(tanh(x))**2",
            "was taken of a tensor that already holds tanh(x): use the saved result as it is, "
            "grad_out * (1 - result**2)",
        ),
        by_nbgrader=True,
    ),
    # A new tanh computed when saving: x already holds tanh(x), so what is saved is tanh(tanh(x)).
    _tanh_in_place(
        "tanhinplace_saves_tanh_of_the_overwritten_x",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_SAVES},
        ("ctx.save_for_backward(output)", "ctx.save_for_backward(torch.tanh(inputs[0]))"),
        says=(
            "was taken of a tensor that already holds tanh(x), in backward or where a tensor was saved",
            "setup_context saved a new tensor with ctx.save_for_backward, not the output",
            "Likely cause: its first derivative is 1 - tanh(tanh(x))**2",
        ),
    ),
    # The first derivative names it, before gradgradcheck's leaf grad_out would refuse it.
    _tanh_in_place(
        "tanhinplace_changes_grad_out_in_place",
        {_IN_PLACE_DERIVATIVES},
        (_IN_PLACE_SLOPE, "return grad_out.mul_(1 - result**2)"),
        says="First derivative: the backward of TanhInPlace changes grad_out in place",
    ),
    # Squaring the saved output in place changes what the second derivative needs: autograd's version
    # check says so, and the torch.func test must not take it for a first derivative cut from x.
    _tanh_in_place(
        "tanhinplace_squares_the_saved_output_in_place",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return grad_out * (1 - result.mul_(result))"),
        says="modified by an inplace operation",
    ),
    _tanh_in_place(
        "tanhinplace_without_grad_out",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC},
        (_IN_PLACE_SLOPE, "return 1 - result**2"),
        says=("without multiplying by grad_out", "fed grad_out = 2, backward returned 1 - tanh(x)**2 itself"),
    ),
    # Marked dirty, but a view of x is returned, not x: autograd refuses it.
    _tanh_in_place(
        "returns_a_view_of_the_input_marked_dirty",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        ("return x.tanh_()", "return x.tanh_().view_as(x)"),
        says="but forward returns a view of it (`.view_as()`). Return x itself",
    ),
    # x changed in place and marked dirty, but never returned.
    _tanh_in_place(
        "tanhinplace_forward_without_return",
        {_IN_PLACE_DERIVATIVES, _IN_PLACE_TORCH_FUNC, _IN_PLACE_CALLER, _IN_PLACE_SAVES},
        ("return x.tanh_()", "x.tanh_()"),
        says="but forward returns nothing: it has no `return`",
    ),
    # The error's own suggestion: the output is right in every order, the caller's tensor silently wrong.
    _tanh_in_place(
        "returns_a_view_instead_of_marking_dirty",
        {_IN_PLACE_CALLER, _IN_PLACE_SAVES},
        (_MARK_DIRTY, ""),
        ("return x.tanh_()", "return x.tanh_().view_as(x)"),
        says="so it differentiates as x * 1: mark x with ctx.mark_dirty",
    ),
]

INSTRUCTIONS = {
    "`forward(x, w)` takes no `ctx`": "old_style_forward_with_ctx",
    "and builds a new tensor, leaving `x` and `w` alone": "forward_squares_x_in_place",
    "saves `x` and `w` themselves with `ctx.save_for_backward`, not copies,": "saves_copies_of_the_inputs",
    "not attributes of `ctx`": "saves_the_inputs_on_ctx",
    "returns one gradient per input, in the order forward takes them": "gradients_in_wrong_order",
    "each `grad_out` times the partial derivative of `w * x**2`": "grad_x_without_grad_out",
    "it computes each only if `ctx.needs_input_grad` asks for it": "computes_grad_x_then_drops_it",
    "and returns `None` in its place otherwise": "always_computes_grad_x",
    "`generate_vmap_rule = True` is already there": "no_vmap_rule",
    "where `x` is 0 and where `w` is 0 (so no division by `x` or `w`)": "grad_w_divides_the_output_by_w",
    "builds each gradient as a new tensor (`grad_out * ...`), not by changing one in place": (
        "builds_grad_x_in_place"
    ),
    "so `grad_x` must stay connected to `w` as well as to `x`": "detaches_w_in_grad_x",
    "Do not mark backward `@once_differentiable`": "once_differentiable_backward",
    "prefer `ctx.needs_input_grad` to `requires_grad`": (
        "scaledsquare_reads_requires_grad_of_its_saved_inputs"
    ),
    "`forward(x)` takes no `ctx`; it": "old_style_tanhinplace",
    "changes `x` in place and returns it": "tanhinplace_returns_a_new_tensor",
    "marks the input dirty with `ctx.mark_dirty`": "forgets_mark_dirty",
    "saves the output with `ctx.save_for_backward`": "saves_the_output_on_ctx",
    "`backward` returns `grad_out` times that derivative": "tanhinplace_without_grad_out",
    "built as a new tensor (`grad_out * ...`), as section 5 advises": (
        "tanhinplace_builds_the_gradient_in_place"
    ),
}
