"""check_result, run in a forked checker child: an ordinary function compared with a reference.

Not every exercise is a custom Function. A Hessian-vector product, a gradient penalty or a function
that calls `.backward()` is judged by three things: what it returns, what it leaves in the `.grad` of
the tensors and parameters it was given, and whether gradients flow back from its result to them (a
gradient penalty that does not reach the critic's weights trains nothing). The student's function and
the reference each get their own copy of the same arguments, built by the test from one seed.
"""

import inspect
import math
from collections.abc import Callable

import torch
from torch import nn

from autograder import _samples
from autograder._compare import is_zero, mismatch
from autograder._diagnose import known_error_hint
from autograder._verdict import FailedCheckError


def call_student(name: str, function: Callable, args: tuple, where: str):
    """What the student's code returns, or a failure that says what it raised and on what."""
    try:
        return function(*args)
    except NotImplementedError:
        raise FailedCheckError(
            f"{name} is not written yet: calling it raises NotImplementedError. "
            "Replace `raise NotImplementedError()` with your code."
        ) from None
    except Exception as error:  # noqa: BLE001 - any error in student code is reported, not raised
        raise FailedCheckError(
            f"{name} raised {type(error).__name__}: {error}\n  {where}{known_error_hint(error)}"
        ) from None


def check_result(check) -> None:
    names = list(inspect.signature(check.reference).parameters)
    seed = int(torch.randint(2**62, (), generator=_samples.generator(check.randomized)))
    given, for_reference = _build(check, seed, names), _build(check, seed, names)
    where = f"when called with the {', '.join(names)} that `{_name(check.inputs)}` builds"
    # Read before the call: an answer that makes an argument require grad must not add a leaf.
    expected_leaves, given_leaves = _leaves(for_reference, names), _leaves(given, names)
    flags = [isinstance(arg, torch.Tensor) and arg.requires_grad for arg in given]
    got = call_student(check.name, check.function, given, where)
    want = check.reference(*for_reference)
    for name, arg, flag in zip(names, given, flags, strict=True):
        if isinstance(arg, torch.Tensor) and arg.requires_grad != flag:
            raise FailedCheckError(
                f"{check.name} changed {name}.requires_grad from {flag} to {arg.requires_grad}: it "
                f"modified the caller's tensor. Work on a copy: {name} = {name}.detach().requires_grad_()."
            )
    try:
        _compare_returned(check.name, want, got, "the result")
        _compare_stored_gradients(check.name, expected_leaves, given_leaves)
        _compare_gradient_flow(check.name, want, got, expected_leaves, given_leaves, seed)
    except FailedCheckError as failure:
        # Which builder made the arguments tells a student whether it was the visible example or not.
        raise FailedCheckError(f"{failure}\n  {where}") from None


def _name(function: Callable) -> str:
    return getattr(function, "__name__", "inputs")


def _build(check, seed: int, names: list[str]) -> tuple:
    args = check.inputs(torch.Generator().manual_seed(seed))
    args = args if isinstance(args, tuple) else (args,)
    if len(args) != len(names):
        raise FailedCheckError(
            f"The test is inconsistent: `{_name(check.inputs)}` builds {len(args)} argument(s) but the "
            f"reference takes {len(names)} ({', '.join(names)})."
        )
    return args


def _kind(value) -> str:
    if isinstance(value, tuple | list):
        return f"a {type(value).__name__} of {len(value)}"
    return "None" if value is None else f"a {type(value).__name__}"


def _compare_returned(name: str, want, got, label: str) -> None:
    """Same structure, and every tensor or number in it equal to the reference's."""
    if isinstance(want, tuple | list):
        if not isinstance(got, tuple | list) or len(got) != len(want):
            raise FailedCheckError(f"{name} returns {_kind(got)}; it should return {_kind(want)}.")
        for index, (w, g) in enumerate(zip(want, got, strict=True)):
            _compare_returned(name, w, g, f"item {index} of the result")
        return
    if want is None:
        if got is not None and label == "the result":
            raise FailedCheckError(
                f"{name} returns {_kind(got)}; it should return None: its work shows in .grad."
            )
        if got is not None:
            raise FailedCheckError(
                f"{label[0].upper()}{label[1:]} of {name} should be None, not {_kind(got)}."
            )
        return
    if isinstance(want, torch.Tensor):
        problem = mismatch(want, got, [], [])
    elif isinstance(got, int | float | torch.Tensor) and not isinstance(got, bool):
        value = float(got.detach()) if isinstance(got, torch.Tensor) and got.numel() == 1 else got
        close = isinstance(value, int | float) and math.isclose(value, want, rel_tol=1e-7, abs_tol=1e-9)
        problem = None if close else f"expected {want:.6g}, got {got}"
    else:
        problem = f"got {_kind(got)} instead of a number"
    if problem:
        raise FailedCheckError(f"{label[0].upper()}{label[1:]} of {name} is wrong: {problem}.")


