"""What the tests of lesson 04's Cube share: its gradient must be what CubeBackward.apply returned.

A Cube.backward that computes grad_out * 3x**2 in torch gives the right values and derivatives, so no
comparison of numbers tells it from one that hands grad_out and x to CubeBackward.apply. The graph of the
gradient taken with create_graph=True does: only a call to CubeBackward.apply records its node there, and
the gradient is that node's own output only if backward returns the call's result as it is (or a copy or
view of it; not added to a torch formula, nor multiplied by grad_out after a call on ones).
"""

import torch

from autograder.probe.refused import AnswerRefusedError

# The node autograd records for a call to CubeBackward.apply: the class's name with Backward appended.
_NODE = "CubeBackwardBackward"

_SIDESTEPPED = (
    f"Cube's gradient has no {_NODE} node in its graph: backward must hand the gradient to "
    "CubeBackward.apply(grad_out, x). The same formula written in torch gives the right numbers here, but "
    "sidesteps the kernel that CubeBackward wraps, which stands for code with no torch version."
)

_NOT_ITS_OUTPUT = (
    f"Cube's gradient is not the output of CubeBackward.apply: its grad_fn is {{}}, not {_NODE}. Return "
    "CubeBackward.apply(grad_out, x) as it is, with grad_out itself as the first argument: what backward "
    "computes around the call in torch (a formula added to it, or grad_out multiplied after a call on "
    "ones) sidesteps the kernel that CubeBackward wraps, which stands for code with no torch version."
)


def gradient_through_cube_backward(cube: type[torch.autograd.Function], x: torch.Tensor) -> torch.Tensor:
    """Cube's gradient at x, taken with create_graph=True, refused unless it is the output of the node of
    CubeBackward. A gradient with no graph at all is left to the comparison of derivatives, which names
    the cut."""
    out = cube.apply(x)
    (grad_x,) = torch.autograd.grad(out, x, torch.ones_like(out), create_graph=True)
    node = grad_x.grad_fn
    if node is None:
        return grad_x
    if not _reaches(node, _NODE):
        raise AnswerRefusedError(_SIDESTEPPED)
    below = _under_copies(node)
    if below is None or below.name() != _NODE:
        raise AnswerRefusedError(_NOT_ITS_OUTPUT.format(node.name()))
    return grad_x


# Nodes of operations that give back their input's values unchanged (a copy, a view): a call's result
# returned through one of them is still the call's result.
_COPIES = frozenset(
    {"CloneBackward0", "ViewBackward0", "AliasBackward0", "ReshapeAliasBackward0", "UnsafeViewBackward0"}
)


def _under_copies(node):
    """The first node below `node` that is not a copy or view of its one input."""
    while node is not None and node.name() in _COPIES and len(node.next_functions) == 1:
        node = node.next_functions[0][0]
    return node


def _reaches(node, name: str) -> bool:
    """Whether `node`, or a node its next_functions lead to, is named `name`."""
    seen, waiting = set(), [node]
    while waiting:
        current = waiting.pop()
        if current is None or current in seen:
            continue
        if current.name() == name:
            return True
        seen.add(current)
        waiting.extend(next_node for next_node, _ in current.next_functions)
    return False
