"""What a check feeds the student's function, and what the reference gives on it.

A plan has two parts: `probe`, the inputs (and incoming gradients) the student's function is called
with, which is all the student's process ever sees of a check; and `expected`, the reference's values
and derivatives on them, which stay with the judge. Inputs are drawn here, from the check's seed, so
the student's process holds no seed and cannot know the next check's inputs.
"""

import contextlib
import inspect
from collections.abc import Callable

import torch

from autograder.wire import arrays, samples
from autograder.wire.tensors import is_zero


def argument_names(reference: Callable) -> list[str]:
    """The reference's parameter names, which name the inputs in messages."""
    return list(inspect.signature(reference).parameters)


def _zeros_for_none(grads, like) -> list[torch.Tensor]:
    return [torch.zeros_like(x) if g is None else g for x, g in zip(like, grads, strict=True)]


def _inputs_each_depends_on(names, grads, inputs, weights) -> list[list[str]]:
    """For each of the reference's gradients (computed with create_graph=True), the names of the inputs it
    depends on: a second derivative found cut from an input names only the gradients that should depend
    on it (grad_w = grad_out * x**2 does not depend on w)."""
    depends = []
    for grad, weight in zip(grads, weights, strict=True):
        seconds = (
            torch.autograd.grad(grad, inputs, weight, retain_graph=True, allow_unused=True)
            if grad.requires_grad
            else [None] * len(inputs)
        )
        depends.append([name for name, second in zip(names, seconds, strict=True) if not is_zero(second)])
    return depends


def _outputs(value) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _exchanged(reference: Callable, inputs: tuple, grad_outs: list) -> torch.Tensor | None:
    """The reference's gradient with x and grad_out exchanged, for a function of one tensor to one of
    the same shape: what a backward gives that passes (x, grad_out) to a Function of (grad_out, x)."""
    if len(inputs) != 1 or len(grad_outs) != 1 or inputs[0].shape != grad_outs[0].shape:
        return None
    x = grad_outs[0].detach().clone().requires_grad_()
    try:
        (grad,) = torch.autograd.grad(reference(x), x, inputs[0].detach(), allow_unused=True)
    except Exception:  # noqa: BLE001 - a hint the reference cannot give is no hint, never a failed plan
        return None
    return None if grad is None else grad.detach()


def _at_swapped_inputs(reference: Callable, inputs: tuple, grad_outs: list) -> list[torch.Tensor] | None:
    """The reference's gradients, in order, at its two inputs' values exchanged: what a backward gives
    that unpacks ctx.saved_tensors in another order than it saved them, so that its x holds w."""
    if len(inputs) != 2 or inputs[0].shape != inputs[1].shape or torch.equal(inputs[0], inputs[1]):
        return None
    swapped = [inputs[1].detach().clone().requires_grad_(), inputs[0].detach().clone().requires_grad_()]
    try:
        grads = torch.autograd.grad(_outputs(reference(*swapped)), swapped, grad_outs, allow_unused=True)
    except Exception:  # noqa: BLE001 - a hint the reference cannot give is no hint, never a failed plan
        return None
    return [g.detach() for g in _zeros_for_none(grads, swapped)]


def _mistaken_gradients(mistakes: dict[str, Callable], inputs, grad_outs) -> list[dict]:
    """Each known slip's cause with the gradients its function gives for the sample's incoming gradients:
    a backward giving the same has, most likely, made that slip."""
    made = []
    for cause, wrong in mistakes.items():
        leaves = [x.detach().requires_grad_() for x in inputs]
        grads = torch.autograd.grad(_outputs(wrong(*leaves)), leaves, grad_outs, allow_unused=True)
        made.append({"cause": cause, "grads": [g.detach() for g in _zeros_for_none(grads, leaves)]})
    return made


def plan_function(
    kind: str,
    reference: Callable,
    randomized: bool,
    low: float,
    high: float,
    batched: bool = False,
    mistakes: dict[str, Callable] | None = None,
) -> dict:
    """Inputs for a Function's check, with the reference's outputs and derivatives on each of them;
    `batched` asks the probe for backward under vmap too; `mistakes` adds the first derivatives of known
    slips, to name them."""
    names = argument_names(reference)
    gen = samples.generator(randomized)
    probe, expected = [], []
    # Drawn lazily, one sample at a time, so each sample's incoming gradients follow its inputs.
    for inputs in samples.inputs(len(names), randomized, low, high, gen):
        outputs = _outputs(reference(*inputs))
        sample = {"inputs": [x.detach() for x in inputs]}
        keep = {"inputs": sample["inputs"], "outputs": [o.detach() for o in outputs]}
        if kind != "forward":
            second = kind == "second_derivative"
            grad_outs = samples.like(outputs, gen, requires_grad=second)
            grads = torch.autograd.grad(outputs, inputs, grad_outs, create_graph=second, allow_unused=True)
            grads = _zeros_for_none(grads, inputs)
            sample["grad_outs"] = keep["grad_outs"] = [g.detach() for g in grad_outs]
            keep["grads"] = [g.detach() for g in grads]
            if mistakes:
                keep["mistakes"] = _mistaken_gradients(mistakes, inputs, keep["grad_outs"])
            if not second and (exchanged := _exchanged(reference, inputs, grad_outs)) is not None:
                keep["exchanged"] = exchanged
            if not second and (swapped := _at_swapped_inputs(reference, inputs, grad_outs)) is not None:
                keep["at_swapped_inputs"] = swapped
            if second:
                grad_grads = samples.like(grads, gen)
                keep["depends_on"] = _inputs_each_depends_on(names, grads, inputs, grad_grads)
                variables = (*inputs, *grad_outs)
                grads2 = torch.autograd.grad(grads, variables, grad_grads, allow_unused=True)
                sample["grad_grads"] = list(grad_grads)
                keep["grad_grads"] = [g.detach() for g in grad_grads]
                keep["grads2"] = [g.detach() for g in _zeros_for_none(grads2, variables)]
        probe.append(sample)
        expected.append(keep)
    return {
        "names": names,
        "probe": {"samples": probe, "batched": batched},
        "expected": {"samples": expected},
    }


