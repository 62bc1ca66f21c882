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
from typing import TYPE_CHECKING

import numpy as np

from protocols.errors import MpcsimError

if TYPE_CHECKING:
    from protocols.field import PrimeField

VERSION = 1
MAX_NDIM = 64
"""Most dimensions a payload may have (numpy's own limit)."""

_OBJECT = 5
_DIM_LIMIT = 1 << 63

_DTYPES: dict[int, np.dtype] = {
    1: np.dtype("<u8"),
    2: np.dtype("<i8"),
    3: np.dtype("<f8"),
    4: np.dtype("u1"),
    6: np.dtype([("lo", "<u8"), ("hi", "<u8")]),  # GF(2^127 − 1) records (field.mersenne127)
}
_NATIVE: dict[int, np.dtype] = {code: dtype.newbyteorder("=") for code, dtype in _DTYPES.items()}
_CODES: dict[np.dtype, int] = {
    **{dtype: code for code, dtype in _DTYPES.items()},
    **{dtype.newbyteorder(">"): code for code, dtype in _DTYPES.items() if code != 4},
    np.dtype(object): _OBJECT,
}
_HEADER = struct.Struct("<BBBB")
_VECTOR = struct.Struct("<BBBBQ")  # the header of a one-dimensional payload, with its length
_VECTOR_DTYPES: dict[tuple[int, int, int, int], np.dtype] = {
    (VERSION, code, 1, dtype.itemsize): dtype
    for code, dtype in _DTYPES.items() if dtype == _NATIVE[code]
}
"""Header → dtype of the vectors :func:`decode` reads without its general path (numeric
dtypes already in the host's byte order)."""
_VECTOR_CODES: dict[np.dtype, tuple[int, np.dtype]] = {
    dtype: (code, dtype) for (_, code, _, _), dtype in _VECTOR_DTYPES.items()
}
"""A native fixed-width dtype's code, and the wire dtype (itself): :func:`encoded_head`'s
fast path."""


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
    if arr.ndim > MAX_NDIM:
        raise WireFormatError(f"payload has {arr.ndim} dimensions; at most {MAX_NDIM}")
    shape = struct.pack(f"<{arr.ndim}Q", *arr.shape)
    if code == _OBJECT:
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
    head, dtype = encoded_head(arr)
    body = np.ascontiguousarray(arr, dtype=dtype)  # joined from its buffer: one copy, not two
    return b"".join((head, body))


def encoded_head(payload: np.ndarray) -> tuple[bytes, np.dtype]:
    """What :func:`encode` writes before a numeric payload's elements, and their dtype.

    ``encode(payload) == head + payload.astype(dtype).tobytes()``: a transport may write the
    encoding straight into its own buffer (one copy of the elements). Raises
    :class:`WireFormatError` for a dtype without a fixed-width encoding (``object``) or too
    many dimensions.
    """
    arr = np.asarray(payload)
    if arr.ndim == 1:  # a vector of a native dtype, the common case: one pack
        vector = _VECTOR_CODES.get(arr.dtype)
        if vector is not None:
            return _VECTOR.pack(VERSION, vector[0], 1, vector[1].itemsize, arr.shape[0]), \
                vector[1]
    code = _CODES.get(arr.dtype)
    if code is None:
        raise WireFormatError(f"payload dtype {arr.dtype} has no wire encoding")
    if code == _OBJECT:
        raise WireFormatError(f"payload dtype {arr.dtype} has no fixed-width wire encoding")
    if arr.ndim > MAX_NDIM:
        raise WireFormatError(f"payload has {arr.ndim} dimensions; at most {MAX_NDIM}")
    dtype = _DTYPES[code]
    shape = struct.pack(f"<{arr.ndim}Q", *arr.shape)
    return _HEADER.pack(VERSION, code, arr.ndim, dtype.itemsize) + shape, dtype


