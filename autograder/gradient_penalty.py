"""What the tests of lesson 05's gradient_penalty(critic, points) share.

The first test cell compares the answer with a penalty whose gradients are worked out layer by layer, with
no double backward; the second checks the penalty's gradient with respect to the weights too, on linear
critics, whose penalty (‖w‖ - 1)² is known in closed form, and on a tanh critic, through the same
gradients by hand kept with their graph. Both name the usual slips by
what they return, each computed the test's own way.
"""

import torch
from torch import nn

from autograder.models import tanh_network


def gradients_by_hand(critic: nn.Sequential, points: torch.Tensor) -> torch.Tensor:
    """Each point's input gradient, worked out layer by layer: no double backward. (batch, features)"""
    return _slopes(critic, points).detach()


def _slopes(critic: nn.Sequential, points: torch.Tensor) -> torch.Tensor:
    """gradients_by_hand, with its graph back to the critic's weights: ordinary operations on them."""
    out = points
    # d out / d points for each point: (batch, features of out, features of points).
    slopes = torch.eye(points.shape[1], dtype=points.dtype).expand(len(points), -1, -1)
    for layer in critic:
        if isinstance(layer, nn.Linear):
            out, slopes = layer(out), layer.weight @ slopes
        else:  # nn.Tanh
            out = torch.tanh(out)
            slopes = (1 - out**2).unsqueeze(-1) * slopes
    return slopes.squeeze(1)


def norms_by_hand(critic: nn.Sequential, points: torch.Tensor) -> torch.Tensor:
    """The norm of each point's input gradient."""
    return gradients_by_hand(critic, points).norm(dim=1)


def penalty_by_hand_with_its_graph(critic: nn.Sequential, points: torch.Tensor) -> torch.Tensor:
    """The penalty from the gradients by hand, with its graph back to the critic's weights: the gradient
    the answer's penalty must give them, with no double backward."""
    return ((_slopes(critic, points).norm(dim=1) - 1) ** 2).mean()


def penalty_by_hand(critic: nn.Sequential, points: torch.Tensor) -> torch.Tensor:
    """The penalty from the gradients by hand, its value alone."""
    return penalty_by_hand_with_its_graph(critic, points).detach()


def tanh_critic(gen: torch.Generator, features=2, widths=(8,), batch=8):
    """A tanh critic with the given layer widths and weights drawn from gen, and a batch of points."""
    critic = tanh_network(gen, widths, features)
    return critic, torch.randn(batch, features, generator=gen, dtype=torch.float64)


def penalty_of_a_line(critic: nn.Linear, points: torch.Tensor) -> torch.Tensor:
    """A linear critic's slope is its weight w at every point, so its penalty is (‖w‖ - 1)², with its
    graph back to w."""
    return (critic.weight.norm() - 1) ** 2


def _norm_of_w(critic: nn.Linear) -> torch.Tensor:
    """‖w‖, every point's gradient norm under a linear critic."""
    return critic.weight.detach().norm()


def line(gen: torch.Generator, weight=(0.9, 1.2), bias=0.5, batch=5):
    """The linear critic w·x + b (section 7's by default), and a batch of points. Each parameter's .grad
    holds 0.5s, as an earlier backward of the critic's loss would leave it: the penalty must keep them."""
    critic = nn.Linear(len(weight), 1).double()
    with torch.no_grad():
        critic.weight.copy_(torch.tensor([weight], dtype=torch.float64))
        critic.bias.fill_(bias)
    for parameter in critic.parameters():
        parameter.grad = torch.full_like(parameter, 0.5)
    return critic, torch.randn(batch, len(weight), generator=gen, dtype=torch.float64)


