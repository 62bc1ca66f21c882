"""Tests of :mod:`protocols.wire`: the explicit (dtype, shape, bytes) payload encoding.

Expected encodings are built by hand with :mod:`struct` from the layout the module documents
(4-byte header: version, dtype code, ndim, element width; one little-endian uint64 per
dimension; little-endian elements).
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from protocols import wire
from protocols.field import prime_field
from protocols.wire import WireFormatError, decode, encode, payload_elements

SHAPES = [(), (0,), (5,), (0, 3), (3, 0), (2, 3, 4), (1, 1, 1, 1), (2, 0, 2)]
DTYPES = [np.uint64, np.int64, np.float64, np.uint8]


def sample(dtype: type, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    n = int(np.prod(shape))
    if dtype is np.uint64:
        flat = rng.integers(0, 1 << 64, size=n, dtype=np.uint64)
    elif dtype is np.int64:
        flat = rng.integers(-(1 << 63), (1 << 63) - 1, size=n, dtype=np.int64)
    elif dtype is np.float64:
        flat = rng.standard_normal(n) * 1e10
    else:
        flat = rng.integers(0, 256, size=n, dtype=np.uint8)
    return flat.reshape(shape)


def by_hand(code: int, width: int, shape: tuple[int, ...], body: bytes) -> bytes:
    return struct.pack("<BBBB", 1, code, len(shape), width) + b"".join(
        struct.pack("<Q", s) for s in shape
    ) + body


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_round_trip_every_dtype_and_shape(dtype: type, shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(len(shape) * 10 + DTYPES.index(dtype))
    a = sample(dtype, shape, rng)
    data = encode(a)
    b = decode(data)
    assert b.dtype == np.dtype(dtype) and b.shape == shape
    assert np.array_equal(a, b)
    itemsize = np.dtype(dtype).itemsize
    assert len(data) == 4 + 8 * len(shape) + itemsize * a.size
    expected_elements = 0 if dtype is np.uint8 else a.size
    assert payload_elements(a) == expected_elements


def test_encoding_matches_the_documented_layout() -> None:
    a = np.array([[1, 2, 3], [4, 5, 2**64 - 1]], dtype=np.uint64)
    body = b"".join(struct.pack("<Q", v) for v in [1, 2, 3, 4, 5, 2**64 - 1])
    assert encode(a) == by_hand(1, 8, (2, 3), body)
    assert encode(np.int64(-2)) == by_hand(2, 8, (), struct.pack("<q", -2))
    assert encode(np.array([0.5, -1.0])) == by_hand(3, 8, (2,), struct.pack("<2d", 0.5, -1.0))
    assert encode(np.frombuffer(b"key", dtype=np.uint8)) == by_hand(4, 1, (3,), b"key")


def test_big_endian_and_non_contiguous_arrays_encode_as_little_endian_values() -> None:
    a = np.arange(12, dtype=">u8").reshape(3, 4)[:, ::2]
    b = decode(encode(a))
    assert b.dtype == np.dtype(np.uint64) and b.tolist() == [[0, 2], [4, 6], [8, 10]]


def test_floats_keep_nan_inf_and_signed_zero() -> None:
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 5e-324])
    b = decode(encode(a))
    assert np.array_equal(a, b, equal_nan=True)
    assert np.signbit(b[3])


@pytest.mark.parametrize(
    ("values", "width"),
    [
        ([0, 1, 2**64 - 1], 16),
        ([2**64, 5], 16),
        ([2**127 - 1, 0, 12345678901234567890123456789], 16),
        ([2**128], 24),
        ([2**521 - 1], 72),
    ],
)
def test_object_big_ints_round_trip_with_fixed_width(values: list[int], width: int) -> None:
    a = np.array(values, dtype=object)
    data = encode(a)
    assert data == by_hand(5, width, (len(values),),
                           b"".join(v.to_bytes(width, "little") for v in values))
    b = decode(data)
    assert b.dtype == object and b.tolist() == values
    assert all(type(v) is int for v in b.tolist())
    assert payload_elements(a) == len(values)


def test_object_width_is_the_given_field_width_whatever_the_values() -> None:
    small, large = np.array([0, 5], dtype=object), np.array([2**64 - 1, 1], dtype=object)
    for values in (small, large):  # GF(2^64 - 59): 8 bytes per element, for any values
        data = encode(values, 8)
        assert data == by_hand(5, 8, (2,), b"".join(int(v).to_bytes(8, "little")
                                                     for v in values))
        assert decode(data).tolist() == values.tolist()
    with pytest.raises(WireFormatError):
        encode(np.array([2**64], dtype=object), 8)  # does not fit the declared width


@pytest.mark.parametrize("shape", [(), (0,), (2, 3), (2, 0, 5)])
def test_object_shapes_round_trip(shape: tuple[int, ...]) -> None:
    n = int(np.prod(shape))
    values = [(2**100 + 7 * i) for i in range(n)]
    a = np.array(values, dtype=object).reshape(shape) if shape else np.array(2**100, dtype=object)
    b = decode(encode(a))
    assert b.shape == shape and b.dtype == object
    assert b.tolist() == a.tolist()


def test_opaque_bytes_count_zero_elements_but_their_bytes() -> None:
    key = np.frombuffer(bytes(range(32)), dtype=np.uint8)
    assert payload_elements(key) == 0
    assert len(encode(key)) == 4 + 8 + 32
    assert payload_elements(np.zeros(32, dtype=np.uint64)) == 32
    assert payload_elements(np.uint64(3)) == 1  # a 0-d array carries one element
    assert payload_elements(np.zeros((0, 4), dtype=np.int64)) == 0


@pytest.mark.parametrize(
    "payload",
    [
        np.array([True, False]),
        np.array([1, 2], dtype=np.int32),
        np.array([1.0], dtype=np.float32),
        np.array(["a"]),
        np.array([1 + 2j]),
        np.array([-1, 5], dtype=object),  # negative big ints have no encoding
        np.array([2**2040], dtype=object),  # wider than 255 bytes
    ],
)
def test_unencodable_payloads_raise(payload: np.ndarray) -> None:
    with pytest.raises(WireFormatError):
        encode(payload)


@pytest.mark.parametrize(
    "payload",
    [np.array([1.5, 2], dtype=object), np.array(["7"], dtype=object),
     np.array([True], dtype=object), np.array([None], dtype=object)],
)
def test_object_payloads_that_are_not_integers_are_refused(payload: np.ndarray) -> None:
    """A float 1.5 must not be silently truncated to 1 on the wire."""
    with pytest.raises(WireFormatError):
        encode(payload)


VALID = encode(np.array([1, 2, 3], dtype=np.uint64))


@pytest.mark.parametrize(
    ("data", "what"),
    [
        (b"", "empty"),
        (b"\x01\x01\x01", "shorter than the header"),
        (VALID[:10], "shape cut short"),
        (VALID[:-1], "one byte missing"),
        (VALID + b"\x00", "one byte too many"),
        (b"\x02" + VALID[1:], "unknown version"),
        (b"\x00" + VALID[1:], "version 0"),
        (VALID[:1] + b"\x09" + VALID[2:], "unknown dtype code"),
        (VALID[:1] + b"\x00" + VALID[2:], "dtype code 0"),
        (VALID[:2] + b"\x02" + VALID[3:], "ndim says 2, shape and body disagree"),
        (VALID[:3] + b"\x04" + VALID[4:], "width 4 for uint64"),
        (by_hand(1, 8, (2**32, 2**32), b""), "shape product overflows 64 bits"),
        (by_hand(1, 8, (2**62, 4), b""), "shape product overflows to 0"),
        (by_hand(1, 8, (2**63,), b"\x00" * 8), "huge shape"),
        (by_hand(5, 8, (2,), b"\x00" * 8), "object body too short"),
        (by_hand(5, 0, (3,), b""), "object width 0"),
        (by_hand(5, 8, (2**32, 2**32), b""), "object shape product overflows"),
        (b"\xff" * 64, "garbage"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_malformed_bytes_raise_wire_format_error(data: bytes, what: str) -> None:
    with pytest.raises(WireFormatError):
        decode(data)


def test_decode_accepts_bytes_bytearray_and_memoryview() -> None:
    for data in (VALID, bytearray(VALID), memoryview(VALID)):
        assert decode(data).tolist() == [1, 2, 3]


@pytest.mark.parametrize("make", [bytes, bytearray], ids=["bytes", "bytearray"])
def test_decoded_arrays_are_read_only_and_never_alias_a_mutable_buffer(make: type) -> None:
    buf = make(VALID)
    a = decode(buf)
    assert not a.flags.writeable  # documented: decode returns a read-only array
    if isinstance(buf, bytearray):
        buf[-8:] = b"\xff" * 8
    assert a.tolist() == [1, 2, 3]


def test_version_constant_is_written_first() -> None:
    assert VALID[0] == wire.VERSION == 1


@settings(max_examples=80, deadline=None, derandomize=True)
@given(
    a=hnp.arrays(
        dtype=st.sampled_from([np.dtype(np.uint64), np.dtype(np.int64), np.dtype(np.float64),
                               np.dtype(np.uint8)]),
        shape=hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4),
    )
)
def test_round_trip_property(a: np.ndarray) -> None:
    b = decode(encode(a))
    assert b.shape == a.shape and b.dtype == a.dtype
    assert np.array_equal(a, b, equal_nan=True)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(values=st.lists(st.integers(min_value=0, max_value=2**300), max_size=6))
def test_object_round_trip_property(values: list[int]) -> None:
    a = np.array(values, dtype=object)
    assert decode(encode(a)).tolist() == values


def _outcome(data: bytes | bytearray, field: Any) -> tuple[Any, ...]:
    """What decode makes of ``data``: the array (dtype, shape, values) or the error's text.

    An object array's bytes are pointers to its Python integers, which two decodes of the same
    bytes need not share; its values are compared instead.
    """
    try:
        arr = decode(data, field)
    except WireFormatError as exc:
        return ("error", str(exc))
    values = arr.tolist() if arr.dtype.hasobject else arr.tobytes()
    return ("array", arr.dtype.str, arr.shape, values, arr.flags.writeable)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    code=st.sampled_from([1, 2, 3, 4, 5, 6, 7]),
    ndim=st.sampled_from([0, 1, 1, 1, 2]),
    width=st.sampled_from([1, 8, 8, 16]),
    length=st.integers(min_value=0, max_value=6),
    extra=st.integers(min_value=-9, max_value=9),
    fill=st.sampled_from([0, 1, (1 << 61) - 2, (1 << 61) - 1, (1 << 63) + 5, (1 << 64) - 1]),
    version=st.sampled_from([1, 1, 1, 2]),
    field_name=st.sampled_from([None, "2^61-1", "2^31-1"]),
)
def test_vector_fast_path_decodes_exactly_as_the_general_path(
    code: int, ndim: int, width: int, length: int, extra: int, fill: int, version: int,
    field_name: str | None,
) -> None:
    """``bytes`` holding a vector take a short path; a ``bytearray`` of the same bytes takes
    the general one. Well-formed or not, in the field or not, both give the same answer."""
    header = struct.pack("<BBBB", version, code, ndim, width)
    shape = struct.pack("<Q", length) * ndim
    body = fill.to_bytes(8, "little") * (length * max(width, 1) // 8 + 1)
    body = body[: max(0, length * width + extra)]
    data = header + shape + body
    field = prime_field(field_name) if field_name else None
    fast, general = _outcome(data, field), _outcome(bytearray(data), field)
    assert fast == general
    if fast[0] == "array":
        assert fast[4] is False  # read-only either way


def test_vector_fast_path_keeps_the_field_check() -> None:
    field = prime_field("2^61-1")
    inside = encode(np.array([0, (1 << 61) - 2], dtype=np.uint64))
    outside = encode(np.array([0, (1 << 61) - 1], dtype=np.uint64))
    assert decode(inside, field).tolist() == [0, (1 << 61) - 2]
    with pytest.raises(WireFormatError, match="not an element of"):
        decode(outside, field)
    small = prime_field("2^31-1")
    with pytest.raises(WireFormatError, match="not an element of"):
        decode(encode(np.array([3, -1], dtype=np.int64)), small)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_decode_again_gives_what_decode_gives_on_an_aligned_buffer(
    dtype: type, shape: tuple[int, ...]
) -> None:
    """A broadcast's further receivers: the same array, read-only, on immutable bytes of its own
    (aligned), not an alias of the first receiver's array."""
    from parties.view import is_immutable

    a = sample(dtype, shape, np.random.default_rng(len(shape)))
    data = encode(a)
    first = decode(data)
    body = wire.body_of(first, data)
    assert body == data[len(data) - a.nbytes :] and type(body) is bytes
    again = wire.decode_again(body, first.shape, first.dtype)
    assert again.dtype == first.dtype and again.shape == first.shape
    assert again.tobytes() == first.tobytes() == a.astype(first.dtype).tobytes()
    assert not again.flags.writeable and is_immutable(again)
    assert again.flags.aligned
    assert wire.decode_again(body, first.shape, first.dtype) is not again


