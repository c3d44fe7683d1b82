"""Lesson 07: mistakes in Tanh, the Function with both rules, backward and jvp."""

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

_SAVE = "ctx.save_for_backward(output)\n        ctx.save_for_forward(output)"
_SAVE_FOR_FORWARD = "        ctx.save_for_forward(output)\n"
_SAVE_FOR_BACKWARD = "        ctx.save_for_backward(output)\n"
_LOAD = "(result,) = ctx.saved_tensors"
_BACKWARD = "return grad_out * (1 - result**2)"
_JVP = "return x_t * (1 - result**2)"
_JVP_METHOD = (
    "\n\n    @staticmethod\n    def jvp(ctx, x_t):\n        (result,) = ctx.saved_tensors\n"
    "        return x_t * (1 - result**2)"
)

_tanh = mistakes_in("tanh")


MUTANTS = [
    _tanh(
        "forward_computes_sin", _ALL, ("return torch.tanh(x)", "return torch.sin(x)"), says="Forward value"
    ),
    # A forward near tanh: every check that differentiates it says forward is wrong first.
    _tanh(
        "forward_forgets_the_sigmoids_factor_two",
        _ALL,
        ("return torch.tanh(x)", "return 2 * torch.sigmoid(x) - 1"),
        says=(
            "Forward value",
            "forward itself is wrong (see the forward check): Tanh.apply(x) is not tanh(x)",
        ),
    ),
    # A forward right to float32's precision: every check that differentiates it names the dtype.
    _tanh(
        "forward_returns_float32",
        _ALL,
        ("return torch.tanh(x)", "return torch.tanh(x.float())"),
        says=(
            "keep the input's dtype",
            "forward returns a dtype of lower precision than its input",
            "forward's values agree with tanh(x), but its dtype is wrong",
        ),
    ),
    # Forward over reverse differentiates a sum weighted by w: backward gets a grad_out other than ones.
    _tanh(
        "backward_ignores_grad_out",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return 1 - result**2"),
        says=(
            "without multiplying by grad_out",
            "the gradient of a sum weighted by w is w * (1 - result**2)",
            "backward returns tanh's derivative without multiplying by grad_out (backward's argument after "
            "ctx). Reverse over forward differentiates the tangent back through backward",
        ),
    ),
    # The tangent is right, so forward mode and forward over reverse pass; only reverse over forward,
    # which differentiates the tangent, finds it constant.
    # torch.diag on the 0-dim input: backward multiplies element by element, it builds no Jacobian.
    _tanh(
        "backward_builds_a_jacobian",
        {_FIRST, _SECOND},
        (_BACKWARD, "return torch.diag(1 - result**2) @ grad_out"),
        says="backward needs no Jacobian matrix for a function applied element by element: multiply",
    ),
    _tanh(
        "forward_changes_its_input_in_place",
        _ALL,
        ("return torch.tanh(x)", "return x.tanh_()"),
        says="forward calls `.tanh_()`, which changes its input in place",
    ),
    _tanh(
        "jvp_under_no_grad",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "with torch.no_grad():\n            return x_t * (1 - result**2)"),
        says=(
            "the tangent jvp returns is right, but autograd recorded nothing of it",
            "jvp uses `torch.no_grad()`",
        ),
    ),
    _tanh(
        "jvp_detaches_the_saved_output",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "return x_t * (1 - result.detach() ** 2)"),
        says="no path from it back to x, so reverse over forward finds its derivative in x zero",
    ),
    _tanh(
        "jvp_wrong_at_second_order",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "return x_t * (1 - result * result.detach())"),
    ),
    _tanh(
        "jvp_ignores_the_tangent",
        _EVERY_FORWARD_MODE,
        (_JVP, "return 1 - result**2"),
        says=("without multiplying by the tangent", "so H·v is off too"),
    ),
    _tanh(
        "forgets_save_for_forward",
        _EVERY_FORWARD_MODE,
        (_SAVE_FOR_FORWARD, ""),
        says="ctx.save_for_forward(output)",
    ),
    # Saved for forward only: backward finds ctx.saved_tensors empty, though jvp has what it needs.
    _tanh(
        "saves_for_forward_only",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE_FOR_BACKWARD, ""),
        says="setup_context calls ctx.save_for_forward only, and what it saves feeds jvp alone",
    ),
    # jvp reads the output from a ctx attribute: every derivative is right, but the output and its node form a
    # reference cycle, freed only by the garbage collector.
    _tanh(
        "tanh_jvp_reads_a_ctx_attribute",
        {_FORWARD_MODE},
        (_SAVE, "ctx.save_for_backward(output)\n        ctx.result = output"),
        (
            "(result,) = ctx.saved_tensors\n        return x_t * (1 - result**2)",
            "return x_t * (1 - ctx.result**2)",
        ),
        says="setup_context keeps the output on ctx.result",
    ),
    # Every derivative is right: a change in place of the output goes unnoticed by backward, and the output
    # kept on ctx forms a reference cycle.
    _tanh(
        "saves_the_output_on_ctx",
        {_FIRST, _FORWARD_MODE},
        (_SAVE, "ctx.result = output"),
        (_LOAD, "result = ctx.result"),
        says="it read the output from where autograd's version check cannot see it",
    ),
    # backward reads a ctx attribute and save_for_backward is never called: the counts differ, 0 and 1.
    _tanh(
        "backward_reads_a_ctx_attribute",
        {_FIRST, _FORWARD_MODE, _REVERSE_OVER_FORWARD},
        (_SAVE_FOR_BACKWARD, "        ctx.result = output\n"),
        (_LOAD, "result = ctx.result"),
        says=(
            "setup_context saves 0 tensors for backward (it never calls ctx.save_for_backward) and 1 for jvp",
            "Where ctx.save_for_backward is not called at all (a ctx attribute instead), call it",
        ),
    ),
    # A copy made in setup_context has no history: both second derivatives through it are lost.
    _tanh(
        "saves_copies_for_both_rules",
        {_SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE, "ctx.save_for_backward(output.clone())\n        ctx.save_for_forward(output.clone())"),
        says=("`.clone()` in setup_context", "setup_context saves a tensor made with `.clone()`"),
    ),
    _tanh(
        "saves_detached_outputs_for_both_rules",
        {_SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE, "ctx.save_for_backward(output.detach())\n        ctx.save_for_forward(output.detach())"),
        says=("made with `.detach()`, in place of the tensor itself", "`.detach()` in setup_context"),
    ),
    _tanh("no_jvp", _EVERY_FORWARD_MODE, (_JVP_METHOD, "")),
    # A tangent detached from the caller's v: right everywhere, but reverse over forward finds no path to v.
    _tanh(
        "jvp_detaches_the_tangent",
        {_REVERSE_OVER_FORWARD},
        (_JVP, "return x_t.detach() * (1 - result**2)"),
        says="no path from it back to the tangent v it was given: jvp uses `.detach()` on x_t",
    ),
    _tanh(
        "jvp_squares_one_minus_the_output",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - result) ** 2"),
        says=("jvp squares 1 - result", "so H·v is off too"),
    ),
    _tanh(
        "jvp_copies_exps_rule",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * result"),
        says=("jvp multiplies by the output itself, exp's rule", "so H·v is off too"),
    ),
    # One tangent and a None, as if forward had two outputs: torch counts the tangents and refuses them.
    _tanh(
        "jvp_returns_an_extra_item",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - result**2), None"),
        says="jvp returns a count of tangents other than its forward's outputs",
    ),
    _tanh(
        "jvp_forgets_return",
        _EVERY_FORWARD_MODE,
        (_JVP, "x_t * (1 - result**2)"),
        says="jvp returns no tensor (None, as when it computes the tangent without `return`)",
    ),
    # The tangent is right, but the saved output, which the caller holds, is squared in place.
    _tanh(
        "jvp_squares_the_output_in_place",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - result.square_())"),
        says=(
            "jvp changes the saved output in place",
            "and backward, which reverse mode runs through to differentiate the tangent, reads that changed "
            "output",
            "and backward, which forward over reverse differentiates, reads that changed output",
        ),
    ),
    # The whole slope changed into 1 - result**2 in place: the caller's output is no longer tanh(x).
    _tanh(
        "jvp_turns_the_output_into_its_slope_in_place",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * result.square_().neg_().add_(1)"),
        says=(
            "jvp changes the saved output in place",
            "and backward, which reverse mode runs through to differentiate the tangent, reads that changed "
            "output",
            "and backward, which forward over reverse differentiates, reads that changed output",
        ),
    ),
    # Right without vmap; jacfwd batches x_t, and the slope jvp made has no batch dimension to take it.
    _tanh(
        "jvp_scales_its_slope_in_place",
        _EVERY_FORWARD_MODE,
        (_JVP, "slope = 1 - result**2\n        return slope.mul_(x_t)"),
        says="jvp changes in place (slope.mul_(x_t), slope *= x_t) a tensor it created without x_t",
    ),
    _tanh(
        "jvp_flips_the_sign",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (result**2 - 1)"),
        says=("jvp's tangent has the wrong sign", "so H·v is off too"),
    ),
    # Its Hessian equals that of the same slip in backward: the gradient beside it tells them apart.
    _tanh(
        "backward_flips_the_sign",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return grad_out * (result**2 - 1)"),
        says=(
            "backward's gradient has the wrong sign",
            "Forward over reverse differentiates backward's gradient, so H·v is off too",
            "Reverse over forward differentiates the tangent back through backward",
        ),
    ),
    _tanh(
        "jvp_applies_tanh_to_the_tangent",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - torch.tanh(x_t) ** 2)"),
        says=("jvp applies tanh to the tangent x_t", "so H·v is off too"),
    ),
    _tanh(
        "jvp_returns_the_derivative_at_the_tangent",
        _EVERY_FORWARD_MODE,
        (_JVP, "return 1 - torch.tanh(x_t) ** 2"),
        says=("jvp returns tanh's derivative at the tangent, 1 - tanh(x_t)**2", "so H·v is off too"),
    ),
    _tanh(
        "jvp_takes_cosh_of_the_output",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t / torch.cosh(result) ** 2"),
        says=("jvp applies tanh (or cosh) to the saved output as if it were x", "so H·v is off too"),
    ),
    # 1 - tanh(result)**2 equals 1 / cosh(result)**2: the cause names both spellings.
    _tanh(
        "jvp_applies_tanh_to_the_output",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - torch.tanh(result) ** 2)"),
        says=("jvp applies tanh (or cosh) to the saved output as if it were x", "so H·v is off too"),
    ),
    _tanh(
        "backward_applies_tanh_to_the_output",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return grad_out * (1 - torch.tanh(result) ** 2)"),
        says=(
            "backward applies tanh (or cosh) to the saved output as if it were x",
            "Forward over reverse differentiates backward's gradient, so H·v is off too",
            "Reverse over forward differentiates the tangent back through backward",
        ),
    ),
    # Its Hessian is the right one negated: the cause names jvp's formula, not a sign in the Hessian.
    _tanh(
        "jvp_adds_the_square",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 + result**2)"),
        says=(
            "jvp uses 1 + result**2, a wrong sign inside",
            "Forward over reverse starts from that tangent, so H·v is off too",
            "Reverse over forward differentiates that tangent",
        ),
    ),
    _tanh(
        "backward_adds_the_square",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return grad_out * (1 + result**2)"),
        says=(
            "backward uses 1 + result**2, a wrong sign inside",
            "Forward over reverse differentiates backward's gradient, so H·v is off too",
            "Reverse over forward differentiates the tangent back through backward",
        ),
    ),
    _tanh(
        "jvp_returns_its_tangent",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t"),
        says=("jvp returns the tangent x_t as it came", "so H·v is off too"),
    ),
    _tanh(
        "jvp_multiplies_by_the_tangent_twice",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * x_t * (1 - result**2)"),
        # The Hessian's unit tangents hide it (e_j * e_j = e_j): only H·v along a random v shows it.
        says=("jvp multiplies by the tangent twice", "so H·v is off too"),
    ),
    # Only a direction whose entries do not sum to 1 shows it: a unit tangent e_j sums to 1.
    # A grad_out of ones hides it where the gradient of a plain sum is taken: the weighted sum shows it.
    _tanh(
        "backward_sums_grad_out",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return grad_out.sum() * (1 - result**2)"),
        says="backward multiplies by grad_out reduced to one number (.sum())",
    ),
    _tanh(
        "jvp_sums_the_tangent",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t.sum() * (1 - result**2)"),
        says="jvp sums the tangent (x_t.sum())",
    ),
    # Sums of the tangent jvp returns: one number, which torch refuses for a larger output, or one number
    # per output, the wrong one.
    _tanh(
        "jvp_returns_one_number",
        _EVERY_FORWARD_MODE,
        (_JVP, "return (x_t * (1 - result**2)).sum()"),
        says="jvp must return one tangent shaped like the output",
    ),
    _tanh(
        "jvp_sums_the_derivative",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - result**2).sum()"),
        says="jvp sums the derivative ((1 - result**2).sum())",
    ),
    _tanh(
        "jvp_spreads_its_sum",
        _EVERY_FORWARD_MODE,
        (_JVP, "return (x_t * (1 - result**2)).sum() * torch.ones_like(x_t)"),
        says="jvp sums the tangent it returns and spreads that one number over the output",
    ),
    # Through .detach() and NumPy, backward's values are right and carry no history: reverse over reverse
    # names both calls; torch.func refuses the NumPy call outright.
    _tanh(
        "backward_through_numpy",
        {_SECOND, _FORWARD_OVER_REVERSE},
        (_BACKWARD, "return grad_out * torch.as_tensor(1 - result.detach().numpy() ** 2)"),
        says="takes the values out of torch (`.detach()` and `.numpy()`)",
    ),
    # A tangent computed in NumPy: torch.func refuses the call; under forward_ad, with x requiring grad,
    # torch refuses it too, and the message warns off torch's advice, .detach().numpy().
    _tanh(
        "jvp_through_numpy",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * torch.from_numpy(1 - result.numpy() ** 2)"),
        says=(
            "jvp calls `.numpy()`, which reads the values out of torch",
            "Do not call `.detach().numpy()` instead: the result is cut off from the graph",
        ),
    ),
    # A gradient made from plain numbers carries no tangent: forward over reverse names the call.
    _tanh(
        "backward_through_tolist",
        {_SECOND, _FORWARD_OVER_REVERSE},
        (_BACKWARD, "return grad_out * torch.tensor((1 - result**2).tolist(), dtype=result.dtype)"),
        says=(
            "backward uses `.tolist()`",
            "H·v is 0 though the first derivative is right: backward uses `.tolist()`",
        ),
    ),
    _tanh(
        "jvp_changes_its_tangent_in_place",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t.mul_(1 - result**2)"),
        says=(
            "jvp changes its tangent x_t in place (x_t.mul_(...), x_t *= ...). x_t is the caller's tensor",
            "and x_t is the caller's direction v, which it changed",
        ),
    ),
    # Saved for forward twice over: jvp's ctx.saved_tensors holds two tensors, and jvp unpacks one.
    _tanh(
        "saves_two_tensors_for_forward",
        _EVERY_FORWARD_MODE,
        (_SAVE_FOR_FORWARD, "        ctx.save_for_forward(inputs[0], output)\n"),
        says="in jvp, ctx.saved_tensors holds what ctx.save_for_forward saved",
    ),
    # jacfwd, torch.func.hessian and jacrev over jacfwd all run jvp under vmap.
    _tanh(
        "no_vmap_rule",
        _EVERY_FORWARD_MODE,
        ("    generate_vmap_rule = True\n\n", ""),
        says="does not have vmap support",
    ),
    _tanh(
        "backward_wrong_at_second_order",
        {_SECOND, _FORWARD_OVER_REVERSE},
        (_BACKWARD, "return grad_out * (1 - result * result.detach())"),
    ),
    # Forward mode is not switched off by torch.no_grad(): only reverse over reverse finds it constant.
    _tanh(
        "backward_under_no_grad",
        {_SECOND},
        (_BACKWARD, "with torch.no_grad():\n            return grad_out * (1 - result**2)"),
        says="backward uses `torch.no_grad()`",
    ),
    # torch.func follows .data; autograd's double backward and forward_ad's forward over reverse do not.
    _tanh(
        "backward_reads_data",
        {_SECOND, _FORWARD_OVER_REVERSE},
        (_BACKWARD, "return grad_out * (1 - result.data**2)"),
        says=(
            "backward uses `.data`",
            "H·v is 0 though the first derivative is right: backward uses `.data`",
        ),
    ),
    # vmap cannot detach the batched incoming gradients, and a detached grad_out has no second derivative.
    _tanh(
        "backward_detaches_grad_out",
        {_FIRST, _SECOND},
        (_BACKWARD, "return grad_out.detach() * (1 - result**2)"),
        says="the gradient with respect to grad_out is lost: keep grad_out attached",
    ),
    # setup_context runs with grad disabled: the clone has no history, so only reverse over forward sees it.
    _tanh(
        "saves_a_copy_for_forward",
        {_REVERSE_OVER_FORWARD},
        (_SAVE_FOR_FORWARD, "        ctx.save_for_forward(output.clone())\n"),
        says="setup_context saves a tensor made with `.clone()` in place of the output itself",
    ),
    # A tanh recomputed in setup_context has no history with or without .detach(): the feedback names the
    # recomputation, not the .detach() (setup_context runs with grad disabled anyway).
    _tanh(
        "jvp_reads_a_tanh_recomputed_in_setup_context",
        {_REVERSE_OVER_FORWARD},
        (_SAVE_FOR_FORWARD, "        ctx.t = torch.tanh(inputs[0]).detach()\n"),
        (_LOAD + "\n        return x_t", "result = ctx.t\n        return x_t"),
        says="setup_context saves a tensor made with `.detach()` in place of the output itself",
    ),
    # A tanh recomputed in setup_context has no history and no link to the output: every second derivative
    # through it is lost, and the checks that read the code name the recomputation.
    _tanh(
        "saves_a_tanh_it_computes",
        {_SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (
            _SAVE,
            "ctx.save_for_backward(torch.tanh(inputs[0]))\n"
            "        ctx.save_for_forward(torch.tanh(inputs[0]))",
        ),
        says=(
            "setup_context saves a tanh it computed itself (torch.tanh(inputs[0]))",
            "setup_context saves a tensor it computed itself (with `tanh`) in place of the output",
        ),
    ),
    _tanh(
        "backward_detaches_the_saved_output",
        {_SECOND, _FORWARD_OVER_REVERSE},
        (_BACKWARD, "return grad_out * (1 - result.detach() ** 2)"),
        says="H·v is 0 though the first derivative is right: backward uses `.detach()`",
    ),
    _tanh(
        "jvp_forgets_the_square",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * (1 - result)"),
        says=(
            "jvp uses 1 - result",
            "so H·v is off too",
            "Reverse over forward differentiates that tangent: fix it first (see the forward-mode check)",
        ),
    ),
    # The same slip in backward: forward over reverse and reverse over forward differentiate backward's
    # gradient, and name it as the first-derivative check does.
    _tanh(
        "backward_forgets_the_square",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return grad_out * (1 - result)"),
        says=(
            "backward uses 1 - result, not 1 - result**2",
            "Forward over reverse differentiates backward's gradient, so H·v is off too",
            "Reverse over forward differentiates the tangent back through backward",
        ),
    ),
    _tanh(
        "jvp_drops_the_one_minus",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * result**2"),
        says=("jvp drops the 1 - of tanh's derivative", "so H·v is off too"),
    ),
    # jvp is right, but the two calls save different counts: torch.func batches backward's one saved tensor
    # by the two batch dimensions ctx.save_for_forward, called last, recorded, under jacrev over jacfwd.
    _tanh(
        "saves_the_input_for_forward_too",
        {_REVERSE_OVER_FORWARD},
        (_SAVE_FOR_FORWARD, "        ctx.save_for_forward(inputs[0], output)\n"),
        (_LOAD + "\n        return x_t", "(_, result) = ctx.saved_tensors\n        return x_t"),
        says=(
            "ctx.save_for_backward and ctx.save_for_forward were given different numbers of tensors",
            "setup_context saves 1 tensor for backward and 2 for jvp, with ctx.save_for_forward called last "
            "(backward unpacks 1 and jvp unpacks 2)",
        ),
    ),
    # The reverse: backward's two saved tensors are batched by the one ctx.save_for_forward recorded.
    _tanh(
        "saves_the_input_for_backward_too",
        {_REVERSE_OVER_FORWARD},
        (_SAVE_FOR_BACKWARD, "        ctx.save_for_backward(inputs[0], output)\n"),
        (_LOAD + "\n        return grad_out", "(_, result) = ctx.saved_tensors\n        return grad_out"),
        says=(
            "ctx.save_for_backward and ctx.save_for_forward were given different numbers of tensors",
            "setup_context saves 2 tensors for backward and 1 for jvp, with ctx.save_for_forward called last "
            "(backward unpacks 2 and jvp unpacks 1)",
        ),
    ),
    _tanh(
        "backward_misses_its_parentheses",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_BACKWARD, "return grad_out * 1 - result**2"),
        says="backward returns grad_out * 1 - result**2, which subtracts result**2 from grad_out",
    ),
    _tanh(
        "jvp_misses_its_parentheses",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t * 1 - result**2"),
        says=("jvp's formula misses its parentheses", "so H·v is off too"),
    ),
    _tanh(
        "saves_a_detached_output",
        {_SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE, "ctx.save_for_backward(output.detach())\n        ctx.save_for_forward(output.detach())"),
        says="setup_context saves a tensor made with `.detach()` in place of the output itself",
    ),
    # Forward mode runs through the tanh recomputed under torch.no_grad(): only the reverse passes lose it.
    _tanh(
        "recomputes_from_the_input_under_no_grad",
        {_SECOND, _REVERSE_OVER_FORWARD},
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
        says=("backward reads the saved input as if it were the output", "jvp reads the saved input"),
    ),
    # One save_for_backward call of two tensors, and backward unpacks one: no call replaced another.
    _tanh(
        "backward_unpacks_fewer_than_it_saved",
        {_FIRST, _SECOND, _FORWARD_OVER_REVERSE, _REVERSE_OVER_FORWARD},
        (_SAVE_FOR_BACKWARD, "        ctx.save_for_backward(output, inputs[0])\n"),
        says="backward unpacks 1 tensor but ctx.save_for_backward saved 2",
    ),
    # Only on a 1-dim input does a Jacobian by torch.diag give the tangent: a hidden check's x is 0-dim.
    _tanh(
        "jvp_builds_a_jacobian",
        {_FORWARD_MODE},
        (_JVP, "return x_t @ torch.diag(1 - result**2)"),
        says="jvp builds the Jacobian as a matrix",
    ),
    _tanh(
        "jvp_adds_the_tangent_to_the_derivative",
        _EVERY_FORWARD_MODE,
        (_JVP, "return x_t + (1 - result**2)"),
        says="jvp adds the tangent to the derivative; it multiplies",
    ),
    _tanh(
        "patches_the_checks",
        _ALL,
        ("class Tanh", patch_the_checks("class Tanh")),
        ("return torch.tanh(x)", "return torch.sin(x)"),
    ),
    _tanh("imports_the_reference", _ALL, answer="from solutions.forward_mode import Tanh  # noqa"),
]

