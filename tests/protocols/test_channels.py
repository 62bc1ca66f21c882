"""Tests of :mod:`protocols.crypto.sealing`: X25519 + HKDF pair keys and AES-GCM sealing.

Expected values come from RFC 7748 §6.1 (X25519), the GCM specification's AES-256 test case
(McGrew–Viega test case 16), and pycryptodome's own HKDF.
"""

from __future__ import annotations

import itertools

import pytest
from Crypto.Hash import SHA256
from Crypto.Protocol.DH import import_x25519_public_key, key_agreement
from Crypto.Protocol.KDF import HKDF
from Crypto.PublicKey import ECC
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey

from protocols.crypto.hkdf import derive_key
from protocols.crypto.key_agreement import PAIR_KEY_SALT, PairKeys, agree, keypair
from protocols.crypto.sealing import (
    NONCE_BYTES,
    SEAL_OVERHEAD_BYTES,
    TAG_BYTES,
    message_nonce,
    open_sealed,
    seal,
)
from protocols.errors import AuthenticationError, InputError

# RFC 7748 §6.1
ALICE_PRIVATE = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
ALICE_PUBLIC = bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
BOB_PRIVATE = bytes.fromhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
BOB_PUBLIC = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
SHARED = bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")


def party_seed(party: int) -> bytes:
    return derive_key(b"scenario seed 0001", f"party {party} / key seed")


# -- key pairs and agreement ---------------------------------------------------------------


def test_keypair_matches_rfc7748_and_is_deterministic() -> None:
    alice = keypair(ALICE_PRIVATE)
    assert alice.public == ALICE_PUBLIC
    assert keypair(BOB_PRIVATE).public == BOB_PUBLIC
    private, public = keypair(ALICE_PRIVATE)  # unpacks as a pair
    assert public == ALICE_PUBLIC
    assert private.private_bytes_raw() == alice.private.private_bytes_raw() == ALICE_PRIVATE
    assert alice.private.exchange(X25519PublicKey.from_public_bytes(BOB_PUBLIC)) == SHARED
    assert "d=" not in repr(alice) and ALICE_PUBLIC.hex() in repr(alice)


def test_agree_is_rfc7748_secret_through_hkdf() -> None:
    keys = agree(keypair(ALICE_PRIVATE).private, BOB_PUBLIC, 7, 3)
    info = b"mpcsim pair keys" + (3).to_bytes(8, "big") + (7).to_bytes(8, "big")
    okm = HKDF(SHARED, 64, PAIR_KEY_SALT, SHA256, 1, info)
    assert keys == PairKeys(channel_key=okm[:32], mask_seed=okm[32:])
    assert agree(keypair(BOB_PRIVATE).private, ALICE_PUBLIC, 3, 7) == keys
    # pycryptodome's X25519 (the test oracle) gives the same shared secret
    pyc_alice = ECC.construct(curve="Curve25519", seed=ALICE_PRIVATE)
    secret = key_agreement(static_priv=pyc_alice,
                           static_pub=import_x25519_public_key(BOB_PUBLIC), kdf=bytes)
    assert secret == SHARED
    with pytest.raises(InputError, match="own_private"):  # one crypto library: OpenSSL's keys
        agree(pyc_alice, BOB_PUBLIC, 7, 3)
    assert "channel_key" not in repr(keys)


def test_both_endpoints_agree_and_pairs_differ() -> None:
    parties = range(5)
    pairs = {p: keypair(party_seed(p)) for p in parties}
    seen: set[bytes] = set()
    for i, j in itertools.combinations(parties, 2):
        ij = agree(pairs[i].private, pairs[j].public, i, j)
        ji = agree(pairs[j].private, pairs[i].public, j, i)
        assert ij == ji
        assert len(ij.channel_key) == 32 and len(ij.mask_seed) == 32
        assert ij.channel_key != ij.mask_seed
        seen.update((ij.channel_key, ij.mask_seed))
    assert len(seen) == 2 * 10  # every key of every pair is distinct


