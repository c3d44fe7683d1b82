"""Lesson 08_learning_to_learn: the reference inner_step and meta_loss, by closed forms for linear models,
finite differences and torch.func, in float64."""

import ast
import functools
import math

import nbformat
import pytest
import torch
from alternatives import ALTERNATIVES
from grading_pipeline import solution_answers
from in_process import judged
from judged_answers import first_failures
from torch import autograd, nn
from torch.func import functional_call
from torch.nn.utils import parameters_to_vector

from autograder.course.layout import SOURCE
from autograder.learning_to_learn_cost import kept_bytes, weight_bytes, wide_net
from autograder.learning_to_learn_mistakes import FROM_HALF_PARAMS_MISTAKES, STEP_MISTAKES
from autograder.models import tanh_network
from solutions.learning_to_learn import inner_step, meta_loss, mse

LESSON = "08_learning_to_learn"


def generator(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, gen: torch.Generator) -> torch.Tensor:
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def _linear(features: int, gen: torch.Generator) -> nn.Linear:
    model = nn.Linear(features, 1).double()
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.copy_(randn(*parameter.shape, gen=gen))
    return model


def _task(gen: torch.Generator, features: int = 1, k: int = 6) -> tuple[torch.Tensor, ...]:
    """k support points (x, y) and k + 1 query points (x_query, y_query)."""
    x, x_query = randn(k, features, gen=gen), randn(k + 1, features, gen=gen)
    return x, randn(k, 1, gen=gen), x_query, randn(k + 1, 1, gen=gen)


class _LeastSquares:
    """A linear model's loss mean((X̃θ - y)²), X̃ = [X, 1], θ = (weight, bias): every derivative by hand."""

    def __init__(self, x: torch.Tensor, y: torch.Tensor) -> None:
        self.design = torch.cat([x, torch.ones(len(x), 1, dtype=x.dtype)], dim=1)
        self.y = y.squeeze(1)

    def loss(self, theta: torch.Tensor) -> torch.Tensor:
        return ((self.design @ theta - self.y) ** 2).mean()

    def gradient(self, theta: torch.Tensor) -> torch.Tensor:
        return 2 * self.design.T @ (self.design @ theta - self.y) / len(self.y)

    def hessian(self) -> torch.Tensor:
        return 2 * self.design.T @ self.design / len(self.y)


def _theta(model: nn.Linear) -> torch.Tensor:
    return parameters_to_vector(model.parameters()).detach()


@pytest.mark.parametrize("features", [1, 3])
def test_inner_step_of_a_linear_model_is_theta_minus_lr_times_its_closed_form_gradient(features: int) -> None:
    gen = generator(features)
    model = _linear(features, gen)
    x, y, _, _ = _task(gen, features)
    adapted = inner_step(model, dict(model.named_parameters()), x, y, lr=0.1)
    expected = _theta(model) - 0.1 * _LeastSquares(x, y).gradient(_theta(model))
    torch.testing.assert_close(torch.cat([adapted["weight"].flatten(), adapted["bias"]]), expected)


@pytest.mark.parametrize("features", [1, 3])
@pytest.mark.parametrize("lr", [0.05, 0.4])
def test_meta_gradient_of_a_linear_model_is_one_minus_lr_hessian_times_the_query_gradient(
    features: int, lr: float
) -> None:
    gen = generator(10 * features + int(100 * lr))
    model = _linear(features, gen)
    tasks = [_task(gen, features) for _ in range(2)]
    loss = meta_loss(model, tasks, lr)
    (grad_weight, grad_bias) = autograd.grad(loss, [model.weight, model.bias])

    theta, eye = _theta(model), torch.eye(features + 1, dtype=torch.float64)
    values, gradients = [], []
    for x, y, x_query, y_query in tasks:
        support, query = _LeastSquares(x, y), _LeastSquares(x_query, y_query)
        adapted = theta - lr * support.gradient(theta)
        values.append(query.loss(adapted))
        gradients.append((eye - lr * support.hessian()) @ query.gradient(adapted))
    torch.testing.assert_close(loss, torch.stack(values).mean())
    torch.testing.assert_close(torch.cat([grad_weight.flatten(), grad_bias]), torch.stack(gradients).mean(0))


