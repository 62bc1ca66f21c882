"""Key derivation: RFC 5869 HKDF with HMAC-SHA256, and the 32-byte stream keys derived by it.

The one HKDF of the project (DESIGN.md, "Randomness is injected"): pair keys
(:func:`protocols.crypto.key_agreement.agree`), a party's private stream keys
(:func:`derive_key`) and the simulation's seed material all come through
:func:`hkdf_sha256`. It is `cryptography`'s HKDF on OpenSSL (a few µs a call; pycryptodome's
pure-Python HKDF costs ~80 µs), tested against the RFC's vectors and pycryptodome.
"""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.kdf.hkdf import HKDF, HKDFExpand

from protocols.crypto.arguments import KEY_BYTES, as_bytes, as_count
from protocols.errors import InputError

__all__ = ["PRG_KEY_SALT", "derive_key", "hkdf_expand", "hkdf_extract", "hkdf_sha256"]

PRG_KEY_SALT = b"mpcsim/prg/derive_key/v1"
"""HKDF salt of :func:`derive_key` (a fixed project label, RFC 5869 §3.1)."""

_HASH_BYTES = 32


def hkdf_sha256(ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 HKDF with HMAC-SHA256: extract a pseudo-random key, expand it to ``length``.

    Parameters
    ----------
    ikm : bytes
        Input keying material (a shared secret or seed bytes).
    salt : bytes
        Extraction salt; empty means a string of 32 zero bytes (RFC 5869 §2.2).
    info : bytes
        Context bound into the output (RFC 5869 §2.3).
    length : int
        Output length in bytes, 0 ≤ length ≤ 255·32.

    Returns
    -------
    bytes
        ``length`` bytes of output keying material.

    Raises
    ------
    InputError
        If an argument is not bytes-like or ``length`` is out of range.
    """
    ikm = as_bytes(ikm, "ikm")
    salt = as_bytes(salt, "salt")
    info = as_bytes(info, "info")
    length = as_count(length, "length")
    if length > 255 * _HASH_BYTES:
        raise InputError(f"length = {length} exceeds the HKDF-SHA256 maximum {255 * _HASH_BYTES}")
    if length == 0:
        return b""
    return HKDF(hashes.SHA256(), length, salt or bytes(_HASH_BYTES), info).derive(ikm)


def hkdf_extract(salt: bytes, ikm: bytes) -> bytes:
    """RFC 5869 §2.2 HKDF-Extract with SHA-256: the 32-byte pseudo-random key HMAC(salt, ikm).

    The first half of :func:`hkdf_sha256`, for a caller that expands one extracted key under
    many infos (the simulation's seeds: one extract per run, one expand per party and purpose).
    An empty salt means 32 zero bytes (RFC 5869 §2.2).
    """
    mac = hmac.HMAC(as_bytes(salt, "salt") or bytes(_HASH_BYTES), hashes.SHA256())
    mac.update(as_bytes(ikm, "ikm"))
    return mac.finalize()


def hkdf_expand(prk: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 §2.3 HKDF-Expand with SHA-256 of the pseudo-random key ``prk``.

    ``hkdf_expand(hkdf_extract(salt, ikm), info, n) == hkdf_sha256(ikm, salt, info, n)``.

    Raises
    ------
    InputError
        If ``prk`` is shorter than 32 bytes or ``length`` is out of [0, 255·32].
    """
    prk = as_bytes(prk, "prk")
    if len(prk) < _HASH_BYTES:
        raise InputError(f"prk must hold at least {_HASH_BYTES} bytes, got {len(prk)}")
    length = as_count(length, "length")
    if length > 255 * _HASH_BYTES:
        raise InputError(f"length = {length} exceeds the HKDF-SHA256 maximum {255 * _HASH_BYTES}")
    if length == 0:
        return b""
    return HKDFExpand(hashes.SHA256(), length, as_bytes(info, "info")).derive(prk)


def derive_key(seed: bytes, label: str) -> bytes:
    """A 32-byte stream key derived from seed material and a purpose label (HKDF-SHA256).

    Used for keys a party needs on its own (e.g. its private masks) from its seed bytes; pair
    keys come from :func:`protocols.crypto.key_agreement.agree`. Different labels give
    independent keys.

    Parameters
    ----------
    seed : bytes
        Seed material, at least 16 bytes (e.g. a stream of :func:`protocols.seeds.derive`).
    label : str
        What the key is for, e.g. ``"party 3 / noise"``; bound into the HKDF info.

    Returns
    -------
    bytes
        ``hkdf_sha256(seed, PRG_KEY_SALT, label.encode("utf-8"), 32)``.

    Raises
    ------
    InputError
        If ``seed`` is not bytes-like or shorter than 16 bytes, or ``label`` is not a string.
    """
    seed = as_bytes(seed, "seed")
    if len(seed) < 16:
        raise InputError(f"seed must hold at least 16 bytes of key material, got {len(seed)}")
    if not isinstance(label, str):
        raise InputError(f"label must be a str, got {type(label).__name__}")
    return hkdf_sha256(seed, PRG_KEY_SALT, label.encode("utf-8"), KEY_BYTES)