def test_keys_replay_from_seeds() -> None:
    first = [keypair(party_seed(p)).public for p in range(3)]
    assert first == [keypair(party_seed(p)).public for p in range(3)]
    a, b = keypair(party_seed(0)), keypair(party_seed(1))
    assert agree(a.private, b.public, 0, 1) == agree(
        keypair(party_seed(0)).private, keypair(party_seed(1)).public, 0, 1
    )


def test_agreement_is_bound_to_party_ids() -> None:
    a, b = keypair(party_seed(0)), keypair(party_seed(1))
    assert agree(a.private, b.public, 0, 1) != agree(a.private, b.public, 0, 2)
    assert agree(a.private, b.public, 0, 1) != agree(a.private, b.public, 2, 1)


@pytest.mark.parametrize(
    ("peer_public", "match"),
    [
        (bytes(31), "peer_public"),
        ("x" * 32, "peer_public"),
        (bytes(32), "peer_public"),  # u = 0, low order
        ((1).to_bytes(32, "little"), "peer_public"),  # u = 1, low order
    ],
)
def test_agree_rejects_bad_public_keys(peer_public: object, match: str) -> None:
    with pytest.raises(InputError, match=match):
        agree(keypair(party_seed(0)).private, peer_public, 0, 1)


def test_agree_validates_ids_and_private_key() -> None:
    a, b = keypair(party_seed(0)), keypair(party_seed(1))
    with pytest.raises(InputError, match="differ"):
        agree(a.private, b.public, 4, 4)
    with pytest.raises(InputError, match="own_id"):
        agree(a.private, b.public, -1, 1)
    with pytest.raises(InputError, match="peer_id"):
        agree(a.private, b.public, 0, True)
    with pytest.raises(InputError, match="own_private"):
        agree(a.private.public_key(), b.public, 0, 1)
    with pytest.raises(InputError, match="own_private"):
        agree(a.public, b.public, 0, 1)
    with pytest.raises(InputError, match="own_private"):
        agree(ECC.construct(curve="Curve25519", seed=bytes(range(32))).public_key(), b.public,
              0, 1)
    with pytest.raises(InputError, match="seed"):
        keypair(bytes(31))


# -- nonces --------------------------------------------------------------------------------


def test_message_nonce_is_unique_per_directed_pair_and_counter() -> None:
    ids = (0, 1, 2, 255, 256, 2**24 - 1)
    counters = (0, 1, 255, 256, 2**32, 2**48 - 1)
    nonces = [message_nonce(s, r, c) for s in ids for r in ids for c in counters]
    assert all(len(n) == NONCE_BYTES for n in nonces)
    assert len(set(nonces)) == len(nonces)
    assert message_nonce(1, 2, 3) != message_nonce(2, 1, 3)
    assert message_nonce(1, 2, 3) == bytes.fromhex("000001000002000000000003")


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((-1, 0, 0), "sender"),
        ((0, 2**24, 0), "receiver"),
        ((0, 1, 2**48), "counter"),
        ((0, 1, 1.0), "counter"),
    ],
)
def test_message_nonce_validation(args: tuple, match: str) -> None:
    with pytest.raises(InputError, match=match):
        message_nonce(*args)


# -- sealing -------------------------------------------------------------------------------

KEY = bytes(range(32))
NONCE = message_nonce(0, 1, 0)
AAD = b"sender=0 receiver=1 tag=secure_sum/3"
PLAINTEXT = bytes(range(256)) * 3


def test_seal_is_aes256_gcm() -> None:
    # McGrew & Viega, "The Galois/Counter Mode of Operation", test case 16 (AES-256).
    key = bytes.fromhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
    nonce = bytes.fromhex("cafebabefacedbaddecaf888")
    plaintext = bytes.fromhex(
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
    )
    aad = bytes.fromhex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
    sealed = seal(key, nonce, plaintext, aad)
    assert sealed.hex() == (
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
        "76fc6ece0f4e1768cddf8853bb2d551b"
    )
    assert open_sealed(key, nonce, sealed, aad) == plaintext


