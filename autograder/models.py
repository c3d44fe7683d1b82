"""Models the lessons and their tests share: small enough that every gradient can be checked by hand."""

import torch
from torch import nn


class TinyNet(nn.Module):
    """y = ((w1·x)·w2 + b2)**2 from two 1-by-1 linear layers, also returning the intermediate l = w1·x."""

    # Lesson 00's running example: at x = 4 every derivative it quotes is a small integer.
    def __init__(self, w1: float = 3.0, w2: float = 2.0, b2: float = 6.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(1, 1, bias=False)
        self.linear2 = nn.Linear(1, 1)
        nn.init.constant_(self.linear1.weight, w1)
        nn.init.constant_(self.linear2.weight, w2)
        nn.init.constant_(self.linear2.bias, b2)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.linear1(x)
        return hidden, self.linear2(hidden).pow(2)


def make_input(x: float = 4.0) -> torch.Tensor:
    """A batch of one sample with one feature, the shape nn.Linear(1, 1) expects."""
    # float32, nn.Linear's default: every value the lesson checks is a small integer, exact in float32.
    return torch.tensor([[x]])


# Builders for check_result: test cells import them, so that the arguments are made where an answer
# cannot redefine them.


def lesson_net(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """Lesson 00's TinyNet (w1 = 3, w2 = 2, b2 = 6) and x = 4, in float64; visible tests ignore `gen`."""
    return TinyNet().double(), make_input().double()


def random_net(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """A TinyNet with random weights and a random input, all drawn from `gen`, in float64."""
    w1, w2, b2, x = torch.randn(4, generator=gen, dtype=torch.float64).tolist()
    return TinyNet(w1, w2, b2).double(), make_input(x).double()
