"""Pins what check_result says about ordinary functions built on autograd: what they return, what they
leave in .grad, and whether gradients flow back from their result, with the likely mistake named.

The functions below are the shapes of answer the lessons ask for (a second derivative, a training step
that fills .grad, a penalty that must train a critic), each right once and wrong in the ways the lessons
warn about.
"""

import functools
import linecache
import sys

import cloudpickle
import pytest
import torch
from torch import nn
from torch.autograd import grad
from widths import fits

from autograder import check_result
from autograder.models import TinyNet, lesson_net, random_net
from autograder.probe.refused import AnswerRefusedError
from autograder.records.results import one_line

cloudpickle.register_pickle_by_value(sys.modules[__name__])


def failure(function, reference, inputs, **options) -> str:
    """The message of the AssertionError check_result raises; fails the test if the check passes.
    Every line of it fits the width students read it in; it comes back on one line, as in grades.csv."""
    with pytest.raises(AssertionError) as info:
        check_result(function, reference, inputs, **options)
    message = str(info.value)
    assert fits(message), message
    return one_line(message)


# Returning derivatives: dy/dw1 and d2y/dw1^2, leaving .grad alone.


def derivatives(net, x):
    _, y = net(x)
    (first,) = torch.autograd.grad(y, net.linear1.weight, create_graph=True)
    (second,) = torch.autograd.grad(first, net.linear1.weight)
    return first.detach(), second


def derivatives_by_backward(net, x):
    _, y = net(x)
    y.backward(create_graph=True)
    first = net.linear1.weight.grad
    (second,) = torch.autograd.grad(first, net.linear1.weight)
    return first.detach(), second


def derivatives_without_create_graph(net, x):
    _, y = net(x)
    (first,) = torch.autograd.grad(y, net.linear1.weight)
    (second,) = torch.autograd.grad(first, net.linear1.weight)
    return first, second


def first_derivative(net, x):
    """dy/dw1, recorded: what differentiates again."""
    _, y = net(x)
    return torch.autograd.grad(y, net.linear1.weight, create_graph=True)[0]


def first_derivative_with_create_graph_false(net, x):
    _, y = net(x)
    return torch.autograd.grad(y, net.linear1.weight, create_graph=False)[0]


def derivatives_hard_coded(net, x):
    return torch.tensor([[720.0]], dtype=torch.float64), torch.tensor([[200.0]], dtype=torch.float64)


def derivatives_as_numbers(net, x):
    first, second = derivatives(net, x)
    return first.item(), second.item()


def derivatives_in_float32(net, x):
    return tuple(d.float() for d in derivatives(net, x))


def first_derivative_only(net, x):
    return derivatives(net, x)[0]


# Filling .grad: the gradients of y and of f = dy/dl, accumulated.


