"""Tests of :class:`protocols.crypto.channel.SealedChannel`: the bytes and the refusals of the
reference functions :func:`~protocols.crypto.sealing.seal_message` and
:func:`~protocols.crypto.sealing.open_message`, message for message.

Every expected value comes from the reference functions (the path the drivers took before the
channel object) or from pycryptodome's AES-GCM, never from the channel object itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from Crypto.Cipher import AES
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.crypto.channel import EncodedHeader, SealedChannel, encode_header
from protocols.crypto.sealing import (
    NONCE_BYTES,
    SEAL_OVERHEAD_BYTES,
    associated_data,
    message_nonce,
    open_message,
    seal_message,
)
from protocols.errors import AuthenticationError, InputError

PARTY = st.integers(0, (1 << 24) - 1)
SEQUENCE = st.integers(0, (1 << 48) - 1)
KEY = st.binary(min_size=32, max_size=32)
FIELD = st.one_of(st.integers(0, (1 << 64) - 1), st.text(max_size=12))
HEADER = st.lists(FIELD, max_size=5).map(tuple)
# sizes around the AES block, the sizes the protocols send (16 KB: PD-NMF's d = 2001) and
# sizes above the C library's mmap threshold (128 KiB)
SIZE = st.one_of(st.sampled_from([0, 1, 15, 16, 17, 255, 4096, 16 * 1024 + 12, 65535, 65536,
                                  (1 << 17) + 1, (1 << 20) + 3]),
                 st.integers(0, 1 << 17))


def plaintext_of(size: int, salt: int) -> bytes:
    return bytes((i * 131 + salt) & 0xFF for i in range(size))


def outcome(fn: Callable[[], Any]) -> tuple[str, Any]:
    """What ``fn()`` returned, or the type and message of what it raised."""
    try:
        return "value", fn()
    except (AuthenticationError, InputError) as exc:
        return type(exc).__name__, str(exc)


@settings(max_examples=150, deadline=None)
@given(key=KEY, sender=PARTY, receiver=PARTY, sequence=SEQUENCE, header=HEADER, size=SIZE,
       encoded=st.booleans())
def test_a_channel_seals_the_bytes_of_seal_message(
    key: bytes, sender: int, receiver: int, sequence: int, header: tuple, size: int,
    encoded: bool,
) -> None:
    plaintext = plaintext_of(size, sequence)
    channel = SealedChannel(key, sender, receiver)
    bound = encode_header(header) if encoded else header
    sealed = channel.seal(sequence, plaintext, bound)
    reference = seal_message(key, sender, receiver, sequence, plaintext, header)
    assert type(sealed) is bytes and sealed == reference
    # and independently of the project's code: pycryptodome's GCM over the documented layout
    nonce = sealed[:NONCE_BYTES]
    assert nonce == (sender.to_bytes(3, "big") + receiver.to_bytes(3, "big")
                     + sequence.to_bytes(6, "big"))
    gcm = AES.new(key, AES.MODE_GCM, nonce=nonce, mac_len=16)
    gcm.update(associated_data(sender, receiver, sequence, *header))
    body, tag = gcm.encrypt_and_digest(plaintext)
    assert sealed[NONCE_BYTES:] == body + tag
    assert len(sealed) == size + SEAL_OVERHEAD_BYTES
    # sealed into a buffer: the same bytes, nothing written around them
    room = bytearray(len(reference) + 6)
    channel.seal_into(sequence, plaintext, memoryview(room)[3:-3], bound)
    assert bytes(room[3:-3]) == reference and room[:3] == room[-3:] == bytes(3)
    # each opens the other's message
    assert channel.open(sequence, reference, bound) == plaintext
    assert channel.open(sequence, sealed, bound) == plaintext
    assert open_message(key, sender, receiver, sequence, sealed, header) == plaintext


def test_an_encoded_header_is_the_associated_data_after_its_count() -> None:
    header = ("secure_sum", 7, "column_sum", 2)
    encoded = encode_header(header)
    assert isinstance(encoded, EncodedHeader) and encoded.n_fields == 4
    full = associated_data(1, 2, 3, *header)
    assert full.endswith(encoded.raw)
    assert len(full) - len(encoded.raw) == len(associated_data(1, 2, 3))


TAMPERS = ["none", "wrong sequence", "earlier sequence", "other channel's nonce",
           "reverse direction", "tampered byte", "wrong header", "header dropped",
           "header extended", "too short", "nonce only", "empty", "truncated", "extended",
           "wrong key", "bytearray", "memoryview", "not bytes", "sequence too large",
           "negative sequence", "bool header field", "negative header field"]


@settings(max_examples=200, deadline=None)
@given(key=KEY, sender=PARTY, receiver=PARTY, sequence=st.integers(0, (1 << 48) - 2),
       header=HEADER, size=st.integers(0, 3000), tamper=st.sampled_from(TAMPERS),
       where=st.integers(0, 1 << 30), other=PARTY)
def test_a_channel_refuses_what_open_message_refuses_with_its_message(
    key: bytes, sender: int, receiver: int, sequence: int, header: tuple, size: int,
    tamper: str, where: int, other: int,
) -> None:
    plaintext = plaintext_of(size, 7)
    sealed: Any = seal_message(key, sender, receiver, sequence, plaintext, header)
    expect_sequence, expect_header, open_key = sequence, header, key
    if tamper == "wrong sequence":
        expect_sequence = sequence + 1
    elif tamper == "earlier sequence":
        sealed = seal_message(key, sender, receiver, sequence + 1, plaintext, header)
    elif tamper == "other channel's nonce":
        if other == sender:
            other = (other + 1) % (1 << 24)
        sealed = seal_message(key, other, receiver, sequence, plaintext, header)
    elif tamper == "reverse direction":
        back = sender if sender != receiver else sender ^ 1  # a channel to itself has none
        sealed = seal_message(key, receiver, back, sequence, plaintext, header)
    elif tamper == "tampered byte":
        flipped = bytearray(sealed)
        flipped[where % len(flipped)] ^= 1 << (where % 8)
        sealed = bytes(flipped)
    elif tamper == "wrong header":
        expect_header = (*header[:-1], "x") if header else ("x",)
        if expect_header == header:
            expect_header = (*header, 0)
    elif tamper == "header dropped":
        expect_header = header[:-1] if header else (0,)
    elif tamper == "header extended":
        expect_header = (*header, 0)
    elif tamper == "too short":
        sealed = sealed[:where % SEAL_OVERHEAD_BYTES]
    elif tamper == "nonce only":
        sealed = sealed[:NONCE_BYTES]
    elif tamper == "empty":
        sealed = b""
    elif tamper == "truncated":
        sealed = sealed[:-1]
    elif tamper == "extended":
        sealed = sealed + b"\x00"
    elif tamper == "wrong key":
        open_key = bytes([key[0] ^ 1]) + key[1:]
    elif tamper == "bytearray":
        sealed = bytearray(sealed)
    elif tamper == "memoryview":
        sealed = memoryview(b"pad" + sealed)[3:]
    elif tamper == "not bytes":
        sealed = sealed.hex()
    elif tamper == "sequence too large":
        expect_sequence = 1 << 48
    elif tamper == "negative sequence":
        expect_sequence = -1
    elif tamper == "bool header field":
        expect_header = (*header, True)
    elif tamper == "negative header field":
        expect_header = (-1, *header)
    reference = outcome(lambda: open_message(open_key, sender, receiver, expect_sequence,
                                             sealed, expect_header))
    channel = SealedChannel(open_key, sender, receiver)
    assert outcome(lambda: channel.open(expect_sequence, sealed, expect_header)) == reference
    # open_into: the same refusals; on success the plaintext, written where it was asked
    room = bytearray(max(0, len(sealed) - SEAL_OVERHEAD_BYTES) + 5)
    into = memoryview(room)[5:]
    into_outcome = outcome(lambda: channel.open_into(expect_sequence, sealed, into,
                                                     expect_header))
    if reference[0] == "value":
        assert into_outcome == ("value", None) and bytes(into) == plaintext
        assert bytes(room[:5]) == bytes(5)
    else:
        assert into_outcome == reference
    # open_in_place: the same refusals for bytes it may write; on success the plaintext over
    # the ciphertext, the nonce and the tag as they were
    if isinstance(sealed, bytes | bytearray | memoryview):
        writable = bytearray(b"pad" + bytes(sealed))
        in_place = outcome(lambda: channel.open_in_place(expect_sequence,
                                                          memoryview(writable)[3:],
                                                          expect_header))
        if reference[0] == "value":
            assert in_place[0] == "value" and bytes(in_place[1]) == plaintext
            n = len(plaintext)
            assert bytes(writable[3 + NONCE_BYTES:3 + NONCE_BYTES + n]) == plaintext
            assert bytes(writable[:3 + NONCE_BYTES]) == b"pad" + bytes(sealed)[:NONCE_BYTES]
            assert bytes(writable[3 + NONCE_BYTES + n:]) == bytes(sealed)[NONCE_BYTES + n:]
        else:
            assert in_place == reference
    if tamper not in TAMPERS[-4:]:  # the header encoded once, as a driver does
        encoded = encode_header(expect_header)
        assert outcome(lambda: channel.open(expect_sequence, sealed, encoded)) == reference
    if tamper in ("none", "bytearray", "memoryview"):
        assert reference == ("value", plaintext)
    elif tamper == "not bytes" or tamper in TAMPERS[-4:]:
        assert reference[0] == "InputError"
    else:
        assert reference[0] == "AuthenticationError"
        assert f"from party {sender} to party {receiver}" in reference[1]


@pytest.mark.parametrize("call", [
    lambda k, s, r: (k, s, r, 1 << 48, b"x", ()),
    lambda k, s, r: (k, s, r, -1, b"x", ()),
    lambda k, s, r: (k, s, r, True, b"x", ()),
    lambda k, s, r: (k, s, r, 3, "text", ()),
    lambda k, s, r: (k, s, r, 3, b"x", (True,)),
    lambda k, s, r: (k, s, r, 3, b"x", (1 << 64,)),
    lambda k, s, r: (k, s, r, 3, b"x", (1.5,)),
    lambda k, s, r: (k[:31], s, r, 3, b"x", ()),
    lambda k, s, r: ("k" * 32, s, r, 3, b"x", ()),
    lambda k, s, r: (k, 1 << 24, r, 3, b"x", ()),
    lambda k, s, r: (k, s, -2, 3, b"x", ()),
])
def test_a_channel_refuses_bad_arguments_as_seal_message_does(call: Callable) -> None:
    key, sender, receiver, sequence, plaintext, header = call(bytes(range(32)), 4, 9)
    reference = outcome(lambda: seal_message(key, sender, receiver, sequence, plaintext,
                                             header))
    assert reference[0] == "InputError"
    assert outcome(lambda: SealedChannel(key, sender, receiver).seal(
        sequence, plaintext, header)) == reference
    if type(plaintext) is bytes and len(key) == 32 and type(key) is bytes and (
            sender < 1 << 24 and receiver >= 0):
        room = bytearray(len(plaintext) + SEAL_OVERHEAD_BYTES)
        assert outcome(lambda: SealedChannel(key, sender, receiver).seal_into(
            sequence, plaintext, room, header)) == reference


def test_seal_into_wants_a_buffer_of_the_sealed_size() -> None:
    channel = SealedChannel(bytes(range(32)), 1, 2)
    for wrong in (bytearray(6 + SEAL_OVERHEAD_BYTES - 1), bytearray(6 + SEAL_OVERHEAD_BYTES + 1)):
        with pytest.raises(InputError, match=f"into must be {6 + SEAL_OVERHEAD_BYTES} bytes"):
            channel.seal_into(0, b"abcdef", wrong, ("h", 1))


def test_open_into_wants_a_buffer_of_the_plaintexts_size() -> None:
    key = bytes(range(32))
    sealed = seal_message(key, 1, 2, 0, b"abcdef", ("h", 1))
    channel = SealedChannel(key, 1, 2)
    for wrong in (bytearray(5), bytearray(7)):
        with pytest.raises(InputError, match="into must be 6 bytes"):
            channel.open_into(0, sealed, wrong, ("h", 1))
    right = bytearray(6)
    channel.open_into(0, sealed, right, encode_header(("h", 1)))
    assert right == b"abcdef"


@settings(max_examples=80, deadline=None)
@given(key=KEY, sender=PARTY, receiver=PARTY, sequence=SEQUENCE, header=HEADER, size=SIZE)
def test_seal_in_place_writes_the_bytes_of_seal_message(
    key: bytes, sender: int, receiver: int, sequence: int, header: tuple, size: int,
) -> None:
    plaintext = plaintext_of(size, 3)
    room = bytearray(b"pad" + bytes(NONCE_BYTES) + plaintext + bytes(16) + b"end")
    SealedChannel(key, sender, receiver).seal_in_place(
        sequence, memoryview(room)[3:len(room) - 3], header)
    expected = seal_message(key, sender, receiver, sequence, plaintext, header)
    assert bytes(room) == b"pad" + expected + b"end"


def test_seal_in_place_wants_room_it_may_write() -> None:
    channel = SealedChannel(bytes(range(32)), 1, 2)
    for refused in (bytes(40), memoryview(bytes(40)), bytearray(SEAL_OVERHEAD_BYTES - 1),
                    memoryview(bytearray(80))[::2]):
        with pytest.raises(InputError, match="writable contiguous buffer"):
            channel.seal_in_place(0, refused, ("h", 1))


def test_open_in_place_wants_bytes_it_may_write() -> None:
    key = bytes(range(32))
    sealed = seal_message(key, 1, 2, 0, b"abcdef", ("h", 1))
    channel = SealedChannel(key, 1, 2)
    for refused in (sealed, memoryview(sealed), memoryview(bytearray(sealed * 2))[::2]):
        with pytest.raises(InputError, match="writable contiguous buffer"):
            channel.open_in_place(0, refused, ("h", 1))
    assert bytes(channel.open_in_place(0, bytearray(sealed), ("h", 1))) == b"abcdef"


def test_a_channel_neither_shows_nor_keeps_its_key() -> None:
    key = bytes(range(100, 132))
    channel = SealedChannel(key, 3, 5)
    assert repr(channel) == "SealedChannel(sender=3, receiver=5)"
    held = [getattr(channel, name) for name in SealedChannel.__slots__]
    assert key not in held and key.hex() not in repr(channel)
    assert not hasattr(channel, "__dict__")


def test_a_channel_seals_a_message_of_every_nonce_counter_width() -> None:
    key = bytes(32)
    channel = SealedChannel(key, (1 << 24) - 1, 0)
    for sequence in (0, 1, 255, 256, (1 << 48) - 1):
        sealed = channel.seal(sequence, b"m", ("p", 0, "s", 1))
        assert sealed[:NONCE_BYTES] == message_nonce((1 << 24) - 1, 0, sequence)
        assert sealed == seal_message(key, (1 << 24) - 1, 0, sequence, b"m", ("p", 0, "s", 1))
