"""Lesson 00: mistakes in hidden_second_derivative, derivatives_at and accumulate_three."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "00_grad_vs_backward"

_HIDDEN = "hidden_second_derivative_differentiable"
_DERIVATIVES = "derivatives_at_values"
_ACCUMULATE = "accumulate_three_grads"

_GRAD_OF_HIDDEN = "(f,) = torch.autograd.grad(y, hidden, create_graph=True)"
_SECOND_OF_HIDDEN = "(curvature,) = torch.autograd.grad(f, hidden, create_graph=True)"
_FIRST = "(first,) = torch.autograd.grad(y, b2, create_graph=True)"
_SECOND = "(second,) = torch.autograd.grad(first, w1)"
_G_AND_H = "g, h = torch.autograd.grad(y, [net.linear2.weight, net.linear2.bias], create_graph=True)"
_G_BACKWARD = "g.backward(retain_graph=True)"
_H_BACKWARD = "h.backward(retain_graph=True)"
_THREE_BACKWARDS = f"{_G_BACKWARD}\n    {_H_BACKWARD}\n    y.backward()"

_hidden = mistakes_in("hidden_second_derivative", frozenset({_HIDDEN}))


_derivatives = mistakes_in("derivatives_at", frozenset({_DERIVATIVES}))


_accumulate = mistakes_in("accumulate_three", frozenset({_ACCUMULATE}))


MUTANTS = [
    # hidden_second_derivative: d²y/dl² must come back recorded, as a tensor, with .grad untouched.
    _hidden(
        "hidden_backward_instead_of_grad",
        (_GRAD_OF_HIDDEN, "hidden.retain_grad()\n    y.backward(create_graph=True)\n    f = hidden.grad"),
        says="which should stay None",
    ),
    # Both derivatives by backward: the second adds d²y/dl² to the dy/dl that hidden.grad holds.
    _hidden(
        "hidden_backward_twice_adds_to_the_first_derivative",
        answer="""def hidden_second_derivative(net, x):
    hidden, y = net(x)
    hidden.retain_grad()
    y.backward(create_graph=True)
    hidden.grad.backward(create_graph=True)
    return hidden.grad""",
        says="a second .backward() added d²y/dl² to hidden.grad, which already held dy/dl",
    ),
    # The second call without create_graph: the right number, but a constant.
    _hidden(
        "hidden_forgets_create_graph",
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(f, hidden)"),
        says=("does not require grad", "the last of its gradient calls lacks create_graph=True"),
    ),
    # The first call without create_graph: f is a constant, which the second call cannot differentiate.
    _hidden(
        "hidden_forgets_the_first_create_graph",
        (_GRAD_OF_HIDDEN, "(f,) = torch.autograd.grad(y, hidden)"),
        says="a gradient computed without create_graph=True",
    ),
    # retain_graph in place of the first create_graph: f is still a constant.
    _hidden(
        "hidden_retains_instead_of_the_first_create_graph",
        (_GRAD_OF_HIDDEN, "(f,) = torch.autograd.grad(y, hidden, retain_graph=True)"),
        says=("a gradient computed without create_graph=True", "(retain_graph=True is no substitute)"),
    ),
    _hidden("hidden_detaches_result", ("return curvature", "return curvature.detach()")),
    _hidden(
        "hidden_returns_item", ("return curvature", "return curvature.item()"), says="instead of a tensor"
    ),
    _hidden(
        "hidden_squeezes_the_result",
        ("return curvature", "return curvature.squeeze()"),
        says=(
            "got shape () instead of (1, 1)",
            "`.squeeze()` in your code, if applied to the value you return: it changes a tensor's shape",
        ),
    ),
    _hidden(
        "hidden_returns_the_first_derivative",
        ("return curvature", "return f"),
        says="this is f = dy/dl, the first derivative",
    ),
    _hidden(
        "hidden_differentiates_y_twice",
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(y, hidden, create_graph=True)"),
        says="this is f = dy/dl, the first derivative",
    ),
    _hidden(
        "hidden_differentiates_with_respect_to_u",
        answer=(
            "def hidden_second_derivative(net, x):\n"
            "    u = net.linear2(net.linear1(x))\n"
            "    (f,) = torch.autograd.grad(u.pow(2), u, create_graph=True)\n"
            "    (curvature,) = torch.autograd.grad(f, u, create_graph=True)\n"
            "    return curvature\n"
        ),
        says="y is differentiated with respect to u = w2·l + b2, not the hidden value l",
    ),
    _hidden(
        "hidden_second_with_respect_to_w1",
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(f, net.linear1.weight, create_graph=True)"),
        says="this is df/dw1, not d²y/dl²: f = dy/dl is differentiated with respect to w1",
    ),
    _hidden(
        "hidden_second_with_respect_to_w2",
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(f, net.linear2.weight, create_graph=True)"),
        says="this is df/dw2, not d²y/dl²: f = dy/dl is differentiated with respect to w2",
    ),
    # Section 7's second derivative, by w1 twice, copied: recorded, but by a weight, not hidden.
    _hidden(
        "hidden_copies_section_7",
        (_GRAD_OF_HIDDEN, "(f,) = torch.autograd.grad(y, net.linear1.weight, create_graph=True)"),
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(f, net.linear1.weight, create_graph=True)"),
        says="this is d²y/dw1² (section 7's), not d²y/dl²",
    ),
    _hidden(
        "hidden_differentiates_twice_with_respect_to_w2",
        (_GRAD_OF_HIDDEN, "(f,) = torch.autograd.grad(y, net.linear2.weight, create_graph=True)"),
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(f, net.linear2.weight, create_graph=True)"),
        says="this is d²y/dw2², not d²y/dl²: y is differentiated twice with respect to w2",
    ),
    _hidden(
        "hidden_forgets_the_factor_2",
        answer=(
            "def hidden_second_derivative(net, x):\n"
            "    hidden, y = net(x)\n"
            "    (f,) = torch.autograd.grad(y / 2, hidden, create_graph=True)\n"
            "    (curvature,) = torch.autograd.grad(f, hidden, create_graph=True)\n"
            "    return curvature\n"
        ),
        says="the factor 2 is left out",
    ),
    _hidden(
        "hidden_second_with_respect_to_b2",
        (_SECOND_OF_HIDDEN, "(curvature,) = torch.autograd.grad(f, net.linear2.bias, create_graph=True)"),
        says="this is df/db2, not d²y/dl²: f = dy/dl is differentiated with respect to b2",
    ),
    # 2·w2 written by hand: the factor w2 that differentiating u by l brings is missing.
    _hidden(
        "hidden_by_hand_with_respect_to_b2",
        answer="def hidden_second_derivative(net, x):\n    return 2 * net.linear2.weight\n",
        says="2·w2 is one factor w2 short",
    ),
    # Right in value, but hidden.grad holds a gradient whose graph leads back to hidden: a cycle never freed.
    _hidden(
        "hidden_backward_into_hidden_grad",
        (_GRAD_OF_HIDDEN, "y.backward(inputs=[hidden], create_graph=True)\n    f = hidden.grad"),
        says="leaks memory",
    ),
    # hidden.grad cleared after backward(inputs=[hidden]): hidden still retains its gradient, so the second
    # call, though torch.autograd.grad, stores d²y/dl² with its graph in hidden.grad again.
    _hidden(
        "hidden_clears_hidden_grad_after_backward",
        (
            _GRAD_OF_HIDDEN,
            "y.backward(inputs=[hidden], create_graph=True)\n    f = hidden.grad\n    hidden.grad = None",
        ),
        says=(
            "leaks memory: the .grad of a tensor it made holds",
            "so setting that .grad to None in between does not help",
        ),
    ),
    # hidden from a call of its own: y, from another, was not computed from it.
    _hidden(
        "hidden_from_another_call",
        ("hidden, y = net(x)", "hidden = net.linear1(x)\n    _, y = net(x)"),
        says="it must be computed from that very tensor (take both from the same call)",
    ),
    # f detached into a new leaf: the second call finds it computed from nothing, hidden included.
    _hidden(
        "hidden_detaches_f",
        (_SECOND_OF_HIDDEN, f"f = f.detach().requires_grad_()\n    {_SECOND_OF_HIDDEN}"),
        says=("does not depend on that tensor", "Your code uses `.detach()`, whose copy is a new tensor"),
    ),
    # The lesson's numbers from a network of its own: right on the visible test, cut from the arguments.
    _hidden(
        "hidden_builds_its_own_network",
        (_GRAD_OF_HIDDEN, "hidden, y = TinyNet().double()(make_input().double())\n    " + _GRAD_OF_HIDDEN),
        says="computed from tensors other than the arguments (a network or a tensor made inside",
    ),
    # retain_graph=False beside create_graph=True: f's graph is freed as it is made.
    _hidden(
        "hidden_records_and_frees",
        (
            _GRAD_OF_HIDDEN,
            _GRAD_OF_HIDDEN.replace("create_graph=True", "create_graph=True, retain_graph=False"),
        ),
        says=("passes create_graph=True with retain_graph=False", "Leave retain_graph out"),
    ),
    # The lesson's value written in: right on the visible test, but with no graph.
    _hidden(
        "hidden_writes_the_number_in",
        ("return curvature", "return torch.full_like(hidden, 12.5)"),
        says="the result is numbers written in",
        # The student's kernel tells the checker whose function it checks, as the class grader's judge does.
        by_nbgrader=True,
    ),
    _hidden(
        "imports_the_reference",
        answer="from solutions.grad_vs_backward import hidden_second_derivative  # noqa",
    ),
    # derivatives_at: autograd.grad twice, the first recorded.
    _derivatives(
        "derivatives_backward_instead_of_grad",
        (_FIRST, "y.backward(create_graph=True)\n    first = b2.grad"),
        says="which should stay None",
    ),
    # The first derivative recorded, the second taken by backward: it lands in w1.grad.
    _derivatives(
        "derivatives_second_by_backward",
        (_SECOND, "first.backward()\n    second = w1.grad"),
        says="call torch.autograd.grad(g, w), which returns the derivative; g.backward() stores it",
    ),
    # Cleared after, .grad ends as None: only a .grad that held something before the call tells.
    _derivatives(
        "derivatives_read_from_grad_then_clear_it",
        (_FIRST, "y.backward(create_graph=True)\n    first = b2.grad"),
        ("return first, second", "net.zero_grad()\n    return first, second"),
        says="dy/db2 was read from b2.grad after .backward(), which adds it to what .grad held",
    ),
    _derivatives(
        "derivatives_forget_create_graph",
        (", create_graph=True", ""),
        says="a gradient computed without create_graph=True",
    ),
    _derivatives(
        "derivatives_in_the_wrong_order",
        ("return first, second", "return second, first"),
        says=("got shape (1, 1) instead of (1,)", "the pair is in the wrong order"),
    ),
    _derivatives(
        "derivatives_by_w1_then_b2",
        (_FIRST, "(first,) = torch.autograd.grad(y, w1, create_graph=True)"),
        (_SECOND, "(second,) = torch.autograd.grad(first, b2)"),
        says="the first call differentiates y with respect to w1, and the second with respect to b2",
    ),
    _derivatives(
        "derivatives_by_w1_twice",
        (_FIRST, "(first,) = torch.autograd.grad(y, w1, create_graph=True)"),
        says="the first derivative is taken with respect to w1, not b2",
    ),
    # The right pair, but dy/db2 also written into b2.grad.
    _derivatives(
        "derivatives_assign_the_first_to_b2_grad",
        (_SECOND, f"{_SECOND}\n    b2.grad = first.detach()"),
        says=".grad was assigned directly (or added to); return the value instead",
    ),
    _derivatives(
        "derivatives_differentiate_y_twice",
        (_SECOND, "(second,) = torch.autograd.grad(y, w1)"),
        says="the derivative by w1 is taken of y, not of dy/db2",
    ),
    _derivatives(
        "derivatives_return_items",
        ("return first, second", "return first.item(), second.item()"),
        says=("instead of a tensor", "return tensors (shapes (1,) and (1, 1)), not Python numbers"),
    ),
    # The first gradient left in the tuple torch.autograd.grad returns: the second call takes a sequence
    # of outputs, so it still runs.
    _derivatives(
        "derivatives_leave_the_first_in_its_tuple",
        (_FIRST, "first = torch.autograd.grad(y, b2, create_graph=True)"),
        says="torch.autograd.grad returns a tuple, one gradient per input, even for one input",
    ),
    _derivatives(
        "derivatives_squeeze_the_results",
        ("return first, second", "return first.squeeze(), second.squeeze()"),
        says="got shape () instead of (1,)",
    ),
    _derivatives(
        "derivatives_second_with_respect_to_w2",
        (_SECOND, "(second,) = torch.autograd.grad(first, net.linear2.weight)"),
        says="differentiates dy/db2 with respect to w2, not w1",
    ),
    _derivatives(
        "derivatives_second_with_respect_to_b2",
        (_SECOND, "(second,) = torch.autograd.grad(first, b2)"),
        says=("got shape (1,) instead of (1, 1)", "this is d²y/db2², not d²y/(db2 dw1)"),
    ),
    # Mixed derivatives are equal: the value is right, but taken by b2 last it comes in b2's shape.
    _derivatives(
        "derivatives_second_by_w1_then_b2",
        (
            _FIRST,
            "(first,) = torch.autograd.grad(y, b2, retain_graph=True)\n    "
            "(by_w1,) = torch.autograd.grad(y, w1, create_graph=True)",
        ),
        (_SECOND, "(second,) = torch.autograd.grad(by_w1, b2)"),
        says=("got shape (1,) instead of (1, 1)", "this is d(dy/dw1)/db2, shaped like b2"),
    ),
    # The visible test uses the lesson's network and other_net; the hidden ones draw random weights. The
    # reference's second result has no graph, so only another network's values tell a number written in.
    _derivatives(
        "derivatives_hard_code_the_second",
        ("return first, second", "return first, torch.full_like(w1, 20.0)"),
        says=(
            "that `other_net` builds",
            "d²y/(db2 dw1) is 20, its value on this lesson's network, as numbers",
        ),
    ),
    _derivatives(
        "derivatives_hard_code_the_first",
        ("return first, second", "return torch.full_like(b2, 72.0), second"),
        says=(
            "that `other_net` builds",
            "dy/db2 is 72, its value on this lesson's network, as numbers written",
        ),
    ),
    _derivatives(
        "derivatives_hard_code_the_lesson_numbers",
        says=("that `other_net` builds", "the result is numbers written in"),
        answer='''def derivatives_at(net, x):
    """The numbers of the lesson's network, whatever the network."""
    return torch.tensor([72.0], dtype=torch.float64), torch.tensor([[20.0]], dtype=torch.float64)''',
    ),
    # accumulate_three: one shared graph kept for every backward but the last, and .grad left to add up.
    # g and h were recorded: the cause named is the missing retain_graph alone, not create_graph, which the
    # hint names (before "otherwise pass retain_graph=True") only for a gradient taken without it.
    _accumulate(
        "accumulate_forgets_retain_graph",
        (_H_BACKWARD, "h.backward()"),
        says=("after they have already been freed). Likely cause:", "saved tensors: pass retain_graph=True"),
    ),
    # y's backward first frees the graph that the call building g and h goes through.
    _accumulate(
        "accumulate_builds_g_and_h_after_y_backward",
        (_G_AND_H, f"y.backward()\n    {_G_AND_H}"),
        (_THREE_BACKWARDS, f"{_G_BACKWARD}\n    h.backward()"),
        says="freed its saved tensors: pass retain_graph=True to every call but the last",
    ),
    _accumulate(
        "accumulate_forgets_every_retain_graph",
        (_THREE_BACKWARDS, "g.backward()\n    h.backward()\n    y.backward()"),
        says="freed its saved tensors: pass retain_graph=True to every call but the last",
    ),
    # .grad replaced, or cleared first: right from empty .grad, wrong from the first test's .grad of 1.
    _accumulate(
        "accumulate_replaces_the_grad",
        answer=(
            "def accumulate_three(net, x):\n"
            "    _, y = net(x)\n"
            "    g, h = torch.autograd.grad(y, [net.linear2.weight, net.linear2.bias], create_graph=True)\n"
            "    parameters = list(net.parameters())\n"
            "    gradients = torch.autograd.grad((y + g + h).sum(), parameters)\n"
            "    for parameter, gradient in zip(parameters, gradients):\n"
            "        parameter.grad = gradient\n"
        ),
        says="the .grad already there was replaced or cleared",
    ),
    _accumulate(
        "accumulate_zeroes_first",
        ("    _, y = net(x)\n", "    net.zero_grad()\n    _, y = net(x)\n"),
    ),
    _accumulate(
        "accumulate_zeroes_afterwards",
        (_THREE_BACKWARDS, _THREE_BACKWARDS + "\n    net.zero_grad()"),
        says="or .grad was cleared (zero_grad(), .grad = None) after the backward calls",
    ),
    _accumulate(
        "accumulate_forgets_create_graph", (", create_graph=True", ""), says="pass create_graph=True"
    ),
    # g and h without a graph, added to y: nothing flows back through them, and only y's gradient is left.
    _accumulate(
        "accumulate_sums_constant_g_and_h",
        (", create_graph=True", ", retain_graph=True"),
        (_THREE_BACKWARDS, "(y + g + h).sum().backward()"),
        says=(
            "only y's gradient was added: take g and h with torch.autograd.grad(y, ..., create_graph=True)",
            "retain_graph=True keeps y's graph alive but does not record g",
        ),
    ),
    _accumulate(
        "accumulate_only_y_backward",
        (_THREE_BACKWARDS, "y.backward()"),
        says="only y's gradient was added: g.backward() and h.backward() are never called.",
    ),
    # g written out under torch.no_grad(): a constant, whose part of the backward adds nothing.
    _accumulate(
        "accumulate_g_under_no_grad",
        (
            _G_AND_H,
            "(h,) = torch.autograd.grad(y, net.linear2.bias, create_graph=True)\n"
            "    with torch.no_grad():\n"
            "        g = 2 * net.linear2(net.linear1(x)) * net.linear1(x)",
        ),
        (_THREE_BACKWARDS, "(y + g + h).sum().backward()"),
        says="or g has no graph (computed without create_graph=True, detached, or under torch.no_grad())",
    ),
    # The three gradients added by hand with add_, to a .grad that is None before any backward.
    _accumulate(
        "accumulate_add_to_a_none_grad",
        (
            _THREE_BACKWARDS,
            "for p, gradient in zip(net.parameters(), torch.autograd.grad((y + g + h).sum(), "
            "list(net.parameters()))):\n"
            "        p.grad.add_(gradient)",
        ),
        says="such as p.grad.add_(g): .grad is None until a first backward fills it",
    ),
    # inputs= without b2: b2's .grad stays None, or keeps what an earlier backward left.
    _accumulate(
        "accumulate_leaves_the_bias_out_of_inputs",
        (_THREE_BACKWARDS, "(y + g + h).sum().backward(inputs=[net.linear1.weight, net.linear2.weight])"),
        says="backward's inputs= list leaves out parameters (here b2)",
    ),
    # Only y's backward lists its inputs, without b2: b2's .grad gets g's and h's gradients alone.
    _accumulate(
        "accumulate_leaves_the_bias_out_of_y_inputs",
        ("y.backward()", "y.backward(inputs=[net.linear1.weight, net.linear2.weight])"),
    ),
    _accumulate(
        "accumulate_g_with_respect_to_b2",
        (_G_AND_H, _G_AND_H.replace("[net.linear2.weight, net.linear2.bias]", "[net.linear2.bias] * 2")),
        says="g is the gradient with respect to b2, not w2",
    ),
    _accumulate(
        "accumulate_h_with_respect_to_w2",
        (_G_AND_H, _G_AND_H.replace("[net.linear2.weight, net.linear2.bias]", "[net.linear2.weight] * 2")),
        says="h is the gradient with respect to w2, not b2",
    ),
    # Every gradient negated, as by a minus in front of the sum: what is added has the wrong sign.
    _accumulate(
        "accumulate_negates_the_sum",
        (_THREE_BACKWARDS, "(-(y + g + h)).sum().backward()"),
        says="this sum added to .grad has the wrong sign: negated, it would be right",
    ),
    _accumulate(
        "accumulate_subtracts_g",
        (_THREE_BACKWARDS, "(y - g + h).sum().backward()"),
        says="g's gradient is subtracted",
    ),
    _accumulate(
        "accumulate_subtracts_g_and_h",
        (_THREE_BACKWARDS, "(y - g - h).sum().backward()"),
        says=(
            "g's and h's gradients are subtracted",
            "their parts of what is added to .grad have the wrong sign",
        ),
    ),
    _accumulate(
        "accumulate_subtracts_h",
        (_THREE_BACKWARDS, "(y + g - h).sum().backward()"),
        says="h's gradient is subtracted: its part of what is added to .grad has the wrong sign",
    ),
    # Section 8's f = dy/dl in place of g = dy/dw2.
    _accumulate(
        "accumulate_g_with_respect_to_hidden",
        ("_, y = net(x)", "hidden, y = net(x)"),
        (_G_AND_H, _G_AND_H.replace("net.linear2.weight,", "hidden,")),
        says="g is the gradient with respect to the hidden value l (section 8's f), not w2",
    ),
    _accumulate(
        "accumulate_g_with_respect_to_w1",
        (_G_AND_H, _G_AND_H.replace("net.linear2.weight,", "net.linear1.weight,")),
        says="g is the gradient with respect to w1, not w2",
    ),
    # g and h read from .grad after y.backward(create_graph=True): each weight's .grad holds a graph leading
    # back to the weight.
    _accumulate(
        "accumulate_g_through_backward",
        answer=(
            "def accumulate_three(net, x):\n"
            "    _, y = net(x)\n"
            "    y.backward(create_graph=True)\n"
            "    net.linear2.weight.grad.backward(retain_graph=True)\n"
            "    net.linear2.bias.grad.backward()\n"
        ),
        says="leaks memory: net.linear1.weight.grad holds a gradient whose graph leads back",
    ),
    # g and h read from .grad, then y's backward again: y.backward(create_graph=True) had already added
    # y's gradient, and h's backward, without retain_graph, freed the graph the last one needs.
    _accumulate(
        "accumulate_g_through_backward_then_y_again",
        (
            _G_AND_H,
            "y.backward(create_graph=True, retain_graph=True)\n"
            "    g, h = net.linear2.weight.grad, net.linear2.bias.grad",
        ),
        (_H_BACKWARD, "h.backward()"),
        says="already adds its gradient to .grad: calling backward on the same result again adds it a second",
    ),
    _accumulate(
        "accumulate_forgets_h_backward",
        (f"\n    {_H_BACKWARD}", ""),
        says="h's gradient is missing: call h.backward() too",
    ),
    _accumulate(
        "accumulate_forgets_y_backward",
        (_THREE_BACKWARDS, f"{_G_BACKWARD}\n    h.backward()"),
        says="y's gradient is missing: call y.backward() too.",
    ),
    _accumulate(
        "accumulate_zeroes_between",
        (_H_BACKWARD, f"{_H_BACKWARD}\n    net.zero_grad()"),
        says="only y's gradient is left: .grad was zeroed or assigned",
    ),
    # .grad set to None by hand rather than by zero_grad(): an assignment, named as one.
    _accumulate(
        "accumulate_assigns_none_between",
        (_G_BACKWARD, f"{_G_BACKWARD}\n    for p in net.parameters():\n        p.grad = None"),
        says="only y's and h's gradient is left: .grad was zeroed or assigned",
    ),
    _accumulate(
        "accumulate_backward_on_y_twice",
        (_G_BACKWARD, f"y.backward(retain_graph=True)\n    {_G_BACKWARD}"),
        says=("y's gradient was counted twice: run backward once on each result", "ran twice on it"),
    ),
    _accumulate(
        "accumulate_h_doubled",
        (_H_BACKWARD, "(2 * h).backward(retain_graph=True)"),
        says=("h's gradient was counted twice: run backward once on each result", "holds it twice (2 * g"),
    ),
    # h's gradient added by hand after h.backward() had added it.
    _accumulate(
        "accumulate_adds_h_by_hand_too",
        (
            _H_BACKWARD,
            f"{_H_BACKWARD}\n"
            "    parameters = list(net.parameters())\n"
            "    gradients = torch.autograd.grad(h.sum(), parameters, retain_graph=True)\n"
            "    for p, gradient in zip(parameters, gradients):\n"
            "        p.grad += gradient",
        ),
        says=("h's gradient was counted twice", "your code adds to .grad itself"),
    ),
    _accumulate(
        "accumulate_with_autograd_grad",
        (_THREE_BACKWARDS, "torch.autograd.grad((y + g + h).sum(), list(net.parameters()))"),
        says="nothing was added to .grad: torch.autograd.grad returns gradients without storing them",
    ),
    _accumulate(
        "accumulate_returns_the_gradients",
        (_THREE_BACKWARDS, f"{_THREE_BACKWARDS}\n    return [p.grad for p in net.parameters()]"),
        says="it should return None",
    ),
    _accumulate(
        "accumulate_hard_codes_the_lesson_numbers",
        says="net.linear1.weight.grad is numbers written in",
        answer='''def accumulate_three(net, x):
    """The .grad of the lesson's network, whatever the network."""
    net.linear1.weight.grad = torch.tensor([[1268.0]], dtype=torch.float64)
    net.linear2.weight.grad = torch.tensor([[1176.0]], dtype=torch.float64)
    net.linear2.bias.grad = torch.tensor([98.0], dtype=torch.float64)''',
    ),
    _accumulate(
        "patches_the_checks",
        ("def accumulate_three", patch_the_checks("def accumulate_three")),
        (f"{_G_BACKWARD}\n    ", ""),
    ),
]

INSTRUCTIONS = {
    "Compute everything from the arguments": "derivatives_hard_code_the_lesson_numbers",
    "return `d²y/dl²`": "hidden_returns_the_first_derivative",
    "as a tensor autograd can differentiate again": "hidden_forgets_create_graph",
    "Leave every `.grad` as it was (None, or what an earlier backward left)": (
        "hidden_backward_instead_of_grad"
    ),
    "here the variable is `hidden`, which the forward computes": "hidden_from_another_call",
    "the first so that you can differentiate its result": "hidden_forgets_the_first_create_graph",
    "the second so that the tests can differentiate yours": "hidden_forgets_create_graph",
    "shaped like `hidden`, (1, 1)": "hidden_squeezes_the_result",
    "Prefer letting autograd derive it": "hidden_second_derivative_by_hand",
    "a memory leak (section 10) that the tests refuse": "accumulate_g_through_backward",
    "your calls add to it, never replace it or clear it": "accumulate_replaces_the_grad",
    "return the pair `(dy/db2, d²y/(db2 dw1))`": "derivatives_differentiate_y_twice",
    "Both are tensors": "derivatives_return_items",
    "the first shaped like `b2`, (1,)": "derivatives_squeeze_the_results",
    "the second like `w1`, (1, 1)": "derivatives_second_with_respect_to_b2",
    "Leave every `.grad` as it was": "derivatives_backward_instead_of_grad",
    "add to every parameter's `.grad` the gradients of `y`, of `g = dy/dw2` and of": (
        "accumulate_with_autograd_grad"
    ),
    "of `g = dy/dw2` and of `h = dy/db2`": "accumulate_forgets_h_backward",
    "Prefer letting backward calls do the adding": "accumulate_in_place_by_hand",
    "and return None": "accumulate_returns_the_gradients",
    "pass `retain_graph=True` to every backward call through": "accumulate_forgets_retain_graph",
    "build `g` and `h` before a backward frees that graph": "accumulate_builds_g_and_h_after_y_backward",
    "never zero `.grad` in between": "accumulate_zeroes_between",
    "never from `.grad` after `y.backward(create_graph=True)`": "accumulate_g_through_backward",
}