def _meta_gradient(net: nn.Module, tasks, lr: float) -> torch.Tensor:
    return parameters_to_vector(autograd.grad(meta_loss(net, tasks, lr), list(net.parameters())))


@pytest.mark.parametrize("seed", range(2))
def test_meta_gradient_matches_central_differences_of_the_meta_loss(seed: int) -> None:
    gen = generator(20 + seed)
    net, tasks = tanh_network(gen, (3,)), [_task(gen) for _ in range(2)]
    lr, eps = 0.3, 1e-6

    def nudged(entry: torch.Tensor, shift: float) -> float:
        with torch.no_grad():
            entry += shift
        value = meta_loss(net, tasks, lr).item()
        with torch.no_grad():
            entry -= shift
        return value

    numeric = [
        (nudged(entry, eps) - nudged(entry, -eps)) / (2 * eps)
        for parameter in net.parameters()
        for entry in parameter.view(-1)
    ]
    torch.testing.assert_close(
        _meta_gradient(net, tasks, lr), torch.tensor(numeric, dtype=torch.float64), rtol=1e-6, atol=1e-8
    )


def _meta_loss_by_torch_func(net: nn.Module, params: dict, tasks, lr: float) -> torch.Tensor:
    """The same meta-loss with the inner gradient taken by torch.func.grad, which composes by itself."""
    losses = []
    for x, y, x_query, y_query in tasks:
        grads = torch.func.grad(lambda p, x=x, y=y: mse(functional_call(net, p, (x,)), y))(params)
        adapted = {name: params[name] - lr * grads[name] for name in params}
        losses.append(mse(functional_call(net, adapted, (x_query,)), y_query))
    return torch.stack(losses).mean()


@pytest.mark.parametrize("seed", range(3))
def test_meta_gradient_matches_nested_torch_func_grad_on_random_networks(seed: int) -> None:
    gen = generator(30 + seed)
    widths = tuple(torch.randint(2, 8, (1 + seed % 2,), generator=gen).tolist())
    net, tasks = tanh_network(gen, widths), [_task(gen) for _ in range(3)]
    params = {name: p.detach() for name, p in net.named_parameters()}
    expected = torch.func.grad(lambda p: _meta_loss_by_torch_func(net, p, tasks, 0.2))(params)
    torch.testing.assert_close(_meta_gradient(net, tasks, 0.2), parameters_to_vector(expected.values()))


def _first_order_meta_gradient(net: nn.Module, task, lr: float) -> torch.Tensor:
    """The query loss's gradient at the adapted parameters, the step taken as a constant: first-order
    MAML's meta-gradient, from its definition."""
    x, y, x_query, y_query = task
    params = dict(net.named_parameters())
    grads = autograd.grad(mse(functional_call(net, params, (x,)), y), list(params.values()))
    adapted = {
        name: (p - lr * g).detach().requires_grad_()
        for (name, p), g in zip(params.items(), grads, strict=True)
    }
    return parameters_to_vector(
        autograd.grad(mse(functional_call(net, adapted, (x_query,)), y_query), list(adapted.values()))
    )


def test_first_order_meta_gradient_misses_exactly_the_hessian_term() -> None:
    gen = generator(40)
    net, (x, y, x_query, y_query), lr = tanh_network(gen, (5, 4)), _task(gen), 0.25
    second_order = _meta_gradient(net, [(x, y, x_query, y_query)], lr)
    first_order = _first_order_meta_gradient(net, (x, y, x_query, y_query), lr)
    params = dict(net.named_parameters())

    shapes = {name: p.shape for name, p in params.items()}

    def support_loss(theta: torch.Tensor) -> torch.Tensor:
        chunks = theta.split([shape.numel() for shape in shapes.values()])
        unflat = {name: c.view(shape) for (name, shape), c in zip(shapes.items(), chunks, strict=True)}
        return mse(functional_call(net, unflat, (x,)), y)

    _, hessian_times_query_gradient = autograd.functional.hvp(
        support_loss, parameters_to_vector(net.parameters()).detach(), first_order
    )
    assert (second_order - first_order).norm() > 1e-3
    torch.testing.assert_close(second_order, first_order - lr * hessian_times_query_gradient)


