"""Comparing a student's tensor with the expected one, and saying where they differ."""

from dataclasses import dataclass

import numpy
import torch

# float64 throughout: values agree to ~1e-15, so these tolerances only absorb rounding.
RTOL = 1e-7
ATOL = 1e-9


@dataclass(frozen=True)
class NotATensor:
    """What a student returned where a tensor was expected, known to the judge only by its type's name."""

    kind: str


def numpy_result(kind: str) -> str:
    """A likely cause when a Function returned a value of type `kind` where a tensor belongs, if that type is
    NumPy's (an array or a NumPy number, as a kernel on NumPy arrays returns); "" otherwise."""
    numpy_type = getattr(numpy, kind, None)
    if not (isinstance(numpy_type, type) and issubclass(numpy_type, numpy.ndarray | numpy.generic)):
        return ""
    return (
        f"Likely cause: forward returns NumPy's {kind} as it is. forward must return a tensor: wrap the "
        "kernel with through_numpy where the notebook defines it, or convert its result with "
        "torch.from_numpy."
    )


def mismatch(expected: torch.Tensor, got, point_names: list[str], points) -> str | None:
    """None when `got` matches; otherwise one sentence naming the first element that is off."""
    if not isinstance(got, torch.Tensor):
        kind = got.kind if isinstance(got, NotATensor) else type(got).__name__
        return f"got a {kind} instead of a tensor"
    if got.dtype != expected.dtype:
        return f"got dtype {got.dtype} instead of {expected.dtype}: keep the input's dtype"
    if got.shape != expected.shape:
        return f"got shape {tuple(got.shape)} instead of {tuple(expected.shape)}"
    index = first_difference(expected, got)
    if index is None:
        return None
    where = ", ".join(
        f"{name}={float(p.detach()[index]):.6g}" for name, p in zip(point_names, points, strict=True)
    )
    position = f" at index {list(index)}" if index else ""
    want, have = apart(float(expected.detach()[index]), float(got.detach()[index]))
    return f"expected {want}, got {have}{position}" + (f" ({where})" if where else "")


def apart(expected: float, got: float) -> tuple[str, str]:
    """The two numbers to 6 significant digits, or to as many more as it takes for them to differ in
    print: 'expected 0.5625, got 0.5625' would tell a student nothing. A zero prints as 0, whatever its
    sign: 'expected -0' reads as a bug."""
    expected, got = expected + 0.0, got + 0.0  # -0.0 + 0.0 is 0.0
    for digits in range(6, 18):
        shown = f"{expected:.{digits}g}", f"{got:.{digits}g}"
        if shown[0] != shown[1]:
            return shown
    return repr(expected), repr(got)


def first_difference(expected: torch.Tensor, got: torch.Tensor) -> tuple[int, ...] | None:
    """The index of the first element where `got` is off, or None where they agree (or cannot be compared)."""
    if got.dtype != expected.dtype or got.shape != expected.shape:
        return None
    close = torch.isclose(got.detach(), expected.detach(), rtol=RTOL, atol=ATOL)
    if bool(close.all()):
        return None
    return tuple(int(i) for i in (~close).nonzero()[0]) if close.dim() else ()


def is_zero(tensor: torch.Tensor | None) -> bool:
    return tensor is None or not bool(tensor.detach().abs().gt(ATOL).any())
