"""Lesson 08: mistakes in inner_step and meta_loss."""

from grading_pipeline import mistakes_in

from mutants.hostile import patch_the_checks

LESSON = "08_learning_to_learn"

_VALUE = "inner_step_value"
_META_GRADIENT = "inner_step_meta_gradient"
_META_LOSS = "meta_loss_on_query_points"
# meta_loss's cell calls meta_loss with a right inner_step in place of the answer's: a slip of inner_step
# loses inner_step's cells alone.
_THROUGH_THE_STEP = frozenset({_META_GRADIENT})
_ALL = frozenset({_VALUE, _META_GRADIENT})
# Right wherever params are the network's own: steps from other parameters show it.
_FROM_OTHER_PARAMS = _ALL

_GRADS = "grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)"
_STEP = "param - lr * grad"
_RETURN = (
    "    return {name: param - lr * grad for (name, param), grad in zip(params.items(), grads, strict=True)}"
)
_ADAPT = "adapted = inner_step(net, params, x, y, lr)"
_QUERY = "functional_call(net, adapted, (x_query,)) - y_query"
_SUPPORT_LOSS = "loss = ((functional_call(net, params, (x,)) - y) ** 2).mean()"


_inner = mistakes_in("inner_step")


_meta = mistakes_in("meta_loss", {_META_LOSS})


