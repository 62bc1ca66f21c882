"""The wire format of payloads: explicit (dtype, shape, bytes), never pickled.

A payload is a numpy array. Its encoding is a fixed 4-byte header — format version, dtype
code, number of dimensions, element width — followed by the shape (one little-endian uint64
per dimension) and the elements in little-endian order. Field elements wider than 64 bits
(``object`` arrays of Python ints, e.g. GF(2^127 − 1)) are written with a fixed width of
``width`` bytes each — the field's element size, or 16 for values below 2^128 — so that the
length of a message does not depend on the values it carries. Raw ``uint8`` arrays are
*opaque bytes* (keys, ciphertexts) and count as
zero elements; every other dtype counts one element per entry. Elements of GF(2^127 − 1) in the
MPC engine's representation (records of two little-endian uint64 limbs, dtype code 6) are
written as their 16 bytes and count one element each.

The ledger counts ``payload_elements`` and the length of this encoding (plus the sealing
overhead when the channel is sealed).
"""

from __future__ import annotations

import math
import numbers
import struct

import numpy as np

from protocols.errors import MpcsimError

VERSION = 1

_DTYPES: dict[int, np.dtype] = {
    1: np.dtype("<u8"),
    2: np.dtype("<i8"),
    3: np.dtype("<f8"),
    4: np.dtype("u1"),
    6: np.dtype([("lo", "<u8"), ("hi", "<u8")]),  # GF(2^127 − 1) records (protocols.mersenne127)
}
_NATIVE: dict[int, np.dtype] = {code: dtype.newbyteorder("=") for code, dtype in _DTYPES.items()}
_CODES: dict[np.dtype, int] = {
    **{dtype: code for code, dtype in _DTYPES.items()},
    **{dtype.newbyteorder(">"): code for code, dtype in _DTYPES.items() if code != 4},
    np.dtype(object): 5,
}
_HEADER = struct.Struct("<BBBB")


class WireFormatError(MpcsimError):
    """A payload cannot be encoded, or received bytes are not a valid payload."""


def payload_elements(payload: np.ndarray) -> int:
    """Number of elements a payload carries (opaque ``uint8`` bytes count zero)."""
    return 0 if payload.dtype == np.uint8 else int(payload.size)


def encode(payload: np.ndarray, width: int | None = None) -> bytes:
    """Serialise an array to bytes.

    ``width`` is the fixed byte width of integers in an ``object`` payload — the field's
    element size, so that a message's length does not depend on the values it carries. Without
    it, 16 bytes for values below 2^128 and whole 8-byte words above.
    """
    arr = np.asarray(payload)
    code = _CODES.get(arr.dtype)
    if code is None:
        raise WireFormatError(f"payload dtype {arr.dtype} has no wire encoding")
    if arr.ndim > 255:
        raise WireFormatError("payload has too many dimensions")
    shape = struct.pack(f"<{arr.ndim}Q", *arr.shape)
    if code == 5:
        raw = arr.ravel().tolist()
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool | np.bool_)
                   for v in raw):
            raise WireFormatError("object payloads must hold integers (field elements)")
        values = [int(v) for v in raw]
        if any(v < 0 for v in values):
            raise WireFormatError("object payloads must hold non-negative integers")
        needed = (max(values, default=0).bit_length() + 7) // 8
        if width is None:
            width = max(16, (needed + 7) // 8 * 8)
        elif not 1 <= width <= 255 or needed > width:
            raise WireFormatError(f"object payload elements need {needed} bytes, width is {width}")
        if width > 255:
            raise WireFormatError("integer payload elements wider than 255 bytes")
        body = b"".join(v.to_bytes(width, "little") for v in values)
        return _HEADER.pack(VERSION, code, arr.ndim, width) + shape + body
    dtype = _DTYPES[code]
    body = np.ascontiguousarray(arr, dtype=dtype).tobytes()
    return _HEADER.pack(VERSION, code, arr.ndim, dtype.itemsize) + shape + body


def decode(data: bytes | bytearray | memoryview) -> np.ndarray:
    """Parse bytes produced by :func:`encode` back into a (read-only) array."""
    buf = memoryview(data)
    if len(buf) < _HEADER.size:
        raise WireFormatError("payload shorter than its header")
    version, code, ndim, width = _HEADER.unpack_from(buf, 0)
    if version != VERSION:
        raise WireFormatError(f"payload wire version {version}, expected {VERSION}")
    offset = _HEADER.size + 8 * ndim
    if len(buf) < offset:
        raise WireFormatError("payload shorter than its shape")
    shape = struct.unpack_from(f"<{ndim}Q", buf, _HEADER.size)
    count = math.prod(shape)  # exact: an int64 product could wrap (even to 0)
    if code == 5:
        if width == 0 or len(buf) != offset + count * width:
            raise WireFormatError("payload length does not match its shape")
        raw = bytes(buf[offset:])
        values = [
            int.from_bytes(raw[i * width : (i + 1) * width], "little") for i in range(count)
        ]
        return np.array(values, dtype=object).reshape(shape)
    dtype = _NATIVE.get(code)
    if dtype is None:
        raise WireFormatError(f"unknown payload dtype code {code}")
    if width != dtype.itemsize:
        raise WireFormatError(f"payload element width {width}, expected {dtype.itemsize}")
    if len(buf) != offset + count * dtype.itemsize:
        raise WireFormatError("payload length does not match its shape")
    arr = np.frombuffer(buf, dtype=_DTYPES[code], count=count, offset=offset)
    if _DTYPES[code] != dtype:  # big-endian host: convert once
        arr = arr.astype(dtype)
    elif not buf.readonly:  # never alias a buffer the caller may still change
        arr = arr.copy()
        arr.flags.writeable = False
    return arr.reshape(shape)
