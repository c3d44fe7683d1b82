"""Lesson 00: hidden_second_derivative, derivatives_at and accumulate_three, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "00_grad_vs_backward"

_GRAD_OF_HIDDEN = "(f,) = torch.autograd.grad(y, hidden, create_graph=True)"
_THREE_BACKWARDS = "g.backward(retain_graph=True)\n    h.backward(retain_graph=True)\n    y.backward()"

_hidden = rewrites_of("hidden_second_derivative")
_derivatives = rewrites_of("derivatives_at")
_accumulate = rewrites_of("accumulate_three")


ALTERNATIVES = [
    _hidden(
        "hidden_second_derivative_with_ones_as_grad_outputs",
        (_GRAD_OF_HIDDEN, "(f,) = torch.autograd.grad(y, hidden, torch.ones_like(y), create_graph=True)"),
    ),
    _hidden(
        "hidden_second_derivative_by_torch_func",
        answer='''def hidden_second_derivative(net, x):
    """d²y/dl² by torch.func.grad, twice, of the second layer's square, at the first layer's output."""
    hidden, _ = net(x)
    dy_dl = torch.func.grad(lambda l: net.linear2(l).pow(2).sum())
    return torch.func.grad(lambda l: dy_dl(l).sum())(hidden)''',
    ),
    # 2·w2², the formula by hand: recorded, as it is computed from w2.
    _hidden(
        "hidden_second_derivative_by_hand",
        answer='''def hidden_second_derivative(net, x):
    """d²y/dl² = 2·w2², from the derivative of u = w2·l + b2 taken twice."""
    hidden, _ = net(x)
    return 2 * net.linear2.weight**2 * torch.ones_like(hidden)''',
    ),
    _derivatives(
        "derivatives_through_a_helper",
        answer='''def gradient(output, wrt, **options):
    """The one gradient of output with respect to wrt."""
    return torch.autograd.grad(output, wrt, **options)[0]


def derivatives_at(net, x):
    """dy/db2, recorded, and its derivative by w1."""
    _, y = net(x)
    first = gradient(y, net.linear2.bias, create_graph=True)
    return first, gradient(first, net.linear1.weight)''',
    ),
    _derivatives(
        "derivatives_by_functional_call",
        answer='''def derivatives_at(net, x):
    """torch.func.grad of y by b2, then of that by w1, through functional_call."""
    parameters = dict(net.named_parameters())

    def y_of(w1, b2):
        weights = {**parameters, "linear1.weight": w1, "linear2.bias": b2}
        return torch.func.functional_call(net, weights, (x,))[1].sum()

    first = torch.func.grad(y_of, argnums=1)
    second = torch.func.grad(lambda w1, b2: first(w1, b2).sum(), argnums=0)
    w1, b2 = parameters["linear1.weight"].detach(), parameters["linear2.bias"].detach()
    return first(w1, b2), second(w1, b2)''',
    ),
    _accumulate(
        "accumulate_y_first",
        (
            _THREE_BACKWARDS,
            "y.backward(retain_graph=True)\n    h.backward(retain_graph=True)\n    g.backward()",
        ),
    ),
    _accumulate("accumulate_in_one_backward", (_THREE_BACKWARDS, "torch.autograd.backward([g, h, y])")),
    _accumulate("accumulate_the_sum", (_THREE_BACKWARDS, "(y + g + h).sum().backward()")),
    _accumulate(
        "accumulate_in_place_by_hand",
        (
            _THREE_BACKWARDS,
            "parameters = list(net.parameters())\n"
            "    gradients = torch.autograd.grad((y + g + h).sum(), parameters)\n"
            "    for parameter, gradient in zip(parameters, gradients):\n"
            "        if parameter.grad is None:\n"
            "            parameter.grad = torch.zeros_like(parameter)\n"
            "        parameter.grad += gradient",
        ),
    ),
    # The form the hint for += on a None .grad suggests.
    _accumulate(
        "accumulate_into_new_tensors_by_hand",
        (
            _THREE_BACKWARDS,
            "parameters = list(net.parameters())\n"
            "    gradients = torch.autograd.grad((y + g + h).sum(), parameters)\n"
            "    for parameter, gradient in zip(parameters, gradients):\n"
            "        parameter.grad = gradient if parameter.grad is None else parameter.grad + gradient",
        ),
    ),
    # g and h from two calls of their own, the first keeping the graph for the second.
    _accumulate(
        "accumulate_g_and_h_by_two_calls",
        (
            "g, h = torch.autograd.grad(y, [net.linear2.weight, net.linear2.bias], create_graph=True)",
            "(g,) = torch.autograd.grad(y, net.linear2.weight, create_graph=True)\n"
            "    (h,) = torch.autograd.grad(y, net.linear2.bias, create_graph=True)",
        ),
    ),
]
