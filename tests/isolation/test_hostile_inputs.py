"""Hostile inputs: bytes and files an attacker controls end in the package's own errors.

Three doors are attacked with truncated, extended, bit-flipped and random inputs (hypothesis):

* the wire decoder (:func:`protocols.wire.decode`): it accepts exactly the valid encodings —
  anything it accepts re-encodes to the same bytes and holds field elements below p — and
  refuses everything else with :class:`WireFormatError`;
* the channel opener (:func:`protocols.crypto.sealing.open_message`): anything but the sealed
  message itself, under its key, channel, sequence number and header, is an
  :class:`AuthenticationError`;
* the scenario loader (:func:`sim.scenario.load_scenario`): a file or a table is either a
  valid scenario or an :class:`InputError`.

Never another exception type, never a hang (hypothesis' deadline), never a wrong value
accepted. Then the same bytes inside a run: a message that fails, read or not, aborts the
run as its receiver's failure, naming the sender.
"""

from __future__ import annotations

import re
import struct
import tempfile
import tomllib
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from parties.party import Party, site_parties
from protocols import wire
from protocols.context import PartyContext
from protocols.crypto.sealing import (
    NONCE_BYTES,
    SEAL_OVERHEAD_BYTES,
    associated_data,
    open_message,
    seal_message,
)
from protocols.effects import Recv, Send
from protocols.errors import (
    AuthenticationError,
    EncodingError,
    FieldOverflowError,
    InputError,
    ProtocolAbort,
)
from protocols.field import FixedPoint, prime_field
from protocols.secure_sum import secure_sum
from protocols.wire import MAX_NDIM, WireFormatError
from sim.network import Network
from sim.scenario import Scenario, load_scenario
from sim.simulation import Simulation, preshared_keys

FIELDS = {name: prime_field(name) for name in ("2^61-1", "2^31-1", "5", "2^127-1")}
ROOT = Path(__file__).resolve().parents[2]


# -- mutations --------------------------------------------------------------------------------


