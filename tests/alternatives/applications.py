"""Lesson 05: hvp, gradient_penalty and loss_with_gradient, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "05_applications"

_HVP_SECOND = "(product,) = torch.autograd.grad(grad_x, x, grad_outputs=v)"
_PENALTY_GRADIENTS = "(gradients,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)"
_PENALTY_RETURN = "return ((gradients.norm(dim=1) - 1) ** 2).mean()"

_hvp = rewrites_of("hvp")
_penalty = rewrites_of("gradient_penalty")
_loss = rewrites_of("loss_with_gradient")


def _one_line_hvp(name: str, product: str):
    """An hvp whose body is one library call."""
    return _hvp(name, answer=f'def hvp(f, x, v):\n    """H(x)·v by a library call."""\n    return {product}')


ALTERNATIVES = [
    _one_line_hvp("hvp_forward_over_reverse", "torch.func.jvp(torch.func.grad(f), (x,), (v,))[1]"),
    _one_line_hvp("hvp_by_torch_func_vjp", "torch.func.vjp(torch.func.grad(f), x)[1](v)[0]"),
    _one_line_hvp("hvp_by_linearize", "torch.func.linearize(torch.func.grad(f), x.detach())[1](v)"),
    _one_line_hvp("hvp_by_autograd_functional_hvp", "torch.autograd.functional.hvp(f, x, v)[1]"),
    _one_line_hvp("hvp_by_autograd_functional_vhp", "torch.autograd.functional.vhp(f, x, v)[1]"),
    _hvp(
        "hvp_copies_x_under_no_grad",
        (
            "    x = x.detach().requires_grad_()\n",
            "    with torch.no_grad():\n        start = x.clone()\n    x = start.requires_grad_()\n",
        ),
    ),
    _hvp("hvp_of_the_dot_product", (_HVP_SECOND, "(product,) = torch.autograd.grad((grad_x * v).sum(), x)")),
    _penalty(
        "penalty_by_torch_func",
        (
            _PENALTY_GRADIENTS,
            "gradients = torch.func.vmap(torch.func.grad(lambda p: critic(p).squeeze()))(points)",
        ),
    ),
    _penalty(
        "penalty_by_functional_call",
        answer='''def gradient_penalty(critic, points):
    """The critic's slope at each point by torch.func, its parameters passed explicitly."""
    parameters = dict(critic.named_parameters())

    def score(point):
        return torch.func.functional_call(critic, parameters, (point,)).squeeze()

    gradients = torch.func.vmap(torch.func.grad(score))(points)
    return ((torch.linalg.vector_norm(gradients, dim=1) - 1) ** 2).mean()''',
    ),
    _penalty(
        "penalty_with_ones_as_grad_outputs",
        (
            _PENALTY_GRADIENTS,
            "scores = critic(points)\n"
            "    (gradients,) = torch.autograd.grad(\n"
            "        scores, points, grad_outputs=torch.ones_like(scores), create_graph=True\n"
            "    )",
        ),
        (_PENALTY_RETURN, "return (gradients.norm(dim=1) - 1).pow(2).sum() / len(points)"),
    ),
    # inputs= keeps the critic's .grad None; the points' .grad, reset, holds no cycle.
    _penalty(
        "penalty_backward_into_its_points_then_resets_them",
        (
            _PENALTY_GRADIENTS,
            "critic(points).sum().backward(create_graph=True, inputs=[points])\n"
            "    gradients = points.grad\n"
            "    points.grad = None",
        ),
    ),
    # inputs= keeps f's parameters' .grad None, and x.grad is put back as found.
    _loss(
        "loss_backward_into_x_then_restores_x_grad",
        (
            "(slope,) = torch.autograd.grad(f(x), x, create_graph=True)",
            "before = x.grad\n    x.grad = None\n    f(x).backward(create_graph=True, inputs=[x])\n"
            "    slope = x.grad\n    x.grad = before",
        ),
    ),
    _loss(
        "loss_by_torch_func",
        answer='''def loss_with_gradient(f, x):
    """f'(x) - 2x + 1, the slope of f taken by torch.func.grad."""
    return torch.func.grad(f)(x) - 2 * x + 1''',
    ),
    _loss(
        "loss_by_autograd_functional_jacobian",
        (
            "(slope,) = torch.autograd.grad(f(x), x, create_graph=True)",
            "slope = torch.autograd.functional.jacobian(f, x, create_graph=True)",
        ),
    ),
]
