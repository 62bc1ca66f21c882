"""Argument checks shared by the crypto library: bytes, 32-byte keys, counts, stream numbers.

Every public function of :mod:`protocols.crypto` validates where input enters and raises
:class:`~protocols.errors.InputError` naming the argument and the allowed range (DESIGN.md,
"Validation happens where input enters").
"""

from __future__ import annotations

import operator

from protocols.errors import InputError
from protocols.field import PrimeField

KEY_BYTES = 32
"""Length of an AES-256 key in bytes (stream keys, pair keys, sealing keys)."""

MAX_STREAM = (1 << 64) - 1
"""Largest stream number (stream numbers are unsigned 64-bit integers)."""


def as_bytes(value: object, what: str) -> bytes:
    """``value`` as ``bytes`` if it is bytes-like, else InputError naming ``what``."""
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise InputError(f"{what} must be bytes, got {type(value).__name__}")
    return bytes(value)


def as_key(value: object, what: str) -> bytes:
    """``value`` as a 32-byte key, else InputError naming ``what``."""
    if type(value) is bytes and len(value) == KEY_BYTES:  # the common case, checked first
        return value
    key = as_bytes(value, what)
    if len(key) != KEY_BYTES:
        raise InputError(f"{what} must be {KEY_BYTES} bytes (AES-256), got {len(key)}")
    return key


def as_count(value: object, what: str) -> int:
    """``value`` as a non-negative int (not a bool), else InputError naming ``what``."""
    if isinstance(value, bool):
        raise InputError(f"{what} must be an integer, got {value!r}")
    try:
        count = operator.index(value)
    except TypeError:
        raise InputError(f"{what} must be an integer, got {value!r}") from None
    if count < 0:
        raise InputError(f"{what} = {count} must be non-negative")
    return count


def as_stream(value: object) -> int:
    """``value`` as a stream number in [0, 2^64), else InputError."""
    stream = as_count(value, "stream")
    if stream > MAX_STREAM:
        raise InputError(f"stream = {stream} is out of range [0, 2^64 − 1]")
    return stream


def check_field(field: object) -> None:
    """InputError unless ``field`` is a :class:`~protocols.field.PrimeField`."""
    if not isinstance(field, PrimeField):
        raise InputError(f"field must be a PrimeField, got {type(field).__name__}")


def as_id(value: object, what: str, limit: int) -> int:
    """``value`` as an int in [0, ``limit``) (a party id, a counter), else InputError."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise InputError(f"{what} must be an integer, got {value!r}")
    number = value.__index__()
    if not 0 <= number < limit:
        raise InputError(f"{what} = {number} is out of range [0, {limit - 1}]")
    return number
