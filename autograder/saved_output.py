"""What lesson 02's forward test asks of Exp: a tensor returned (not a tuple), x left alone, and the very
tensor forward returns handed to ctx.save_for_backward. The derivatives cannot tell a saved output from a
saved x with exp computed again, nor from an output kept as a ctx attribute; autograd's pack hook can, and
where forward saved a copy, its code names the call that made the copy. An output both saved and kept on
ctx shows in the node's attributes, since the node is ctx.
"""

import torch

from autograder.probe.diagnose import computed_in_forward, copies_it_saves, copies_returned


def returning_a_tensor(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """function.apply(x), failing with the cause where forward returned a tuple: Exp has one output, and
    the checks and the lesson's last section use it as a tensor."""
    out = function.apply(x)
    if isinstance(out, tuple):
        raise AssertionError(
            f"{function.__name__}.apply(x) returned a tuple; return the tensor itself: `return result`, "
            "not `return (result,)`."
        )
    return out


def saving_its_output(function: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """function.apply(x), failing unless x is unchanged and autograd's pack hook was given the output
    itself: when the hook runs, the output already has the Function's node as its grad_fn, and a copy of it
    has none."""
    before = x.detach().clone()
    saved = []
    handed = []  # the tensors themselves, to tell the output marked non-differentiable

    def keep(tensor):
        saved.append((tensor.grad_fn, tensor.detach()))
        handed.append(tensor)
        return tensor.detach()

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda tensor: tensor):
        out = returning_a_tensor(function, x)
    name = function.__name__
    if not torch.equal(x.detach(), before):
        raise AssertionError(
            f"{name}'s forward changed its input x in place (x.exp_(), for example), so the caller's x now "
            "holds exp(x). Compute the result as a new tensor: result = torch.exp(x)."
        )
    if out.grad_fn is not None and any(grad_fn is out.grad_fn for grad_fn, _ in saved):
        if kept := _kept_on_ctx(out):
            raise AssertionError(
                f"{name}'s forward saves its output but keeps it as ctx.{kept} as well (section 5): the "
                f"output then holds its own node, a reference cycle, and a backward reading ctx.{kept} "
                "misses an in-place change to it. Drop the attribute; backward must read the result from "
                "ctx.saved_tensors."
            )
        return out
    if not out.requires_grad and any(tensor is out for tensor in handed):
        raise AssertionError(
            f"{name}'s forward marked its output non-differentiable (ctx.mark_non_differentiable), so the "
            "output gets no grad_fn and no gradient, and backward is never called. Remove that call."
        )
    if any(s.shape == out.shape and torch.equal(s, out.detach()) for _, s in saved):
        raise AssertionError(
            f"{name}'s forward {_copy_it_saves(function, out)} (section 6). The saved tensor has no history, "
            "so a gradient built from it is cut off from x. Return exactly the tensor you pass to "
            "ctx.save_for_backward."
        )
    if any(x.grad_fn is None and torch.equal(s, x.detach()) for _, s in saved):
        raise AssertionError(
            f"{name}'s forward saved its input x and not its output: exp's derivative is its output, so "
            "save the result itself (ctx.save_for_backward(result)) and build backward from it."
        )
    raise AssertionError(
        f"{name}'s forward did not save its output with ctx.save_for_backward (section 5). "
        "Save the result itself, not x, and not as an attribute of ctx."
    )


def _kept_on_ctx(out: torch.Tensor) -> str:
    """The name of a ctx attribute holding `out` or a tensor sharing its memory, or ''. The node of a
    custom Function is the ctx its forward received, so its attributes are those forward set."""
    return next(
        (
            attribute
            for attribute, value in vars(out.grad_fn).items()
            if isinstance(value, torch.Tensor)
            and (value is out or (value.numel() > 0 and value.data_ptr() == out.data_ptr()))
        ),
        "",
    )


def _copy_it_saves(function: type[torch.autograd.Function], out: torch.Tensor) -> str:
    """How the tensor forward saves differs from `out`, the one it returns, named from forward's code as the
    second-derivative check names it: a copy or view returned, a copy saved, a tensor computed inside the
    call of save_for_backward; else a view returned, which `out`'s base shows at run time (`.reshape()` of
    the saved tensor, say); else a tensor computed in the return statement; else either way, which the
    values alone cannot tell apart."""
    node = function.__name__
    if returned := copies_returned(function):
        made = " and ".join(returned)
        return (
            f"saves its output but returns a tensor made from it with {made}, "
            f"which gets {node}'s node instead"
        )
    if copies := copies_it_saves(function):
        return f"saved a copy of its output made with {' and '.join(copies)}, not the tensor it returns"
    saving, returning = computed_in_forward(function)
    if saving:
        return (
            f"saves a second tensor, computed with {' and '.join(saving)} inside ctx.save_for_backward(...), "
            "not the tensor it returns"
        )
    if out._base is not None:
        return (
            f"saves its output but returns a view of it (made with `.reshape()`, say), which gets {node}'s "
            "node instead"
        )
    if returning:
        return (
            f"saves its output but returns a new tensor computed from it with {' and '.join(returning)}, "
            f"which gets {node}'s node instead"
        )
    return (
        "saved a tensor that is not the one it returns: either it saved a copy of its output (a second "
        "torch.exp(x), say), or it returned a new tensor made from the saved one (`result * 1`, say)"
    )