@st.composite
def mutations(draw: st.DrawFn) -> Callable[[bytes], bytes]:
    """A change to bytes not yet seen: truncate, extend, flip bits, splice, or replace."""
    kind = draw(st.sampled_from(["truncate", "extend", "flip", "splice", "random"]))
    where = draw(st.lists(st.floats(0.0, 1.0, exclude_max=True), min_size=1, max_size=3))
    extra = draw(st.binary(min_size=1, max_size=24))
    randoms = draw(st.binary(max_size=96))

    def apply(data: bytes) -> bytes:
        if kind == "truncate":
            return data[: int(where[0] * len(data))]
        if kind == "extend":
            return data + extra
        if kind == "flip" and data:
            out = bytearray(data)
            for bit in {int(w * 8 * len(data)) for w in where}:
                out[bit // 8] ^= 1 << (bit % 8)
            return bytes(out)
        if kind == "splice":
            at = int(where[0] * (len(data) + 1))
            return data[:at] + extra[:16] + data[at:]
        return randoms[: 2 * len(data) + 8]

    return apply


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` truncated, extended, bit-flipped, spliced or replaced by random bytes."""
    return draw(mutations())(data)


@st.composite
def payloads(draw: st.DrawFn) -> tuple[np.ndarray, str]:
    """A payload of a field's element dtype (or floats, or opaque bytes) and the field."""
    name = draw(st.sampled_from(sorted(FIELDS)))
    field = FIELDS[name]
    shape = tuple(draw(st.lists(st.integers(0, 3), max_size=3)))
    n = int(np.prod(shape))
    kind = draw(st.sampled_from(["field", "float", "bytes"]))
    if kind == "field":
        values = draw(st.lists(st.integers(0, field.p - 1), min_size=n, max_size=n))
        arr = field.elements(np.array(values, dtype=object)).reshape(shape)
    elif kind == "float":
        arr = np.array(draw(st.lists(st.floats(), min_size=n, max_size=n)),
                       dtype=np.float64).reshape(shape)
    else:
        arr = np.frombuffer(draw(st.binary(min_size=n, max_size=n)), dtype=np.uint8).reshape(
            shape)
    return arr, name


def encoded(arr: np.ndarray, field_name: str) -> bytes:
    field = FIELDS[field_name]
    return wire.encode(arr, field.element_bytes if arr.dtype == object else None)


# -- the wire decoder -------------------------------------------------------------------------


def check_decoding(data: bytes, field_name: str) -> None:
    """``decode`` refuses with WireFormatError, or returns exactly what ``data`` encodes."""
    field = FIELDS[field_name]
    try:
        arr = wire.decode(data, field)
    except WireFormatError as exc:
        assert str(exc)
        return
    assert not arr.flags.writeable
    width = data[3] if arr.dtype == object else None
    assert wire.encode(arr, width) == data  # canonical: nothing else decodes
    if arr.dtype == field.dtype or arr.dtype == object:
        assert all(0 <= int(v) < field.p for v in arr.ravel().tolist())


@settings(max_examples=400, deadline=5000, derandomize=True)
@given(st.data())
def test_the_decoder_accepts_exactly_valid_encodings(data: st.DataObject) -> None:
    arr, name = data.draw(payloads())
    raw = encoded(arr, name)
    got = wire.decode(raw, FIELDS[name])
    assert got.dtype == arr.dtype and got.shape == arr.shape
    assert np.array_equal(got, arr, equal_nan=arr.dtype.kind == "f")
    check_decoding(data.draw(mutated(raw)), name)


@settings(max_examples=300, deadline=5000, derandomize=True)
@given(header=st.binary(min_size=4, max_size=4), shape=st.lists(st.integers(0, 2**64 - 1),
                                                                 max_size=5),
       body=st.binary(max_size=64), field_name=st.sampled_from(sorted(FIELDS)))
def test_the_decoder_refuses_forged_headers_cleanly(header: bytes, shape: list[int],
                                                     body: bytes, field_name: str) -> None:
    forged = bytes([1]) + header[1:] if header[0] & 1 else header  # version 1 half the time
    data = forged[:2] + bytes([len(shape)]) + forged[3:] + b"".join(
        struct.pack("<Q", s) for s in shape) + body
    check_decoding(data, field_name)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (bytes([1, 1, MAX_NDIM + 1, 8]) + bytes(8 * (MAX_NDIM + 1)), "dimensions"),
        (bytes([1, 1, 255, 8]), "dimensions"),
        (bytes([1, 1, 2, 8]) + struct.pack("<2Q", 0, 2**63), "below 2\\^63"),
        (bytes([1, 1, 2, 8]) + struct.pack("<2Q", 0, 2**62), "too large"),
        (bytes([1, 5, 3, 8]) + struct.pack("<3Q", 2**40, 0, 2**40), "too large"),
        (bytes([1, 5, 1, 0]) + struct.pack("<Q", 0), "width"),
        (bytes([1, 9, 0, 8]), "unknown payload dtype"),
        (bytes([2, 1, 0, 8]) + bytes(8), "version"),
        (bytes([1, 1, 1, 4]) + struct.pack("<Q", 1) + bytes(4), "width"),
        (bytes([1, 1, 1, 8]) + struct.pack("<Q", 2) + bytes(8), "expected 28 bytes"),
        (bytes([1, 1]), "shorter than its 4-byte header"),
        (bytes([1, 1, 3, 8]) + bytes(8), "shorter than its 3-dimensional shape"),
    ],
)
def test_malformed_headers_are_wire_format_errors(data: bytes, match: str) -> None:
    with pytest.raises(WireFormatError, match=match):
        wire.decode(data)


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_elements_outside_the_field_are_refused(name: str) -> None:
    field = FIELDS[name]
    good = field.elements(np.array([0, 1, field.p - 1], dtype=object))
    data = wire.encode(good, field.element_bytes if good.dtype == object else None)
    assert [int(v) for v in wire.decode(data, field)] == [0, 1, field.p - 1]
    if good.dtype == np.uint64:
        bad = [np.array([field.p], dtype=np.uint64), np.array([2**64 - 1], dtype=np.uint64)]
    elif good.dtype == np.int64:
        bad = [np.array([field.p], dtype=np.int64), np.array([-1], dtype=np.int64)]
    else:
        bad = [np.array([field.p], dtype=object), np.array([2**128 - 1], dtype=object)]
    for arr in bad:
        raw = wire.encode(arr, field.element_bytes if arr.dtype == object else None)
        with pytest.raises(WireFormatError, match=re.escape(f"not an element of {field.name}")):
            wire.decode(raw, field)
        wire.decode(raw)  # without a field the decoder cannot know


def test_the_decoder_takes_only_bytes() -> None:
    for data in ("text", 5, None, np.zeros(3), memoryview(np.zeros((2, 2)).T)):
        with pytest.raises(WireFormatError):
            wire.decode(data)  # type: ignore[arg-type]


# -- the channel opener ----------------------------------------------------------------------

KEY = bytes(range(32))
HEADER = ("secure_sum", 3, "column_sum", 2)


@settings(max_examples=300, deadline=5000, derandomize=True)
@given(plaintext=st.binary(max_size=64), sequence=st.integers(0, 2**48 - 1),
       data=st.data())
def test_the_opener_refuses_every_change(plaintext: bytes, sequence: int,
                                         data: st.DataObject) -> None:
    sealed = seal_message(KEY, 2, 1, sequence, plaintext, HEADER)
    assert len(sealed) == len(plaintext) + SEAL_OVERHEAD_BYTES
    assert open_message(KEY, 2, 1, sequence, sealed, HEADER) == plaintext
    forged = data.draw(mutated(sealed))
    assume(forged != sealed)
    with pytest.raises(AuthenticationError, match="from party 2 to party 1"):
        open_message(KEY, 2, 1, sequence, forged, HEADER)


@settings(max_examples=200, deadline=5000, derandomize=True)
@given(plaintext=st.binary(max_size=32), change=st.sampled_from(
    ["sequence", "sender", "receiver", "key", "protocol", "call", "step", "round"]))
def test_the_opener_binds_channel_number_key_and_header(plaintext: bytes, change: str) -> None:
    sealed = seal_message(KEY, 2, 1, 7, plaintext, HEADER)
    args = {"key": KEY, "sender": 2, "receiver": 1, "sequence": 7}
    header = list(HEADER)
    if change in args:
        args[change] = bytes(32) if change == "key" else args[change] + 1
    else:
        i = ["protocol", "call", "step", "round"].index(change)
        header[i] = header[i] + 1 if isinstance(header[i], int) else header[i] + "x"
    with pytest.raises(AuthenticationError):
        open_message(args["key"], args["sender"], args["receiver"], args["sequence"], sealed,
                     tuple(header))


def test_a_replayed_or_reordered_message_is_refused_by_its_number() -> None:
    first = seal_message(KEY, 0, 1, 0, b"first", HEADER)
    second = seal_message(KEY, 0, 1, 1, b"second", HEADER)
    assert open_message(KEY, 0, 1, 0, first, HEADER) == b"first"
    with pytest.raises(AuthenticationError, match="replayed, reordered or dropped"):
        open_message(KEY, 0, 1, 1, first, HEADER)  # the first again, where #1 is due
    with pytest.raises(AuthenticationError, match="another channel"):
        open_message(KEY, 1, 0, 1, second, HEADER)  # the reverse direction
    assert second[:NONCE_BYTES].endswith((1).to_bytes(6, "big"))  # the number travels


def test_associated_data_is_unambiguous() -> None:
    """The old form "s>r|protocol#call.step" gave one string for two headers."""
    one = ("p#1.q", 2, "s")
    other = ("p", 1, "q#2.s")
    assert f"{one[0]}#{one[1]}.{one[2]}" == f"{other[0]}#{other[1]}.{other[2]}"  # the old bug
    assert associated_data(0, 1, 0, *one) != associated_data(0, 1, 0, *other)
    assert associated_data("ab", "c") != associated_data("a", "bc")
    assert associated_data(1, "2") != associated_data("1", 2)
    sealed = seal_message(KEY, 0, 1, 0, b"x", one)
    with pytest.raises(AuthenticationError):
        open_message(KEY, 0, 1, 0, sealed, other)


# -- pre-shared keys and fixed point at their edges ------------------------------------------


def test_preshared_keys_are_distinct_for_ids_beyond_2_32() -> None:
    """The old packing (lo << 32 | hi) gave pairs (1, 2) and (0, 2^32 + 2) one key."""
    ids = [0, 1, 2, 2**32, 2**32 + 1, 2**32 + 2, 2**40 + 7]
    keys = preshared_keys(5, ids)
    assert len(keys) == len(ids) * (len(ids) - 1) // 2
    material = [k for pair in keys.values() for k in pair]
    assert len(set(material)) == len(material)
    assert keys[(1, 2)] != keys[(0, 2**32 + 2)]
    with pytest.raises(InputError, match="party ids"):
        preshared_keys(5, [0, 2**62])


@pytest.mark.parametrize(
    ("x", "n_summands", "error", "match"),
    [
        ("1.5", 1, EncodingError, "dtype <U3.*float\\(\\)"),
        (["1", "2"], 1, EncodingError, "real numbers"),
        ([1.5, None], 1, EncodingError, "None"),
        (1 + 2j, 1, EncodingError, "complex"),
        ([[1.0], [2.0, 3.0]], 1, EncodingError, "not an array of real numbers"),
        (1.0, 0, InputError, "n_summands = 0"),
        (1.0, -3, InputError, "n_summands = -3"),
        (1.0, 2.5, InputError, "n_summands = 2.5"),
        (10**400, 1, FieldOverflowError, "1.00000e\\+400 exceeds"),
        ([1, -(10**400)], 3, FieldOverflowError, "-1.00000e\\+400 exceeds"),
    ],
)
def test_fixed_point_refuses_what_is_not_a_real_in_range(x: Any, n_summands: Any,
                                                         error: type, match: str) -> None:
    fixed = FixedPoint(prime_field("2^61-1"), 24)
    with pytest.raises(error, match=match):
        fixed.encode(x, n_summands=n_summands)
    with pytest.raises(InputError):
        fixed.bound(0)


# -- the scenario loader ---------------------------------------------------------------------


def check_loading(source: Any) -> None:
    try:
        scenario = load_scenario(source, base_dir=ROOT / "scenarios")
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc).strip()
        return
    assert isinstance(scenario, Scenario)


QUICKSTART = (ROOT / "scenarios" / "quickstart.toml").read_bytes()


@settings(max_examples=150, deadline=5000, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_loader_refuses_hostile_files_with_an_input_error(data: st.DataObject) -> None:
    text = data.draw(mutated(QUICKSTART))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hostile.toml"
        path.write_bytes(text)
        check_loading(path)


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats()
    | st.text(max_size=8) | st.sampled_from(["2^61-1", "equal", "prg", "file", "star"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=6,
)


@settings(max_examples=300, deadline=5000, derandomize=True)
@given(data=st.data())
def test_the_loader_refuses_hostile_values_with_an_input_error(data: st.DataObject) -> None:
    raw = tomllib.loads(QUICKSTART.decode())
    table = data.draw(st.sampled_from(["", "network", "field", "data", "algorithm", "audit"]))
    target = raw if table == "" else (raw["audit"][0] if table == "audit" else raw[table])
    key = data.draw(st.sampled_from([*sorted(target), "unexpected"]))
    target[key] = data.draw(VALUES)
    check_loading(raw)


# -- the same bytes inside a run -------------------------------------------------------------


def talker_listener() -> list[Party]:
    def talker(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("t")
        yield Send(1, np.arange(3, dtype=np.uint64), call, "asked")
        yield Send(1, np.arange(4, dtype=np.uint64), call, "unasked")

    def listener(ctx: PartyContext) -> Generator[Any, Any, Any]:
        return (yield Recv(0, ctx.new_call("t"), "asked"))

    return [Party(0, talker), Party(1, listener)]


@settings(max_examples=60, deadline=5000, derandomize=True)
@given(change=mutations(), step=st.sampled_from(["asked", "unasked"]), sealing=st.booleans())
def test_hostile_bytes_in_a_run_abort_as_the_receivers_failure(
        change: Callable[[bytes], bytes], step: str, sealing: bool) -> None:
    """The network changes one message (read by its receiver or not): a sealed run always
    aborts; an unsealed one aborts unless the bytes are still a valid payload, which the
    model without sealing cannot tell apart. Never another exception escapes the run."""

    def intercept(sender: int, receiver: int, tag: str, raw: bytes) -> bytes:
        return change(raw) if tag.endswith(step) else raw

    sim = Simulation(Network.build(2), seed=1, sealing=sealing,
                     keys="preshared" if sealing else "none", interceptor=intercept)
    original = {"asked": [0, 1, 2], "unasked": [0, 1, 2, 3]}
    try:
        result = sim.run(talker_listener())
    except ProtocolAbort as abort:
        assert abort.party == 1 and "from party 0" in abort.reason
        assert isinstance(abort.__cause__, AuthenticationError | WireFormatError)
        return
    received = {m.step: m.payload.tolist() for m in result.views[1].received}
    if sealing:  # accepted only when the change left the bytes as they were
        assert received == original


def test_an_out_of_field_element_from_a_peer_aborts_naming_both() -> None:
    p = (1 << 61) - 1

    def hostile(ctx: PartyContext) -> Generator[Any, Any, Any]:
        yield Send(1, np.array([p + 5], dtype=np.uint64), ctx.new_call("t"), "x")

    def victim(ctx: PartyContext) -> Generator[Any, Any, Any]:
        return (yield Recv(0, ctx.new_call("t"), "x"))

    with pytest.raises(ProtocolAbort) as info:
        Simulation(Network.build(2), seed=1).run([Party(0, hostile), Party(1, victim)])
    assert info.value.party == 1
    assert "party 1 received from party 0" in info.value.reason
    assert f"{p + 5}, which is not an element of GF({p})" in info.value.reason


def test_an_unread_forged_message_aborts_the_run_instead_of_escaping_it() -> None:
    def forge(sender: int, receiver: int, tag: str, raw: bytes) -> bytes:
        return raw[:-1] + bytes([raw[-1] ^ 1]) if tag.endswith("unasked") else raw

    sim = Simulation(Network.build(2), seed=1, keys="preshared", interceptor=forge)
    with pytest.raises(ProtocolAbort) as info:
        sim.run(talker_listener())
    assert info.value.party == 1
    assert "from party 0 to party 1 failed AES-GCM authentication" in info.value.reason


def test_sealed_secure_sum_survives_an_honest_network_and_counts_the_same_bytes() -> None:
    """Sequence numbers travel inside the 12-byte nonce: the ledger's bytes are unchanged."""
    result = Simulation(Network.build(3), seed=2).run(
        site_parties(lambda ctx, x: secure_sum(ctx, x, "explicit"),
                     [{"x": np.arange(5.0) + i} for i in range(3)]))
    assert result.outputs[0].tolist() == [3.0, 6.0, 9.0, 12.0, 15.0]
    rows = [r for r in result.ledger if r.protocol == "secure_sum"]
    assert {r.bytes for r in rows} == {4 + 8 + 8 * 5 + 28}
