"""The references of lesson 00's exercises, and what its usual slips return.

Each reference is the exercise's result written out by hand on a network like `TinyNet`, in plain torch;
each MISTAKES dict maps a message to what one slip returns (or leaves in .grad), so that a wrong answer
equal to it is named. The test cells import them, so that they show the checks and not the formulas.
"""

from collections.abc import Callable
from itertools import combinations

import torch
from torch import nn


def _of_u_hidden_w2(formula: Callable) -> Callable:
    """The function of (net, x) that computes formula(u, hidden, w2, x) on the network, where u = w2·l + b2
    is the value y squares: the formulas below are written in those four."""

    def on_the_network(net: nn.Module, x: torch.Tensor):
        hidden = net.linear1(x)
        return formula(net.linear2(hidden), hidden, net.linear2.weight, x)

    return on_the_network


def _plain(formula: Callable) -> Callable:
    """What formula(u, hidden, w2, x) gives on the network, as a plain value: a slip's result."""
    on_the_network = _of_u_hidden_w2(formula)
    return lambda net, x: on_the_network(net, x).detach()


# hidden_second_derivative


def d2y_dl2_by_hand(net: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """d²y/dl² = 2·w2², written out: f = dy/dl = 2u·w2, and u = w2·l + b2 brings another w2."""
    return 2 * net.linear2.weight**2


# A derivative of f by a parameter may come from either way of taking it.
_BY_EITHER_CALL = "(by the second torch.autograd.grad call, or read from its .grad after f.backward())"


def _twice_by(weight: str, whose: str = "") -> str:
    """The cause for a second derivative of y taken with respect to a weight, as section 7 takes it by w1,
    where the exercise asks for it with respect to the hidden value."""
    return (
        f"this is d²y/d{weight}²{whose}, not d²y/dl²: y is differentiated twice with respect to {weight}, a "
        "weight. Differentiate y, then f = dy/dl, with respect to `hidden`, the hidden value l that the "
        "forward returns."
    )


SECOND_DERIVATIVE_MISTAKES = {
    "this is f = dy/dl, the first derivative: differentiate f (not y) by hidden again.": _plain(
        lambda u, hidden, w2, x: 2 * u * w2
    ),
    f"this is df/dw1, not d²y/dl²: f = dy/dl is differentiated with respect to w1 {_BY_EITHER_CALL}, not the "
    "hidden value l.": _plain(lambda u, hidden, w2, x: 2 * w2**2 * x),
    f"this is df/dw2, not d²y/dl²: f = dy/dl is differentiated with respect to w2 {_BY_EITHER_CALL}, not the "
    "hidden value l.": _plain(lambda u, hidden, w2, x: 2 * hidden * w2 + 2 * u),
    "y is differentiated with respect to u = w2·l + b2, not the hidden value l: d²y/du² = 2, and each "
    "derivative by l brings a factor w2.": _plain(lambda u, hidden, w2, x: torch.full_like(u, 2.0)),
    "2·w2 is one factor w2 short: differentiating f = 2u·w2 by l, u = w2·l + b2 brings another factor "
    "w2.": _plain(lambda u, hidden, w2, x: 2 * w2),
    f"this is df/db2, not d²y/dl²: f = dy/dl is differentiated with respect to b2 {_BY_EITHER_CALL}, not the "
    "hidden value l: f = 2u·w2 by b2 gives 2·w2, shaped like b2.": _plain(
        lambda u, hidden, w2, x: (2 * w2).reshape(1)
    ),
    "the factor 2 is left out: y = u², so f = dy/dl = 2u·w2.": _plain(lambda u, hidden, w2, x: w2**2),
    # y = u² with u = w2·w1·x + b2: each derivative by w1 brings a factor w2·x, each by w2 a factor l.
    _twice_by("w1", " (section 7's)"): _plain(lambda u, hidden, w2, x: 2 * w2**2 * x**2),
    _twice_by("w2"): _plain(lambda u, hidden, w2, x: 2 * hidden**2),
    "this is dy/dl + d²y/dl²: a second .backward() added d²y/dl² to hidden.grad, which already held dy/dl "
    "from the first (.backward() adds to .grad, section 8). Take each derivative with torch.autograd.grad, "
    "which returns it and fills no .grad.": _plain(lambda u, hidden, w2, x: 2 * u * w2 + 2 * w2**2),
}


# derivatives_at


def _with_second(second: Callable) -> Callable:
    """dy/db2 = 2u, shaped like b2, and second(u, hidden, w2, x) in w1's shape, as plain values."""
    first = _plain(lambda u, hidden, w2, x: (2 * u).reshape(1))
    return lambda net, x: (first(net, x), _plain(second)(net, x))


# dy/db2 = 2u, and u = w2·w1·x + b2, so d²y/(db2 dw1) = 2·w2·x.
derivatives_by_hand = _with_second(lambda u, hidden, w2, x: 2 * w2 * x)


def _first_by_w1(second: Callable) -> Callable:
    """dy/dw1 = 2u·w2·x, shaped like w1, then second(w2, x), its derivative by b2 or w1, as plain values."""
    first = _plain(lambda u, hidden, w2, x: 2 * u * w2 * x)
    return lambda net, x: (first(net, x), second(net.linear2.weight, x).detach())


def _swapped(pair: Callable) -> Callable:
    """What pair returns, in the wrong order."""
    return lambda net, x: pair(net, x)[::-1]


def _read_from_grad(net: nn.Module, x: torch.Tensor):
    """The pair with dy/db2 read from b2.grad after .backward(), which added it to what b2.grad held."""
    first, second = derivatives_by_hand(net, x)
    held = net.linear2.bias.grad
    return (first if held is None else first + held).detach(), second


_BY_B2_THEN_W1 = _first_by_w1(lambda w2, x: (2 * w2 * x).reshape(1))


def _written_in(item: int, number: float) -> Callable:
    """The pair with item `item` replaced by `number`, its value on the lesson's network, written in."""

    def pair(net: nn.Module, x: torch.Tensor):
        computed = list(derivatives_by_hand(net, x))
        computed[item] = torch.full_like(computed[item], number)
        return tuple(computed)

    return pair


def _written_in_cause(what: str, number: int) -> str:
    """The cause for `what`, one item of the pair, written in as its value on the lesson's network."""
    return (
        f"{what} is {number}, its value on this lesson's network, as numbers written in (torch.full_like, "
        "torch.tensor of values), not computed from the arguments: it fits that one network only. Take it "
        "with torch.autograd.grad from net and x."
    )


DERIVATIVES_MISTAKES = {
    "the derivative by w1 is taken of y, not of dy/db2 (one call autograd.grad(y, [b2, w1]) gives two first "
    "derivatives): differentiate dy/db2 with respect to w1.": _with_second(
        lambda u, hidden, w2, x: 2 * u * w2 * x
    ),
    "the second call differentiates dy/db2 with respect to w2, not w1.": _with_second(
        lambda u, hidden, w2, x: 2 * hidden
    ),
    "the second call differentiates dy/db2 with respect to the hidden value l, not w1.": _with_second(
        lambda u, hidden, w2, x: 2 * w2
    ),
    # dy/db2 = 2u, and u = w2·l + b2: by b2 again, 2, shaped like b2.
    "this is d²y/db2², not d²y/(db2 dw1): the second call differentiates dy/db2 with respect to b2, not "
    "w1, and gives a tensor shaped like b2.": _with_second(
        lambda u, hidden, w2, x: torch.full_like(u, 2.0).reshape(1)
    ),
    # Mixed derivatives are equal, so d(dy/dw1)/db2 has the right value, but b2's shape: so has the right
    # derivative given b2's shape by a reshape, and only the code tells the two apart.
    "this is d(dy/dw1)/db2, shaped like b2 (differentiate dy/db2 with respect to w1 instead, which gives "
    "w1's shape, (1, 1)), or the right value given that shape by .reshape/.view/.flatten (drop that "
    "call).": _with_second(lambda u, hidden, w2, x: (2 * w2 * x).reshape(1)),
    _written_in_cause("d²y/(db2 dw1)", 20): _written_in(1, 20.0),
    _written_in_cause("dy/db2", 72): _written_in(0, 72.0),
    "the pair is in the wrong order: return (dy/db2, d²y/(db2 dw1)), the first derivative first.": _swapped(
        derivatives_by_hand
    ),
    "dy/db2 was read from b2.grad after .backward(), which adds it to what .grad held (here 1): take it with "
    "torch.autograd.grad(y, b2, create_graph=True), which leaves .grad as it was.": _read_from_grad,
    "the first call differentiates y with respect to w1, and the second with respect to b2: differentiate y "
    "by b2 first, then that derivative by w1.": _BY_B2_THEN_W1,
    "the first derivative is taken with respect to w1, not b2: differentiate y by b2 first, then that "
    "derivative by w1.": _first_by_w1(lambda w2, x: 2 * w2**2 * x**2),
    "the first call differentiates y with respect to w1, and the second with respect to b2, and the pair is "
    "returned swapped: differentiate y by b2 first, then that derivative by w1, and return them in that "
    "order.": _swapped(_BY_B2_THEN_W1),
}


# accumulate_three: the parts whose gradients it adds up, as functions of (u, hidden, w2, x).


def _y(u, hidden, w2, x):
    """y = u², with u = w2·l + b2 the value y squares."""
    return u**2


def _g(u, hidden, w2, x):
    """g = dy/dw2 = 2u·l."""
    return 2 * u * hidden


def _h(u, hidden, w2, x):
    """h = dy/db2 = 2u."""
    return 2 * u


def _backward_of(*parts: Callable, inputs: Callable = lambda net: None) -> Callable:
    """What backward of the sum of parts(u, hidden, w2, x) leaves in .grad, given backward's inputs= as
    inputs(net) lists them (None: every parameter)."""
    total = _of_u_hidden_w2(lambda *values: sum(part(*values) for part in parts))

    def leave_in_grad(net: nn.Module, x: torch.Tensor) -> None:
        total(net, x).sum().backward(inputs=inputs(net))

    return leave_in_grad


# Backward of y + g + h: the .grad three backward calls add up to.
sum_by_hand = _backward_of(_y, _g, _h)


def _zeroed_before(*parts: Callable) -> Callable:
    """zero_grad(), then backward of the parts: what is left where .grad was zeroed before them."""

    def leave_in_grad(net: nn.Module, x: torch.Tensor) -> None:
        net.zero_grad()
        _backward_of(*parts)(net, x)

    return leave_in_grad


def _without_b2(net: nn.Module) -> list[torch.Tensor]:
    """backward's inputs= with b2 left out."""
    return [net.linear1.weight, net.linear2.weight]


def _nothing_added(net: nn.Module, x: torch.Tensor) -> None:
    """No backward at all: every .grad stays as it was."""


def _missing(name: str) -> str:
    """The cause for the gradient of `name` alone missing: its backward never called, or adding nothing."""
    return (
        f"{name}'s gradient is missing: call {name}.backward() too; or {name} has no graph (computed without "
        "create_graph=True, detached, or under torch.no_grad()), and nothing flows back through it."
    )


def _only(names: str) -> str:
    """The cause for .grad zeroed or assigned after some backward calls, so that only `names`' are left."""
    return (
        f"only {names}'s gradient is left: .grad was zeroed or assigned (zero_grad(), .grad = ...) after the "
        "other backward calls. Never zero .grad between contributions you want summed."
    )


_PARTS = {"y": _y, "g": _g, "h": _h}


def _negated(part: Callable) -> Callable:
    """The part with a minus in front."""
    return lambda *values: -part(*values)


def _with_minus(names: tuple[str, ...]) -> Callable:
    """Backward of y, g and h added up with a minus in front of the parts `names`."""
    return _backward_of(*(_negated(part) if name in names else part for name, part in _PARTS.items()))


def _subtracted(names: tuple[str, ...]) -> str:
    """The cause for a minus in front of some of y, g and h (of all three, the wrong-sign hint says it)."""
    who = "'s and ".join(names)
    several = len(names) > 1
    return (
        f"{who}'s {'gradients are' if several else 'gradient is'} subtracted: "
        f"{'their parts' if several else 'its part'} of what is added to .grad "
        f"{'have' if several else 'has'} the wrong sign. The gradients add up, as the gradient of y + g + h: "
        "add all three."
    )


ACCUMULATE_MISTAKES = {
    _missing("h"): _backward_of(_y, _g),
    _missing("g"): _backward_of(_y, _h),
    "y's gradient is missing: call y.backward() too.": _backward_of(_g, _h),
    "only y's gradient was added: g.backward() and h.backward() are never called.": _backward_of(_y),
    "only y's gradient was added: take g and h with torch.autograd.grad(y, ..., create_graph=True). "
    "Taken without create_graph=True (or detached, or under torch.no_grad()), they are constants, with no "
    "graph for their backward to add through; retain_graph=True keeps y's graph alive but does not record "
    "g.": _backward_of(_y),
    "only g's gradient was added: call y.backward() and h.backward() too.": _backward_of(_g),
    "only h's gradient was added: call y.backward() and g.backward() too.": _backward_of(_h),
    _only("y"): _zeroed_before(_y),
    _only("g"): _zeroed_before(_g),
    _only("h"): _zeroed_before(_h),
    _only("y's and g"): _zeroed_before(_y, _g),
    _only("y's and h"): _zeroed_before(_y, _h),
    _only("g's and h"): _zeroed_before(_g, _h),
    "g is the gradient with respect to the hidden value l (section 8's f), not w2: g = dy/dw2.": _backward_of(
        _y, lambda u, hidden, w2, x: 2 * u * w2, _h
    ),
    "g is the gradient with respect to w1, not w2: g = dy/dw2.": _backward_of(
        _y, lambda u, hidden, w2, x: 2 * u * w2 * x, _h
    ),
    "g is the gradient with respect to b2, not w2: g = dy/dw2.": _backward_of(_y, _h, _h),
    "h is the gradient with respect to w2, not b2: h = dy/db2.": _backward_of(_y, _g, _g),
    **{_subtracted(names): _with_minus(names) for count in (1, 2) for names in combinations("ygh", count)},
    "y's gradient was counted twice.": _backward_of(_y, _y, _g, _h),
    "g's gradient was counted twice.": _backward_of(_y, _g, _g, _h),
    "h's gradient was counted twice.": _backward_of(_y, _g, _h, _h),
    "backward's inputs= list leaves out parameters (here b2), whose .grad stays as it was: leave inputs= "
    "out, or list every parameter.": _backward_of(_y, _g, _h, inputs=_without_b2),
    "nothing was added to .grad: torch.autograd.grad returns gradients without storing them, and "
    ".backward() is what adds them to .grad.": _nothing_added,
    "the .grad already there was replaced or cleared (p.grad = ..., zero_grad()): backward adds to .grad, "
    "and so must your code.": _zeroed_before(_y, _g, _h),
}
