"""The rest of what torch's gradcheck and gradgradcheck check, beyond the Jacobians, judged from numbers.

gradcheck (for a first derivative) and gradgradcheck (for a second, which runs gradcheck on the gradient
as a function of the inputs and grad_out) compare backward's Jacobian with finite differences; the
comparison lives with the other checks in `autograder.judge.compare`. Then, with their defaults, they
feed backward incoming gradients that are all zero, and that are undefined (None to a Function that sets
ctx.set_materialize_grads(False)), and want None or zero back; with check_batched_grad, a batch of
incoming gradients under vmap, wanting what each gives alone. A check is never more lenient than torch:
an answer torch rejects on a check's inputs fails that check, with a message that says why in the
course's words. The probe measured what backward gave in each case (`autograder.probe.measure`).
"""

import torch

from autograder.wire import arrays, samples
from autograder.wire.tensors import is_zero
from autograder.wire.verdict import FailedCheckError

# torch.allclose's defaults, which gradcheck's check_batched_grad compares with.
_BATCHED_RTOL, _BATCHED_ATOL = 1e-5, 1e-8


class _Check:
    """How one check's messages name what it runs: the checker, the input, what is fed, what gives."""

    def __init__(self, checker: str, name: str, names: list[str], keep: dict, incoming: str) -> None:
        self.checker = checker
        self.on = f"{name} on {samples.describe(names, keep['inputs'])}"
        second = checker == "gradgradcheck"
        self.fed = "gradient fed back through the gradient" if second else incoming
        self.runs = "differentiating the gradient" if second else "backward"
        count = len(keep["grad_outs"])
        labels = [f"{incoming}{f' (output {i})' if count > 1 else ''}" for i in range(count)]
        # The gradients `runs` gives: for the inputs, and in gradgradcheck for the incoming gradients too.
        self.labels = [*names, *labels] if second else list(names)
        # The outputs whose incoming gradient is made undefined one at a time.
        self.outputs = [f"grad_{n}" for n in names] if second else [f"output {i}" for i in range(count)]

    def fails(self, finding: str) -> FailedCheckError:
        return FailedCheckError(f"{self.checker} fails for {self.on}: {finding}")


def check(checker: str, name: str, names: list[str], keep: dict, numbers: dict, incoming: str) -> None:
    """In gradcheck's order: a batch under vmap (if measured), incoming gradients that are zero, then
    undefined ones."""
    run = _Check(checker, name, names, keep, incoming)
    if "batched" in numbers:
        _batched(run, numbers["batched"])
    _nothing_from_zero(run, numbers["zeroed"], f"with every {run.fed} zero")
    for case, fed in enumerate(numbers["undefined"]):
        _nothing_from_undefined(run, fed, case)


def _batched(run: _Check, measured: dict) -> None:
    if "error" in measured:
        hint = arrays.text(measured.get("hint", "")) or (
            "\nLikely cause: backward works on one incoming gradient at a time (.item(), Python control "
            "flow on its values, an in-place change of a tensor it created); build each gradient as one "
            "expression of torch operations on the incoming gradient and the saved tensors."
        )
        raise run.fails(
            "fed a batch of incoming gradients at once under vmap (gradcheck's check_batched_grad), "
            f"{run.runs} raised {arrays.text(measured['error'])}{hint}"
        )
    vmapped, looped = measured["vmapped"], measured["looped"]
    if not all(isinstance(t, torch.Tensor) for t in (*vmapped, *looped)):
        raise TypeError("not tensors")
    if len(vmapped) != len(looped):
        raise ValueError("not one batched gradient per gradient")
    for index, (together, alone) in enumerate(zip(vmapped, looped, strict=True)):
        if together.shape != alone.shape or not torch.allclose(
            together, alone, rtol=_BATCHED_RTOL, atol=_BATCHED_ATOL
        ):
            label = run.labels[index % len(run.labels)]
            raise run.fails(
                "fed a batch of incoming gradients at once under vmap (gradcheck's check_batched_grad), "
                f"{run.runs} gives other gradients for {label} than fed each alone.\nLikely cause: backward "
                "mixes the elements of the incoming gradient (a sum or a reshape over all of it)."
            )


def _nothing_from_zero(run: _Check, fed: dict, when: str) -> None:
    """Every gradient is None or zero; `when` says what was fed."""
    if "error" in fed:
        raise run.fails(
            f"{when}, {run.runs} raised {arrays.text(fed['error'])}{arrays.text(fed.get('hint', ''))}"
        )
    grads = [_gradient(tree) for tree in fed["grads"]]
    if grads and len(grads) != len(run.labels):
        raise ValueError("not one gradient per variable")
    for label, grad in zip(run.labels, grads, strict=False):
        if grad is not None and not is_zero(grad):
            raise run.fails(
                f"{when}, {run.runs} gives a nonzero gradient for {label}; it must give zero (or None).\n"
                f"Likely cause: a term of the gradient is not multiplied by the {run.fed}: by the chain "
                "rule, every term is."
            )


def _gradient(tree) -> torch.Tensor | None:
    """A measured gradient: autograd gives a tensor or None, nothing else."""
    if isinstance(tree, dict) and isinstance(tree.get("tensor"), torch.Tensor):
        return tree["tensor"]
    if isinstance(tree, dict) and tree.get("type") == "NoneType":
        return None
    raise TypeError("not a gradient")


def _nothing_from_undefined(run: _Check, fed: dict, case: int) -> None:
    """Case 0: every incoming gradient undefined; case k: that of output k - 1 alone."""
    returned = arrays.text(fed.get("returned", ""))
    if case == 0 and "error" in fed and returned:
        raise run.fails(
            f"{returned} when every incoming gradient was None: return None or a zero tensor.\n"
            f"{run.checker} feeds None for every output (its check_undefined_grad), as autograd does for "
            "a gradient it did not compute, once ctx.set_materialize_grads(False)."
        )
    if case == 0:
        when = f"with every {run.fed} None (undefined)"
    else:
        when = f"with the {run.fed} for {run.outputs[case - 1]} None (undefined) and every other zero"
    _nothing_from_zero(run, fed, when)
