"""Models the lessons and their tests share: small enough that every gradient can be checked by hand."""

import torch
from torch import nn


class TinyNet(nn.Module):
    """y = ((w1·x)·w2 + b2)**2 from two 1-by-1 linear layers, also returning the intermediate l = w1·x."""

    # Lesson 00's running example: at x = 4 every derivative it quotes is exact, and w2 = 2.5 keeps the
    # exercises' slips apart (with w2 = 2, 2u and u·w2 would coincide).
    def __init__(self, w1: float = 3.0, w2: float = 2.5, b2: float = 6.0) -> None:
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
    # float32, nn.Linear's default: every value the lesson checks is exact in float32.
    return torch.tensor([[x]])


# Builders for check_result: test cells import them, so that the arguments are made where an answer
# cannot redefine them.


def lesson_net(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """Lesson 00's TinyNet (w1 = 3, w2 = 2.5, b2 = 6) and x = 4, in float64; visible tests ignore `gen`."""
    return TinyNet().double(), make_input().double()


def other_net(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """Lesson 00's TinyNet with w2 = -1.5 and b2 = 1, and x = 2, in float64; visible tests ignore `gen`. A
    second fixed network: numbers written in for lesson_net fail on it, even where the reference's result
    has no graph whose gradients would tell them."""
    return TinyNet(w2=-1.5, b2=1.0).double(), make_input(2.0).double()


def random_net(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """A TinyNet with random weights and a random input, all drawn from `gen`, in float64."""
    w1, w2, b2, x = torch.randn(4, generator=gen, dtype=torch.float64).tolist()
    return TinyNet(w1, w2, b2).double(), make_input(x).double()


def with_every_grad_at_one(net: TinyNet, x: torch.Tensor) -> tuple[TinyNet, torch.Tensor]:
    """The network with every .grad at 1, as an earlier backward would leave it: what a function must leave
    there (or add to) shows only where .grad holds something."""
    for parameter in net.parameters():
        parameter.grad = torch.ones_like(parameter)
    return net, x


def lesson_net_with_grads(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """lesson_net, its .grad at 1."""
    return with_every_grad_at_one(*lesson_net(gen))


def random_net_with_grads(gen: torch.Generator) -> tuple[TinyNet, torch.Tensor]:
    """random_net, its .grad at 1."""
    return with_every_grad_at_one(*random_net(gen))


# A small tanh network (lesson 05's critic, lesson 08's regressor), and lesson 08's sine-wave tasks.


def tanh_network(gen: torch.Generator, widths, features: int = 1, *, scaled: bool = False) -> nn.Sequential:
    """features → widths → 1 with tanh between layers, in float64, every weight drawn from `gen`: standard
    normal, or divided by √fan-in if `scaled` (so that deep tanh layers do not saturate)."""
    layers, width_in = [], features
    for width in widths:
        layers += [nn.Linear(width_in, width), nn.Tanh()]
        width_in = width
    net = nn.Sequential(*layers, nn.Linear(width_in, 1)).double()
    with torch.no_grad():
        for parameter in net.parameters():
            draw = torch.randn(parameter.shape, generator=gen, dtype=torch.float64)
            fan_in = parameter.shape[-1] if scaled and parameter.dim() == 2 else 1
            parameter.copy_(draw / fan_in**0.5)
    return net


def _sine_task(gen: torch.Generator, shots: int) -> tuple[torch.Tensor, ...]:
    """A sine of amplitude in [0.1, 5) and phase in [0, π): `shots` support and `shots + 1` query points."""
    amplitude = 0.1 + 4.9 * float(torch.rand((), generator=gen, dtype=torch.float64))
    phase = torch.pi * float(torch.rand((), generator=gen, dtype=torch.float64))
    x, x_query = (10 * torch.rand(n, 1, generator=gen, dtype=torch.float64) - 5 for n in (shots, shots + 1))
    return x, amplitude * torch.sin(x - phase), x_query, amplitude * torch.sin(x_query - phase)


# What the few-shot builders make, as check_result's messages tell it (checks.where_built).
FEW_SHOT_NET = "a float64 tanh network with one hidden layer of 8 units"
ONE_SINE = "5 support points (x, y) and 6 query points of one sine"
THREE_SINES = "three sines of 5 support and 6 query points each"
_RANDOM_NET = "a float64 tanh network with one or two hidden layers of 2 to 8 units"
_RANDOM_SHOTS = "K support and K + 1 query points, K from 2 to 10, and lr from 0.05 to 0.5"


def few_shot_task(gen: torch.Generator) -> tuple:
    """net, x, y, x_query, y_query, lr: a 1 → 8 → 1 tanh network, 5 support points, lr = 0.1."""
    return tanh_network(gen, [8], scaled=True), *_sine_task(gen, 5), 0.1


few_shot_task.in_words = f"{FEW_SHOT_NET}, {ONE_SINE}, and lr = 0.1"


def random_few_shot_task(gen: torch.Generator) -> tuple:
    """Like few_shot_task with one or two hidden layers of 2 to 8 units, 2 to 10 shots, lr in [0.05, 0.5)."""
    depth, shots = (int(torch.randint(low, high, (), generator=gen)) for low, high in [(1, 3), (2, 11)])
    widths = torch.randint(2, 9, (depth,), generator=gen).tolist()
    lr = 0.05 + 0.45 * float(torch.rand((), generator=gen, dtype=torch.float64))
    return tanh_network(gen, widths, scaled=True), *_sine_task(gen, shots), lr


random_few_shot_task.in_words = f"{_RANDOM_NET}, one sine's {_RANDOM_SHOTS}"


def few_shot_tasks(gen: torch.Generator) -> tuple:
    """net, tasks, lr: few_shot_task's network and lr, with three tasks (x, y, x_query, y_query)."""
    return tanh_network(gen, [8], scaled=True), [_sine_task(gen, 5) for _ in range(3)], 0.1


few_shot_tasks.in_words = f"{FEW_SHOT_NET}, {THREE_SINES}, and lr = 0.1"


def random_few_shot_tasks(gen: torch.Generator) -> tuple:
    """random_few_shot_task's network, shots and lr, with 2 to 4 tasks: with one, a sum, the last task's loss
    alone or tasks adapted one after another would equal the mean."""
    net, *_, lr = random_few_shot_task(gen)
    count, shots = (int(torch.randint(low, high, (), generator=gen)) for low, high in [(2, 5), (2, 11)])
    return net, [_sine_task(gen, shots) for _ in range(count)], lr


random_few_shot_tasks.in_words = f"{_RANDOM_NET}, 2 to 4 sines' {_RANDOM_SHOTS}"
