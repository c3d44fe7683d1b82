"""Lesson 06: ScaledSquare and TanhInPlace, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "06_beyond_the_basics"

_SETUP_CONTEXT = "        x, w = inputs\n        ctx.save_for_backward(x, w)"
_GRADS = (
    "        grad_x = grad_out * 2 * w * x if ctx.needs_input_grad[0] else None\n"
    "        grad_w = grad_out * x**2 if ctx.needs_input_grad[1] else None\n"
)

_scaled_square = rewrites_of("scaledsquare")
_tanh_in_place = rewrites_of("tanhinplace")


ALTERNATIVES = [
    # Saved in reverse and unpacked in the same order: backward's x is x.
    _scaled_square(
        "scaledsquare_saves_and_unpacks_in_reverse",
        ("ctx.save_for_backward(x, w)", "ctx.save_for_backward(w, x)"),
        ("        x, w = ctx.saved_tensors", "        w, x = ctx.saved_tensors"),
    ),
    # autograd ignores a None returned beyond the inputs.
    _scaled_square(
        "scaledsquare_returns_a_trailing_none", ("return grad_x, grad_w", "return grad_x, grad_w, None")
    ),
    # The product rule on w * x * x: grad_out twice, for grad_x alone.
    _scaled_square(
        "scaledsquare_grad_x_by_the_product_rule",
        ("grad_out * 2 * w * x if", "grad_out * w * x + grad_out * x * w if"),
    ),
    _scaled_square("scaledsquare_grad_w_as_a_product", ("grad_out * x**2 if", "grad_out * x * x if")),
    # grad_out * x, computed once, serves whichever gradient is needed: no work is thrown away.
    _scaled_square(
        "scaledsquare_shares_grad_out_times_x",
        (
            _GRADS,
            "        shared = grad_out * x\n"
            "        grad_x = 2 * w * shared if ctx.needs_input_grad[0] else None\n"
            "        grad_w = shared * x if ctx.needs_input_grad[1] else None\n",
        ),
    ),
    # torch.where makes a boolean mask: no gradient, and nothing the waste check may compare with one.
    _scaled_square(
        "scaledsquare_grad_w_through_where",
        ("grad_out * x**2 if", "torch.where(x == 0, torch.zeros_like(x), grad_out * x * x) if"),
    ),
    # Broadcasting views both saved tensors and computes nothing: it is no gradient computed for nothing.
    _scaled_square(
        "scaledsquare_broadcasts_what_it_saved",
        ("        x, w = ctx.saved_tensors", "        x, w = torch.broadcast_tensors(*ctx.saved_tensors)"),
    ),
    _scaled_square(
        "scaledsquare_with_its_own_vmap_rule",
        (
            "    generate_vmap_rule = True\n\n",
            "",
        ),
        (
            "        return grad_x, grad_w",
            '''        return grad_x, grad_w

    @staticmethod
    def vmap(info, in_dims, x, w):
        """The whole batch in one call, its dimension first; an unbatched input is expanded."""
        x, w = (
            t.expand(info.batch_size, *t.shape) if dim is None else t.movedim(dim, 0)
            for t, dim in zip((x, w), in_dims)
        )
        return ScaledSquare.apply(x, w), 0''',
        ),
    ),
    _scaled_square(
        "scaledsquare_without_materialized_grads",
        (_SETUP_CONTEXT, "        ctx.set_materialize_grads(False)\n        ctx.save_for_backward(*inputs)"),
        (_GRADS, "        if grad_out is None:\n            return None, None\n" + _GRADS),
    ),
    # The flags a backward may read off the inputs it saved, as ScaledSquare's saves both.
    _scaled_square(
        "scaledsquare_reads_requires_grad_of_its_saved_inputs",
        ("ctx.needs_input_grad[0]", "x.requires_grad"),
        ("ctx.needs_input_grad[1]", "w.requires_grad"),
    ),
    _tanh_in_place(
        "tanhinplace_by_copy",
        ("return x.tanh_()", "return x.copy_(torch.tanh(x))"),
    ),
    _tanh_in_place("tanhinplace_by_out", ("return x.tanh_()", "return torch.tanh(x, out=x)")),
    _tanh_in_place(
        "tanhinplace_slope_as_a_product",
        ("return grad_out * (1 - result**2)", "return grad_out * (1 - result) * (1 + result)"),
    ),
    _tanh_in_place(
        "tanhinplace_saves_the_dirty_input",
        ("ctx.save_for_backward(output)", "ctx.save_for_backward(x)"),
    ),
    _tanh_in_place(
        "tanhinplace_without_materialized_grads",
        ("ctx.mark_dirty(x)\n", "ctx.mark_dirty(x)\n        ctx.set_materialize_grads(False)\n"),
        (
            "(result,) = ctx.saved_tensors\n        return grad_out",
            "if grad_out is None:\n            return None\n"
            "        (result,) = ctx.saved_tensors\n        return grad_out",
        ),
    ),
]