# The usual slips, each with what it returns for a tanh critic and for a linear one.
WHOLE_BATCH = (
    "the norm is taken over the whole batch at once (gradients.norm()); each point's gradient needs its "
    "own norm: gradients.norm(dim=1)."
)
SUMMED = "the points' terms are added up (.sum()); the penalty is their mean (.mean())."
NOT_MINUS_ONE = "the 1 is not subtracted: the penalty pulls each gradient's norm towards 1, (‖∇‖ - 1)²."
NOT_SQUARED = "the difference is not squared: (‖∇‖ - 1)² pulls norms above and below 1 alike."
ABSOLUTE = "the difference is taken in absolute value, |‖∇‖ - 1|; the penalty squares it: (‖∇‖ - 1)²."
SQUARED_NORM = (
    "the norm is squared before 1 is subtracted, (‖∇‖² - 1)², as when the gradient's squares are summed "
    "without a square root; take the norm itself: gradients.norm(dim=1)."
)
ABSOLUTE_FOR_NORM = (
    "each element of the gradients is taken in absolute value (.abs()) in place of each point's norm, so "
    "every element is pulled towards 1 on its own; take each point's norm: gradients.norm(dim=1)."
)
L1_NORM = (
    "the norm is the sum of absolute values (L1); the penalty uses the Euclidean norm: gradients.norm(dim=1)."
)
OVER_THE_BATCH = (
    "the norm is taken over the batch (dim=0), one per feature; each point's gradient is a row of "
    "gradients: gradients.norm(dim=1)."
)
ONE_COLUMN = (
    "the norm is taken over the batch (gradients.norm(), or gradients.norm(dim=0): with one feature, the "
    "gradients are a single column and both take its norm); each point's gradient is a row of gradients "
    "and needs its own norm: gradients.norm(dim=1)."
)
MEAN_SCORE = (
    "the scores are averaged (critic(points).mean()) before torch.autograd.grad, which divides every point's "
    "gradient by the batch size; add them up (.sum()): each point's score depends on that point alone."
)
TIMES_LAMBDA = (
    "the penalty is multiplied by λ = 10; gradient_penalty returns the penalty alone, and the critic's loss "
    "multiplies it by λ (section 8)."
)
ONE_SIDED = (
    "only norms above 1 are penalized (relu or clamp(min=0)); WGAN-GP's penalty is two-sided, (‖∇‖ - 1)², "
    "and pulls norms below 1 up too (section 5)."
)
ROOT_MEAN_SQUARE = (
    "each gradient's root mean square is taken (.pow(2).mean(dim=1).sqrt()), which divides the norm by "
    "√features; the norm adds the squares: gradients.norm(dim=1)."
)
MEAN_THEN_SQUARE = (
    "the norms are averaged before 1 is subtracted and the difference squared, (mean ‖∇‖ - 1)²; each point "
    "gets its own (‖∇‖ - 1)², and the penalty averages those: ((norms - 1) ** 2).mean()."
)
OF_THE_PARAMETERS = (
    "the critic is differentiated with respect to its parameters (critic.parameters()), not the points: "
    "the penalty holds the gradient with respect to its input, torch.autograd.grad(critic(points).sum(), "
    "points, create_graph=True), one row per point."
)


def _where_features(many: bool, mistake):
    """`mistake` where the points have more than one feature (`many`), or exactly one (not `many`); None,
    which equals no result, elsewhere: with one feature, the norm over the whole batch and over dim=0 are
    the same slip, ONE_COLUMN."""

    def named(critic: nn.Module, points: torch.Tensor):
        return mistake(critic, points) if (points.shape[1] > 1) == many else None

    return named


def _penalty_of_the_parameters(critic: nn.Module, points: torch.Tensor) -> torch.Tensor:
    """(‖∇_θ Σ critic(points)‖ - 1)², the gradient taken with respect to every parameter, flattened into
    one: what OF_THE_PARAMETERS returns. A first derivative, which autograd takes the test's own way."""
    gradients = torch.autograd.grad(critic(points).sum(), list(critic.parameters()))
    return ((torch.cat([g.flatten() for g in gradients]).norm() - 1) ** 2).detach()