def decode(data: bytes | bytearray | memoryview, field: PrimeField | None = None) -> np.ndarray:
    """Parse bytes produced by :func:`encode` back into a read-only array.

    Received bytes are hostile until proven otherwise: every header field is checked before
    anything is allocated, and whatever is wrong ends in :class:`WireFormatError` naming the
    problem — never in another exception type, and never in an accepted wrong value.

    Parameters
    ----------
    data : bytes-like
        One encoded payload.
    field : PrimeField, optional
        The run's field. When given, a payload of the field's element dtype (``uint64`` for
        2^61 − 1, ``int64`` below 2^31) and any ``object`` payload holds field elements,
        each of which must lie in [0, p).

    Returns
    -------
    numpy.ndarray
        The payload, read-only. A numeric array's memory is an immutable ``bytes`` object, so
        it cannot be made writeable again.

    Raises
    ------
    WireFormatError
        On a short or over-long buffer, an unknown version or dtype code, more than
        :data:`MAX_NDIM` dimensions, a dimension of 2^63 or more, an element width that does
        not match the dtype, or a field element outside [0, p).
    """
    if (type(data) is bytes or (type(data) is memoryview and data.format == "B"
                                and _views_bytes(data))) and len(data) >= _VECTOR.size:
        # the common case — a vector of numbers in an immutable buffer (or a read-only byte
        # view of one) — in a few steps; anything unusual (or wrong) takes the general path,
        # which says what is wrong
        version, code, ndim, width, count = _VECTOR.unpack_from(data)
        dtype = _VECTOR_DTYPES.get((version, code, ndim, width))
        if dtype is not None and len(data) == _VECTOR.size + count * width:
            arr = np.frombuffer(data, dtype=dtype, count=count, offset=_VECTOR.size)
            if field is not None and count and dtype == field.dtype:
                _check_in_field(arr, field)
            return arr
    if not isinstance(data, bytes | bytearray | memoryview):
        raise WireFormatError(f"payload must be bytes, got {type(data).__name__}")
    try:
        buf = memoryview(data).cast("B")
    except TypeError as exc:
        raise WireFormatError(f"payload is not a contiguous byte buffer: {exc}") from None
    if len(buf) < _HEADER.size:
        raise WireFormatError(
            f"payload of {len(buf)} bytes is shorter than its {_HEADER.size}-byte header"
        )
    version, code, ndim, width = _HEADER.unpack_from(buf, 0)
    if version != VERSION:
        raise WireFormatError(f"payload wire version {version}, expected {VERSION}")
    if code not in _NATIVE and code != _OBJECT:
        raise WireFormatError(f"unknown payload dtype code {code}; known: 1 to {_OBJECT}")
    if ndim > MAX_NDIM:
        raise WireFormatError(f"payload has {ndim} dimensions; at most {MAX_NDIM} are allowed")
    offset = _HEADER.size + 8 * ndim
    if len(buf) < offset:
        raise WireFormatError(
            f"payload of {len(buf)} bytes is shorter than its {ndim}-dimensional shape"
        )
    shape = struct.unpack_from(f"<{ndim}Q", buf, _HEADER.size)
    itemsize = _NATIVE[code].itemsize if code in _NATIVE else 8
    if code == _OBJECT:
        if width == 0:
            raise WireFormatError("integer payload element width is 0; expected 1 to 255")
    elif width != itemsize:
        raise WireFormatError(f"payload element width {width}, expected {itemsize}")
    _check_shape(shape, itemsize)
    count = math.prod(shape)  # exact: an int64 product could wrap (even to 0)
    if len(buf) != offset + count * width:
        raise WireFormatError(
            f"payload of {len(buf)} bytes does not match its shape {shape}: expected "
            f"{offset + count * width} bytes"
        )
    if code == _OBJECT:
        raw = bytes(buf[offset:])
        values = [
            int.from_bytes(raw[i * width : (i + 1) * width], "little") for i in range(count)
        ]
        if field is not None and values and max(values) >= field.p:
            raise WireFormatError(_out_of_field(max(values), field))
        arr = np.empty(count, dtype=object)
        arr[:] = values
        arr = arr.reshape(shape)
        arr.flags.writeable = False
        return arr
    # The array's memory is an immutable bytes object (``data`` itself, a read-only view of
    # one — a transport's receive buffer — or a copy of a buffer the caller may still change),
    # so it can never be made writeable.
    if isinstance(data, bytes):
        arr = np.frombuffer(data, dtype=_DTYPES[code], count=count, offset=offset)
    elif _views_bytes(buf):
        arr = np.frombuffer(buf, dtype=_DTYPES[code], count=count, offset=offset)
    else:
        arr = np.frombuffer(bytes(buf[offset:]), dtype=_DTYPES[code], count=count)
    if _DTYPES[code] != _NATIVE[code]:  # big-endian host: convert once, then freeze
        arr = np.frombuffer(arr.astype(_NATIVE[code]).tobytes(), dtype=_NATIVE[code])
    if field is not None and count and arr.dtype == field.dtype:
        _check_in_field(arr, field)
    return arr.reshape(shape)


