"""Authenticated sealing (AES-256-GCM): every pair's channel for the protocols' messages.

The pair's channel key comes from :func:`protocols.crypto.key_agreement.agree`; this module
seals and opens the messages the protocols exchange under it:

* :func:`seal` / :func:`open_sealed` — AES-256-GCM (NIST SP 800-38D) with a 12-byte nonce and a
  16-byte tag; any change to ciphertext, tag, nonce or associated data (or a wrong key) makes
  :func:`open_sealed` raise :class:`~protocols.errors.AuthenticationError`.
  :func:`message_nonce` builds a nonce unique per (directed pair, message counter), which is
  what GCM needs: both directions of a pair share one channel key.
* :func:`seal_message` / :func:`open_message` — one message of a directed channel: the
  nonce travels in front of ciphertext ‖ tag (:data:`SEAL_OVERHEAD_BYTES` = 28 bytes more
  than the plaintext), and it carries the channel's explicit sequence number, which the
  receiver checks against the number it expects next (channels are FIFO), so a replayed,
  reordered or dropped message is refused. The associated data (:func:`associated_data`) is
  typed and length-prefixed — sender, receiver, sequence number and the driver's header
  (protocol, call, step, round) — so two different headers never authenticate as one.
* :class:`protocols.crypto.channel.SealedChannel` keeps one directed channel's key schedule
  and channel fields for a driver that seals many messages on it, and is tested against the
  two functions here.

Where keys come from. These functions take key material as bytes and never draw randomness.
A seeded simulation derives every key seed from the scenario seed, so a run replays byte for
byte — and two seeded runs with the same seed reuse (key, nonce) pairs, which is harmless
inside a simulation and fatal on a real network. A run on a real network must therefore draw
its key seeds from the operating system (``Simulation(..., key_source="os")``, which the MPI
driver uses): every run then has fresh keys, and under a fresh key the counter nonces are
unique, which is all GCM asks (TLS 1.3 numbers its records the same way; a random nonce would
add only a birthday bound).

Libraries and costs. AES-GCM comes from the `cryptography` package (OpenSSL): measured here
(``benchmarks/crypto.py``) it is 10–30× faster than pycryptodome for sealing a 64 B – 16 KB
message, the sizes the protocols send. The bytes are SP 800-38D's, checked against its test
vectors and against pycryptodome.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from protocols.crypto.arguments import KEY_BYTES, as_bytes, as_id
from protocols.errors import AuthenticationError, InputError

__all__ = [
    "AAD_LABEL",
    "INT_FIELD",
    "KEY_BYTES",
    "NONCE_BYTES",
    "NONCE_COUNTER_LIMIT",
    "NONCE_PARTY_LIMIT",
    "SEAL_OVERHEAD_BYTES",
    "TAG_BYTES",
    "associated_data",
    "describe_parties",
    "encode_fields",
    "message_nonce",
    "open_message",
    "open_sealed",
    "seal",
    "seal_message",
]


NONCE_BYTES = 12
"""AES-GCM nonce length (the 96-bit nonce of SP 800-38D §8.2.1)."""

TAG_BYTES = 16
"""AES-GCM authentication tag length."""

SEAL_OVERHEAD_BYTES = TAG_BYTES + NONCE_BYTES
"""Bytes a sealed message adds on the wire: the 12-byte nonce in front, the 16-byte tag (28)."""

AAD_LABEL = b"mpcsim/channels/aad/v1"
"""First bytes of every :func:`associated_data` (a fixed project label)."""

INT_FIELD = b"i" + (8).to_bytes(4, "big")
"""Type tag and length of an integer field of the associated data (ids as 8 bytes)."""

_ID_LIMIT = 1 << 64
NONCE_PARTY_LIMIT = 1 << 24
"""Party ids a nonce can name (24 bits of the 96-bit nonce)."""

NONCE_COUNTER_LIMIT = 1 << 48
"""Messages a channel can seal before its counter field (48 bits) runs out."""


def message_nonce(sender: int, receiver: int, counter: int) -> bytes:
    """The 12-byte GCM nonce of message number ``counter`` from ``sender`` to ``receiver``.

    Layout: sender (3 bytes) ‖ receiver (3 bytes) ‖ counter (6 bytes), all big-endian. The map
    is injective, so nonces never repeat under one channel key as long as each directed pair
    numbers its messages without repeating a counter (both directions share the key, and the
    order of sender and receiver tells them apart).

    Parameters
    ----------
    sender, receiver : int
        Party ids in [0, 2^24).
    counter : int
        The message's number on the directed pair sender → receiver, in [0, 2^48).

    Returns
    -------
    bytes
        12 bytes.

    Raises
    ------
    InputError
        If an argument is not an integer in its range.
    """
    sender = as_id(sender, "sender", NONCE_PARTY_LIMIT)
    receiver = as_id(receiver, "receiver", NONCE_PARTY_LIMIT)
    counter = as_id(counter, "counter", NONCE_COUNTER_LIMIT)
    return sender.to_bytes(3, "big") + receiver.to_bytes(3, "big") + counter.to_bytes(6, "big")


def seal(key: bytes, nonce: bytes, plaintext: bytes, aad: bytes = b"") -> bytes:
    """Encrypt and authenticate with AES-256-GCM.

    Parameters
    ----------
    key : bytes
        32-byte channel key (``PairKeys.channel_key``).
    nonce : bytes
        12-byte nonce, never reused under ``key`` (see :func:`message_nonce`).
    plaintext : bytes
        The payload.
    aad : bytes
        Associated data: authenticated, not encrypted (e.g. sender, receiver, tag, round).

    Returns
    -------
    bytes
        ciphertext ‖ 16-byte tag (``len(plaintext) + 16`` bytes).

    Raises
    ------
    InputError
        If the key is not 32 bytes, the nonce not 12 bytes, or an argument is not bytes-like.
    """
    return _gcm(key, nonce).encrypt(nonce, as_bytes(plaintext, "plaintext"),
                                    as_bytes(aad, "aad"))


def open_sealed(
    key: bytes,
    nonce: bytes,
    sealed: bytes,
    aad: bytes = b"",
    *,
    sender: int | None = None,
    receiver: int | None = None,
) -> bytes:
    """Verify and decrypt the output of :func:`seal`.

    Parameters
    ----------
    key : bytes
        32-byte channel key.
    nonce : bytes
        The 12-byte nonce the message was sealed with.
    sealed : bytes
        ciphertext ‖ 16-byte tag.
    aad : bytes
        The associated data the message was sealed with.
    sender, receiver : int, optional
        Party ids, used only to name the message in the error.

    Returns
    -------
    bytes
        The plaintext.

    Raises
    ------
    AuthenticationError
        If ciphertext, tag, nonce or associated data were changed, the key is wrong, or
        ``sealed`` is too short to hold a tag.
    InputError
        If the key is not 32 bytes, the nonce not 12 bytes, or an argument is not bytes-like.
    """
    return _decrypt(_gcm(key, nonce), nonce, as_bytes(sealed, "sealed"), as_bytes(aad, "aad"),
                    sender, receiver)


def _decrypt(
    cipher: AESGCM, nonce: bytes, sealed: bytes | memoryview, aad: bytes,
    sender: int | None, receiver: int | None,
) -> bytes:
    """Check the tag and decrypt; ``sealed`` may be a view (a message's body is not copied)."""
    if len(sealed) < TAG_BYTES:
        who = describe_parties(sender, receiver)
        raise AuthenticationError(
            f"sealed message{who} is {len(sealed)} bytes, too short to hold a {TAG_BYTES}-byte tag"
        )
    try:
        return cipher.decrypt(nonce, sealed, aad)
    except InvalidTag:
        who = describe_parties(sender, receiver)
        raise AuthenticationError(
            f"sealed message{who} failed AES-GCM authentication: its ciphertext, tag, nonce or "
            "associated data were altered, or the key is wrong"
        ) from None


def associated_data(*fields: int | str) -> bytes:
    """An unambiguous byte string binding ``fields`` (GCM's associated data).

    Layout: the label :data:`AAD_LABEL`, the number of fields (4 bytes), then per field a type
    byte (``i`` for an integer, ``s`` for text), its length (4 bytes) and its bytes — integers
    as 8-byte unsigned big-endian, text as UTF-8; all lengths big-endian. Every field is
    length-prefixed and typed, so two different field lists never give the same bytes
    (``(1, "2.3")`` and ``(12, ".3")`` differ, as do ``("a", "bc")`` and ``("ab", "c")``).

    Parameters
    ----------
    *fields : int or str
        Integers in [0, 2^64) and strings.

    Returns
    -------
    bytes

    Raises
    ------
    InputError
        If a field is neither an integer in range nor a string.
    """
    return AAD_LABEL + len(fields).to_bytes(4, "big") + encode_fields(fields)


def encode_fields(fields: tuple[int | str, ...]) -> bytes:
    """The typed, length-prefixed fields of :func:`associated_data`, after its count."""
    parts = []
    for value in fields:
        if type(value) is str:
            raw = value.encode("utf-8")
            parts.append(b"s" + len(raw).to_bytes(4, "big") + raw)
        else:
            if type(value) is not int or not 0 <= value < _ID_LIMIT:  # bools, numpy ints, ...
                value = as_id(value, "associated data field", _ID_LIMIT)
            parts.append(INT_FIELD + value.to_bytes(8, "big"))
    return b"".join(parts)


def seal_message(
    key: bytes, sender: int, receiver: int, sequence: int, plaintext: bytes,
    header: tuple[int | str, ...] = (),
) -> bytes:
    """Seal message number ``sequence`` of the directed channel sender → receiver.

    The sealed message is nonce ‖ ciphertext ‖ tag (:data:`SEAL_OVERHEAD_BYTES` more than the
    plaintext). The nonce is :func:`message_nonce` (sender, receiver, sequence); the
    associated data is :func:`associated_data` (sender, receiver, sequence, *header), so the
    message is bound to its channel, its place in the channel and whatever the header names
    (the driver binds protocol, call, step and round).

    Parameters
    ----------
    key : bytes
        The pair's 32-byte channel key.
    sender, receiver : int
        Party ids in [0, 2^24).
    sequence : int
        The message's number on this directed channel, 0, 1, 2, ... in sending order,
        below 2^48; never reused under one key.
    plaintext : bytes
        The payload's wire encoding.
    header : tuple of int or str
        Further fields the receiver must agree on.

    Returns
    -------
    bytes
    """
    nonce = message_nonce(sender, receiver, sequence)
    aad = associated_data(sender, receiver, sequence, *header)
    return nonce + seal(key, nonce, plaintext, aad)


def open_message(
    key: bytes, sender: int, receiver: int, sequence: int, sealed: bytes,
    header: tuple[int | str, ...] = (),
) -> bytes:
    """Check and open a message sealed by :func:`seal_message`.

    The receiver passes the sequence number it expects next on the channel (channels are
    FIFO), so a replayed, reordered or dropped message is refused even before the tag is
    checked; any change to the bytes, the header or the key fails authentication.

    Parameters
    ----------
    key : bytes
        The pair's 32-byte channel key.
    sender, receiver : int
        The channel's endpoints.
    sequence : int
        The number the receiver expects next from ``sender``.
    sealed : bytes
        nonce ‖ ciphertext ‖ tag, as received.
    header : tuple of int or str
        The fields the sender bound, as the receiver knows them.

    Returns
    -------
    bytes
        The plaintext.

    Raises
    ------
    AuthenticationError
        If the message is too short, its nonce names another channel or another sequence
        number, or GCM authentication fails; the message names sender and receiver.
    """
    data = as_bytes(sealed, "sealed")
    if len(data) < SEAL_OVERHEAD_BYTES:
        who = describe_parties(sender, receiver)
        raise AuthenticationError(
            f"sealed message{who} is {len(data)} bytes, shorter than the "
            f"{SEAL_OVERHEAD_BYTES}-byte nonce and tag"
        )
    expected = message_nonce(sender, receiver, sequence)
    nonce = data[:NONCE_BYTES]
    if nonce[:6] != expected[:6]:
        who = describe_parties(sender, receiver)
        raise AuthenticationError(
            f"sealed message{who} carries the nonce of another channel "
            f"(party {int.from_bytes(nonce[:3], 'big')} to party "
            f"{int.from_bytes(nonce[3:6], 'big')})"
        )
    if nonce != expected:
        who = describe_parties(sender, receiver)
        raise AuthenticationError(
            f"sealed message{who} is number {int.from_bytes(nonce[6:], 'big')} on its channel "
            f"where number {sequence} was expected: a replayed, reordered or dropped message"
        )
    aad = associated_data(sender, receiver, sequence, *header)
    # the body as a view: slicing bytes would copy the whole message once more
    return _decrypt(_gcm(key, nonce), nonce, memoryview(data)[NONCE_BYTES:], aad, sender,
                    receiver)


def _gcm(key: bytes, nonce: bytes) -> AESGCM:
    """An AES-256-GCM cipher (16-byte tags) after checking the key and nonce lengths."""
    key = as_bytes(key, "key")
    nonce = as_bytes(nonce, "nonce")
    if len(key) != KEY_BYTES:
        raise InputError(f"key must be {KEY_BYTES} bytes (AES-256), got {len(key)}")
    if len(nonce) != NONCE_BYTES:
        raise InputError(f"nonce must be {NONCE_BYTES} bytes, got {len(nonce)}")
    return AESGCM(key)


def describe_parties(sender: int | None, receiver: int | None) -> str:
    """`` from party s to party r`` (either part when known; empty when neither is): the
    channel a sealing error names."""
    if sender is None and receiver is None:
        return ""
    parts = []
    if sender is not None:
        parts.append(f"from party {sender}")
    if receiver is not None:
        parts.append(f"to party {receiver}")
    return " " + " ".join(parts)
