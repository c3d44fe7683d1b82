"""What lesson 03's exercise asks forward to keep for backward, read from the answer's Function node: exp(x)
and exp(-x), the very outputs forward returned, saved with ctx.save_for_backward, and nothing else. The
derivatives alone cannot tell: saving x and calling exp again in backward gives the same values, at the
cost the lesson is about, and outputs kept as ctx attributes give the same values too, with a reference
cycle. Any other tensor kept as a ctx attribute, x above all, lets backward compute exp again unseen.
"""

import torch

from autograder.probe.diagnose import _kept_on_ctx, attributes_keeping, function_class
from autograder.probe.refused import AnswerRefusedError

# What each output of Sinh.apply is, by its position, in a message.
_OUTPUTS = ("sinh(x) (output 0)", "expx (output 1)", "expnegx (output 2)")
_RULE = (
    "This exercise asks forward to save expx and expnegx, the outputs it returns, and nothing else, so that "
    "backward reuses them instead of computing them again: ctx.save_for_backward(expx, expnegx)"
)


def five_points(gen: torch.Generator) -> tuple[torch.Tensor]:
    """x from -2 to 2 (gen is unused: what forward saves does not depend on x)."""
    return (torch.linspace(-2, 2, 5, dtype=torch.float64),)


# What forward saves does not depend on x, so messages do not name the x it was called with.
five_points.incidental = True


def saves_the_exponentials(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """0, once function's node is seen to have saved exactly the outputs exp(x) and exp(-x): a saved
    output comes back from ctx.saved_tensors with the node as its grad_fn and its position as output_nr.
    An answer whose outputs are not three tensors made by its own Function is left to the other checks."""
    x = x.detach().requires_grad_()
    with torch.enable_grad():
        outputs = function.apply(x)
    if not (
        isinstance(outputs, tuple)
        and len(outputs) == len(_OUTPUTS)
        and all(isinstance(out, torch.Tensor) for out in outputs)
        and function_class(outputs[0]) is not None
    ):
        return torch.tensor(0.0, dtype=torch.float64)
    node = outputs[0].grad_fn
    kept = attributes_keeping(node, list(outputs))
    if kept:
        listed = ", ".join(f"ctx.{name}" for name in kept)
        raise AnswerRefusedError(
            f"forward keeps its outputs on {listed} (as in ctx.expx = expx): an output holds its grad_fn, "
            "which is ctx, and ctx then holds the output, a reference cycle, so the outputs and their graph "
            "stay in memory when the caller drops them, until Python's cycle collector runs. Save them "
            "with ctx.save_for_backward(expx, expnegx) and read them from ctx.saved_tensors"
        )
    if kept := sorted(set(_kept_on_ctx(node)) | set(attributes_keeping(node, [x]))):
        listed = ", ".join(f"ctx.{name}" for name in kept)
        raise AnswerRefusedError(
            f"forward keeps a tensor on {listed} (as in ctx.x = x), from which backward can compute exp "
            f"again. {_RULE}. Keep no tensor as a ctx attribute"
        )
    saved = [_what_it_is(tensor, node, x) for tensor in node.saved_tensors]
    missing = [_OUTPUTS[n] for n in (1, 2) if _OUTPUTS[n] not in saved]
    others = [what for what in saved if what not in _OUTPUTS[1:]]
    if missing or others:
        # Each kind of tensor once, with its count: two intermediates are "two tensors ...", not one twice.
        kinds = [_counted(what, saved.count(what)) for what in dict.fromkeys(saved)]
        listed = " and ".join([", ".join(kinds[:-1]), kinds[-1]] if len(kinds) > 1 else kinds)
        said = f"forward saves {listed}" if saved else "forward saves nothing"
        lacking = f" but not {' and '.join(missing)}" if missing else ""
        # Intermediates saved where outputs belong: forward returns other tensors than the ones it saves.
        other = ". The outputs it returns are other tensors than the ones it saves: return the very tensors"
        other_tensors = f"{other} you save" if missing and _INTERMEDIATE in saved else ""
        raise AnswerRefusedError(f"{said}{lacking}{other_tensors}. {_RULE}")
    return torch.tensor(0.0, dtype=torch.float64)


# What a saved tensor is when it is neither an output nor the input, in a message.
_INTERMEDIATE = "a tensor forward computed and did not return"
_COUNTS = {2: "two", 3: "three"}


def _counted(what: str, count: int) -> str:
    """`what` as `count` of them: "a tensor forward computed ..." twice is "two tensors forward ..."."""
    if count == 1 or not what.startswith("a tensor "):
        return what
    return f"{_COUNTS.get(count, count)} tensors {what.removeprefix('a tensor ')}"


def _what_it_is(tensor: torch.Tensor, node, x: torch.Tensor) -> str:
    """What a tensor ctx.saved_tensors gives back is, in words: one of the node's outputs, the input x,
    or a tensor forward computed and did not return."""
    if tensor.grad_fn is node:
        return _OUTPUTS[tensor.output_nr]
    if tensor is x:
        return "x (the input)"
    return _INTERMEDIATE
