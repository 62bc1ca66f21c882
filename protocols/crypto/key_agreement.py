"""Pairwise key agreement (X25519 + HKDF-SHA256), and the one-time setup that runs it.

The PRG-seeded SecureSum of the Tsikhanovich thesis (seed 001, §2.2) needs, for every pair of
parties, a shared random seed: "Party i, j simply have to coordinate a random seed for their
corresponding PRNGs". This module coordinates it without a trusted dealer:

* :func:`keypair` — an X25519 key pair (RFC 7748) from 32 seed bytes. Runs replay
  from the scenario seed, so keys are derived from seed bytes, never drawn from the system RNG.
* :func:`agree` — X25519 shared secret → RFC 5869 HKDF-SHA256
  (:func:`protocols.crypto.hkdf.hkdf_sha256`; salt :data:`PAIR_KEY_SALT`,
  info ``b"mpcsim pair keys" ‖ min(id) ‖ max(id)``, ids as 8-byte big-endian) → 64 bytes, split
  into the pair's channel key (:mod:`protocols.crypto.sealing`) and its mask seed. Both
  endpoints obtain identical :class:`PairKeys`. The mask seed keys the pair's mask streams in
  :mod:`protocols.crypto.keystream`; each protocol invocation then uses a fresh stream number
  (seeds digest §6 item 2: derive each stream from (pair seed, invocation counter)).
* :func:`key_agreement` — the party program of the setup: each party derives its key pair from
  its key seed, sends its 32-byte public key to every other participant in the clear (public
  keys are public; the messages are unsealed and carry zero field elements), and derives its
  :class:`PairKeys` with each peer. It runs once per simulation, before the programs; its
  messages are in the ledger under the protocol name ``key_agreement``, so a report can show
  them apart from the protocols they serve.

X25519 comes from the `cryptography` package (OpenSSL): measured here
(``benchmarks/crypto.py``) ~5× faster than pycryptodome for an agreement; the bytes are RFC
7748's, checked against its test vectors and against pycryptodome. Nothing is added on top of
the agreement (the HKDF info binds the party ids, not the public keys, to avoid re-exporting
the own public key). The mask seed is symmetric (the same for i→j and j→i); a protocol that
needs a distinct stream per direction should derive per-direction keys once per pair with
:func:`protocols.crypto.hkdf.derive_key`.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey

from protocols.context import PartyContext
from protocols.crypto.arguments import KEY_BYTES, as_id
from protocols.crypto.hkdf import hkdf_sha256
from protocols.effects import RecvEach, SendEach
from protocols.errors import InputError

__all__ = [
    "PAIR_KEY_SALT",
    "PROTOCOL",
    "PUBLIC_KEY_BYTES",
    "SEED_BYTES",
    "KeyPair",
    "PairKeys",
    "agree",
    "key_agreement",
    "keypair",
]

SEED_BYTES = 32
"""Seed bytes of an X25519 private key (RFC 7748 scalar, clamped by the curve code)."""

PUBLIC_KEY_BYTES = 32
"""Length of a raw X25519 public key (the u-coordinate, little-endian)."""

PAIR_KEY_SALT = b"mpcsim/channels/pair-keys/v1"
"""HKDF salt of :func:`agree` (a fixed project label)."""

_PAIR_KEY_INFO = b"mpcsim pair keys"
_ID_LIMIT = 1 << 64

PROTOCOL = "key_agreement"


class KeyPair(NamedTuple):
    """An X25519 key pair; unpacks as ``private, public = keypair(seed)``.

    Attributes
    ----------
    private : cryptography.hazmat.primitives.asymmetric.x25519.X25519PrivateKey
        The private key; not shown in ``repr``.
    public : bytes
        The 32-byte raw public key, what a party publishes to its peers.
    """

    private: X25519PrivateKey
    public: bytes

    def __repr__(self) -> str:
        return f"KeyPair(private=<X25519 private key>, public={self.public.hex()})"


@dataclass(frozen=True)
class PairKeys:
    """The keys two parties share after :func:`agree` (identical at both endpoints).

    Attributes
    ----------
    channel_key : bytes
        32-byte AES-256-GCM key of the pair's channel (:func:`protocols.crypto.sealing.seal`).
    mask_seed : bytes
        32-byte AES-256 key of the pair's mask streams
        (:func:`protocols.crypto.keystream.field_stream`, the invocation counter as stream
        number).
    """

    channel_key: bytes = field(repr=False)
    mask_seed: bytes = field(repr=False)


def keypair(seed: bytes) -> KeyPair:
    """The X25519 key pair whose private scalar is the 32 seed bytes (RFC 7748 §5).

    Parameters
    ----------
    seed : bytes
        32 bytes, e.g. the party's ``x25519`` seed (:mod:`protocols.seeds`); the same seed
        gives the same pair.

    Returns
    -------
    KeyPair
        The private key and its 32-byte raw public key.

    Raises
    ------
    InputError
        If ``seed`` is not 32 bytes.
    """
    if not isinstance(seed, (bytes, bytearray, memoryview)):
        raise InputError(f"seed must be bytes, got {type(seed).__name__}")
    seed = bytes(seed)
    if len(seed) != SEED_BYTES:
        raise InputError(f"seed must be {SEED_BYTES} bytes, got {len(seed)}")
    private = X25519PrivateKey.from_private_bytes(seed)
    return KeyPair(private=private, public=private.public_key().public_bytes_raw())


def agree(
    own_private: X25519PrivateKey, peer_public: bytes, own_id: int, peer_id: int
) -> PairKeys:
    """Pair keys from X25519 agreement followed by HKDF-SHA256.

    Party ``own_id`` calls ``agree(own.private, peer.public, own_id, peer_id)`` and party
    ``peer_id`` calls ``agree(peer.private, own.public, peer_id, own_id)``; both get the same
    :class:`PairKeys`. The HKDF info holds the two ids in sorted order, so keys are bound to
    the pair and no two pairs share keys.

    Parameters
    ----------
    own_private : X25519PrivateKey
        This party's X25519 private key (``KeyPair.private``).
    peer_public : bytes
        The peer's 32-byte raw public key (``KeyPair.public``).
    own_id, peer_id : int
        The two party ids, distinct integers in [0, 2^64).

    Returns
    -------
    PairKeys
        ``channel_key`` = HKDF output bytes 0–31, ``mask_seed`` = bytes 32–63.

    Raises
    ------
    InputError
        If ``own_private`` is not an X25519 private key, ``peer_public`` is not a valid
        32-byte X25519 public key (malformed or of low order), or the ids are invalid.
    """
    own_private = _x25519_private(own_private)
    if not isinstance(peer_public, (bytes, bytearray, memoryview)):
        raise InputError(f"peer_public must be bytes, got {type(peer_public).__name__}")
    peer_public = bytes(peer_public)
    if len(peer_public) != PUBLIC_KEY_BYTES:
        raise InputError(
            f"peer_public must be {PUBLIC_KEY_BYTES} bytes (raw X25519), got {len(peer_public)}"
        )
    own_id = as_id(own_id, "own_id", _ID_LIMIT)
    peer_id = as_id(peer_id, "peer_id", _ID_LIMIT)
    if own_id == peer_id:
        raise InputError(f"own_id and peer_id must differ, both are {own_id}")
    try:
        secret = own_private.exchange(X25519PublicKey.from_public_bytes(peer_public))
    except ValueError as exc:  # OpenSSL refuses a low-order point (an all-zero secret)
        raise InputError(
            f"peer_public of party {peer_id} is not a valid X25519 public key: {exc}"
        ) from None
    if not any(secret):  # RFC 7748 §6.1: an all-zero secret means a low-order peer point
        raise InputError(f"peer_public of party {peer_id} gives an all-zero X25519 secret")
    low, high = sorted((own_id, peer_id))
    info = _PAIR_KEY_INFO + low.to_bytes(8, "big") + high.to_bytes(8, "big")
    okm = hkdf_sha256(secret, PAIR_KEY_SALT, info, 2 * KEY_BYTES)
    return PairKeys(channel_key=okm[:KEY_BYTES], mask_seed=okm[KEY_BYTES:])


def key_agreement(ctx: PartyContext) -> Generator[Any, Any, None]:
    """Party program: agree on a channel key and a mask seed with every other participant."""
    others = tuple(sorted(p for p in ctx.roles if p != ctx.party))
    if not others:
        return
    call = ctx.new_call(PROTOCOL)
    private, public = keypair(ctx.key_seed)
    public_arr = np.frombuffer(public, dtype=np.uint8)
    yield SendEach(dict.fromkeys(others, public_arr), call, "public_key", sealed=False)
    received = yield RecvEach(others, call, "public_key")
    for peer in others:
        keys = agree(private, bytes(received[peer]), ctx.party, peer)
        ctx.install_pair_keys(peer, keys.channel_key, keys.mask_seed)


def _x25519_private(value: object) -> X25519PrivateKey:
    """``value`` as a `cryptography` X25519 private key, or InputError."""
    if isinstance(value, X25519PrivateKey):
        return value
    raise InputError("own_private must be an X25519 private key (KeyPair.private)")
