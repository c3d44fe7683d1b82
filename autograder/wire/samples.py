"""The inputs a check feeds to a student's function, and how a check names them in messages."""

import os
from collections.abc import Iterator

import torch

# Visible tests use fixed shapes and values, so a student sees the same feedback every run.
VISIBLE_SHAPES = ((), (3,), (2, 3))
_VISIBLE_SEED = 0
# Set when a class is graded, so that a rerun (or a resumed run) draws the same hidden inputs.
_randomized_seed: int | None = None


def reproducible(seed: int) -> None:
    """Make randomized checks in this process draw from `seed` instead of fresh randomness."""
    global _randomized_seed
    _randomized_seed = seed


def generator(randomized: bool) -> torch.Generator:
    """Fixed seed for visible tests; fresh randomness, drawn in the checker process, for hidden ones."""
    if not randomized:
        seed = _VISIBLE_SEED
    elif _randomized_seed is not None:
        seed = _randomized_seed
    else:
        seed = int.from_bytes(os.urandom(8), "little")
    return torch.Generator().manual_seed(seed)


def shapes(randomized: bool, gen: torch.Generator) -> list[tuple[int, ...]]:
    """Hidden tests draw new shapes too, so answers that hard-code outputs or shapes fail."""
    if not randomized:
        return list(VISIBLE_SHAPES)
    ranks = torch.randperm(4, generator=gen)[:3].tolist()
    return [tuple(torch.randint(1, 6, (rank,), generator=gen).tolist()) for rank in ranks]


def inputs(
    arity: int, randomized: bool, low: float, high: float, gen: torch.Generator
) -> Iterator[tuple[torch.Tensor, ...]]:
    """Float64 leaves that require grad: double precision keeps finite differences trustworthy."""
    for shape in shapes(randomized, gen):
        yield tuple(
            (low + (high - low) * torch.rand(shape, generator=gen, dtype=torch.float64)).requires_grad_()
            for _ in range(arity)
        )


def like(tensors, gen: torch.Generator, requires_grad: bool = False) -> tuple[torch.Tensor, ...]:
    """Random tensors shaped like `tensors`: the grad_out (or second grad_out) a check feeds to backward."""
    return tuple(
        torch.randn(t.shape, generator=gen, dtype=t.dtype).requires_grad_(requires_grad) for t in tensors
    )


def describe(names: list[str], tensors) -> str:
    """'x of shape (2, 3)' or 'grad_out, x of shape (3,)'."""
    return f"{', '.join(names)} of shape {tuple(tensors[0].shape)}"


def leaves(args: tuple, names: list[str]) -> list[tuple[str, torch.Tensor]]:
    """Every tensor the arguments hold that gradients accumulate into, named as a student would."""
    found = []
    for name, arg in zip(names, args, strict=True):
        if isinstance(arg, torch.Tensor) and arg.requires_grad and arg.is_leaf:
            found.append((name, arg))
        elif isinstance(arg, torch.nn.Module):
            found += [(f"{name}.{p}", tensor) for p, tensor in arg.named_parameters()]
    return found


def tensors(value) -> list:
    """The tensors in a result, in order, looking inside tuples, lists and the values of dicts."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, tuple | list):
        return [t for item in value for t in tensors(item)]
    return [value] if isinstance(value, torch.Tensor) else []