def test_body_of_refuses_payloads_that_are_not_views_of_the_bytes() -> None:
    data = encode(np.array([1, 2], dtype=object))
    assert wire.body_of(decode(data), data) is None  # object payloads are built, not viewed
    numbers = encode(np.arange(3, dtype=np.uint64))
    assert wire.body_of(decode(numbers), encode(np.arange(3, dtype=np.uint64))) is None
    assert wire.body_of(decode(bytearray(numbers)), numbers) is None


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_another_array_is_an_equal_array_object_of_its_own(
    dtype: type, shape: tuple[int, ...]
) -> None:
    from parties.view import is_immutable

    a = sample(dtype, shape, np.random.default_rng(7))
    for data in (encode(a), bytearray(encode(a))):
        first = decode(data)
        other = wire.another_array(first)
        assert other is not None and other is not first and other.base is not first
        assert other.dtype == first.dtype and other.shape == first.shape
        assert other.tobytes() == first.tobytes() and is_immutable(other)
        other.shape = (other.size,)  # in place, on the copy only
        assert first.shape == shape
    assert wire.another_array(decode(encode(np.array([5], dtype=object)))) is None


@pytest.mark.parametrize("arr", [
    np.arange(7, dtype=np.uint64), np.arange(12, dtype=np.int64).reshape(3, 4),
    np.linspace(-1.0, 1.0, 5), np.zeros(0, dtype=np.uint8), np.ones((2, 3)).T,
])
def test_encoded_head_then_elements_is_the_encoding(arr):
    # a transport that writes head and elements into its own buffer sends encode()'s bytes
    head, dtype = wire.encoded_head(arr)
    assert head + np.ascontiguousarray(arr, dtype=dtype).tobytes() == wire.encode(arr)