def test_the_check_from_half_the_parameters_names_every_slip_the_check_from_the_networks_own_does() -> None:
    """The hidden check from half the parameters can be the first to fail: it names the same slips."""
    assert set(STEP_MISTAKES) <= set(FROM_HALF_PARAMS_MISTAKES)


def test_inner_step_returns_new_tensors_and_leaves_the_network_and_its_grad_alone() -> None:
    gen = generator(50)
    net, (x, y, _, _) = tanh_network(gen, (5, 4)), _task(gen)
    before = {name: p.detach().clone() for name, p in net.named_parameters()}
    params = dict(net.named_parameters())
    adapted = inner_step(net, params, x, y, lr=0.5)
    assert list(adapted) == list(params)
    for name, p in net.named_parameters():
        torch.testing.assert_close(p.detach(), before[name], rtol=0, atol=0)
        assert p.grad is None
        assert adapted[name] is not p
        assert adapted[name].grad_fn is not None
        assert not torch.equal(adapted[name].detach(), p.detach())


def test_meta_loss_is_measured_on_the_query_points_not_the_support_points() -> None:
    gen = generator(60)
    net, (x, y, x_query, y_query) = tanh_network(gen, (5, 4)), _task(gen)
    on_query = meta_loss(net, [(x, y, x_query, y_query)], 0.1)
    adapted = inner_step(net, dict(net.named_parameters()), x, y, 0.1)
    torch.testing.assert_close(on_query, mse(functional_call(net, adapted, (x_query,)), y_query))
    assert not torch.isclose(on_query, mse(functional_call(net, adapted, (x,)), y))


_RECORDED = "grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)"
_META_LOSS_STEPPING_FIRST_ORDER = """def meta_loss(net, tasks, lr):
    params = dict(net.named_parameters())
    losses = []
    for x, y, x_query, y_query in tasks:
        loss = ((functional_call(net, params, (x,)) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, list(params.values()))
        adapted = {name: p - lr * g for (name, p), g in zip(params.items(), grads, strict=True)}
        losses.append(((functional_call(net, adapted, (x_query,)) - y_query) ** 2).mean())
    return torch.stack(losses).mean()"""


def _meta_loss_messages(answers: dict[str, str]) -> list[str]:
    """The messages of the meta_loss cell's failed checks on the answer, the first first."""
    return [
        j.verdict.message
        for j in judged(LESSON, answers)
        if j.cell == "meta_loss_on_query_points" and not j.verdict.passed
    ]


def test_a_meta_loss_repeating_its_inner_steps_slip_loses_its_point() -> None:
    """meta_loss is judged with a right inner_step in place of the answer's. Beside a first-order inner_step,
    a meta_loss writing the same first-order step again equals a right meta_loss around that inner_step: it
    loses its point for its own step all the same, while a right meta_loss keeps its point."""
    answers = solution_answers(LESSON)
    first_order = answers["inner_step"].replace(_RECORDED, _RECORDED.replace(", create_graph=True", ""))
    assert first_order != answers["inner_step"]
    repeating = _meta_loss_messages(
        answers | {"inner_step": first_order, "meta_loss": _META_LOSS_STEPPING_FIRST_ORDER}
    )
    assert repeating, "a meta_loss stepping first-order keeps its point"
    said = " ".join(repeating[0].split())
    assert "the meta-gradient is first-order MAML's: meta_loss takes each task's support gradient" in said
    assert "Call inner_step(net, params, x, y, lr) rather than writing the step again" in said
    assert _meta_loss_messages(answers | {"inner_step": first_order}) == []


def _is_a_definition(node: ast.stmt) -> bool:
    """A function, an import, or a constant named in capitals (SHOTS, INNER_LR)."""
    return isinstance(node, ast.FunctionDef | ast.ImportFrom) or (
        isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id.isupper()
    )


def _notebook_definitions() -> dict:
    """The functions and constants sections 1 and 6 define, without running the training: the tasks and
    the first-order MAML that section 8 measures memory with."""
    notebook = nbformat.read(SOURCE / LESSON / f"{LESSON}.ipynb", as_version=4)
    namespace = {
        "math": math,
        "torch": torch,
        "nn": nn,
        "functional_call": functional_call,
    }
    for cell in notebook.cells:
        if cell.get("id") in {"tasks-plot", "training-runs"}:
            kept = [node for node in ast.parse(cell.source).body if _is_a_definition(node)]
            exec(compile(ast.Module(kept, type_ignores=[]), cell.get("id"), "exec"), namespace)
    return namespace


