"""Lesson 02: Exp, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "02_saving_outputs"

_FORWARD = "        result = torch.exp(x)"
_BACKWARD = "return grad_out * result"

_exp = rewrites_of("exp")


ALTERNATIVES = [
    _exp(
        "new_style_exp",
        answer='''class Exp(torch.autograd.Function):
    """exp(x) in the new style: setup_context saves the output it is handed."""

    @staticmethod
    def forward(x):
        return x.exp()

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (result,) = ctx.saved_tensors
        return result * grad_out''',
    ),
    _exp(
        "exp_without_materialized_grads",
        (_FORWARD, "        ctx.set_materialize_grads(False)\n" + _FORWARD),
        (_BACKWARD, f"if grad_out is None:\n            return None\n        {_BACKWARD}"),
    ),
    # The exercise prefers the saved result in backward; exp computed again from a saved x is right too.
    _exp(
        "exp_recomputed_from_a_saved_input",
        ("ctx.save_for_backward(result)", "ctx.save_for_backward(result, x)"),
        ("(result,) = ctx.saved_tensors", "_, x = ctx.saved_tensors"),
        (_BACKWARD, "return grad_out * torch.exp(x)"),
    ),
    _exp(
        "exp_grad_accumulated_in_place",
        (
            _BACKWARD,
            "grad_x = torch.zeros_like(result)\n        grad_x += grad_out * result\n        return grad_x",
        ),
    ),
]