def accumulate(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    y.backward()


def accumulate_zeroing_between(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    net.zero_grad()
    y.backward()


def accumulate_without_retain_graph(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    f.backward()
    y.backward()


def accumulate_with_a_constant_gradient(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden)
    (y + f).backward()


def accumulate_with_autograd_grad(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    torch.autograd.grad(f, list(net.parameters()), retain_graph=True)
    torch.autograd.grad(y, list(net.parameters()))


# A result that must carry gradients back to a module's parameters: a gradient penalty.


def critic_and_points(gen):
    torch.manual_seed(int(torch.randint(2**31, (), generator=gen)))
    critic = nn.Sequential(nn.Linear(2, 8), nn.Tanh(), nn.Linear(8, 1)).double()
    return critic, torch.randn(5, 2, generator=gen, dtype=torch.float64)


def penalty(critic, points):
    points = points.clone().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def critic_with_gradients_and_points(gen):
    """As a training step hands them over: each parameter's .grad holds what an earlier backward left."""
    critic, points = critic_and_points(gen)
    for parameter in critic.parameters():
        parameter.grad = torch.ones_like(parameter)
    return critic, points


def penalty_by_backward(critic, points):
    points = points.clone().requires_grad_()
    critic(points).sum().backward(create_graph=True)
    return ((points.grad.norm(dim=1) - 1) ** 2).mean()


def penalty_by_backward_then_zero_grad(critic, points):
    result = penalty_by_backward(critic, points)
    critic.zero_grad()
    return result


def penalty_by_backward_into_the_points(critic, points):
    points = points.clone().requires_grad_()
    critic(points).sum().backward(create_graph=True, inputs=[points])
    return ((points.grad.norm(dim=1) - 1) ** 2).mean()


def penalty_storing_its_gradient_in_points_grad(critic, points):
    """Right in value, but with points.grad assigned a gradient that keeps its graph."""
    points = points.clone().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    points.grad = grad
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_without_create_graph(critic, points):
    points = points.clone().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_through_a_detached_critic(critic, points):
    points = points.clone().requires_grad_()
    frozen = [p.detach() for p in critic.parameters()]
    hidden = torch.tanh(points @ frozen[0].T + frozen[1])
    (grad,) = torch.autograd.grad((hidden @ frozen[2].T + frozen[3]).sum(), points, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean() + 0 * critic[0].bias.sum()


def penalty_over_the_whole_batch(critic, points):
    points = points.clone().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return (grad.norm() - 1) ** 2


def penalty_summed(critic, points):
    return penalty(critic, points) * len(points)


def penalty_marking_the_callers_points(critic, points):
    points.requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_differentiating_points_that_do_not_require_grad(critic, points):
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def penalty_by_torch_func(critic, points):
    def score(point):
        return critic(point).squeeze()

    grads = torch.func.vmap(torch.func.grad(score))(points)
    return ((grads.norm(dim=1) - 1) ** 2).mean()


# A loss that contains a gradient: z = d/dx(x**3 / 3) - 2x + 1 = (x - 1)**2.


def point(gen):
    return (torch.rand((), generator=gen, dtype=torch.float64).requires_grad_(),)


def loss_with_gradient(x):
    (gx,) = torch.autograd.grad(x**3 / 3, x, create_graph=True)
    return gx - 2 * x + 1


def loss_with_a_constant_gradient(x):
    (gx,) = torch.autograd.grad(x**3 / 3, x)
    return gx - 2 * x + 1


def a_parameter(gen):
    return (torch.tensor(0.25, dtype=torch.float64, requires_grad=True),)


def loss_with_a_tangent_under_no_grad(x):
    with torch.no_grad():
        _, gx = torch.func.jvp(lambda t: t**3 / 3, (x,), (torch.ones_like(x),))
    return gx - 2 * x + 1


def slope_by_dual_numbers_under_no_grad(x):
    with torch.no_grad(), torch.autograd.forward_ad.dual_level():
        dual = torch.autograd.forward_ad.make_dual(x, torch.ones_like(x))
        return torch.autograd.forward_ad.unpack_dual(dual**3 / 3).tangent


@pytest.mark.parametrize("randomized", [False, True])
@pytest.mark.parametrize(
    ("function", "inputs"),
    [
        pytest.param(derivatives, lesson_net, id="returns-visible"),
        pytest.param(derivatives, random_net, id="returns-random"),
        pytest.param(accumulate, lesson_net, id="fills_grad-visible"),
        pytest.param(accumulate, random_net, id="fills_grad-random"),
        pytest.param(penalty, critic_and_points, id="gradient_flows"),
        pytest.param(penalty_by_torch_func, critic_and_points, id="torch_func"),
        pytest.param(loss_with_gradient, point, id="scalar"),
    ],
)
def test_right_answer_passes_with_one_line_on_stdout(function, inputs, randomized, capfd):
    reference = penalty if function is penalty_by_torch_func else function
    check_result(function, reference, inputs, randomized=randomized)
    passed = f"✓ {function.__name__}: result right on `{inputs.__name__}`\n"
    assert capfd.readouterr() == (passed, "")


def test_backward_where_autograd_grad_was_asked_is_caught_by_the_grad_it_fills():
    message = failure(derivatives_by_backward, derivatives, lesson_net)
    assert message.startswith(
        "derivatives_by_backward filled net.linear1.weight.grad, which should stay None."
    )
    assert "torch.autograd.grad returns them instead" in message


def test_differentiating_a_gradient_made_without_create_graph_names_the_cause():
    message = failure(derivatives_without_create_graph, derivatives, lesson_net)
    assert message.startswith("derivatives_without_create_graph raised RuntimeError: element 0 of tensors")
    assert "computed without create_graph=True" in message
    # Where a wrong value's message says what the function was called with: last, after the likely cause.
    assert message.endswith("differentiate again. when called with the net, x that `lesson_net` builds")


def lesson_net_told(gen):
    return lesson_net(gen)


lesson_net_told.in_words = "the lesson's TinyNet and x = 4"


def test_a_builder_that_says_what_it_makes_is_told_in_its_words_after_its_name():
    """The test cell shows a builder's name, never its body: its words say what the arguments were."""
    message = failure(derivatives_without_create_graph, derivatives, lesson_net_told)
    assert message.endswith(
        "when called with the net, x that `lesson_net_told` builds: the lesson's TinyNet and x = 4"
    )


def test_create_graph_false_spelled_out_is_named_as_create_graph_left_out():
    """The code names the keyword, but its value is False: the cause is the same as leaving it out."""
    message = failure(first_derivative_with_create_graph_false, first_derivative, lesson_net)
    assert "it takes a gradient without create_graph=True" in message


def _second_derivative(net, x, record):
    """d²y/dw1², the second call recording its gradient or not."""
    _, y = net(x)
    (first,) = torch.autograd.grad(y, net.linear1.weight, create_graph=True)
    return torch.autograd.grad(first, net.linear1.weight, create_graph=record)[0]


def second_derivative(net, x):
    return _second_derivative(net, x, record=True)


def second_derivative_unrecorded(net, x):
    return _second_derivative(net, x, record=False)


def test_a_constant_from_a_second_call_without_create_graph_is_named():
    """create_graph=True is passed, but not to the call that makes the result: the code shows that much."""
    message = failure(second_derivative_unrecorded, second_derivative, lesson_net)
    assert "Likely cause: one of its gradient calls lacks create_graph=True" in message


def second_derivative_by_grad_imported(net, x):
    _, y = net(x)
    (first,) = grad(y, net.linear1.weight, create_graph=True)
    return grad(first, net.linear1.weight)[0]


def test_the_last_gradient_call_without_create_graph_is_named_when_grad_is_imported_by_name():
    """`from torch.autograd import grad`: the calls are read as torch.autograd.grad's all the same."""
    message = failure(second_derivative_by_grad_imported, second_derivative, lesson_net)
    assert "Likely cause: the last of its gradient calls lacks create_graph=True" in message


def gradient_by_an_input_not_requiring_grad(net, x):
    (by_x,) = torch.autograd.grad((x**2).sum(), x, create_graph=True)
    return torch.autograd.grad(by_x.sum(), net.linear1.weight)[0]


def test_a_first_gradient_call_failing_names_the_input_not_create_graph():
    """The first gradient call of all cannot differentiate a constant gradient: x needs a copy that
    requires grad, whatever the later calls pass."""
    message = failure(gradient_by_an_input_not_requiring_grad, first_derivative, lesson_net)
    assert "the first gradient your code takes is of something built from inputs that do not" in message
    assert "create_graph" not in message


def test_hard_coded_numbers_pass_the_visible_example_but_not_random_weights():
    check_result(derivatives_hard_coded, derivatives, lesson_net)
    message = failure(derivatives_hard_coded, derivatives, random_net, randomized=True)
    assert message.startswith("Item 0 of the result of derivatives_hard_coded is wrong: expected ")
    assert "got 720 at index [0, 0]. Likely cause: the result is numbers written in" in message


def grads_written_in(net, x):
    for parameter in net.parameters():
        parameter.grad = torch.full_like(parameter, 770.0)


def test_a_grad_of_numbers_written_in_is_named_so():
    """A .grad the code wrote from literal numbers is named as such, not as a grad replaced or zeroed."""
    message = failure(grads_written_in, accumulate, lesson_net)
    assert "Likely cause: net.linear2.weight.grad is numbers written in" in message


def derivatives_recording_and_freeing(net, x):
    _, y = net(x)
    (first,) = torch.autograd.grad(y, net.linear1.weight, create_graph=True, retain_graph=False)
    (second,) = torch.autograd.grad(first, net.linear1.weight)
    return first.detach(), second


def test_create_graph_with_retain_graph_false_is_named():
    """The graph a recorded gradient is built on, freed by the same call: leave retain_graph out."""
    message = failure(derivatives_recording_and_freeing, derivatives, lesson_net)
    assert "passes create_graph=True with retain_graph=False" in message
    assert "Leave retain_graph out: it defaults to create_graph." in message


@pytest.mark.parametrize(
    ("function", "problem"),
    [
        pytest.param(derivatives_as_numbers, "got a float instead of a tensor", id="numbers"),
        pytest.param(derivatives_in_float32, "got dtype torch.float32 instead of torch.float64", id="dtype"),
    ],
)
def test_result_of_the_wrong_kind_says_what_it_got(function, problem):
    assert problem in failure(function, derivatives, lesson_net)


def test_result_of_the_wrong_structure_says_what_was_expected():
    message = failure(first_derivative_only, derivatives, lesson_net)
    assert message.startswith("first_derivative_only returns a Tensor; it should return a tuple of 2. ")


def test_returning_a_value_where_the_work_belongs_in_grad_is_refused():
    message = failure(derivatives, accumulate, lesson_net)
    assert message.startswith(
        "derivatives returns a tuple of 2; it should return None: its work shows in .grad."
    )


def test_zeroing_between_backward_calls_is_caught_with_the_accumulation_hint():
    message = failure(accumulate_zeroing_between, accumulate, lesson_net)
    # The lesson's numbers: 770 = 50 + 720 accumulated; zeroing keeps only y's 720.
    assert message.startswith("net.linear1.weight.grad after accumulate_zeroing_between is wrong: ")
    assert "expected 770, got 720" in message
    assert ".grad adds up over backward calls" in message


def accumulate_y_only(net, x):
    _, y = net(x)
    y.backward()


def test_of_two_known_mistakes_alike_the_one_the_code_makes_leads():
    """Zeroing between and no f backward at all leave the same .grad; the code's zero_grad() says which."""
    mistakes = {"f's backward is missing": accumulate_y_only, "zeroed between": accumulate_zeroing_between}
    message = failure(accumulate_zeroing_between, accumulate, lesson_net, mistakes=mistakes)
    assert "Likely cause: zeroed between Or: f's backward is missing" in message


def test_a_zeroing_cause_is_not_offered_where_the_code_zeroes_nothing():
    """No f backward at all leaves what zeroing between would; code that zeroes nothing made the first."""
    mistakes = {"f's backward is missing": accumulate_y_only, "zeroed between": accumulate_zeroing_between}
    message = failure(accumulate_y_only, accumulate, lesson_net, mistakes=mistakes)
    assert "Likely cause: f's backward is missing" in message
    assert "zeroed" not in message


def accumulate_y_twice(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    y.backward(retain_graph=True)
    y.backward()


def accumulate_y_added_by_hand_too(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    parameters = list(net.parameters())
    gradients = torch.autograd.grad(y, parameters, retain_graph=True)
    y.backward()
    for parameter, gradient in zip(parameters, gradients, strict=True):
        parameter.grad += gradient


@pytest.mark.parametrize(
    ("function", "how"),
    [
        (accumulate_y_twice, "run backward once on each result, on the result itself"),
        (accumulate_y_added_by_hand_too, "your code adds to .grad itself"),
    ],
)
def test_a_gradient_counted_twice_is_told_how_the_code_counts_it(function, how):
    mistakes = {"y's gradient was counted twice.": accumulate_y_twice}
    message = failure(function, accumulate, lesson_net, mistakes=mistakes)
    assert f"Likely cause: y's gradient was counted twice: {how}" in message


def clear_grads(net):
    for parameter in net.parameters():
        parameter.grad = None


def accumulate_clearing_between_in_a_helper(net, x):
    hidden, y = net(x)
    (f,) = torch.autograd.grad(y, hidden, create_graph=True)
    f.backward(retain_graph=True)
    clear_grads(net)
    y.backward()


def test_a_grad_cleared_by_a_helper_makes_the_zeroing_mistake_lead():
    """`.grad = None` in a helper the answer calls is read as the answer's own."""
    mistakes = {"f's backward is missing": accumulate_y_only, "zeroed between": accumulate_zeroing_between}
    message = failure(accumulate_clearing_between_in_a_helper, accumulate, lesson_net, mistakes=mistakes)
    assert "Likely cause: zeroed between Or: f's backward is missing" in message


def test_freeing_the_shared_graph_names_retain_graph():
    message = failure(accumulate_without_retain_graph, accumulate, lesson_net)
    assert "Trying to backward through the graph a second time" in message
    # Whichever call freed the graph: the first of two here, but it may be the second of three.
    assert "an earlier backward (or torch.autograd.grad) call through the same graph freed" in message
    assert "pass retain_graph=True to every call but the last" in message
    # f was recorded: create_graph=True is already there, and naming it would point away from the cause.
    assert "take it with create_graph=True" not in message


def test_freeing_the_graph_through_a_constant_gradient_names_create_graph():
    """A gradient taken without create_graph freed the graph that y.backward() then goes through."""
    message = failure(accumulate_with_a_constant_gradient, accumulate, lesson_net)
    assert "If you differentiate what that call returned, take it with create_graph=True" in message


def test_autograd_grad_where_backward_was_asked_leaves_grad_empty():
    message = failure(accumulate_with_autograd_grad, accumulate, lesson_net)
    assert message.startswith("accumulate_with_autograd_grad left net.linear1.weight.grad empty (None).")


def test_penalty_without_create_graph_does_not_reach_the_critic():
    message = failure(penalty_without_create_graph, penalty, critic_and_points)
    assert message.startswith("The result of penalty_without_create_graph does not require grad")
    # critic.2.bias is left out: the gradient of critic(points) with respect to points does not depend on it.
    assert "to critic.0.weight, critic.0.bias, critic.2.weight. Likely" in message
    assert "Likely cause: it takes a gradient without create_graph=True, which makes that gradient" in message


def penalty_retaining_the_graph(critic, points):
    points = points.clone().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, retain_graph=True)
    return ((grad.norm(dim=1) - 1) ** 2).mean()


def test_retain_graph_passed_for_create_graph_is_told_apart_from_it():
    message = failure(penalty_retaining_the_graph, penalty, critic_and_points)
    assert "Likely cause: it takes a gradient without create_graph=True" in message
    assert "retain_graph=True is no substitute: it only keeps the graph for another backward" in message


def idle_critic_and_points(gen):
    """critic_and_points after a critic the result does not depend on: no gradient should reach it."""
    return nn.Linear(2, 1).double(), *critic_and_points(gen)


def penalty_beside_an_idle_critic(idle, critic, points):
    return penalty(critic, points)


def test_a_constant_result_names_only_the_tensors_the_reference_reaches():
    message = failure(
        lambda idle, critic, points: penalty_without_create_graph(critic, points),
        penalty_beside_an_idle_critic,
        idle_critic_and_points,
        name="penalty",
    )
    # Neither the idle critic nor critic.2.bias, which the gradient of critic(points) does not depend on.
    assert "no gradient can flow back to critic.0.weight, critic.0.bias, critic.2.weight. " in message


def loss_with_its_backward_taken(x):
    loss = (x - 1) ** 2
    loss.backward(retain_graph=True)
    return loss


def test_a_loss_that_takes_its_own_backward_is_told_to_leave_the_gradient_to_the_caller():
    message = failure(loss_with_its_backward_taken, lambda x: (x - 1) ** 2, a_parameter)
    assert message.startswith(
        "loss_with_its_backward_taken filled x.grad, which should stay None, with the gradient of the result "
        "it returns. Likely cause: it calls .backward() on that result; take no gradient of it"
    )


def test_penalty_built_from_detached_parameters_names_the_parameter_it_does_not_reach():
    message = failure(penalty_through_a_detached_critic, penalty, critic_and_points)
    assert message.startswith(
        "No gradient flows from the result of penalty_through_a_detached_critic back to critic.0.weight"
    )


def test_a_grad_the_caller_filled_must_be_kept_as_it_was():
    emptied = failure(penalty_by_backward_then_zero_grad, penalty, critic_with_gradients_and_points)
    assert emptied.startswith("penalty_by_backward_then_zero_grad emptied critic.0.weight.grad (None)")
    assert "the code resets it (.grad = None or zero_grad()), perhaps to undo its own .backward()" in emptied
    added = failure(penalty_by_backward, penalty, critic_with_gradients_and_points)
    assert added.startswith("penalty_by_backward changed critic.0.weight.grad, which held the gradient")
    check_result(penalty, penalty, critic_with_gradients_and_points)


def test_a_gradient_holding_its_own_graph_behind_the_result_fails_as_a_leak():
    message = failure(penalty_by_backward_into_the_points, penalty, critic_and_points)
    assert message.startswith(
        "penalty_by_backward_into_the_points leaks memory: the .grad of a tensor it made"
    )
    assert ".backward(create_graph=True)" in message


def test_a_gradient_with_its_graph_assigned_to_grad_names_the_assignment_not_backward():
    message = failure(penalty_storing_its_gradient_in_points_grad, penalty, critic_and_points)
    assert "Likely cause: a gradient made with create_graph=True was assigned to .grad" in message
    assert ".backward(" not in message


def penalty_norms_as_a_number(critic, points):
    points = points.clone().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points.float().double()).sum(), points, create_graph=True)
    return ((grad.norm(dim=1).item() - 1) ** 2).mean()


def test_a_tensor_of_many_elements_made_a_number_names_item_not_the_tensor_method_float():
    """torch's one-element error names the calls that make a number; `.float()` keeps a tensor."""
    message = failure(penalty_norms_as_a_number, penalty, critic_and_points)
    assert "penalty_norms_as_a_number calls `.item()`, which works only on one-element tensors" in message
    assert "float()`" not in message


def test_penalty_with_the_wrong_norm_fails_on_its_value():
    message = failure(penalty_over_the_whole_batch, penalty, critic_and_points)
    assert message.startswith("The result of penalty_over_the_whole_batch is wrong: expected ")


WHOLE_BATCH = "the norm is taken over the whole batch"


def test_a_wrong_result_equal_to_a_known_mistake_is_told_with_its_cause():
    mistakes = {"it sums": penalty_summed, WHOLE_BATCH: penalty_over_the_whole_batch}
    message = failure(penalty_over_the_whole_batch, penalty, critic_and_points, mistakes=mistakes)
    assert message.startswith("The result of penalty_over_the_whole_batch is wrong: expected ")
    assert f" Likely cause: {WHOLE_BATCH} " in message
    assert "it sums" not in message


def test_a_wrong_result_equal_to_two_known_mistakes_names_both():
    """The numbers cannot tell the two apart, so neither is blamed alone."""
    mistakes = {
        "it sums": penalty_summed,
        WHOLE_BATCH: penalty_over_the_whole_batch,
        "it adds up": penalty_summed,
    }
    message = failure(penalty_summed, penalty, critic_and_points, mistakes=mistakes)
    assert " Likely cause: it sums Or: it adds up when called with " in message
    assert WHOLE_BATCH not in message


def test_a_wrong_result_unlike_every_known_mistake_names_none():
    mistakes = {WHOLE_BATCH: penalty_over_the_whole_batch}
    message = failure(penalty_summed, penalty, critic_and_points, mistakes=mistakes, randomized=True)
    assert message.startswith("The result of penalty_summed is wrong: expected ")
    assert "Likely cause" not in message


def test_builder_inconsistent_with_the_reference_is_reported_for_the_instructor():
    message = failure(derivatives, lambda net: net, lesson_net)
    assert message == (
        "The test is inconsistent: `lesson_net` builds 2 argument(s) but the reference takes 1 (net)."
    )


# A test cell as a kernel runs it: IPython keeps the cell's source in linecache under the code's filename.
_TEST_CELL = """
def keep(builder):
    @functools.wraps(builder)
    def kept(gen):
        return builder(gen)

    return kept


def visible_point(gen):
    return (torch.tensor(0.5, dtype=torch.float64, requires_grad=True),)


### BEGIN HIDDEN TESTS
def secret_builder_xyz(gen):
    return (torch.rand((), generator=gen, dtype=torch.float64).requires_grad_(),)


@keep
def secret_kept_builder_xyz(gen):
    return secret_builder_xyz(gen)


def secret_function_xyz(x):
    return x**2
### END HIDDEN TESTS
"""


@pytest.fixture(scope="module")
def test_cell() -> dict:
    filename = "<ipython-input-hidden-builders>"
    linecache.cache[filename] = (len(_TEST_CELL), None, _TEST_CELL.splitlines(keepends=True), filename)
    namespace = {"torch": torch, "functools": functools}
    exec(compile(_TEST_CELL, filename, "exec"), namespace)
    return namespace


@pytest.mark.parametrize("builder", ["secret_builder_xyz", "secret_kept_builder_xyz"])
def test_a_builder_the_hidden_tests_define_is_named_in_no_message_nor_passing_line(builder, test_cell, capfd):
    check_result(loss_with_gradient, loss_with_gradient, test_cell[builder], randomized=True)
    assert capfd.readouterr() == ("✓ loss_with_gradient: result right on inputs a hidden test builds\n", "")
    message = failure(loss_with_a_constant_gradient, loss_with_gradient, test_cell[builder], randomized=True)
    assert message.endswith("when called with the x that a hidden test builds")
    assert "secret" not in message


def test_a_builder_the_hidden_tests_define_inconsistent_with_the_reference_is_not_named_either(test_cell):
    message = failure(loss_with_gradient, lambda x, y: x, test_cell["secret_builder_xyz"])
    assert (
        message
        == "The test is inconsistent: a hidden test builds 1 argument(s) but the reference takes 2 (x, y)."
    )


def test_a_function_under_test_the_hidden_tests_define_is_named_in_no_message_nor_passing_line(
    test_cell, capfd
):
    check_result(test_cell["secret_function_xyz"], lambda x: x**2, test_cell["visible_point"])
    shown = "✓ a function a hidden test defines: result right on `visible_point`\n"
    assert capfd.readouterr() == (shown, "")
    message = failure(test_cell["secret_function_xyz"], lambda x: x**3, test_cell["visible_point"])
    assert message.startswith("The result of a function a hidden test defines is wrong")
    assert "secret" not in message


def test_a_visible_builder_of_the_same_cell_keeps_its_name(test_cell, capfd):
    check_result(loss_with_gradient, loss_with_gradient, test_cell["visible_point"])
    assert capfd.readouterr() == ("✓ loss_with_gradient: result right on `visible_point`\n", "")
    message = failure(loss_with_a_constant_gradient, loss_with_gradient, test_cell["visible_point"])
    assert message.endswith("when called with the x that `visible_point` builds")


def test_inputs_must_be_a_builder():
    with pytest.raises(TypeError, match=r"inputs must build the arguments from a torch\.Generator"):
        check_result(derivatives, derivatives, (TinyNet(), torch.ones(1, 1)))


def test_answer_that_changes_its_arguments_is_told_to_work_on_a_copy():
    message = failure(penalty_marking_the_callers_points, penalty, critic_and_points)
    assert message == (
        "penalty_marking_the_callers_points changed points.requires_grad from False to True: it modified "
        "the caller's tensor. Work on a copy: points = points.detach().requires_grad_(). when called with "
        "the critic, points that `critic_and_points` builds"
    )


class ScaleInPlace(torch.autograd.Function):
    """x * w written into x, which setup_context marks dirty: the caller's x gets this Function's history."""

    @staticmethod
    def forward(x, w):
        return x.mul_(w)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.mark_dirty(inputs[0])
        ctx.save_for_backward(inputs[1])

    @staticmethod
    def backward(ctx, grad_out):
        (w,) = ctx.saved_tensors
        return grad_out * w, None


def data_and_a_weight(gen):
    """x, like data, requires no grad; w does."""
    return torch.ones(3, dtype=torch.float64), torch.full((3,), 2.0, dtype=torch.float64, requires_grad=True)


def test_answer_whose_function_changes_an_argument_in_place_is_told_to_build_a_new_tensor():
    message = failure(ScaleInPlace.apply, lambda x, w: x * w, data_and_a_weight, name="ScaleInPlace")
    assert message == (
        "ScaleInPlace gave the caller's x a history (a grad_fn): x was changed in place by a computation "
        "that requires grad, as by a Function's forward that changes its input and marks it with "
        "ctx.mark_dirty, or by a jvp that changes its tangent x_t, the caller's tensor, in place "
        "(x_t.mul_(...)). Build each result as a new tensor (x * y, not x.mul_(y)); a Function meant to "
        "work in place is applied to a copy (x.clone()). when called with the x, w that `data_and_a_weight` "
        "builds"
    )


def test_differentiating_with_respect_to_a_tensor_without_grad_names_the_cure():
    """The copy is named by the argument's own name, points, not a generic x."""
    message = failure(penalty_differentiating_points_that_do_not_require_grad, penalty, critic_and_points)
    assert "One of the differentiated Tensors does not require grad" in message
    assert "a copy that does: points = points.detach().requires_grad_()" in message


def test_a_constant_gradient_inside_a_loss_gives_the_hand_worked_gradient_and_the_cause():
    message = failure(
        loss_with_a_constant_gradient,
        loss_with_gradient,
        a_parameter,
    )
    # d/dx (x - 1)**2 = -1.5 at x = 0.25; with x**2 taken as a constant only -2 is left.
    assert message.startswith(
        "The gradient of the result of loss_with_a_constant_gradient with respect to x is wrong: "
        "expected -1.5, got -2. Likely cause: part of the result is a constant to autograd"
    )


def test_a_tangent_under_no_grad_is_told_of_no_grad_and_not_of_create_graph():
    """Forward mode takes no create_graph: the message names what the answer does, torch.no_grad()."""
    message = failure(loss_with_a_tangent_under_no_grad, loss_with_gradient, a_parameter)
    assert (
        "part of the result is a constant to autograd: the code computing it uses `torch.no_grad()`"
        in message
    )
    assert "create_graph" not in message
    message = failure(slope_by_dual_numbers_under_no_grad, lambda x: x**2, a_parameter)
    assert message.startswith("The result of slope_by_dual_numbers_under_no_grad does not require grad")
    assert "uses `torch.no_grad()`, which leaves what it computes out of the graph" in message
    assert "create_graph" not in message


def slope_of_a_copy_without_create_graph(x):
    """x's slope, taken of a copy of x without create_graph=True: a constant, though the copy is a leaf."""
    x = x.detach().requires_grad_()
    (gx,) = torch.autograd.grad(x**3 / 3, x)
    return gx


def loss_of_a_copy(x):
    """The toy loss of a copy of x: recorded from the copy on, with no path back to the caller's x."""
    x = x.detach().requires_grad_()
    return loss_with_gradient(x)


def test_a_copy_made_a_leaf_is_named_only_where_the_result_has_a_graph():
    """What is computed from `x.detach().requires_grad_()` is recorded: it cannot be why a result has no
    graph at all, only why the graph does not reach the caller's x."""
    message = failure(slope_of_a_copy_without_create_graph, lambda x: x**2, a_parameter)
    assert message.startswith("The result of slope_of_a_copy_without_create_graph does not require grad")
    assert "it takes a gradient without create_graph=True" in message
    assert "detach" not in message
    message = failure(loss_of_a_copy, loss_with_gradient, a_parameter)
    assert message.startswith("No gradient flows from the result of loss_of_a_copy back to x")
    assert (
        "uses `.detach().requires_grad_()`, a new leaf with no path back to the tensor it copies" in message
    )


def penalty_without_minus_one(critic, points):
    """Each norm squared, no - 1: at ‖w‖ = 0.5, ‖w‖² = (‖w‖ - 1)², the penalty's value is right."""
    points = points.detach().requires_grad_()
    (grad,) = torch.autograd.grad(critic(points).sum(), points, create_graph=True)
    return (grad.norm(dim=1) ** 2).mean()


def line_of_norm_one_half(gen):
    critic = nn.Linear(2, 1).double()
    with torch.no_grad():
        critic.weight.copy_(torch.tensor([[0.3, 0.4]]))
    return critic, torch.randn(5, 2, generator=gen, dtype=torch.float64)


def test_a_copy_of_points_with_no_history_is_no_cut():
    """`points.detach().requires_grad_()` of points that do not require grad cuts no history: it cannot
    be why the penalty's gradient with respect to the critic is wrong."""
    message = failure(penalty_without_minus_one, penalty, line_of_norm_one_half)
    assert message.startswith("The gradient of the result of penalty_without_minus_one with respect to")
    assert "detach" not in message


def test_a_wrong_gradient_with_no_cut_in_the_code_names_no_cut():
    # The reference's gradient is zero: the answer's right value differentiates otherwise, through no cut.
    message = failure(loss_with_gradient, lambda x: (x.detach() - 1) ** 2 + 0 * x, a_parameter)
    assert "or a Function it runs through has a wrong backward" in message
    assert "constant to autograd:" not in message


class DoubleWithAWrongBackward(torch.autograd.Function):
    """2x, whose backward gives 3."""

    @staticmethod
    def forward(x):
        return 2 * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad_out):
        return 3 * grad_out


def doubled_less_one(x):
    return DoubleWithAWrongBackward.apply(x) - 1


def test_a_wrong_gradient_through_a_function_blames_its_backward_alone():
    """The code leaves the graph nowhere: the only cause left is the backward of the Function on the way."""
    message = failure(doubled_less_one, lambda x: 2 * x - 1, a_parameter)
    assert (
        "Likely cause: the backward of DoubleWithAWrongBackward, which the result runs through, returns a "
        "wrong derivative: check its formula." in message
    )
    assert "did not record" not in message


class DoubleSquaringItsOutputInPlace(DoubleWithAWrongBackward):
    """2x, saving its output, whose backward squares it in place: 4x², and a wrong derivative."""

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(output)

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        return grad_out * out.square_()


class DoubleSquaringItsOutputInPlaceWithAJvp(DoubleSquaringItsOutputInPlace):
    """The same, with a jvp rule as well."""

    @staticmethod
    def jvp(ctx, x_t):
        return 2 * x_t


@pytest.mark.parametrize(
    ("function", "rules"),
    [
        (DoubleSquaringItsOutputInPlace, "that backward changes"),
        (DoubleSquaringItsOutputInPlaceWithAJvp, "that no rule of the Function, backward or jvp, changes"),
    ],
)
def test_a_wrong_gradient_through_a_function_changing_a_tensor_in_place_names_the_rules_it_has(
    function, rules
):
    """Only a rule that changes a tensor in place may have changed a saved one; jvp only where defined."""
    message = failure(lambda x: function.apply(x) - 1, lambda x: 2 * x - 1, a_parameter)
    assert f"returns a wrong derivative: check its formula, and {rules}" in message


def test_a_wrong_gradient_equal_to_a_known_mistakes_is_told_with_its_cause():
    """A mistake that returns the right result names a gradient equal to its own; one that returns a wrong
    result, with the same gradient, names only results."""
    mistakes = {
        "it forgets the 1": lambda x: 2 * x.detach() + 3 * (x - x.detach()),
        "backward gives 3": lambda x: 2 * x.detach() - 1 + 3 * (x - x.detach()),
    }
    message = failure(doubled_less_one, lambda x: 2 * x - 1, a_parameter, mistakes=mistakes)
    assert message.startswith("The gradient of the result of doubled_less_one with respect to x is wrong")
    assert " Likely cause: backward gives 3 " in message
    assert "forgets" not in message
    assert "DoubleWithAWrongBackward" not in message


def gradients_of_x_only(x, w):
    return 2 * w * x, None


def gradients_of_both(x, w):
    return 2 * w * x, x**2


def test_an_item_that_should_be_none_is_named():
    def x_and_w(gen):
        return torch.rand(3, generator=gen, dtype=torch.float64), torch.rand(
            3, generator=gen, dtype=torch.float64
        )

    message = failure(gradients_of_both, gradients_of_x_only, x_and_w)
    assert message.startswith("Item 1 of the result of gradients_of_both should be None, not a Tensor.")


def through_zero(gen):
    return (torch.linspace(-1, 1, 3, dtype=torch.float64),)


def test_nan_where_an_argument_is_zero_names_a_division_by_it():
    """2x written as 2 * x**2 / x is nan at x = 0 alone: the argument that is 0 there names the division."""
    message = failure(lambda x: 2 * x**2 / x, lambda x: 2 * x, through_zero)
    assert "got nan at index [1]" in message
    assert "Likely cause: a division by x, which is 0 there" in message


def test_every_wrong_item_of_a_result_is_named_with_its_cause_not_only_the_first():
    """A slip made in two items (a division in each) is told at once; a right item is not named."""
    message = failure(lambda x: (2 * x**2 / x, 3 * x, x**3 / x), lambda x: (2 * x, 3 * x, x**2), through_zero)
    assert "Item 0 of the result of <lambda> is wrong: expected 0, got nan at index [1]." in message
    assert "Item 2 of the result is wrong too: a division by x, which is 0 there" in message
    assert "Item 1" not in message


def test_a_wrong_finite_value_where_an_argument_is_zero_names_no_division():
    message = failure(lambda x: 3 * x + 1, lambda x: 2 * x, through_zero)
    assert "division" not in message


# A value close to the right one, but not equal: what an approximation gives.


def slope_of_sine(x):
    """sin'(x) = cos(x), taken by autograd."""
    x = x.detach().requires_grad_()
    (slope,) = torch.autograd.grad(torch.sin(x).sum(), x)
    return slope


def slope_of_sine_by_forward_difference(x):
    """sin'(x) by a one-sided difference with h = 1e-4: off by about h sin(x) / 2."""
    return (torch.sin(x + 1e-4) - torch.sin(x)) / 1e-4


def three_points(gen):
    return (torch.tensor([0.3, 0.7, 1.1], dtype=torch.float64),)


def test_a_result_close_to_the_right_one_is_named_an_approximation():
    message = failure(slope_of_sine_by_forward_difference, lambda x: torch.cos(x), three_points)
    assert "every value is within 0.1% of the right one, but not equal to it: an approximation" in message


def test_a_known_mistake_close_to_the_right_result_is_named_alone():
    """A mistake the test names explains the value: the approximation hint would only mislead."""
    mistakes = {"the slope is taken by a forward difference.": slope_of_sine_by_forward_difference}
    message = failure(
        slope_of_sine_by_forward_difference, lambda x: torch.cos(x), three_points, mistakes=mistakes
    )
    assert "Likely cause: the slope is taken by a forward difference." in message
    assert "an approximation" not in message


def test_the_right_slope_passes():
    check_result(slope_of_sine, lambda x: torch.cos(x), three_points)


def weights_by_name(net, x):
    """The network's weights, in a dict keyed by their names."""
    return {name: param.detach() * 1 for name, param in net.named_parameters()}


def weights_by_name_one_doubled(net, x):
    """The same dict, the last entry doubled."""
    weights = weights_by_name(net, x)
    last = list(weights)[-1]
    return weights | {last: 2 * weights[last]}


def test_a_wrong_entry_of_a_dict_is_named_by_its_key():
    """A dict keyed by names (a network's parameters) is compared entry by entry, and says which is wrong."""
    message = failure(weights_by_name_one_doubled, weights_by_name, lesson_net)
    last = list(dict(lesson_net(torch.Generator())[0].named_parameters()))[-1]
    assert message.startswith(f"Entry '{last}' of the result of weights_by_name_one_doubled is wrong")


# A float32 tensor among float64 inputs: values off by its rounding alone, with nothing cut from the graph.


def step_at_a_float32_rate(x):
    """x after a step down x**2 at the rate 0.49, made a float32 tensor: 0.49000001."""
    rate = torch.tensor(0.49)
    (gx,) = torch.autograd.grad(x**2, x, create_graph=True)
    return x - rate * gx


def test_a_value_off_by_float32_rounding_names_the_float32_tensor():
    message = failure(step_at_a_float32_rate, lambda x: x - 0.98 * x, point)
    assert "Likely cause: your code makes a float32 tensor (with `torch.tensor(...)`)" in message


def step_at_a_float32_rate_from_far(x):
    """The same step added to 1000, whose value the rounding leaves right and whose gradient it does not."""
    return 1000 + step_at_a_float32_rate(x)


def test_a_gradient_off_by_float32_rounding_names_the_float32_tensor_and_no_cut():
    """torch.tensor of a plain number copies no tensor: it cuts nothing from the graph."""
    message = failure(step_at_a_float32_rate_from_far, lambda x: 1000 + x - 0.98 * x, point)
    assert message.startswith("The gradient of the result of step_at_a_float32_rate_from_far")
    assert "Likely cause: your code makes a float32 tensor (with `torch.tensor(...)`)" in message
    assert "constant to autograd" not in message
    assert "wrong backward" not in message


def losses_left_unaveraged(x):
    """The squared distance of x to each of three targets, not averaged: three values where one belongs."""
    return torch.stack([((x - target) ** 2).mean() for target in (0.0, 1.0, 2.0)])


def test_more_values_than_expected_name_the_missing_reduction_not_a_reshaping_call():
    message = failure(losses_left_unaveraged, lambda x: losses_left_unaveraged(x).mean(), three_points)
    assert "Likely cause: it returns 3 values where one is expected: reduce them to one" in message
    assert "changes a tensor's shape" not in message


def square_weighted_by_zero(x):
    """x**2 in value, but reaching x only through 0 * x: a gradient flows back, and is 0 everywhere."""
    return x.detach() ** 2 + 0 * x


def test_a_gradient_that_flows_with_the_value_0_is_told_as_0_not_as_none_flowing():
    message = failure(square_weighted_by_zero, lambda x: x**2, a_parameter)
    assert "with respect to x is 0 at every element, but it should not be" in message
    assert "No gradient flows" not in message


# A refusal: what the answer did, told by the check's own code.


def refused_without_a_full_stop(x):
    """An answer a check refuses with a message that ends without a full stop."""
    raise AnswerRefusedError("return x itself")


def test_a_refusal_ends_as_a_sentence_before_the_line_saying_what_was_called():
    message = failure(refused_without_a_full_stop, lambda x: x, lambda gen: (torch.ones(2),))
    assert "refused_without_a_full_stop: return x itself. when called with the x that" in message
