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
]