def _leaves(args: tuple, names: list[str]) -> list[tuple[str, torch.Tensor]]:
    """Every tensor the arguments hold that gradients accumulate into, named as a student would."""
    leaves = []
    for name, arg in zip(names, args, strict=True):
        if isinstance(arg, torch.Tensor) and arg.requires_grad and arg.is_leaf:
            leaves.append((name, arg))
        elif isinstance(arg, nn.Module):
            leaves += [(f"{name}.{p}", tensor) for p, tensor in arg.named_parameters()]
    return leaves


def _compare_stored_gradients(name: str, expected, given) -> None:
    """`.backward()` fills .grad and adds to it; torch.autograd.grad does neither."""
    for (label, want), (_, got) in zip(expected, given, strict=True):
        if want.grad is None and got.grad is not None:
            raise FailedCheckError(
                f"{name} filled {label}.grad, which should stay None. Likely cause: .backward() stores "
                "gradients in the .grad of every leaf it reaches; torch.autograd.grad returns them "
                "instead and leaves .grad alone."
            )
        if want.grad is not None and got.grad is None:
            raise FailedCheckError(
                f"{name} left {label}.grad empty (None). Likely cause: torch.autograd.grad returns "
                "gradients without storing them; .backward() is what stores them in .grad."
            )
        problem = want.grad is not None and mismatch(want.grad, got.grad, [], [])
        if problem:
            raise FailedCheckError(
                f"{label}.grad after {name} is wrong: {problem}. Likely cause: .grad adds up over "
                "backward calls; check which results you call .backward() on, and that nothing is "
                "zeroed in between or counted twice."
            )


def _tensors(value) -> list:
    if isinstance(value, tuple | list):
        return [t for item in value for t in _tensors(item)]
    return [value] if isinstance(value, torch.Tensor) else []


def _compare_gradient_flow(name: str, want, got, expected_leaves, given_leaves, seed: int) -> None:
    """Where the reference's result can be differentiated, the student's must give the same gradients."""
    pairs = [(w, g) for w, g in zip(_tensors(want), _tensors(got), strict=True) if w.requires_grad]
    if not pairs or not expected_leaves:
        return
    targets = ", ".join(label for label, _ in expected_leaves[:3]) + (
        ", ..." if len(expected_leaves) > 3 else ""
    )
    if not all(g.requires_grad for _, g in pairs):
        raise FailedCheckError(
            f"The result of {name} does not require grad, so no gradient can flow back from it to "
            f"{targets}. Likely cause: it was computed without create_graph=True, or taken out of the graph "
            "afterwards (.detach(), .data, .item(), torch.no_grad()). With create_graph=True autograd "
            "records the gradient, so it can be differentiated again."
        )
    gen = torch.Generator().manual_seed(seed + 1)
    # A scalar result is differentiated as it is, so the numbers match a gradient worked by hand.
    cotangents = [
        torch.ones_like(c) if c.numel() == 1 else c for c in _samples.like([w for w, _ in pairs], gen)
    ]
    wanted = torch.autograd.grad(
        [w for w, _ in pairs], [t for _, t in expected_leaves], cotangents, allow_unused=True
    )
    try:
        gotten = torch.autograd.grad(
            [g for _, g in pairs], [t for _, t in given_leaves], cotangents, allow_unused=True
        )
    except Exception as error:  # noqa: BLE001 - whatever the student's graph raises is reported
        raise FailedCheckError(
            f"Differentiating the result of {name} raised {type(error).__name__}: {error}"
        ) from None
    for (label, leaf), w, g in zip(expected_leaves, wanted, gotten, strict=True):
        w = torch.zeros_like(leaf) if w is None else w
        if (g is None or is_zero(g)) and not is_zero(w):
            raise FailedCheckError(
                f"No gradient flows from the result of {name} back to {label}, but it should. Likely "
                "cause: the result was built from detached tensors, or from a gradient computed "
                "without create_graph=True."
            )
        problem = mismatch(w, torch.zeros_like(leaf) if g is None else g, [], [])
        if problem:
            weighted = "" if all(w.numel() == 1 for w, _ in pairs) else " (weighted by a random grad_out)"
            raise FailedCheckError(
                f"The gradient of the result of {name} with respect to {label}{weighted} is wrong: "
                f"{problem}. Likely cause: part of the result is a constant to autograd: a gradient "
                "computed without create_graph=True, or a detached tensor, carries no derivative."
            )