INSTRUCTIONS = {
    "`forward(x)`: return `torch.tanh(x)`": "forward_computes_sin",
    "`setup_context(ctx, inputs, output)`: save what backward reads with `ctx.save_for_backward`": (
        "saves_for_forward_only"
    ),
    "and what `jvp` reads with `ctx.save_for_forward`": "forgets_save_for_forward",
    "Do not keep it as a ctx attribute (`ctx.result = output`)": "tanh_jvp_reads_a_ctx_attribute",
    "Prefer the *output*, since tanh's derivative, $1 - \\tanh^2 x$, needs only the output": (
        "tanh_from_the_saved_input"
    ),
    "The two save calls were given different numbers of tensors, with `ctx.save_for_forward` called last": (
        "saves_the_input_for_forward_too"
    ),
    "Prefer giving each save call the output alone": "tanh_saves_the_input_for_backward_last",
    "This check passes if autograd refuses the changed output (it does for an output saved with "
    "`ctx.save_for_backward`), or if backward returns the same gradient as before the change": (
        "saves_the_output_on_ctx"
    ),
    "`x_t.mul_(...)`: `x_t` is the caller's tangent, so this changes the caller's tensor": (
        "jvp_changes_its_tangent_in_place"
    ),
    "not `.detach()`, `.data`, `.tolist()` or NumPy": "backward_through_tolist",
    "`backward(ctx, grad_out)`: return `grad_out` times tanh's derivative": "backward_ignores_grad_out",
    "times tanh's derivative, computed from the saved output": "saves_the_input_with_the_output_formula",
    "`jvp(ctx, x_t)`: return the output's tangent, $J\\,x_t$, as derived above": "jvp_ignores_the_tangent",
    "Prefer building it as a new tensor (`x_t * ...`)": "tanh_tangent_scaled_in_place",
    "`slope.mul_(x_t)` under `vmap`: a tensor made without `x_t` has no batch dimension": (
        "jvp_scales_its_slope_in_place"
    ),
    "`result.square_()`: the saved output is the very tensor the caller gets back": (
        "jvp_squares_the_output_in_place"
    ),
    "Use torch operations on the saved tensors in both rules, so that reverse mode can differentiate each of "
    "them": "jvp_under_no_grad",
    "`generate_vmap_rule = True` is already there": "no_vmap_rule",
    "Save the output itself, not a copy of it": "saves_a_copy_for_forward",
    "`output.detach()` never has history": "saves_detached_outputs_for_both_rules",
    "that reads `ctx.result` also escapes autograd's check that the output was not changed in place": (
        "saves_the_output_on_ctx"
    ),
    "with nothing saved by `save_for_backward`, the counts saved for the two rules differ": (
        "backward_reads_a_ctx_attribute"
    ),
}