def _built(builder: Callable, seed: int) -> tuple:
    args = builder(torch.Generator().manual_seed(seed))
    return args if isinstance(args, tuple) else (args,)


def _flow(result, leaves: list[torch.Tensor], flow: list[int], cotangents: list[torch.Tensor]):
    """The gradients flowing back from the tensors of `result` at `flow`, weighted by `cotangents`, to
    `leaves` (zero where none flows)."""
    tensors = samples.tensors(result)
    grads = torch.autograd.grad([tensors[index] for index in flow], leaves, cotangents, allow_unused=True)
    return [g.detach() for g in _zeros_for_none(grads, leaves)]


def _mistaken(
    mistakes: dict[str, Callable], builder: Callable, names: list[str], seed: int, flow: dict
) -> list[dict]:
    """What each known mistake returns and leaves in .grad, on its own copy of the arguments, and the
    gradients flowing back from it as `flow` ("flow", "cotangents") asks: its cause names a wrong result
    or .grad equal to its own, or a wrong gradient equal to its own where it returns the right result."""
    made = []
    for cause, wrong in mistakes.items():
        args = _built(builder, seed)
        result = wrong(*args)
        leaves = [leaf for _, leaf in samples.leaves(args, names)]
        mistake = {
            "cause": cause,
            "result": arrays.tree(result),
            "leaf_grads": [arrays.tree(leaf.grad) for leaf in leaves],
        }
        if flow["flow"]:
            # A mistake that cannot be differentiated names only values.
            with contextlib.suppress(Exception):
                mistake["flow"] = _flow(result, leaves, flow["flow"], flow["cotangents"])
        made.append(mistake)
    return made


def plan_result(
    reference: Callable,
    builder: Callable,
    built: str,
    randomized: bool,
    mistakes: dict[str, Callable] | None = None,
) -> dict:
    """A seed for the arguments `builder` makes, and what the reference does with its own copy. `built`
    names the builder in messages, as `autograder.checks.built_by` does."""
    names = argument_names(reference)
    seed = int(torch.randint(2**62, (), generator=samples.generator(randomized)))
    args = _built(builder, seed)
    probe = {"seed": seed, "flow": [], "cotangents": []}
    if len(args) != len(names):
        return {"names": names, "probe": probe, "expected": {"arity": len(args), "builder": built}}
    leaves = samples.leaves(args, names)
    # Where a wrong result is nan or inf, an argument that is 0 there tells of a division by it.
    arguments = {
        label: arg.detach().clone()
        for label, arg in zip(names, args, strict=True)
        if isinstance(arg, torch.Tensor)
    }
    # A .grad the builder filled stands for what the caller's earlier backward left there.
    filled = [None if leaf.grad is None else leaf.grad.clone() for _, leaf in leaves]
    result = reference(*args)
    expected = {
        "builder": built,
        "leaves": [label for label, _ in leaves],
        # Where the reference kept such a .grad as it was, the answer must keep it too.
        "kept_filled": [
            before is not None and leaf.grad is not None and torch.equal(before, leaf.grad)
            for before, (_, leaf) in zip(filled, leaves, strict=True)
        ],
        "result": arrays.tree(result),
        "leaf_grads": [arrays.tree(leaf.grad) for _, leaf in leaves],
        # What each .grad held before the call: what was added to it is the difference.
        "filled": [arrays.tree(before) for before in filled],
        "arguments": arguments,
    }
    tensors = samples.tensors(result)
    flow = [index for index, tensor in enumerate(tensors) if tensor.requires_grad]
    if flow and leaves:
        gen = torch.Generator().manual_seed(seed + 1)
        # A scalar result is differentiated as it is, so the numbers match a gradient worked by hand.
        cotangents = [
            torch.ones_like(c) if c.numel() == 1 else c
            for c in samples.like([tensors[index] for index in flow], gen)
        ]
        probe |= {"flow": flow, "cotangents": cotangents}
        expected["flow"] = _flow(result, [leaf for _, leaf in leaves], flow, cotangents)
        expected["scalar"] = all(c.numel() == 1 for c in cotangents)
    expected["mistakes"] = _mistaken(mistakes or {}, builder, names, seed, probe)
    return {"names": names, "probe": probe, "expected": expected}