MUTANTS = [
    _inner(
        "inner_step_without_create_graph",
        _THROUGH_THE_STEP,
        (_GRADS, "grads = torch.autograd.grad(loss, list(params.values()))"),
        says="create_graph=True",
    ),
    # Given the dict params, torch.autograd.grad returns a dict: zipped, it gives the names.
    _inner(
        "inner_step_zips_the_dict_of_gradients",
        _ALL,
        (_GRADS, "grads = torch.autograd.grad(loss, params, create_graph=True)"),
        says="use grads[name], or pass list(params.values()): given the dict params",
    ),
    # Spelled out, create_graph=False is the same as leaving it out, and named the same.
    _inner(
        "inner_step_passes_create_graph_false",
        _THROUGH_THE_STEP,
        (_GRADS, _GRADS.replace("create_graph=True", "create_graph=False")),
        says="take it with create_graph=True",
    ),
    _inner(
        "inner_step_runs_the_network_on_its_own_parameters",
        _FROM_OTHER_PARAMS,
        (_SUPPORT_LOSS, "loss = ((net(x) - y) ** 2).mean()"),
        says="inner_step runs the network on its own parameters (net(x)), so its support loss does not reach",
    ),
    _inner(
        "inner_step_detaches_the_adapted_parameters",
        _THROUGH_THE_STEP,
        (_STEP, "(param - lr * grad).detach()"),
        says=".detach()",
    ),
    _inner("inner_step_climbs_the_gradient", _ALL, (_STEP, "param + lr * grad"), says="climbs"),
    _inner("inner_step_forgets_lr", _ALL, (_STEP, "param - grad"), says="leaves out lr"),
    _inner(
        "inner_step_returns_the_step_alone",
        _ALL,
        (_STEP, "-lr * grad"),
        says="inner_step returns the step alone, -lr * gradient, without params",
    ),
    _inner(
        "inner_step_updates_data_in_place",
        _ALL,
        (
            _RETURN,
            "    for param, grad in zip(params.values(), grads, strict=True):\n"
            "        param.data -= lr * grad\n"
            "    return params",
        ),
        says="changed the network's own parameters in place, through .data",
    ),
    _inner(
        "inner_step_updates_in_place_without_grad",
        _ALL,
        (
            _RETURN,
            "    with torch.no_grad():\n"
            "        for param, grad in zip(params.values(), grads, strict=True):\n"
            "            param -= lr * grad\n"
            "    return params",
        ),
        says="changed the network's own parameters in place, with -= under torch.no_grad()",
    ),
    _inner(
        "inner_step_fills_grad_with_backward",
        _ALL,
        (_GRADS, "loss.backward(create_graph=True)\n    grads = [param.grad for param in params.values()]"),
        says="which should stay None",
    ),
    _inner(
        "patches_the_checks",
        _ALL,
        ("def inner_step", patch_the_checks("def inner_step")),
        (_STEP, "param + lr * grad"),
    ),
    _inner(
        "inner_step_sums_the_support_loss",
        _ALL,
        (_SUPPORT_LOSS, "loss = ((functional_call(net, params, (x,)) - y) ** 2).sum()"),
        says="the support loss adds the squared errors up (.sum())",
    ),
    _inner(
        "inner_step_differentiates_the_networks_own_parameters",
        _FROM_OTHER_PARAMS,
        answer=(
            "def inner_step(net, params, x, y, lr):\n"
            "    own = dict(net.named_parameters())\n"
            "    loss = ((functional_call(net, own, (x,)) - y) ** 2).mean()\n"
            "    grads = torch.autograd.grad(loss, list(own.values()), create_graph=True)\n"
            "    return {name: params[name] - lr * grad for name, grad in zip(own, grads)}\n"
        ),
        says="the gradient is taken at the network's own parameters, not at params",
    ),
    # Right in every value and meta-gradient, but the caller's dict now holds the adapted parameters:
    # meta_loss's next task would start from them, so both cells refuse it.
    _inner(
        "inner_step_overwrites_the_params_dict",
        _ALL,
        (
            _RETURN,
            "    for (name, param), grad in zip(list(params.items()), grads, strict=True):\n"
            "        params[name] = param - lr * grad\n    return params",
        ),
        says="inner_step changed the dict params it was given",
    ),
    _inner(
        "inner_step_differentiates_net_parameters",
        _FROM_OTHER_PARAMS,
        (_GRADS, "grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=True)"),
        says="inner_step differentiates net.parameters(), but its support loss",
    ),
    # params ignored altogether: the network's own weights are run and differentiated.
    _inner(
        "inner_step_ignores_params",
        _FROM_OTHER_PARAMS,
        (_SUPPORT_LOSS, "loss = ((net(x) - y) ** 2).mean()"),
        (_GRADS, "grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=True)"),
        says="it flows to the network's weights and not to params",
    ),
    _inner(
        "inner_step_detaches_the_gradient",
        _THROUGH_THE_STEP,
        (_STEP, "param - lr * grad.detach()"),
        says="`.detach()`",
    ),
    # Right in value, but the step's direct path back to params is cut.
    _inner(
        "inner_step_detaches_the_parameter",
        _THROUGH_THE_STEP,
        (_STEP, "param.detach() - lr * grad"),
        says="the step starts from detached parameters (param.detach() or param.data), which cuts",
    ),
    _inner(
        "inner_step_takes_the_mean_absolute_error",
        _ALL,
        (_SUPPORT_LOSS, "loss = (functional_call(net, params, (x,)) - y).abs().mean()"),
        says="the support loss is the mean absolute error",
    ),
    _inner(
        "inner_step_steps_only_the_weights",
        _ALL,
        (_STEP, "(param - lr * grad if name.endswith('weight') else param)"),
        says="only the weights take the step; every entry of params takes it, the biases too",
    ),
    _inner(
        "inner_step_halves_the_support_loss",
        _ALL,
        (_SUPPORT_LOSS, "loss = 0.5 * ((functional_call(net, params, (x,)) - y) ** 2).mean()"),
        says="its support loss is halved (0.5 * ... or ... / 2), which halves the step",
    ),
    # Halving lr gives the same numbers as halving the loss: the loss inner_step differentiates tells which.
    _inner(
        "inner_step_halves_lr",
        _ALL,
        (_STEP, "param - lr / 2 * grad"),
        says="it halves lr (lr / 2), which halves the step",
    ),
    # retain_graph keeps the graph, but the gradient stays a constant: the message tells the two apart.
    _inner(
        "inner_step_retains_the_graph_in_place_of_creating_it",
        _THROUGH_THE_STEP,
        (_GRADS, _GRADS.replace("create_graph=True", "retain_graph=True")),
        says="retain_graph=True is no substitute",
    ),
    _inner(
        "inner_step_steps_under_no_grad",
        _THROUGH_THE_STEP,
        (_RETURN, "    with torch.no_grad():\n    " + _RETURN),
        says="Likely cause: the code computing it uses `torch.no_grad()`",
    ),
    # The first visible check of inner_step's values, and meta_loss's, step by 0.3: not by 0.1, as the others.
    _inner(
        "inner_step_writes_in_the_learning_rate",
        _ALL,
        (_STEP, "param - 0.1 * grad"),
        says="the learning rate is written in as 0.1, not lr",
    ),
    # Any learning rate written in is named, not only the visible task's 0.1.
    _inner(
        "inner_step_writes_in_0_01",
        _ALL,
        (_STEP, "param - 0.01 * grad"),
        says="the learning rate is written in as 0.01, not lr",
    ),
    # No known slip doubles the step: the message says which entry of the dict is wrong, by its name.
    _inner(
        "inner_step_doubles_the_step",
        _ALL,
        (_STEP, "param - 2 * lr * grad"),
        says="Entry '0.weight' of the result of inner_step is wrong",
    ),
    # Wrong only from other parameters at another lr than the visible 0.1: the hidden test fails, and says
    # what it called inner_step with without naming its builder, which the student cannot see.
    _inner(
        "inner_step_writes_in_0_1_from_other_params",
        _FROM_OTHER_PARAMS,
        answer=(
            "def inner_step(net, params, x, y, lr):\n"
            "    own = all(p is q for p, q in zip(params.values(), net.parameters()))\n"
            "    loss = ((functional_call(net, params, (x,)) - y) ** 2).mean()\n"
            "    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)\n"
            "    rate = lr if own else 0.1\n"
            "    return {name: p - rate * g for (name, p), g in zip(params.items(), grads, strict=True)}\n"
        ),
        says="that a hidden test builds",
    ),
    _inner(
        "inner_step_squeezes_the_target",
        _ALL,
        (_SUPPORT_LOSS, "loss = ((functional_call(net, params, (x,)) - y.squeeze()) ** 2).mean()"),
        says="the support loss mixes a vector of shape (K,)",
    ),
    # The mirror of inner_step_differentiates_the_networks_own_parameters: the gradient at params, the
    # step from the network's own.
    _inner(
        "inner_step_steps_the_networks_own_parameters",
        _FROM_OTHER_PARAMS,
        (_RETURN, _RETURN.replace("zip(params.items()", "zip(net.named_parameters()")),
        says="the step starts from the network's own parameters, not from params",
    ),
    _inner(
        "inner_step_runs_differentiates_and_steps_the_networks_own_parameters",
        _FROM_OTHER_PARAMS,
        (_SUPPORT_LOSS, "loss = ((net(x) - y) ** 2).mean()"),
        (_GRADS, "grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=True)"),
        (_RETURN, _RETURN.replace("zip(params.items()", "zip(net.named_parameters()")),
        says="inner_step leaves params out",
    ),
    # From other parameters the gradients are None, which the step then multiplies.
    _inner(
        "inner_step_differentiates_net_parameters_allowing_unused",
        _FROM_OTHER_PARAMS,
        (
            _GRADS,
            "grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=True, allow_unused=True)",
        ),
        says=("differentiates net.parameters()", "allow_unused=True gives None for each"),
    ),
    # ... and takes None for zero: params come back unchanged, for the same cause.
    _inner(
        "inner_step_differentiates_net_parameters_taking_none_for_zero",
        _FROM_OTHER_PARAMS,
        (
            _GRADS,
            "grads = torch.autograd.grad(loss, list(net.parameters()), create_graph=True, allow_unused=True)",
        ),
        (_STEP, "param - lr * (0 if grad is None else grad)"),
        says="inner_step differentiates net.parameters(), but its support loss",
    ),
    # net(x) with materialize_grads=True: every gradient of params is zero, and params come back.
    _inner(
        "inner_step_runs_the_network_materializing_zero_gradients",
        _FROM_OTHER_PARAMS,
        (
            _GRADS,
            "grads = torch.autograd.grad(\n"
            "        loss, list(params.values()), create_graph=True, materialize_grads=True\n"
            "    )",
        ),
        (_SUPPORT_LOSS, "loss = ((net(x) - y) ** 2).mean()"),
        says="the step's gradient is all zeros",
    ),
    # An in-place step under torch.no_grad(): right in value, invisible to autograd.
    _inner(
        "inner_step_steps_in_place_under_no_grad",
        _THROUGH_THE_STEP,
        answer=(
            "def inner_step(net, params, x, y, lr):\n"
            "    loss = ((functional_call(net, params, (x,)) - y) ** 2).mean()\n"
            "    grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)\n"
            "    new = {name: p.clone() for name, p in params.items()}\n"
            "    with torch.no_grad():\n"
            "        for p, g in zip(new.values(), grads, strict=True):\n"
            "            p -= lr * g\n"
            "    return new\n"
        ),
        says="nor step in place under torch.no_grad()",
    ),
    # net(x) with allow_unused=True: every gradient of params is None, taken for zero, and params come back.
    _inner(
        "inner_step_runs_the_network_on_its_own_parameters_allowing_unused",
        _FROM_OTHER_PARAMS,
        (_SUPPORT_LOSS, "loss = ((net(x) - y) ** 2).mean()"),
        (_GRADS, _GRADS.replace("create_graph=True", "create_graph=True, allow_unused=True")),
        (_STEP, "param - lr * (0 if grad is None else grad)"),
        says="so it returns params unchanged. To fix it, run the network on params",
    ),
    # torch.tensor(lr) is float32: off in the 7th digit, which no cut of the graph explains.
    _inner(
        "inner_step_makes_lr_a_float32_tensor",
        _ALL,
        (_SUPPORT_LOSS, f"lr = torch.tensor(lr)\n    {_SUPPORT_LOSS}"),
        says="your code makes a float32 tensor (with `torch.tensor(...)`)",
    ),
    _inner(
        "inner_step_swaps_x_and_y",
        _ALL,
        (_SUPPORT_LOSS, "loss = ((functional_call(net, params, (y,)) - x) ** 2).mean()"),
        says="the support loss runs the network on the targets y and compares its outputs with the inputs x",
    ),
    # .backward() fills the .grad of params' entries; clearing the network's own hides it from params that
    # are the network's, not from others.
    _inner(
        "inner_step_fills_grad_and_clears_the_networks",
        _FROM_OTHER_PARAMS,
        (
            _GRADS,
            "loss.backward(create_graph=True)\n"
            "    grads = [param.grad for param in params.values()]\n"
            "    net.zero_grad()",
        ),
        says="inner_step filled the .grad of the entries of params, which should stay None",
    ),
    _inner(
        "inner_step_returns_a_list",
        _ALL,
        (_RETURN, "    return [param - lr * grad for param, grad in zip(params.values(), grads)]"),
        says="return a new dict with the same names as params",
    ),
    _inner(
        "imports_the_reference", _ALL, answer="from solutions.learning_to_learn import inner_step  # noqa"
    ),
    # A generator for the dict: the test's own inner_step refuses it, as the answer's would fail in section 6.
    _meta(
        "meta_loss_hands_a_generator",
        ("params = dict(net.named_parameters())", "params = net.named_parameters()"),
        says="meta_loss hands inner_step a generator, where inner_step takes a dict of the parameters",
    ),
    _meta(
        "meta_loss_on_the_support_points",
        (_QUERY, "functional_call(net, adapted, (x,)) - y"),
        says="judged on its support points",
    ),
    _meta(
        "meta_loss_without_the_step",
        (_QUERY, "net(x_query) - y_query"),
        says="runs the network on its own parameters",
    ),
    _meta(
        "meta_loss_adapts_on_the_query_points",
        (_ADAPT, "adapted = inner_step(net, params, x_query, y_query, lr)"),
        says="the step adapts on the query points",
    ),
    _meta(
        "meta_loss_judges_support_and_query_points_together",
        (
            _QUERY,
            "functional_call(net, adapted, (torch.cat([x, x_query]),)) - torch.cat([y, y_query])",
        ),
        says="judged on its support and query points together",
    ),
    _meta(
        "meta_loss_takes_two_inner_steps",
        (_ADAPT, "adapted = inner_step(net, inner_step(net, params, x, y, lr), x, y, lr)"),
        says="two inner steps",
    ),
    _meta(
        "meta_loss_writes_in_the_learning_rate",
        (_ADAPT, "adapted = inner_step(net, params, x, y, 0.01)"),
        says="0.01 written in, not lr",
    ),
    _meta(
        "meta_loss_writes_in_0_1",
        (_ADAPT, "adapted = inner_step(net, params, x, y, 0.1)"),
        says="the step's learning rate is 0.1 written in, not lr",
    ),
    _meta(
        "meta_loss_gathers_the_losses_with_torch_tensor",
        ("torch.stack(losses).mean()", "torch.tensor(losses).mean()"),
        says="`torch.tensor(...)` (of tensors, a copy of their values; torch.stack(...) keeps the graph)",
    ),
    _meta(
        "meta_loss_returns_inside_the_loop",
        ("\n    return torch.stack(losses).mean()", "\n        return torch.stack(losses).mean()"),
        says="only the first task's loss is returned",
    ),
    # The step written again in meta_loss, first-order there while inner_step is right.
    _meta(
        "meta_loss_steps_first_order_itself",
        (
            _ADAPT,
            "support = ((functional_call(net, params, (x,)) - y) ** 2).mean()\n"
            "        grads = torch.autograd.grad(support, list(params.values()))\n"
            "        adapted = {name: p - lr * g for (name, p), g in zip(params.items(), grads)}",
        ),
        says="the meta-gradient is first-order MAML's: meta_loss takes each task's support gradient",
    ),
    _meta(
        "meta_loss_halves_each_query_loss",
        (
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())",
            "losses.append(0.5 * ((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())",
        ),
        says="halved",
    ),
    # A generator runs once: the first task's dict(params) takes every parameter, the next ones none.
    _meta(
        "meta_loss_hands_on_a_generator",
        ("params = dict(net.named_parameters())", "params = net.named_parameters()"),
        (_ADAPT, "adapted = inner_step(net, dict(params), x, y, lr)"),
        says="a generator runs once",
    ),
    _meta(
        "meta_loss_pools_the_tasks_into_one",
        answer=(
            "def meta_loss(net, tasks, lr):\n"
            "    x, y, x_query, y_query = (torch.cat(parts) for parts in zip(*tasks))\n"
            "    adapted = inner_step(net, dict(net.named_parameters()), x, y, lr)\n"
            "    return ((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean()\n"
        ),
        says="the tasks are pooled into one",
    ),
    _meta(
        "meta_loss_sums_over_the_tasks",
        ("torch.stack(losses).mean()", "torch.stack(losses).sum()"),
        says="are added up",
    ),
    _meta(
        "meta_loss_sums_each_query_loss",
        (
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())",
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).sum())",
        ),
        says="each task's query loss adds the squared errors up (.sum())",
    ),
    # The tasks have one query point more than support points.
    _meta(
        "meta_loss_divides_the_query_loss_by_the_support_count",
        (
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())",
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).sum() / len(x))",
        ),
        says="divided by the number of support points",
    ),
    _meta(
        "meta_loss_squeezes_the_query_target",
        (_QUERY, "functional_call(net, adapted, (x_query,)) - y_query.squeeze()"),
        says="each task's query loss mixes a vector of shape (n,)",
    ),
    _meta(
        "meta_loss_swaps_x_and_y",
        (_ADAPT, "adapted = inner_step(net, params, y, x, lr)"),
        says="the step adapts on the support points with inputs and targets swapped",
    ),
    _meta(
        "meta_loss_swaps_support_and_query_points",
        (_ADAPT, "adapted = inner_step(net, params, x_query, y_query, lr)"),
        (_QUERY, "functional_call(net, adapted, (x,)) - y"),
        says="the two swapped",
    ),
    # The tests never hand meta_loss five tasks.
    _meta(
        "meta_loss_divides_by_five_tasks",
        ("torch.stack(losses).mean()", "torch.stack(losses).sum() / 5"),
        says="divided by 5 written in",
    ),
    _meta(
        "meta_loss_of_the_last_task",
        ("torch.stack(losses).mean()", "losses[-1]"),
        says="only the last task's loss is returned",
    ),
    # .item() cuts the graph, and torch.tensor of a float is float32: the value is near, the type is not;
    # the cut is the cause, named alone, the dtype only a sign of it.
    _meta(
        "meta_loss_rebuilt_from_items",
        (
            "return torch.stack(losses).mean()",
            "return torch.tensor(sum(loss.item() for loss in losses) / len(losses), requires_grad=True)",
        ),
        says="its result has no history: .item() cut each loss from the graph",
    ),
    # The median is one task's loss, on the visible tasks the first's: it is named as the median, since
    # it stays the same whichever order the tasks come in.
    _meta(
        "meta_loss_takes_the_median",
        ("torch.stack(losses).mean()", "torch.stack(losses).median()"),
        says="the median of the tasks' losses",
    ),
    _meta(
        "meta_loss_steps_under_no_grad",
        (_ADAPT, "with torch.no_grad():\n            adapted = inner_step(net, params, x, y, lr)"),
        says="torch.no_grad()",
    ),
    _meta(
        "meta_loss_gathers_items_with_torch_tensor",
        (
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())",
            "losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean().item())",
        ),
        ("torch.stack(losses).mean()", "torch.tensor(losses).mean()"),
        says="its result has no history: .item() cut each loss from the graph",
    ),
    _meta(
        "meta_loss_chains_the_tasks",
        (_ADAPT, "params = adapted = inner_step(net, params, x, y, lr)"),
        says="meta_loss hands each task the parameters the previous task's step left",
    ),
    # The caller takes the meta-gradient: meta_loss takes none, with .backward() or otherwise.
    _meta(
        "meta_loss_calls_backward_on_its_result",
        (
            "return torch.stack(losses).mean()",
            "out = torch.stack(losses).mean()\n    out.backward(retain_graph=True)\n    return out",
        ),
        says="it calls .backward() on that result; take no gradient of it",
    ),
]