def _views_bytes(buf: memoryview) -> bool:
    """Whether ``buf`` is a read-only view of an immutable ``bytes`` object."""
    return buf.readonly and type(buf.obj) is bytes


def _check_in_field(arr: np.ndarray, field: PrimeField) -> None:
    """Refuse a numeric payload holding a value outside [0, p)."""
    high = int(np.maximum.reduce(arr))
    if high >= field.p:
        raise WireFormatError(_out_of_field(high, field))
    if arr.dtype.kind == "i" and (low := int(np.minimum.reduce(arr))) < 0:
        raise WireFormatError(_out_of_field(low, field))


def body_of(payload: np.ndarray, data: bytes) -> bytes | None:
    """The elements of ``payload`` — what :func:`decode` returned for ``data`` — as bytes.

    A copy of the end of ``data`` in a buffer of its own, where 8-byte elements are aligned
    (in ``data`` they follow a 12-byte header, and numpy is slower on misaligned arrays);
    None when ``payload`` is not a view of ``data`` (``object`` payloads; big-endian hosts).
    :func:`decode_again` makes arrays of it without repeating the checks.
    """
    base: object = payload
    while isinstance(base, np.ndarray):
        base = base.base
    if base is not data or type(data) is not bytes:
        return None
    return data[len(data) - payload.nbytes :]


def decode_again(body: bytes, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A new read-only array of ``shape`` and ``dtype`` over ``body`` (:func:`body_of`).

    For a payload delivered to many receivers (a broadcast's one encoding): the first decode
    checks it, and each further receiver gets its own array object over the same immutable
    bytes.
    """
    arr = np.frombuffer(body, dtype=dtype)
    return arr if len(shape) == 1 else arr.reshape(shape)


def another_array(payload: np.ndarray) -> np.ndarray | None:
    """Another array object of a decoded numeric payload, over the same immutable bytes.

    Changing one array's shape, dtype or strides in place (``a.shape = ...`` works on any
    array) leaves the other as it was; their memory can change neither way. None when
    ``payload`` views neither a ``bytes`` object nor a read-only view of one (then copy it).
    """
    base: object = payload
    while isinstance(base, np.ndarray):
        base = base.base
    if type(base) is not bytes and not (type(base) is memoryview and _views_bytes(base)):
        return None
    if not payload.flags.c_contiguous:
        return None
    nbytes = payload.nbytes
    if nbytes == len(base) and payload.ndim == 1:  # the whole buffer (decode_again's arrays)
        return np.frombuffer(base, payload.dtype)
    # positional arguments: numpy parses keywords measurably slower, once per message
    arr = np.frombuffer(base, payload.dtype, payload.size, len(base) - nbytes)
    return arr if payload.ndim == 1 else arr.reshape(payload.shape)


def _check_shape(shape: tuple[int, ...], itemsize: int) -> None:
    """Refuse dimensions numpy cannot represent, before any allocation."""
    for axis, dim in enumerate(shape):
        if dim >= _DIM_LIMIT:
            raise WireFormatError(
                f"payload dimension {axis} is {dim}; dimensions must be below 2^63"
            )
    nonzero = math.prod(dim for dim in shape if dim)
    if nonzero * itemsize >= _DIM_LIMIT:  # numpy refuses such shapes even with a zero dim
        raise WireFormatError(f"payload shape {shape} is too large for an array")


def _out_of_field(value: int, field: PrimeField) -> str:
    return (
        f"payload holds {value}, which is not an element of {field.name}: field elements "
        f"lie in [0, {field.p})"
    )
