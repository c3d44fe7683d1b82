"""Lesson 03: Sinh and sinh, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "03_saving_intermediates"

_sinh = rewrites_of("sinh")

_SINH_ALONE = '''

def sinh(x):
    """sinh(x) alone, the other outputs unpacked and dropped."""
    result, _, _ = Sinh.apply(x)
    return result'''


ALTERNATIVES = [
    _sinh(
        "new_style_sinh",
        answer='''class Sinh(torch.autograd.Function):
    """sinh(x) in the new style: setup_context saves exp(x) and exp(-x) from the outputs."""

    @staticmethod
    def forward(x):
        expx = x.exp()
        expnegx = 1 / expx
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, expx, expnegx = output
        ctx.save_for_backward(expx, expnegx)

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        expx, expnegx = ctx.saved_tensors
        return grad_out * (expx + expnegx) / 2 + grad_expx * expx - grad_expnegx * expnegx'''
        + _SINH_ALONE,
    ),
    _sinh(
        "sinh_adds_only_the_gradients_it_gets",
        answer='''class Sinh(torch.autograd.Function):
    """sinh(x), exp(x) and exp(-x); backward adds, in place, only the gradients autograd hands it."""

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        expx, expnegx = torch.exp(x), torch.exp(-x)
        ctx.save_for_backward(expx, expnegx)
        return torch.sinh(x), expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_expx, grad_expnegx):
        expx, expnegx = ctx.saved_tensors
        grad_x = torch.zeros_like(expx)
        if grad_out is not None:
            grad_x += grad_out * (expx + expnegx) / 2
        if grad_expx is not None:
            grad_x += grad_expx * expx
        if grad_expnegx is not None:
            grad_x -= grad_expnegx * expnegx
        return grad_x'''
        + _SINH_ALONE,
    ),
]