INSTRUCTIONS = {
    "the support loss is the mean squared error of `functional_call(net, params, (x,))` against `y`": (
        "inner_step_runs_the_network_on_its_own_parameters"
    ),
    "recorded so that the step can be differentiated again": "inner_step_without_create_graph",
    "with `torch.autograd.grad`": "inner_step_fills_grad_with_backward",
    "Return the adapted parameters $\\theta - \\alpha\\, \\nabla L_S(\\theta)$": (
        "inner_step_climbs_the_gradient"
    ),
    "a new dict with the same names": "inner_step_returns_a_list",
    "iterating that dict gives names, not gradients": "inner_step_zips_the_dict_of_gradients",
    "do not assign into `params`": "inner_step_overwrites_the_params_dict",
    "no `.data`": "inner_step_updates_data_in_place",
    "no `-=` under `torch.no_grad()`": "inner_step_updates_in_place_without_grad",
    "no `.detach()`": "inner_step_detaches_the_adapted_parameters",
    "no `.backward()`": "inner_step_fills_grad_with_backward",
    "adapt the network's own parameters, `dict(net.named_parameters())`": "meta_loss_chains_the_tasks",
    "with one gradient step of size `lr`": "meta_loss_takes_two_inner_steps",
    "on the support points `(x, y)`": "meta_loss_adapts_on_the_query_points",
    "prefer it to writing the step again": "meta_loss_steps_with_torch_func_itself",
    "measure the mean squared error of the network run on the adapted parameters at `x_query`": (
        "meta_loss_without_the_step"
    ),
    "Return the mean of these losses over the tasks": "meta_loss_sums_over_the_tasks",
    "Judge on the query points": "meta_loss_on_the_support_points",
}