def _memory_shares(section: dict, meta_loss_of, width: int) -> tuple[float, float]:
    """Section 8's two shares at `width`, for a meta_loss: what MAML keeps that first-order MAML does not,
    and what the tasks' copies of the weights hold."""
    cost_gen = torch.Generator().manual_seed(2)
    sample, shots = section["sample"], section["SHOTS"]
    tasks = [
        (*sample(a, phase, shots, cost_gen), *sample(a, phase, shots, cost_gen))
        for a, phase in zip(*section["draw_tasks"](5, cost_gen), strict=True)
    ]
    torch.manual_seed(0)
    net, lr = wide_net(width), section["INNER_LR"]
    maml = kept_bytes(net, meta_loss_of, tasks, lr)
    first_order = kept_bytes(net, _solved_definitions()["first_order_meta_loss"], tasks, lr)
    return (maml - first_order) / maml, len(tasks) * weight_bytes(net) / maml


def _definitions_with(answers: dict[str, str]) -> dict:
    """_notebook_definitions with the answer cells run: section 6 builds first-order MAML from them."""
    section = _notebook_definitions()
    for code in answers.values():
        exec(code, section)
    return section


@functools.cache
def _solved_definitions() -> dict:
    """_definitions_with the solution's answers."""
    return _definitions_with(solution_answers(LESSON))


@functools.cache
def _reference_shares(width: int) -> tuple[float, float]:
    return _memory_shares(_solved_definitions(), meta_loss, width)


@pytest.mark.parametrize("answer", ALTERNATIVES[LESSON], ids=lambda answer: answer.name)
def test_section_8_measures_every_correct_answer_within_the_points_its_text_allows(answer) -> None:
    """Section 8's memory count runs on any correct answer (torch.func's transforms included), and gives the
    reference's shares to within the "point or two" the text allows."""
    section = _definitions_with(answer.apply(solution_answers(LESSON)))
    for width in (10, 320):
        for got, want in zip(
            _memory_shares(section, section["meta_loss"], width), _reference_shares(width), strict=True
        ):
            assert abs(got - want) <= 0.02, (width, got, want)


@pytest.mark.parametrize("answer", ALTERNATIVES[LESSON], ids=lambda answer: answer.name)
def test_section_6_makes_first_order_maml_of_a_meta_loss_that_calls_inner_step_and_stops_one_that_does_not(
    answer,
) -> None:
    """Section 6 builds first-order MAML by handing the student's meta_loss a first-order inner_step, under
    that name and any other bound to it; a meta_loss that writes the step itself would stay MAML, so
    section 6 stops and says why."""
    answers = answer.apply(solution_answers(LESSON))
    section = _definitions_with(answers)
    gen = generator(41)
    net, task, lr = tanh_network(gen, (5, 4)), _task(gen), 0.25
    if "inner_step(" in answers["meta_loss"] or "= inner_step" in answers["meta_loss"]:
        first_order = section["first_order_meta_loss"](net, [task], lr)
        got = parameters_to_vector(autograd.grad(first_order, list(net.parameters())))
        torch.testing.assert_close(got, _first_order_meta_gradient(net, task, lr))
    else:
        with pytest.raises(
            RuntimeError,
            match="meta_loss never calls inner_step by that name, so section 6's first-order MAML",
        ):
            section["first_order_meta_loss"](net, [task], lr)
    assert section["inner_step"].__name__ == "inner_step", "the student's inner_step is not restored"


def test_a_step_written_into_params_loses_both_cells_of_inner_step_and_is_named_there() -> None:
    """The dict params is changed, its tensors left alone: its values and meta-gradient are right, yet
    meta_loss would chain the tasks, so both cells name the changed dict, and no cell blames a change in
    place the step did not make."""
    failures = first_failures(LESSON, "inner_step_overwrites_the_params_dict")
    assert list(failures) == ["inner_step_value", "inner_step_meta_gradient"]
    for said in failures.values():
        assert "inner_step changed the dict params it was given" in " ".join(said.split())
