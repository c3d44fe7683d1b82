"""Lesson 00: hidden_gradient, derivatives_at and accumulate_both, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "00_grad_vs_backward"

_GRAD_OF_HIDDEN = "(f,) = torch.autograd.grad(y, hidden, create_graph=True)"
_BOTH_BACKWARDS = "f.backward(retain_graph=True)\n    y.backward()"

_hidden = rewrites_of("hidden_gradient")
_derivatives = rewrites_of("derivatives_at")
_accumulate = rewrites_of("accumulate_both")


ALTERNATIVES = [
    _hidden(
        "hidden_gradient_with_ones_as_grad_outputs",
        (_GRAD_OF_HIDDEN, "(f,) = torch.autograd.grad(y, hidden, torch.ones_like(y), create_graph=True)"),
    ),
    _hidden(
        "hidden_gradient_by_torch_func",
        answer='''def hidden_gradient(net, x):
    """dy/dl by torch.func.grad of the second layer's square, at the first layer's output."""
    hidden, _ = net(x)
    return torch.func.grad(lambda l: net.linear2(l).pow(2).sum())(hidden)''',
    ),
    _derivatives(
        "derivatives_through_a_helper",
        answer='''def gradient(output, wrt, **options):
    """The one gradient of output with respect to wrt."""
    return torch.autograd.grad(output, wrt, **options)[0]


def derivatives_at(net, x):
    """dy/dw1, recorded, and its own derivative."""
    _, y = net(x)
    first = gradient(y, net.linear1.weight, create_graph=True)
    return first, gradient(first, net.linear1.weight)''',
    ),
    _derivatives(
        "derivatives_by_functional_call",
        answer='''def derivatives_at(net, x):
    """torch.func.grad, once and twice, of y as a function of w1 through functional_call."""
    parameters = dict(net.named_parameters())

    def y_of(w1):
        return torch.func.functional_call(net, {**parameters, "linear1.weight": w1}, (x,))[1].sum()

    first = torch.func.grad(y_of)
    second = torch.func.grad(lambda w1: first(w1).sum())
    w1 = parameters["linear1.weight"].detach()
    return first(w1), second(w1)''',
    ),
    _accumulate("accumulate_y_first", (_BOTH_BACKWARDS, "y.backward(retain_graph=True)\n    f.backward()")),
    _accumulate("accumulate_in_one_backward", (_BOTH_BACKWARDS, "torch.autograd.backward([f, y])")),
    _accumulate("accumulate_the_sum", (_BOTH_BACKWARDS, "(y + f).sum().backward()")),
    # hidden.grad holds a graph until f.backward() adds to it: no cycle is left at the end.
    _accumulate(
        "accumulate_f_through_backward_into_hidden",
        (_GRAD_OF_HIDDEN, "y.backward(create_graph=True, inputs=[hidden])\n    f = hidden.grad"),
    ),
    _accumulate(
        "accumulate_in_place_by_hand",
        (
            _BOTH_BACKWARDS,
            "parameters = list(net.parameters())\n"
            "    for parameter, g in zip(parameters, torch.autograd.grad((y + f).sum(), parameters)):\n"
            "        if parameter.grad is None:\n"
            "            parameter.grad = torch.zeros_like(parameter)\n"
            "        parameter.grad += g",
        ),
    ),
    # The form the hint for += on a None .grad suggests.
    _accumulate(
        "accumulate_into_new_tensors_by_hand",
        (
            _BOTH_BACKWARDS,
            "parameters = list(net.parameters())\n"
            "    for parameter, g in zip(parameters, torch.autograd.grad((y + f).sum(), parameters)):\n"
            "        parameter.grad = g if parameter.grad is None else parameter.grad + g",
        ),
    ),
]
