"""How the notebook kernel and the checker process talk: length-prefixed messages on a pipe."""

import struct

_LENGTH = struct.Struct(">I")


def write_message(stream, payload: bytes) -> None:
    stream.write(_LENGTH.pack(len(payload)) + payload)
    stream.flush()


def read_message(stream) -> bytes | None:
    """One message, or None when the other side has gone."""
    header = stream.read(_LENGTH.size)
    if len(header) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack(header)
    payload = stream.read(size)
    return payload if len(payload) == size else None


def take_message(buffer: bytearray, limit: int) -> bytes | None:
    """Remove the first message from `buffer` and return it; None while it is incomplete.

    Raises ValueError when the message claims more than `limit` bytes: whatever wrote it is not
    speaking this protocol, and waiting for the rest could wait for ever.
    """
    if len(buffer) < _LENGTH.size:
        return None
    (size,) = _LENGTH.unpack_from(buffer)
    if size > limit:
        raise ValueError(f"a message of {size} bytes, longer than the {limit} expected at most")
    end = _LENGTH.size + size
    if len(buffer) < end:
        return None
    message = bytes(buffer[_LENGTH.size : end])
    del buffer[:end]
    return message
