"""Lesson 06: ScaledSquare, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "06_beyond_the_basics"

_SETUP_CONTEXT = "        x, w = inputs\n        ctx.save_for_backward(x, w)"
_GRADS = (
    "        grad_x = grad_out * 2 * w * x if ctx.needs_input_grad[0] else None\n"
    "        grad_w = grad_out * x**2 if ctx.needs_input_grad[1] else None\n"
)

_scaled_square = rewrites_of("scaledsquare")


ALTERNATIVES = [
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
]
