"""Likely causes the judge can read off plain numbers: the expected and the measured gradients."""

import torch


def ignores_grad_out(
    expected: torch.Tensor, got: torch.Tensor, grad_out: torch.Tensor, incoming: str = "grad_out"
) -> str | None:
    """A hint when backward returns the bare derivative, forgetting to multiply by the incoming gradient."""
    if bool((grad_out.abs() < 1e-3).any()) or got.shape != expected.shape:
        return None
    if torch.allclose(got.detach(), (expected / grad_out).detach(), rtol=1e-6, atol=1e-9):
        return (
            f"Likely cause: backward returns the local derivative without multiplying by {incoming} "
            "(backward's argument after ctx). The chain rule needs grad_x = grad_out * (d out / d x)."
        )
    return None


def swapped_gradients(got, expected, names: list[str]) -> str | None:
    """A hint when backward returns right gradients in the wrong order (only with two or more inputs)."""
    if len(names) < 2 or any(g is None or e is None for g, e in zip(got, expected, strict=True)):
        return None
    for i, g in enumerate(got):
        for j, e in enumerate(expected):
            if i != j and g.shape == e.shape and torch.allclose(g.detach(), e.detach(), rtol=1e-6, atol=1e-9):
                return (
                    f"Likely cause: backward returns the gradient for {names[j]} in the place of {names[i]}. "
                    "Return one gradient per input, in the order forward takes its inputs."
                )
    return None
