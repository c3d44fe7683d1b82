"""Lesson 00: mistakes in hidden_gradient, derivatives_at and accumulate_both."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "00_grad_vs_backward"

_HIDDEN = "hidden_gradient_differentiable"
_DERIVATIVES = "derivatives_at_values"
_ACCUMULATE = "accumulate_both_grads"

_GRAD_OF_HIDDEN = "(f,) = torch.autograd.grad(y, hidden, create_graph=True)"
_FIRST = "(first,) = torch.autograd.grad(y, w1, create_graph=True)"
_BOTH_BACKWARDS = "f.backward(retain_graph=True)\n    y.backward()"
_F_BACKWARD = "f.backward(retain_graph=True)"


_hidden = mistakes_in("hidden_gradient", frozenset({_HIDDEN}))


_derivatives = mistakes_in("derivatives_at", frozenset({_DERIVATIVES}))


_accumulate = mistakes_in("accumulate_both", frozenset({_ACCUMULATE}))


MUTANTS = [
    # hidden_gradient: the gradient must come back recorded, as a tensor, with .grad untouched.
    _hidden(
        "hidden_backward_instead_of_grad",
        (_GRAD_OF_HIDDEN, "hidden.retain_grad()\n    y.backward(create_graph=True)"),
        ("return f", "return hidden.grad"),
        says="which should stay None",
    ),
    _hidden("hidden_forgets_create_graph", (", create_graph=True", ""), says="does not require grad"),
    _hidden("hidden_detaches_result", ("return f", "return f.detach()")),
    _hidden("hidden_returns_item", ("return f", "return f.item()"), says="instead of a tensor"),
    _hidden(
        "hidden_squeezes_the_result",
        ("return f", "return f.squeeze()"),
        says="got shape () instead of (1, 1)",
    ),
    _hidden(
        "hidden_differentiates_with_respect_to_u",
        answer=(
            "def hidden_gradient(net, x):\n"
            "    u = net.linear2(net.linear1(x))\n"
            "    (f,) = torch.autograd.grad(u.pow(2), u, create_graph=True)\n"
            "    return f\n"
        ),
        says="y is differentiated with respect to u = w2·l + b2, not the hidden value l",
    ),
    _hidden(
        "hidden_differentiates_with_respect_to_w1",
        (
            "(f,) = torch.autograd.grad(y, hidden, create_graph=True)",
            "(f,) = torch.autograd.grad(y, net.linear1.weight, create_graph=True)",
        ),
        says="the gradient is taken with respect to w1, not the hidden value l",
    ),
    _hidden(
        "hidden_forgets_the_square",
        answer=(
            "def hidden_gradient(net, x):\n"
            "    hidden, _ = net(x)\n"
            "    (f,) = torch.autograd.grad(net.linear2(hidden), hidden, create_graph=True)\n"
            "    return f\n"
        ),
        says="the square is left out",
    ),
    # Right in value, but hidden.grad holds a gradient whose graph leads back to hidden: a cycle never freed.
    _hidden(
        "hidden_backward_into_hidden_grad",
        (_GRAD_OF_HIDDEN, "y.backward(inputs=[hidden], create_graph=True)\n    f = hidden.grad"),
        says="leaks memory",
    ),
    # The lesson's numbers from a network of its own: right on the visible test, cut from the arguments.
    _hidden(
        "hidden_builds_its_own_network",
        answer=(
            "def hidden_gradient(net, x):\n"
            "    hidden, y = TinyNet().double()(make_input().double())\n"
            "    (f,) = torch.autograd.grad(y, hidden, create_graph=True)\n"
            "    return f\n"
        ),
        says="computed from tensors other than the arguments (a network or a tensor made inside",
    ),
    _hidden("imports_the_reference", answer="from solutions.grad_vs_backward import hidden_gradient  # noqa"),
    # derivatives_at: autograd.grad twice, the first recorded.
    _derivatives(
        "derivatives_backward_instead_of_grad",
        (_FIRST, "y.backward(create_graph=True)\n    first = w1.grad"),
        says="which should stay None",
    ),
    _derivatives(
        "derivatives_forget_create_graph",
        (", create_graph=True", ""),
        says="a gradient computed without create_graph=True",
    ),
    _derivatives(
        "derivatives_in_the_wrong_order",
        ("return first, second", "return second, first"),
        says="the pair is in the wrong order",
    ),
    _derivatives(
        "derivatives_differentiate_y_twice",
        ("(second,) = torch.autograd.grad(first, w1)", "(second,) = torch.autograd.grad(y, w1)"),
        says="the second call differentiates y again, not the first derivative",
    ),
    _derivatives(
        "derivatives_return_items",
        ("return first, second", "return first.item(), second.item()"),
        says="instead of a tensor",
    ),
    _derivatives(
        "derivatives_squeeze_the_results",
        ("return first, second", "return first.squeeze(), second.squeeze()"),
        says="got shape () instead of (1, 1)",
    ),
    _derivatives(
        "derivatives_second_with_respect_to_w2",
        (
            "(second,) = torch.autograd.grad(first, w1)",
            "(second,) = torch.autograd.grad(first, net.linear2.weight)",
        ),
        says="differentiates dy/dw1 with respect to w2, not w1",
    ),
    # The visible test uses the lesson's network; the hidden ones draw random weights.
    _derivatives(
        "derivatives_hard_code_the_lesson_numbers",
        says="that `random_net` builds",
        answer='''def derivatives_at(net, x):
    """The numbers of the lesson's network, whatever the network."""
    return torch.tensor([[480.0]], dtype=torch.float64), torch.tensor([[128.0]], dtype=torch.float64)''',
    ),
    # accumulate_both: one shared graph kept for the second backward, and .grad left to add up.
    _accumulate(
        "accumulate_forgets_retain_graph", (_F_BACKWARD, "f.backward()"), says="pass retain_graph=True"
    ),
    # .grad replaced, or cleared first: right from empty .grad, wrong from the second test's .grad of 1.
    _accumulate(
        "accumulate_replaces_the_grad",
        answer=(
            "def accumulate_both(net, x):\n"
            "    hidden, y = net(x)\n"
            "    (f,) = torch.autograd.grad(y, hidden, create_graph=True)\n"
            "    parameters = list(net.parameters())\n"
            "    gradients = torch.autograd.grad((y + f).sum(), parameters)\n"
            "    for parameter, gradient in zip(parameters, gradients):\n"
            "        parameter.grad = gradient\n"
        ),
        says="the .grad already there was replaced or cleared",
    ),
    _accumulate(
        "accumulate_zeroes_first",
        ("    hidden, y = net(x)\n", "    net.zero_grad()\n    hidden, y = net(x)\n"),
    ),
    _accumulate(
        "accumulate_zeroes_afterwards",
        (_BOTH_BACKWARDS, _BOTH_BACKWARDS + "\n    net.zero_grad()"),
        says="or .grad was cleared (zero_grad(), .grad = None) after the backward calls",
    ),
    _accumulate(
        "accumulate_forgets_create_graph", (", create_graph=True", ""), says="pass create_graph=True"
    ),
    # f without a graph, added to y: its backward adds nothing, and only y's gradient is left.
    _accumulate(
        "accumulate_sums_a_constant_f",
        (", create_graph=True", ", retain_graph=True"),
        (_BOTH_BACKWARDS, "(y + f).backward()"),
        says="only y's gradient was added",
    ),
    # inputs= without b2: b2's .grad stays None, or keeps what an earlier backward left.
    _accumulate(
        "accumulate_leaves_the_bias_out_of_inputs",
        (_BOTH_BACKWARDS, "(y + f).backward(inputs=[net.linear1.weight, net.linear2.weight])"),
        says="backward's inputs= list leaves out parameters (here b2)",
    ),
    _accumulate(
        "accumulate_subtracts_f",
        (_BOTH_BACKWARDS, "(y - f).backward()"),
        says="f's gradient is subtracted",
    ),
    _accumulate(
        "accumulate_f_with_respect_to_w1",
        (
            "torch.autograd.grad(y, hidden, create_graph=True)",
            "torch.autograd.grad(y, net.linear1.weight, create_graph=True)",
        ),
        says="f is the gradient with respect to w1",
    ),
    # Right in every .grad, but each weight's .grad holds a gradient whose graph leads back to the weight.
    _accumulate(
        "accumulate_f_through_backward",
        answer=(
            "def accumulate_both(net, x):\n"
            "    hidden, y = net(x)\n"
            "    hidden.retain_grad()\n"
            "    y.backward(create_graph=True)\n"
            "    hidden.grad.backward()\n"
        ),
        says="leaks memory",
    ),
    _accumulate(
        "accumulate_zeroes_between",
        (_F_BACKWARD, f"{_F_BACKWARD}\n    net.zero_grad()"),
        says=".grad was zeroed after f's backward, before y's",
    ),
    _accumulate(
        "accumulate_backward_on_y_twice",
        (_F_BACKWARD, f"y.backward(retain_graph=True)\n    {_F_BACKWARD}"),
        says="y's gradient was added twice",
    ),
    _accumulate(
        "accumulate_adds_by_hand",
        (
            _BOTH_BACKWARDS,
            f"{_F_BACKWARD}\n"
            "    from_f = [p.grad.clone() for p in net.parameters()]\n"
            "    y.backward()\n"
            "    for p, g in zip(net.parameters(), from_f):\n"
            "        p.grad += g",
        ),
    ),
    _accumulate(
        "accumulate_with_autograd_grad",
        (_BOTH_BACKWARDS, "torch.autograd.grad(f + y, list(net.parameters()))"),
        says="left net.linear1.weight.grad empty",
    ),
    _accumulate(
        "accumulate_returns_the_gradients",
        (_BOTH_BACKWARDS, f"{_BOTH_BACKWARDS}\n    return [p.grad for p in net.parameters()]"),
        says="it should return None",
    ),
    _accumulate(
        "accumulate_hard_codes_the_lesson_numbers",
        answer='''def accumulate_both(net, x):
    """The .grad of the lesson's network, whatever the network."""
    net.linear1.weight.grad = torch.tensor([[512.0]], dtype=torch.float64)
    net.linear2.weight.grad = torch.tensor([[828.0]], dtype=torch.float64)
    net.linear2.bias.grad = torch.tensor([64.0], dtype=torch.float64)''',
    ),
    _accumulate(
        "patches_the_checks",
        ("def accumulate_both", patch_the_checks("def accumulate_both")),
        (f"{_F_BACKWARD}\n    ", ""),
    ),
]

INSTRUCTIONS = {
    "compute everything from the arguments": "derivatives_hard_code_the_lesson_numbers",
    "return `f = dy/dl` as a tensor": "hidden_returns_item",
    "autograd can differentiate again": "hidden_forgets_create_graph",
    "leave every `.grad` untouched (None)": "hidden_backward_instead_of_grad",
    "Prefer `torch.autograd.grad` with `create_graph=True`": "hidden_gradient_by_torch_func",
    "your calls add to it, never replace it or clear it": "accumulate_replaces_the_grad",
    "return the pair `(dy/dw1, d²y/dw1²)`": "derivatives_forget_create_graph",
    "both tensors": "derivatives_return_items",
    "shaped like `w1`, (1, 1)": "derivatives_squeeze_the_results",
    "shaped like `hidden`, (1, 1)": "hidden_squeezes_the_result",
    "The tests refuse a `.grad` left holding a graph": "hidden_backward_into_hidden_grad",
    "Prefer `torch.autograd.grad` for `f`": "accumulate_f_through_backward",
    "Leave every `.grad` None": "derivatives_backward_instead_of_grad",
    "add to every parameter's `.grad` the gradient of `y` and the gradient of `f = dy/dl`": (
        "accumulate_with_autograd_grad"
    ),
    "and return None": "accumulate_returns_the_gradients",
    "pass `retain_graph=True` to the first": "accumulate_forgets_retain_graph",
    "never zero `.grad` in between": "accumulate_zeroes_between",
}
