"""Drawing autograd graphs in lessons, the same way in every lesson, and measuring what they keep."""

from collections.abc import Sequence

import torch
import torchviz

from autograder.probe.diagnose import nodes_on_the_way

# The colour of the nodes recorded after the graphs passed as `recorded_after`; the others stay grey.
RECORDED_AFTER_COLOUR = "gold"


def draw_graph(*, recorded_after: Sequence[torch.Tensor] = (), **named: torch.Tensor):
    """The graph behind the named tensors, each labelled with its name (graphviz.Digraph, shown as SVG).

    Name the gradient you want to inspect together with its inputs and outputs, e.g.
    `draw_graph(grad_x=grad_x, x=x, out=out)`: a gradient that is missing from the picture, or that
    has no path back to x, was cut from the graph. Nodes that are not in the graphs of the tensors
    `recorded_after` lists are drawn in RECORDED_AFTER_COLOUR: with the forward's output there, the nodes a
    backward with create_graph=True added stand apart from the forward's, which look the same otherwise.
    """
    graph = torchviz.make_dot(tuple(named.values()), params=named)
    bases = _unnamed_bases(named.values())
    graph.body = [line for line in graph.body if not _names_any(line, bases)]
    if recorded_after:
        earlier = set(nodes_on_the_way(list(recorded_after)))
        drawn = {line.split()[0] for line in graph.body if line.split()}
        for node in nodes_on_the_way(list(named.values())):
            if node not in earlier and str(id(node)) in drawn:
                graph.node(str(id(node)), fillcolor=RECORDED_AFTER_COLOUR)
    return graph


def _unnamed_bases(tensors) -> set[str]:
    """The graph ids of the tensors the named views look into, where not named themselves. torchviz draws
    each as an unlabelled box with a dotted arrow to its view; autograd's nodes (the view's own, such as
    TBackward0) already show where the view comes from, so the box only raises a question."""
    named = {str(id(tensor)) for tensor in tensors}
    return {str(id(tensor._base)) for tensor in tensors if tensor._is_view()} - named


def _names_any(line: str, ids: set[str]) -> bool:
    """Whether a line of graphviz source is the node of one of ids or an edge from or to one."""
    words = line.split()
    return bool(words) and (words[0] in ids or (len(words) > 2 and words[1] == "->" and words[2] in ids))


def saved_bytes(output: torch.Tensor) -> int:
    """Bytes the graph behind `output` keeps for its backward: the tensors its nodes saved (their
    `_saved_` attributes), each block of memory counted once, since several nodes may save the same
    tensor. What a lesson measures memory with, where the nodes' attributes are not the lesson's topic."""
    held = {}
    for node in nodes_on_the_way([output]):
        for tensor in _saved_by(node):
            held[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes()
    return sum(held.values())


def _saved_by(node):
    """The tensors one node saved for backward: autograd shows them as its `_saved_` attributes."""
    for name in dir(node):
        value = getattr(node, name) if name.startswith("_saved_") else None
        for item in value if isinstance(value, (tuple, list)) else [value]:
            if isinstance(item, torch.Tensor):
                yield item
