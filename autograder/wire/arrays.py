"""Plain numbers between the side that runs student code and the side that judges it.

A measurement is a tree of dicts, lists, strings, numbers, None and tensors. It travels as one JSON
header followed by the tensors' raw bytes: nothing in it can carry code, a subclass or a hook, so
reading it runs nothing the student wrote. Whatever does not fit this shape is refused with ValueError.
"""

import json
import math
import struct

import numpy
import torch

# The dtypes a check can meet, by the name the header gives them.
_DTYPES = {
    "float64": torch.float64,
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int64": torch.int64,
    "int32": torch.int32,
    "int16": torch.int16,
    "int8": torch.int8,
    "uint8": torch.uint8,
    "bool": torch.bool,
}
_NAMES = {dtype: name for name, dtype in _DTYPES.items()}
_HEADER = struct.Struct(">I")
_TENSOR = "__tensor__"
_FLOAT = "__float__"


def pack(tree) -> bytes:
    """Serialise a tree whose leaves are JSON values or plain tensors (no autograd, no subclass)."""
    blobs: list[bytes] = []

    def encode(node):
        if isinstance(node, torch.Tensor):
            plain = node.detach().cpu().contiguous()
            if plain.dtype not in _NAMES:
                raise ValueError(f"tensors of dtype {plain.dtype} are not measured")
            # bfloat16 has no NumPy dtype: its 16-bit words travel as they are.
            words = plain.view(torch.int16) if plain.dtype == torch.bfloat16 else plain
            blobs.append(words.numpy().tobytes())
            return {_TENSOR: [_NAMES[plain.dtype], list(plain.shape), len(blobs) - 1]}
        if isinstance(node, dict):
            return {str(key): encode(value) for key, value in node.items()}
        if isinstance(node, list | tuple):
            return [encode(item) for item in node]
        if node is None or isinstance(node, bool | int | str):
            return node
        if isinstance(node, float):
            return node if math.isfinite(node) else {_FLOAT: repr(node)}
        raise ValueError(f"cannot measure a {type(node).__name__}")

    header = json.dumps(encode(tree), allow_nan=False).encode()
    sizes = json.dumps([len(blob) for blob in blobs]).encode()
    return _HEADER.pack(len(header)) + header + _HEADER.pack(len(sizes)) + sizes + b"".join(blobs)


def _plain(value) -> torch.Tensor | None:
    """The data of a tensor, as a plain tensor; None for anything else (or a tensor with no readable data)."""
    if not isinstance(value, torch.Tensor):
        return None
    # A subclass's __torch_function__ must not choose what its data is said to be.
    with torch._C.DisableTorchFunctionSubclass():
        try:
            data = torch.Tensor.detach(value).cpu().clone().as_subclass(torch.Tensor)
            (data.view(torch.int16) if data.dtype == torch.bfloat16 else data).numpy()
        except Exception:  # noqa: BLE001 - a tensor without readable data is not a tensor to the judge
            return None
    return data if data.dtype in _NAMES else None


def text(value) -> str:
    """A measurement's text (a message, a hint), refused with TypeError if it is anything else."""
    if not isinstance(value, str):
        raise TypeError("not text")
    return value


def tree(value, depth: int = 0):
    """A returned value as a judge compares it: tensors (with requires_grad), sequences, dicts keyed by
    strings, and numbers; of anything else only its type's name."""
    data = _plain(value)
    if data is not None:
        return {"tensor": data, "requires_grad": bool(value.requires_grad)}
    kind = type(value).__name__
    if isinstance(value, tuple | list) and depth < 4:
        return {"type": kind, "items": [tree(item, depth + 1) for item in value[:64]]}
    # A dict keyed by names (a network's parameters) keeps them, for a message to say which entry is wrong.
    if isinstance(value, dict) and depth < 4 and all(isinstance(key, str) for key in value):
        keys = list(value)[:64]
        return {"type": kind, "keys": keys, "items": [tree(value[key], depth + 1) for key in keys]}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"type": kind, "number": float(value)}
    return {"type": kind}


def unpack(data: bytes):
    """The tree `pack` wrote, with fresh plain tensors; ValueError for anything else."""
    try:
        header, offset = _section(data, 0)
        sizes, offset = _section(data, offset)
        sizes = json.loads(sizes)
        if not (isinstance(sizes, list) and all(isinstance(s, int) and s >= 0 for s in sizes)):
            raise ValueError("bad blob sizes")
        blobs = []
        for size in sizes:
            blobs.append(data[offset : offset + size])
            offset += size
        if offset != len(data) or any(len(b) != s for b, s in zip(blobs, sizes, strict=True)):
            raise ValueError("length does not match")
        return _decode(json.loads(header), blobs)
    except (ValueError, TypeError, KeyError, IndexError, RecursionError, struct.error) as error:
        raise ValueError(f"not a measurement: {error}") from None


def _section(data: bytes, offset: int) -> tuple[bytes, int]:
    (size,) = _HEADER.unpack_from(data, offset)
    start = offset + _HEADER.size
    if start + size > len(data):
        raise ValueError("truncated")
    return data[start : start + size], start + size


def _decode(node, blobs: list[bytes]):
    if isinstance(node, dict):
        if set(node) == {_TENSOR}:
            name, shape, index = node[_TENSOR]
            dtype = _DTYPES[name]
            if not (isinstance(shape, list) and all(isinstance(n, int) and n >= 0 for n in shape)):
                raise ValueError("bad shape")
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise ValueError("bad tensor index")
            stored = torch.int16 if dtype == torch.bfloat16 else dtype
            array = numpy.frombuffer(blobs[index], dtype=torch.empty((), dtype=stored).numpy().dtype)
            tensor = torch.from_numpy(array.copy()).reshape(shape)
            return tensor.view(torch.bfloat16) if dtype == torch.bfloat16 else tensor
        if set(node) == {_FLOAT} and node[_FLOAT] in ("nan", "inf", "-inf"):
            return float(node[_FLOAT])
        return {key: _decode(value, blobs) for key, value in node.items()}
    if isinstance(node, list):
        return [_decode(item, blobs) for item in node]
    return node
