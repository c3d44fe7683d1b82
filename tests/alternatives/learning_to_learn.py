"""Lesson 08: inner_step and meta_loss, written otherwise."""

from grading_pipeline import rewrites_of

LESSON = "08_learning_to_learn"

_inner_step = rewrites_of("inner_step")
_meta_loss = rewrites_of("meta_loss")


ALTERNATIVES = [
    _inner_step(
        "inner_step_by_torch_func_grad",
        answer='''def inner_step(net, params, x, y, lr):
    """The step's gradient by torch.func.grad, which autograd records and can differentiate again."""

    def support_loss(p):
        return ((functional_call(net, p, (x,)) - y) ** 2).mean()

    grads = torch.func.grad(support_loss)(params)
    return {name: params[name] - lr * grads[name] for name in params}''',
    ),
    # The exercise says torch.autograd.grad, given the dict itself, returns a dict under the same names.
    _inner_step(
        "inner_step_differentiates_the_dict",
        ("list(params.values()), create_graph=True", "params, create_graph=True"),
        (
            "{name: param - lr * grad for (name, param), grad in zip(params.items(), grads, strict=True)}",
            "{name: params[name] - lr * grads[name] for name in params}",
        ),
    ),
    _inner_step(
        "inner_step_with_a_loop",
        answer='''def inner_step(net, params, x, y, lr):
    """One parameter at a time, the loss written with torch.nn.functional."""
    loss = torch.nn.functional.mse_loss(functional_call(net, params, (x,)), y)
    names = list(params)
    grads = torch.autograd.grad(loss, [params[name] for name in names], create_graph=True)
    adapted = {}
    for name, grad in zip(names, grads, strict=True):
        adapted[name] = params[name] - lr * grad
    return adapted''',
    ),
    _inner_step(
        "inner_step_by_torch_func_vjp",
        answer='''def inner_step(net, params, x, y, lr):
    """The support loss's vector-Jacobian product with 1, by torch.func.vjp: its gradient."""

    def support_loss(p):
        return ((functional_call(net, p, (x,)) - y) ** 2).mean()

    loss, pullback = torch.func.vjp(support_loss, params)
    (grads,) = pullback(torch.ones_like(loss))
    return {name: params[name] - lr * grads[name] for name in params}''',
    ),
    _inner_step(
        "inner_step_by_grad_and_value",
        answer='''def inner_step(net, params, x, y, lr):
    """torch.func.grad_and_value gives the gradient and the loss; only the gradient is used."""

    def support_loss(p):
        return torch.nn.functional.mse_loss(functional_call(net, p, (x,)), y)

    grads, _ = torch.func.grad_and_value(support_loss)(params)
    return {name: param - lr * grads[name] for name, param in params.items()}''',
    ),
    _inner_step(
        "inner_step_with_hand_kept_lists",
        answer='''def inner_step(net, params, x, y, lr):
    """Names and tensors kept in two lists; the loss as a sum of squares over the number of points."""
    names = list(params.keys())
    tensors = [params[name] for name in names]
    errors = functional_call(net, dict(zip(names, tensors, strict=True)), (x,)) - y
    loss = (errors * errors).sum() / errors.numel()
    grads = torch.autograd.grad(loss, tensors, create_graph=True)
    return dict(zip(names, [t - lr * g for t, g in zip(tensors, grads, strict=True)], strict=True))''',
    ),
    _inner_step(
        "inner_step_through_torch_func_functional_call",
        answer='''def inner_step(net, params, x, y, lr):
    """torch.func.functional_call, by its full name, and torch.sub with alpha for the step."""
    loss = ((torch.func.functional_call(net, params, x) - y) ** 2).mean()
    grads = torch.autograd.grad(loss, tuple(params.values()), create_graph=True)
    steps = zip(params.items(), grads, strict=True)
    return {name: torch.sub(param, grad, alpha=lr) for (name, param), grad in steps}''',
    ),
    _meta_loss(
        "meta_loss_as_a_running_sum",
        answer='''def meta_loss(net, tasks, lr):
    """The query losses added up one by one, then divided by the number of tasks."""
    params = dict(net.named_parameters())
    total = 0
    for x, y, x_query, y_query in tasks:
        adapted = inner_step(net, params, x, y, lr)
        total = total + ((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean()
    return total / len(tasks)''',
    ),
    _meta_loss(
        "meta_loss_by_a_comprehension",
        answer='''def meta_loss(net, tasks, lr):
    """Each task's query loss in a list comprehension, averaged with torch.stack(...).mean()."""
    params = {name: param for name, param in net.named_parameters()}

    def query_loss(x, y, x_query, y_query):
        adapted = inner_step(net, params, x, y, lr)
        return torch.nn.functional.mse_loss(functional_call(net, adapted, (x_query,)), y_query)

    return torch.stack([query_loss(*task) for task in tasks]).mean()''',
    ),
    _meta_loss(
        "meta_loss_steps_with_torch_func_itself",
        answer='''def meta_loss(net, tasks, lr):
    """The inner step written in place of inner_step, its gradient by torch.func.grad."""
    params = dict(net.named_parameters())

    def loss_at(p, x, y):
        return ((functional_call(net, p, (x,)) - y) ** 2).mean()

    losses = []
    for x, y, x_query, y_query in tasks:
        grads = torch.func.grad(loss_at)(params, x, y)
        adapted = {name: params[name] - lr * grads[name] for name in params}
        losses.append(loss_at(adapted, x_query, y_query))
    return sum(losses) / len(losses)''',
    ),
    _meta_loss(
        "meta_loss_calling_inner_step_by_keywords",
        answer='''def meta_loss(net, tasks, lr):
    """inner_step called with its arguments named, through a name of its own."""
    params = dict(net.named_parameters())
    losses = []
    for x, y, x_query, y_query in tasks:
        adapted = one_step(net=net, params=params, x=x, y=y, lr=lr)
        losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())
    return torch.stack(losses).mean()


one_step = inner_step''',
    ),
    _meta_loss(
        "meta_loss_with_python_sum",
        answer='''def meta_loss(net, tasks, lr):
    """Python's sum over a generator of query losses, over the number of tasks."""
    params = dict(net.named_parameters())
    return sum(
        ((functional_call(net, inner_step(net, params, x, y, lr), (xq,)) - yq) ** 2).mean()
        for x, y, xq, yq in tasks
    ) / len(tasks)''',
    ),
    _meta_loss(
        "meta_loss_weighting_each_task",
        answer='''def meta_loss(net, tasks, lr):
    """Each query loss weighted by 1 / (number of tasks) as it is added: the same mean."""
    params = dict(net.named_parameters())
    weight = 1.0 / len(tasks)
    total = torch.zeros(())
    for x, y, x_query, y_query in tasks:
        adapted = inner_step(net, params, x, y, lr)
        total = total + weight * ((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean()
    return total''',
    ),
    _meta_loss(
        "meta_loss_with_the_step_written_out",
        answer='''def meta_loss(net, tasks, lr):
    """Each task's step written out with torch.autograd.grad, the losses averaged by torch.mean."""
    names, weights = zip(*net.named_parameters())
    losses = []
    for task in tasks:
        x, y, x_query, y_query = task
        fitted = torch.func.functional_call(net, dict(zip(names, weights)), x)
        support = torch.nn.functional.mse_loss(fitted, y)
        grads = torch.autograd.grad(support, weights, create_graph=True)
        adapted = {name: w - lr * g for name, w, g in zip(names, weights, grads)}
        prediction = torch.func.functional_call(net, adapted, x_query)
        losses.append(torch.nn.functional.mse_loss(prediction, y_query))
    return torch.mean(torch.stack(losses))''',
    ),
    _meta_loss(
        "meta_loss_vmapped_over_the_tasks",
        answer='''def meta_loss(net, tasks, lr):
    """Every task at once: torch.func.vmap runs one task's step and query loss over the stacked tasks."""
    params = dict(net.named_parameters())

    def loss_at(p, x, y):
        return ((functional_call(net, p, (x,)) - y) ** 2).mean()

    def query_loss(x, y, x_query, y_query):
        grads = torch.func.grad(loss_at)(params, x, y)
        adapted = {name: params[name] - lr * grads[name] for name in params}
        return loss_at(adapted, x_query, y_query)

    stacked = [torch.stack(column) for column in zip(*tasks)]
    return torch.func.vmap(query_loss)(*stacked).mean()''',
    ),
]
