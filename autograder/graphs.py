"""Drawing autograd graphs in lessons, the same way in every lesson."""

import torch
import torchviz


def draw_graph(**named: torch.Tensor):
    """The graph behind the named tensors, each labelled with its name (graphviz.Digraph, shown as SVG).

    Name the gradient you want to inspect together with its inputs and outputs, e.g.
    `draw_graph(grad_x=grad_x, x=x, out=out)`: a gradient that is missing from the picture, or that
    has no path back to x, was cut from the graph.
    """
    return torchviz.make_dot(tuple(named.values()), params=named)
