"""draw_graph: the named tensors, labelled, and autograd's nodes between them; no box for a tensor the
lesson never named, such as the one a view looks into. saved_bytes: what a graph keeps for its backward."""

import pytest
import torch

from autograder.graphs import RECORDED_AFTER_COLOUR, draw_graph, saved_bytes
from autograder.probe.diagnose import nodes_on_the_way

# torchviz compares torch's version with distutils' LooseVersion, which warns; a notebook never shows a
# warning raised inside a library.
pytestmark = pytest.mark.filterwarnings("ignore:distutils Version classes are deprecated:DeprecationWarning")


def _gradient_of_a_linear_layers_input(create_graph: bool):
    """dy/dl for y = linear(l)², which torch returns as a view (the transpose of a product)."""
    hidden, w, b = (
        torch.ones(shape, dtype=torch.float64, requires_grad=True) for shape in ((1, 1), (1, 1), 1)
    )
    y = torch.nn.functional.linear(hidden, w, b) ** 2
    (gradient,) = torch.autograd.grad(y, hidden, create_graph=create_graph)
    assert gradient._is_view()
    return gradient, hidden


@pytest.mark.parametrize("create_graph", [False, True])
def test_a_gradient_that_is_a_view_is_drawn_without_the_tensor_it_views(create_graph):
    gradient, hidden = _gradient_of_a_linear_layers_input(create_graph)
    source = draw_graph(f=gradient, l=hidden).source
    assert str(id(gradient._base)) not in source
    assert "dotted" not in source
    assert 'label="f' in source
    assert 'label="l' in source
    assert ("MmBackward0" in source) is create_graph  # the product the view transposes, recorded by autograd


def test_a_base_that_is_named_is_drawn_with_its_view():
    gradient, _ = _gradient_of_a_linear_layers_input(create_graph=True)
    source = draw_graph(f=gradient, base=gradient._base).source
    assert f"{id(gradient._base)} -> {id(gradient)} [style=dotted]" in source


def test_saved_bytes_counts_each_saved_tensor_once_however_many_nodes_save_it():
    """Lesson 08 compares what MAML and first-order MAML keep: a tensor two nodes save is kept once."""
    x, w = (torch.ones(10, dtype=torch.float64, requires_grad=True) for _ in range(2))
    assert saved_bytes((x * w).sum()) == 2 * 80
    assert saved_bytes((x * x).sum()) == 80
    assert saved_bytes((x * x * x).sum()) == 2 * 80  # x once, and the product x * x
    assert saved_bytes((x + w).sum()) == 0  # addition saves nothing for its backward


def test_the_nodes_a_gradient_adds_are_coloured_apart_from_the_forwards():
    """Lesson 00 tells the boxes create_graph=True adds from the forward's by their colour: exactly the
    nodes that are not the forward's are coloured, and no node is added to the picture."""
    hidden, w, b = (
        torch.ones(shape, dtype=torch.float64, requires_grad=True) for shape in ((1, 1), (1, 1), 1)
    )
    y = torch.nn.functional.linear(hidden, w, b) ** 2
    (gradient,) = torch.autograd.grad(y, hidden, create_graph=True)
    forward = {str(id(node)) for node in nodes_on_the_way([y])}
    added = {str(id(node)) for node in nodes_on_the_way([gradient])} - forward
    plain = draw_graph(f=gradient, l=hidden, w=w, b=b)
    coloured = draw_graph(f=gradient, l=hidden, w=w, b=b, recorded_after=[y])
    assert RECORDED_AFTER_COLOUR not in plain.source
    marked = [line for line in coloured.body if RECORDED_AFTER_COLOUR in line]
    assert {line.split()[0] for line in marked} == added
    assert len(added) == 6  # Pow, two Muls, a transpose, a product and its transpose: lesson 00's six
    assert coloured.body[: len(plain.body)] == plain.body