@pytest.mark.parametrize("plaintext", [b"", b"x", PLAINTEXT])
def test_seal_open_round_trip_and_overhead(plaintext: bytes) -> None:
    sealed = seal(KEY, NONCE, plaintext, AAD)
    assert len(sealed) == len(plaintext) + TAG_BYTES
    assert open_sealed(KEY, NONCE, sealed, AAD) == plaintext
    assert SEAL_OVERHEAD_BYTES == len(sealed) + NONCE_BYTES - len(plaintext) == 28
    assert open_sealed(KEY, NONCE, seal(KEY, NONCE, plaintext), b"") == plaintext


def _flip(data: bytes, index: int) -> bytes:
    out = bytearray(data)
    out[index] ^= 0x01
    return bytes(out)


@pytest.mark.parametrize(
    "tamper",
    [
        "ciphertext first byte",
        "ciphertext last byte",
        "tag first byte",
        "tag last byte",
        "nonce",
        "aad",
        "aad dropped",
        "truncated",
        "too short for a tag",
        "extended",
        "wrong key",
        "other direction's nonce",
    ],
)
def test_any_tampering_raises_authentication_error(tamper: str) -> None:
    sealed = seal(KEY, NONCE, PLAINTEXT, AAD)
    key, nonce, aad = KEY, NONCE, AAD
    n_ct = len(PLAINTEXT)
    if tamper == "ciphertext first byte":
        sealed = _flip(sealed, 0)
    elif tamper == "ciphertext last byte":
        sealed = _flip(sealed, n_ct - 1)
    elif tamper == "tag first byte":
        sealed = _flip(sealed, n_ct)
    elif tamper == "tag last byte":
        sealed = _flip(sealed, len(sealed) - 1)
    elif tamper == "nonce":
        nonce = _flip(nonce, NONCE_BYTES - 1)
    elif tamper == "aad":
        aad = _flip(aad, 3)
    elif tamper == "aad dropped":
        aad = b""
    elif tamper == "truncated":
        sealed = sealed[:-1]
    elif tamper == "too short for a tag":
        sealed = sealed[: TAG_BYTES - 1]
    elif tamper == "extended":
        sealed = sealed + b"\x00"
    elif tamper == "wrong key":
        key = _flip(key, 0)
    elif tamper == "other direction's nonce":
        nonce = message_nonce(1, 0, 0)
    with pytest.raises(AuthenticationError, match="from party 0 to party 1"):
        open_sealed(key, nonce, sealed, aad, sender=0, receiver=1)


def test_authentication_error_without_parties() -> None:
    with pytest.raises(AuthenticationError, match="failed AES-GCM authentication"):
        open_sealed(KEY, NONCE, _flip(seal(KEY, NONCE, b"abc", AAD), 0), AAD)


def test_pair_keys_seal_end_to_end() -> None:
    a, b = keypair(party_seed(0)), keypair(party_seed(1))
    c = keypair(party_seed(2))
    k_ab = agree(a.private, b.public, 0, 1)
    k_ba = agree(b.private, a.public, 1, 0)
    k_ac = agree(a.private, c.public, 0, 2)
    nonce = message_nonce(0, 1, 5)
    sealed = seal(k_ab.channel_key, nonce, b"share", b"aad")
    assert open_sealed(k_ba.channel_key, nonce, sealed, b"aad") == b"share"
    with pytest.raises(AuthenticationError):
        open_sealed(k_ac.channel_key, nonce, sealed, b"aad")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"key": bytes(16)}, "key"),
        ({"key": bytes(33)}, "key"),
        ({"nonce": bytes(11)}, "nonce"),
        ({"nonce": bytes(16)}, "nonce"),
        ({"plaintext": "text"}, "plaintext"),
        ({"aad": 5}, "aad"),
    ],
)
def test_seal_validation(kwargs: dict, match: str) -> None:
    args = {"key": KEY, "nonce": NONCE, "plaintext": b"x", "aad": b""} | kwargs
    with pytest.raises(InputError, match=match):
        seal(**args)


def test_open_sealed_validation() -> None:
    sealed = seal(KEY, NONCE, b"x")
    with pytest.raises(InputError, match="key"):
        open_sealed(bytes(31), NONCE, sealed)
    with pytest.raises(InputError, match="nonce"):
        open_sealed(KEY, bytes(8), sealed)
    with pytest.raises(InputError, match="sealed"):
        open_sealed(KEY, NONCE, "not bytes")
