"""Notices when student code replaced a function that the checks rely on.

The checker process records, before any student code runs, which object every public name of torch,
NumPy and the checks points to. After the student's code ran in a check, anything that now points
elsewhere (a stubbed `gradgradcheck`, a patched `Tensor.__sub__`) voids the check.
"""

import builtins
import importlib
import inspect
import math
import sys
import types

import numpy
import torch
import torch.autograd
import torch.autograd.gradcheck
import torch.testing

_WATCHED = (
    builtins,
    math,
    numpy,
    torch,
    torch.autograd,
    # The module: the attribute torch.autograd.gradcheck is the function it defines, re-exported over
    # the submodule's name, and gradgradcheck calls the module's `gradcheck`.
    importlib.import_module("torch.autograd.gradcheck"),
    torch.testing,
    torch.Tensor,
    torch.autograd.Function,
)
_snapshot: dict[str, object] = {}


def _fingerprint(value: object) -> object:
    """An object's identity, plus its code when it is a Python function (whose code can be swapped)."""
    code = getattr(value, "__code__", None)
    return (id(value), id(code)) if isinstance(code, types.CodeType) else id(value)


def _members(owner: object) -> dict[str, object]:
    """A module's own names; a class's names including inherited ones (`Tensor.__sub__` lives on its C
    base), read statically, so that shadowing an inherited method on the class counts as replacing it."""
    if isinstance(owner, type):
        return {name: inspect.getattr_static(owner, name, None) for name in dir(owner)}
    return dict(vars(owner))


def _current() -> dict[str, object]:
    watched = {
        f"{getattr(owner, '__name__', owner)}.{name}": value
        for owner in _WATCHED
        for name, value in _members(owner).items()
    }
    # The course's own modules keep per-check data (the seed of a randomized check); only their
    # behaviour, the functions and classes they define, is watched.
    watched |= {
        f"{module_name}.{name}": value
        for module_name, module in list(sys.modules.items())
        if module_name.startswith("autograder") and module is not None
        for name, value in vars(module).items()
        if callable(value)
    }
    return {name: _fingerprint(value) for name, value in watched.items()}


def take_snapshot() -> None:
    """Record the pristine state; called once in the checker process before any student code."""
    _snapshot.clear()
    _snapshot.update(_current())


def tampered_names() -> list[str]:
    """Names that point somewhere else than when the snapshot was taken."""
    now = _current()
    return sorted(name for name, print_ in _snapshot.items() if now.get(name) != print_)