def test_encoded_head_refuses_object_payloads():
    with pytest.raises(wire.WireFormatError, match="fixed-width"):
        wire.encoded_head(np.array([1, 2], dtype=object))


@pytest.mark.parametrize("payload", [np.arange(7, dtype=np.uint64), np.arange(6.0).reshape(2, 3),
                                     np.arange(5, dtype=np.uint8)])
def test_a_read_only_view_of_bytes_decodes_without_a_copy(payload: np.ndarray) -> None:
    """A transport's received storage: bytes with something before and after the encoding.
    The decoded array views those bytes (no copy: its memory is theirs), cannot be made
    writeable, and another array of it views them too."""
    encoded = wire.encode(payload)
    storage = bytes(5) + encoded + bytes(16)
    view = memoryview(storage)[5:5 + len(encoded)]
    got = wire.decode(view)
    assert np.array_equal(got, payload) and got.shape == payload.shape
    assert got.__array_interface__["data"][0] == (
        np.frombuffer(storage, np.uint8).__array_interface__["data"][0] + 5 + len(encoded)
        - payload.nbytes)
    with pytest.raises(ValueError):
        got.flags.writeable = True
    other = wire.another_array(got)
    assert other is not None and other is not got and np.array_equal(other, payload)
    assert other.__array_interface__["data"][0] == got.__array_interface__["data"][0]
    # a writable buffer's view is copied: the array must not change with the buffer
    writable = bytearray(encoded)
    copied = wire.decode(memoryview(writable))
    writable[-1] ^= 0xFF
    assert np.array_equal(copied, payload)