PENALTY_MISTAKES = {
    WHOLE_BATCH: _where_features(
        True, lambda critic, points: (gradients_by_hand(critic, points).norm() - 1) ** 2
    ),
    ONE_COLUMN: _where_features(
        False, lambda critic, points: (norms_by_hand(critic, points).norm() - 1) ** 2
    ),
    SUMMED: lambda critic, points: ((norms_by_hand(critic, points) - 1) ** 2).sum(),
    NOT_MINUS_ONE: lambda critic, points: (norms_by_hand(critic, points) ** 2).mean(),
    NOT_SQUARED: lambda critic, points: (norms_by_hand(critic, points) - 1).mean(),
    ABSOLUTE: lambda critic, points: (norms_by_hand(critic, points) - 1).abs().mean(),
    SQUARED_NORM: lambda critic, points: ((norms_by_hand(critic, points) ** 2 - 1) ** 2).mean(),
    OVER_THE_BATCH: _where_features(
        True, lambda critic, points: ((gradients_by_hand(critic, points).norm(dim=0) - 1) ** 2).mean()
    ),
    # With one feature, the sum of absolute values is the norm: no slip there.
    L1_NORM: _where_features(
        True, lambda critic, points: ((gradients_by_hand(critic, points).abs().sum(dim=1) - 1) ** 2).mean()
    ),
    # With one feature, each point's gradient is one element, whose absolute value is its norm: no slip.
    ABSOLUTE_FOR_NORM: _where_features(
        True, lambda critic, points: ((gradients_by_hand(critic, points).abs() - 1) ** 2).mean()
    ),
    MEAN_SCORE: lambda critic, points: ((norms_by_hand(critic, points) / len(points) - 1) ** 2).mean(),
    TIMES_LAMBDA: lambda critic, points: 10 * penalty_by_hand(critic, points),
    ONE_SIDED: lambda critic, points: ((norms_by_hand(critic, points) - 1).clamp(min=0) ** 2).mean(),
    ROOT_MEAN_SQUARE: lambda critic, points: (
        (norms_by_hand(critic, points) / points.shape[1] ** 0.5 - 1) ** 2
    ).mean(),
    MEAN_THEN_SQUARE: lambda critic, points: (norms_by_hand(critic, points).mean() - 1) ** 2,
    OF_THE_PARAMETERS: _penalty_of_the_parameters,
}
LINE_MISTAKES = {
    WHOLE_BATCH: _where_features(
        True, lambda critic, points: (len(points) ** 0.5 * _norm_of_w(critic) - 1) ** 2
    ),
    ONE_COLUMN: _where_features(
        False, lambda critic, points: (len(points) ** 0.5 * _norm_of_w(critic) - 1) ** 2
    ),
    SUMMED: lambda critic, points: len(points) * (_norm_of_w(critic) - 1) ** 2,
    NOT_MINUS_ONE: lambda critic, points: _norm_of_w(critic) ** 2,
    NOT_SQUARED: lambda critic, points: _norm_of_w(critic) - 1,
    ABSOLUTE: lambda critic, points: (_norm_of_w(critic) - 1).abs(),
    SQUARED_NORM: lambda critic, points: (_norm_of_w(critic) ** 2 - 1) ** 2,
    # Every point's gradient is w: over the batch, feature j's norm is √batch |w_j|.
    OVER_THE_BATCH: _where_features(
        True, lambda critic, points: ((len(points) ** 0.5 * critic.weight.detach().abs() - 1) ** 2).mean()
    ),
    L1_NORM: _where_features(True, lambda critic, points: (critic.weight.detach().abs().sum() - 1) ** 2),
    ABSOLUTE_FOR_NORM: _where_features(
        True, lambda critic, points: ((critic.weight.detach().abs() - 1) ** 2).mean()
    ),
    MEAN_SCORE: lambda critic, points: (_norm_of_w(critic) / len(points) - 1) ** 2,
    TIMES_LAMBDA: lambda critic, points: 10 * (_norm_of_w(critic) - 1) ** 2,
    ONE_SIDED: lambda critic, points: (_norm_of_w(critic) - 1).clamp(min=0) ** 2,
    ROOT_MEAN_SQUARE: lambda critic, points: (_norm_of_w(critic) / points.shape[1] ** 0.5 - 1) ** 2,
    OF_THE_PARAMETERS: _penalty_of_the_parameters,
}
