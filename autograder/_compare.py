"""Comparing a student's tensor with the expected one, and saying where they differ."""

import torch

# float64 throughout: values agree to ~1e-15, so these tolerances only absorb rounding.
RTOL = 1e-7
ATOL = 1e-9


def mismatch(expected: torch.Tensor, got, point_names: list[str], points) -> str | None:
    """None when `got` matches; otherwise one sentence naming the first element that is off."""
    if not isinstance(got, torch.Tensor):
        return f"got a {type(got).__name__} instead of a tensor"
    if got.dtype != expected.dtype:
        return f"got dtype {got.dtype} instead of {expected.dtype}: keep the input's dtype"
    if got.shape != expected.shape:
        return f"got shape {tuple(got.shape)} instead of {tuple(expected.shape)}"
    close = torch.isclose(got.detach(), expected.detach(), rtol=RTOL, atol=ATOL)
    if bool(close.all()):
        return None
    index = tuple(int(i) for i in (~close).nonzero()[0]) if close.dim() else ()
    where = ", ".join(
        f"{name}={float(p.detach()[index]):.6g}" for name, p in zip(point_names, points, strict=True)
    )
    position = f" at index {list(index)}" if index else ""
    return (
        f"expected {float(expected.detach()[index]):.6g}, got {float(got.detach()[index]):.6g}"
        f"{position}" + (f" ({where})" if where else "")
    )


def is_zero(tensor: torch.Tensor | None) -> bool:
    return tensor is None or not bool(tensor.detach().abs().gt(ATOL).any())
