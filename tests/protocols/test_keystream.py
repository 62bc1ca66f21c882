"""Tests of :mod:`protocols.crypto.keystream`: AES-CTR keystream convention, field streams, HKDF.

Expected values come from outside the code under test: pycryptodome's own ``AES.MODE_CTR``
(with an explicit ``Counter`` object), the NIST SP 800-38A CTR-AES256 vectors, the RFC 5869
HKDF vectors, pycryptodome's HKDF, and a pure-Python rejection sampler written here.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pytest
from Crypto.Cipher import AES
from Crypto.Hash import SHA256
from Crypto.Protocol.KDF import HKDF
from Crypto.Util import Counter
from scipy import stats

from protocols.crypto import aes_ctr, hkdf, keystream, mask_sums
from protocols.crypto.keystream import StreamCiphers
from protocols.errors import InputError
from protocols.field import MERSENNE61, prime_field

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
F61 = prime_field(MERSENNE61)
F5 = prime_field(5)
F7 = prime_field(7)
F31 = prime_field((1 << 31) - 1)
F64 = prime_field("2^64-59")
F127 = prime_field("2^127-1")


# -- independent references ----------------------------------------------------------------


def reference_keystream(key: bytes, stream: int, n_bytes: int) -> bytes:
    """pycryptodome's CTR mode with an explicit counter: prefix = stream, 64-bit counter from 0."""
    counter = Counter.new(64, prefix=stream.to_bytes(8, "big"), initial_value=0)
    return AES.new(key, AES.MODE_CTR, counter=counter).encrypt(bytes(n_bytes))


def reference_elements(key: bytes, stream: int, n: int, p: int) -> list[int]:
    """Rejection sampling by hand: little-endian ``ceil(bits/64)``-word candidates, masked."""
    bits = p.bit_length()
    width = 8 * max(1, -(-bits // 64))
    mask = (1 << bits) - 1
    n_bytes = width * (4 * n + 64)
    while True:
        keystream = reference_keystream(key, stream, n_bytes)
        out = []
        for start in range(0, n_bytes, width):
            value = int.from_bytes(keystream[start : start + width], "little") & mask
            if value < p:
                out.append(value)
                if len(out) == n:
                    return out
        n_bytes *= 2


# -- keystream convention --------------------------------------------------------------------


@pytest.mark.parametrize("stream", [0, 1, 2**32 + 7, 2**63 + 5, 2**64 - 1])
@pytest.mark.parametrize("n_words", [0, 1, 2, 3, 31, 1000])
def test_keystream_matches_pycryptodome_ctr(stream: int, n_words: int) -> None:
    expected = reference_keystream(KEY, stream, 8 * n_words)
    nonce_form = AES.new(
        KEY, AES.MODE_CTR, nonce=stream.to_bytes(8, "big"), initial_value=0
    ).encrypt(bytes(8 * n_words))
    assert expected == nonce_form
    words = aes_ctr.keystream_words(KEY, stream, n_words)
    assert words.dtype == np.uint64 and words.shape == (n_words,)
    assert words.tobytes() == expected  # little-endian words, keystream byte order


def test_keystream_nist_sp800_38a_ctr_aes256() -> None:
    # NIST SP 800-38A, F.5.5 CTR-AES256.Encrypt. Initial counter block
    # f0f1f2f3f4f5f6f7 ‖ f8f9fafbfcfdfeff = stream ‖ start_block in our convention.
    key = bytes.fromhex("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4")
    plaintext = bytes.fromhex(
        "6bc1bee22e409f96e93d7e117393172a"
        "ae2d8a571e03ac9c9eb76fac45af8e51"
        "30c81c46a35ce411e5fbc1191a0a52ef"
        "f69f2445df4f9b17ad2b417be66c3710"
    )
    ciphertext = bytes.fromhex(
        "601ec313775789a5b7a7f504bbf3d228"
        "f443e3ca4d62b59aca84e990cacaf5c5"
        "2b0930daa23de94ce87017ba2d84988d"
        "dfc9c58db67aada613c2dd08457941a6"
    )
    words = aes_ctr.keystream_words(key, 0xF0F1F2F3F4F5F6F7, 8, start_block=0xF8F9FAFBFCFDFEFF)
    assert bytes(a ^ b for a, b in zip(words.tobytes(), plaintext, strict=True)) == ciphertext


# -- field streams -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "n"),
    [
        (F61, 1),
        (F61, 2000),
        (F61, 2001),
        (F5, 1),
        (F5, 999),
        (F7, 500),
        (F31, 777),
        (F64, 300),
        (F127, 41),
    ],
)
def test_field_stream_equals_hand_rejection_sampling(field, n: int) -> None:
    for stream in (0, 12345):
        got = keystream.field_stream(KEY, stream, n, field)
        assert got.dtype == field.dtype and got.shape == (n,)
        assert [int(v) for v in got] == reference_elements(KEY, stream, n, field.p)


def test_mersenne_stream_is_masked_keystream() -> None:
    words = aes_ctr.keystream_words(KEY, 9, 5000)
    masked = words & np.uint64(MERSENNE61)
    assert not np.any(masked == np.uint64(MERSENNE61))  # no rejection in this prefix
    np.testing.assert_array_equal(keystream.field_stream(KEY, 9, 5000, F61), masked)


def test_from_words_masks_and_rejects_by_hand_for_p5() -> None:
    words = np.array(
        [0, 1, 2, 3, 4, 5, 6, 7, 8 + 5, 2**64 - 1, 2**64 - 4, 2**64 - 6, 16 + 3],
        dtype=np.uint64,
    )
    # masked to 3 bits: 0 1 2 3 4 5 6 7 5 7 4 2 3; 5, 6 and 7 are rejected
    assert F5.from_words(words).tolist() == [0, 1, 2, 3, 4, 4, 2, 3]


def test_no_element_reaches_p() -> None:
    for field, n in ((F5, 20000), (F7, 20000), (F31, 20000), (F61, 20000), (F127, 200)):
        values = keystream.field_stream(OTHER_KEY, 3, n, field)
        assert all(0 <= int(v) < field.p for v in values.tolist())


@pytest.mark.parametrize(
    ("field", "n_max"),
    [(F61, keystream.CHUNK_WORDS + 1001), (F5, 50000), (F31, 3000), (F127, 60)],
)
def test_prefix_property_and_determinism(field, n_max: int) -> None:
    long = keystream.field_stream(KEY, 77, n_max, field)
    np.testing.assert_array_equal(long, keystream.field_stream(KEY, 77, n_max, field))
    for n in (0, 1, 2, 3, 17, n_max // 3, n_max - 1):
        np.testing.assert_array_equal(keystream.field_stream(KEY, 77, n, field), long[:n])


def test_long_stream_matches_reference_across_chunks() -> None:
    n = 2 * keystream.CHUNK_WORDS + 5
    expected = np.frombuffer(reference_keystream(KEY, 4, 8 * n), dtype="<u8") & np.uint64(
        MERSENNE61
    )
    np.testing.assert_array_equal(keystream.field_stream(KEY, 4, n, F61), expected)


@pytest.mark.parametrize("field", [F5, F61, F127])
def test_continuation_in_small_passes_gives_the_same_elements(monkeypatch, field) -> None:
    # Force many short passes (odd word counts, passes starting mid-block) through both the
    # one-shot start and the CTR continuation; the elements must not change.
    n = 60
    expected = reference_elements(KEY, 5, n, field.p)
    monkeypatch.setattr(keystream, "_candidates", lambda _field, need: min(need, 3))
    assert [int(v) for v in keystream.field_stream(KEY, 5, n, field)] == expected
    monkeypatch.setattr(keystream, "CHUNK_WORDS", 7)
    assert [int(v) for v in keystream.field_stream(KEY, 5, n, field)] == expected


def test_streams_and_keys_give_different_outputs() -> None:
    base = keystream.field_stream(KEY, 0, 64, F61)
    assert not np.array_equal(base, keystream.field_stream(KEY, 1, 64, F61))
    assert not np.array_equal(base, keystream.field_stream(OTHER_KEY, 0, 64, F61))
    assert not np.array_equal(
        keystream.field_stream(KEY, 2**64 - 1, 64, F61),
        keystream.field_stream(KEY, 2**63 - 1, 64, F61),
    )
    # no shared elements at all between two streams of 2^61 − 1 (collisions have prob ~2^-49)
    assert not set(base.tolist()) & set(keystream.field_stream(KEY, 1, 64, F61).tolist())


def test_no_hidden_state_between_calls() -> None:
    first = keystream.field_stream(KEY, 11, 100, F5)
    keystream.field_stream(OTHER_KEY, 11, 5000, F5)
    keystream.field_streams([KEY, OTHER_KEY], 12, 100, F61)
    np.testing.assert_array_equal(keystream.field_stream(KEY, 11, 100, F5), first)


# -- batched streams -----------------------------------------------------------------------


def _keys(count: int) -> list[bytes]:
    return [hkdf.derive_key(bytes(16) + i.to_bytes(4, "big"), "test") for i in range(count)]


@pytest.mark.parametrize(
    ("field", "n_keys", "n"),
    [(F61, 5, 2000), (F61, 3, 1001), (F31, 4, 333), (F64, 3, 50), (F5, 4, 101), (F127, 3, 21)],
)
def test_field_streams_rows_equal_field_stream(field, n_keys: int, n: int) -> None:
    keys = _keys(n_keys)
    batch = keystream.field_streams(keys, 2**40 + 3, n, field)
    assert batch.shape == (n_keys, n) and batch.dtype == field.dtype
    for k, key in enumerate(keys):
        np.testing.assert_array_equal(batch[k], keystream.field_stream(key, 2**40 + 3, n, field))


@pytest.mark.parametrize("p", [5, 31])
def test_field_streams_in_groups_and_with_rejections(monkeypatch, p: int) -> None:
    field, keys, n = prime_field(p), _keys(7), 21
    expected = np.array([reference_elements(key, 8, n, p) for key in keys])
    if p == 31:  # about half of the rows meet a rejected candidate (31 of 32 values accepted)
        clean = [bool(np.all(aes_ctr.keystream_words(key, 8, n) & np.uint64(31) < 31))
                 for key in keys]
        assert any(clean) and not all(clean)
    monkeypatch.setattr(keystream, "GROUP_WORDS", 64)  # groups of 2 keys
    monkeypatch.setattr(keystream, "CHUNK_WORDS", 64)
    monkeypatch.setattr(keystream, "_MAX_STREAMS_REJECTIONS", float("inf"))  # force the batch path
    np.testing.assert_array_equal(keystream.field_streams(keys, 8, n, field), expected)
    long = keystream.field_streams(keys[:2], 8, 100, F61)  # n > CHUNK_WORDS: one stream at a time
    np.testing.assert_array_equal(long[1], keystream.field_stream(keys[1], 8, 100, F61))


def test_field_streams_empty_shapes() -> None:
    assert keystream.field_streams([], 0, 10, F61).shape == (0, 10)
    assert keystream.field_streams([KEY], 0, 0, F61).shape == (1, 0)
    assert keystream.field_stream(KEY, 0, 0, F127).shape == (0,)


# -- uniformity ----------------------------------------------------------------------------


@pytest.mark.parametrize("field", [F5, F7])
def test_chi_square_uniform_on_tiny_fields(field) -> None:
    values = keystream.field_stream(KEY, 2024, 200_000, field).astype(np.int64)
    counts = np.bincount(values, minlength=field.p)
    assert stats.chisquare(counts).pvalue > 1e-3
    # The test has power: reducing masked words mod p instead of rejecting them is biased
    # (for p = 5: residues 0, 1, 2 twice as likely as 3, 4) and is caught at once.
    words = aes_ctr.keystream_words(KEY, 2024, 200_000) & np.uint64(7)
    biased = np.bincount((words % np.uint64(field.p)).astype(np.int64), minlength=field.p)
    assert stats.chisquare(biased).pvalue < 1e-12


def test_ks_uniform_on_mersenne61() -> None:
    values = keystream.field_stream(OTHER_KEY, 7, 200_000, F61)
    assert stats.kstest(values.astype(np.float64) / MERSENNE61, "uniform").pvalue > 1e-3
    low_bytes = np.bincount((values & np.uint64(0xFF)).astype(np.int64), minlength=256)
    assert stats.chisquare(low_bytes).pvalue > 1e-3


# -- validation ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"key": bytes(31)}, "key"),
        ({"key": bytes(33)}, "key"),
        ({"key": "k" * 32}, "key"),
        ({"stream": -1}, "stream"),
        ({"stream": 2**64}, "stream"),
        ({"stream": True}, "stream"),
        ({"stream": 1.0}, "stream"),
        ({"n": -1}, "n"),
        ({"n": 2.5}, "n"),
        ({"field": 5}, "field"),
    ],
)
def test_field_stream_validation(kwargs: dict, names: str) -> None:
    args = {"key": KEY, "stream": 0, "n": 4, "field": F61} | kwargs
    with pytest.raises(InputError, match=names):
        keystream.field_stream(**args)


def test_field_streams_validation() -> None:
    with pytest.raises(InputError, match="sequence"):
        keystream.field_streams(KEY, 0, 4, F61)
    with pytest.raises(InputError, match=r"keys\[1\]"):
        keystream.field_streams([KEY, bytes(16)], 0, 4, F61)
    with pytest.raises(InputError, match="stream"):
        keystream.field_streams([KEY], -3, 4, F61)


def test_numpy_integers_are_accepted() -> None:
    np.testing.assert_array_equal(
        keystream.field_stream(KEY, np.uint64(2**64 - 1), np.int64(10), F61),
        keystream.field_stream(KEY, 2**64 - 1, 10, F61),
    )


# -- key derivation ------------------------------------------------------------------------

RFC5869_SHA256 = [
    (  # A.1 basic test case
        "0b" * 22,
        "000102030405060708090a0b0c",
        "f0f1f2f3f4f5f6f7f8f9",
        42,
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    ),
    (  # A.2 longer inputs and outputs
        bytes(range(0x00, 0x50)).hex(),
        bytes(range(0x60, 0xB0)).hex(),
        bytes(range(0xB0, 0x100)).hex(),
        82,
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
        "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
        "cc30c58179ec3e87c14c01d5c1f3434f1d87",
    ),
    (  # A.3 zero-length salt and info
        "0b" * 22,
        "",
        "",
        42,
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
    ),
]


@pytest.mark.parametrize(("ikm", "salt", "info", "length", "okm"), RFC5869_SHA256)
def test_hkdf_rfc5869_vectors(ikm: str, salt: str, info: str, length: int, okm: str) -> None:
    out = hkdf.hkdf_sha256(bytes.fromhex(ikm), bytes.fromhex(salt), bytes.fromhex(info), length)
    assert out.hex() == okm


def test_hkdf_matches_pycryptodome() -> None:
    rng = np.random.default_rng(5869)
    for length in (1, 31, 32, 33, 64, 100, 255 * 32):
        ikm, salt, info = (rng.bytes(int(rng.integers(1, 80))) for _ in range(3))
        expected = HKDF(ikm, length, salt, SHA256, 1, info)
        assert hkdf.hkdf_sha256(ikm, salt, info, length) == expected
    assert hkdf.hkdf_sha256(b"ikm", b"salt", b"", 0) == b""
    with pytest.raises(InputError, match="length"):
        hkdf.hkdf_sha256(b"ikm", b"salt", b"", 255 * 32 + 1)
    with pytest.raises(InputError, match="info"):
        hkdf.hkdf_sha256(b"ikm", b"salt", "info", 32)



# RFC 5869 A.1: the PRK of test case 1, and its OKM (the first vector above)
RFC5869_PRK_1 = "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"


def test_hkdf_extract_and_expand_are_rfc5869_and_pycryptodome() -> None:
    ikm, salt, info, length, okm = RFC5869_SHA256[0]
    prk = hkdf.hkdf_extract(bytes.fromhex(salt), bytes.fromhex(ikm))
    assert prk.hex() == RFC5869_PRK_1
    assert hkdf.hkdf_expand(prk, bytes.fromhex(info), length).hex() == okm
    rng = np.random.default_rng(52)
    for length in (0, 1, 32, 33, 255 * 32):
        ikm_b, salt_b, info_b = (rng.bytes(int(rng.integers(1, 80))) for _ in range(3))
        got = hkdf.hkdf_expand(hkdf.hkdf_extract(salt_b, ikm_b), info_b, length)
        assert got == (HKDF(ikm_b, length, salt_b, SHA256, 1, info_b) if length else b"")
    assert hkdf.hkdf_extract(b"", b"k") == hmac.digest(bytes(32), b"k", hashlib.sha256)
    with pytest.raises(InputError, match="prk"):
        hkdf.hkdf_expand(bytes(31), b"", 32)
    with pytest.raises(InputError, match="length"):
        hkdf.hkdf_expand(bytes(32), b"", 255 * 32 + 1)


def test_encrypt_blocks_is_aes256_ecb() -> None:
    rng = np.random.default_rng(16)
    data = rng.bytes(16 * 37)
    assert keystream.encrypt_blocks(KEY, data) == AES.new(KEY, AES.MODE_ECB).encrypt(data)
    assert keystream.encrypt_blocks(KEY, b"") == b""
    with pytest.raises(InputError, match="multiple of 16"):
        keystream.encrypt_blocks(KEY, bytes(17))
    with pytest.raises(InputError, match="32 bytes"):
        keystream.encrypt_blocks(bytes(16), bytes(16))


def test_derive_key() -> None:
    seed = bytes(range(100, 132))
    key = hkdf.derive_key(seed, "party 3 / noise")
    assert len(key) == 32 and key == hkdf.derive_key(seed, "party 3 / noise")
    assert key == HKDF(seed, 32, hkdf.PRG_KEY_SALT, SHA256, 1, b"party 3 / noise")
    assert key != hkdf.derive_key(seed, "party 3 / masks")
    assert key != hkdf.derive_key(bytes(range(101, 133)), "party 3 / noise")
    with pytest.raises(InputError, match="seed"):
        hkdf.derive_key(bytes(15), "x")
    with pytest.raises(InputError, match="label"):
        hkdf.derive_key(seed, b"x")


# -- the fused net pairwise mask (SecureSum's PRG variant) --------------------------------------


def _net_from_materialised(keys, signs, stream, half, field):
    """Σ_k s_k·(second half − first half), by Python ints from the materialised streams."""
    from protocols.crypto.keystream import field_streams

    rows = field_streams(keys, stream, 2 * half, field)
    total = [0] * half
    for row, sign in zip(rows, signs, strict=True):
        for i in range(half):
            total[i] += sign * (int(row[half + i]) - int(row[i]))
    return [v % field.p for v in total]


@pytest.mark.parametrize("half", [1, 5, (1 << 13) + 1, (1 << 16) - 1, 1 << 16, (1 << 16) + 3])
def test_pair_mask_sum_equals_the_materialised_streams(half):
    from protocols.crypto.mask_sums import pair_mask_sum

    field = prime_field("2^61-1")
    rng = np.random.default_rng(half)
    keys = [rng.bytes(32) for _ in range(4)]
    signs = [1, -1, -1, 1]
    got = pair_mask_sum(keys, signs, 9, half, field)
    expected = _net_from_materialised(keys, signs, 9, half, field)
    sample = np.linspace(0, half - 1, num=min(half, 200), dtype=int)
    assert [int(got[i]) for i in sample] == [expected[i] for i in sample]


@pytest.mark.parametrize("p", [5, 2**31 - 1])
def test_pair_mask_sum_in_other_fields(p):
    from protocols.crypto.mask_sums import pair_mask_sum

    field = prime_field(p)
    keys = [bytes([k]) * 32 for k in range(1, 4)]
    got = pair_mask_sum(keys, [1, 1, -1], 3, 50, field)
    assert [int(v) for v in got] == _net_from_materialised(keys, [1, 1, -1], 3, 50, field)


def test_fused_path_declines_a_rejected_word_and_the_sum_falls_back(monkeypatch):
    """A keystream word masking to p (probability 2^-61) would shift every later element;
    the fused path must then give up and the exact materialised path answer."""
    field = prime_field("2^61-1")
    keys = [b"\x07" * 32, b"\x08" * 32]
    real_ctr = keystream.ctr_encryptor

    class RejectingCtr:
        def __init__(self, inner):
            self.inner = inner

        def update_into(self, data, buf):
            written = self.inner.update_into(data, buf)
            words = np.frombuffer(buf, dtype=np.uint64, count=written // 8)
            words[-1] = np.uint64((1 << 64) - 1)  # masks to p: a rejected candidate
            return written

    monkeypatch.setattr(mask_sums, "ctr_encryptor", lambda *a: RejectingCtr(real_ctr(*a)))
    terms = mask_sums._terms(keys, [1, -1], mask_sums.FUSE_MIN_HALF, 2)
    assert mask_sums._signed_sum_61(terms, 4, mask_sums.FUSE_MIN_HALF) is None
    monkeypatch.setattr(mask_sums, "ctr_encryptor", real_ctr)
    monkeypatch.setattr(mask_sums, "_signed_sum_61", lambda *a: None)
    half = mask_sums.FUSE_MIN_HALF + 1
    got = mask_sums.pair_mask_sum(keys, [1, -1], 4, half, field)
    expected = _net_from_materialised(keys, [1, -1], 4, half, field)
    assert [int(got[i]) for i in (0, 1, half // 2, half - 1)] == [
        expected[i] for i in (0, 1, half // 2, half - 1)]


def test_pair_mask_sum_checks_its_arguments():
    from protocols.crypto.mask_sums import pair_mask_sum

    field = prime_field("2^61-1")
    with pytest.raises(InputError):
        pair_mask_sum([bytes(32)], [2], 0, 4, field)
    with pytest.raises(InputError):
        pair_mask_sum([bytes(32)], [1, -1], 0, 4, field)
    with pytest.raises(InputError):
        pair_mask_sum([bytes(31)], [1], 0, 4, field)


# -- kept encryptors (StreamCiphers): ECB on counter blocks is the CTR keystream -------------


def reference_keystream_from(key: bytes, stream: int, start_block: int, n_bytes: int) -> bytes:
    """pycryptodome's CTR from an explicit 64-bit block counter ``start_block``."""
    counter = Counter.new(64, prefix=stream.to_bytes(8, "big"), initial_value=start_block)
    return AES.new(key, AES.MODE_CTR, counter=counter).encrypt(bytes(n_bytes))


@pytest.mark.parametrize("stream", [0, 3, 2**63 + 5, 2**64 - 1])
def test_kept_encryptor_keystream_matches_pycryptodome_ctr_at_offsets(stream: int) -> None:
    ciphers = keystream.StreamCiphers()
    for start_block in (0, 1, 7, 2**32 - 1, 2**63, 2**64 - 40):
        for n_words in (0, 1, 2, 3, 31, 80):
            expected = reference_keystream_from(KEY, stream, start_block, 8 * n_words)
            got = ciphers.keystream_words(KEY, stream, n_words, start_block)
            assert got.dtype == np.uint64 and got.tobytes() == expected
            expected = aes_ctr.keystream_words(KEY, stream, n_words, start_block)
            assert got.tobytes() == expected.tobytes()
    assert ciphers.kept == 1  # one encryptor, reused by every call
    with pytest.raises(InputError, match="overflow"):
        ciphers.keystream_words(KEY, stream, 4, 2**64 - 1)


def _signed_reference(keys, signs, stream, n, p, halves):
    """Σ_k sign_k·s_k or Σ_k sign_k·(s_k[n:] − s_k[:n]) mod p, by hand from pycryptodome."""
    total = [0] * n
    for key, sign in zip(keys, signs, strict=True):
        row = reference_elements(key, stream, halves * n, p)
        for i in range(n):
            total[i] += sign * (row[i] if halves == 1 else row[n + i] - row[i])
    return [v % p for v in total]


@pytest.mark.parametrize(
    ("field", "n"),
    [(F61, 1), (F61, 999), (F61, 2001), (F61, mask_sums.FUSE_MIN_HALF + 3),
     (F5, 333), (F31, 700), (F64, 257), (F127, 40)],
)
def test_kept_encryptors_give_the_streams_of_fresh_ones_and_of_pycryptodome(field, n) -> None:
    """One StreamCiphers serves many calls (streams, lengths, keys interleaved); every result
    equals the module function's (fresh encryptors) and the hand reference from pycryptodome's
    CTR — for GF(2^61 − 1) on the short and the fused path, and for fields with rejections."""
    ciphers = keystream.StreamCiphers()
    keys = _keys(5)
    signs = [1, -1, -1, 1, -1]
    for stream in (9, 2**40 + 1, 9 + 1):
        rows = ciphers.field_streams(keys, stream, n, field)
        np.testing.assert_array_equal(rows, keystream.field_streams(keys, stream, n, field))
        assert [int(v) for v in rows[2]] == reference_elements(keys[2], stream, n, field.p)
        single = ciphers.field_stream(keys[4], stream, n, field)
        assert [int(v) for v in single] == reference_elements(keys[4], stream, n, field.p)
        for halves, method in ((1, "signed_stream_sum"), (2, "pair_mask_sum")):
            kept = getattr(mask_sums, method)(keys, signs, stream, n, field, ciphers=ciphers)
            fresh = getattr(mask_sums, method)(keys, signs, stream, n, field)
            np.testing.assert_array_equal(kept, fresh)
            if n <= 2001:  # the hand reference is pure Python
                expected = _signed_reference(keys, signs, stream, n, field.p, halves)
                assert [int(v) for v in kept] == expected
    assert ciphers.kept == len(keys)


@pytest.mark.parametrize("field", [F5, F31, F127])
def test_kept_encryptors_continue_a_stream_after_rejections(monkeypatch, field) -> None:
    """Short first passes force the continuation (from a block offset, mid-block) to run."""
    ciphers = keystream.StreamCiphers()
    expected = reference_elements(KEY, 6, 90, field.p)
    assert [int(v) for v in ciphers.field_stream(KEY, 6, 90, field)] == expected
    monkeypatch.setattr(keystream, "_candidates", lambda _field, need: min(need, 3))
    assert [int(v) for v in ciphers.field_stream(KEY, 6, 90, field)] == expected
    rows = ciphers.field_streams([OTHER_KEY, KEY], 6, 90, field)
    assert [int(v) for v in rows[1]] == expected


class _CorruptingEcb:
    """An ECB encryptor whose keystream word ``word`` (counted from block 0) is all ones, so
    that it masks to p: a rejected candidate of GF(2^61 − 1), planted."""

    def __init__(self, inner, word: int) -> None:
        self.inner, self.word = inner, word

    def update_into(self, data, buf):
        written = self.inner.update_into(data, buf)
        first_block = int.from_bytes(bytes(data[8:16]), "big")
        at = self.word - 2 * first_block
        if 0 <= at < written // 8:
            np.frombuffer(buf, dtype=np.uint64, count=written // 8)[at] = np.uint64(2**64 - 1)
        return written


@pytest.mark.parametrize("halves", [1, 2])
@pytest.mark.parametrize("bad", [0, 3])  # a key that enters with +, one with −
def test_short_mersenne_sum_draws_a_group_with_a_rejection_exactly(monkeypatch, halves, bad):
    """A rejected word in the grouped GF(2^61 − 1) sum shifts that stream by one word: the
    group is drawn exactly (with continuation past the ECB pass) and the sum is that of the
    shifted stream, computed here by hand from pycryptodome's keystream."""
    n, word, stream = 37, 20, 5
    keys = _keys(5)
    signs = [1, 1, -1, -1, 1]
    clean = mask_sums.signed_stream_sum(keys, signs, stream, n, F61) if halves == 1 else (
        mask_sums.pair_mask_sum(keys, signs, stream, n, F61))
    real_ecb = keystream._ecb
    monkeypatch.setattr(keystream, "GROUP_WORDS", 2 * (halves * n + 1))  # groups of two keys
    monkeypatch.setattr(keystream, "_ecb", lambda key: _CorruptingEcb(real_ecb(key), word)
                        if key == keys[bad] else real_ecb(key))
    fn = mask_sums.pair_mask_sum if halves == 2 else mask_sums.signed_stream_sum
    got = fn(keys, signs, stream, n, F61, ciphers=StreamCiphers())
    total = [0] * n
    for k, (key, sign) in enumerate(zip(keys, signs, strict=True)):
        words = np.frombuffer(reference_keystream(key, stream, 8 * (halves * n + 8)), "<u8")
        masked = [int(w) & MERSENNE61 for w in words]
        if k == bad:
            masked[word] = MERSENNE61  # rejected: every later element moves up one word
        row = [v for v in masked if v != MERSENNE61][: halves * n]
        for i in range(n):
            total[i] += sign * (row[i] if halves == 1 else row[n + i] - row[i])
    assert [int(v) for v in got] == [v % MERSENNE61 for v in total]
    assert not np.array_equal(got, clean)  # the planted rejection did change the sum


def test_stream_ciphers_keep_from_a_keys_second_use_only_when_asked_and_validate() -> None:
    kept, fresh = keystream.StreamCiphers(), keystream.StreamCiphers(keep=False)
    for ciphers in (kept, fresh):
        mask_sums.signed_stream_sum(_keys(3), [1, 1, -1], 0, 10, F61, ciphers=ciphers)
        ciphers.field_stream(KEY, 0, 10, F5)
    assert kept.kept == 0 == fresh.kept  # each key used once: nothing kept
    for ciphers in (kept, fresh):
        ciphers.field_streams(_keys(2), 1, 10, F61)
    assert kept.kept == 2 and fresh.kept == 0
    kept.field_streams(_keys(3), 2, 10, F61)
    assert kept.kept == 3
    with pytest.raises(InputError, match=r"keys\[1\]"):
        kept.field_streams([KEY, bytes(16)], 0, 4, F61)
    with pytest.raises(InputError, match="signs"):
        mask_sums.pair_mask_sum([KEY], [0], 0, 4, F61, ciphers=kept)
    with pytest.raises(InputError, match="stream"):
        kept.field_stream(KEY, 2**64, 4, F61)


def test_long_signed_sums_reuse_their_buffers_and_carry_nothing_between_calls() -> None:
    """The fused signed sums of long streams keep their keystream and running-sum buffers in
    the owner's scratch: a second call allocates no new ones, and after every scratch buffer
    is overwritten with ones, later calls (another stream, a shorter and a longer length)
    still equal the sums of the streams materialised by pycryptodome's CTR (numpy on Python
    ints of sampled positions), so nothing of one call reaches the next."""
    ciphers = StreamCiphers()
    keys = _keys(3)
    signs = [1, -1, 1]
    n0 = mask_sums.FUSE_MIN_HALF + 5
    mask_sums.signed_stream_sum(keys, signs, 3, n0, F61, ciphers=ciphers)
    scratch = ciphers._stream_scratch()
    sums, buffer = scratch._sums, scratch._buffer
    assert sums is not None and buffer is not None
    for n, stream in ((n0, 4), (mask_sums.FUSE_MIN_HALF, 2**33 + 7), ((1 << 16) + 9, 11)):
        for held in (scratch._sums, scratch._buffer):
            held.view(np.uint8)[...] = 0xFF
        got = mask_sums.signed_stream_sum(keys, signs, stream, n, F61, ciphers=ciphers)
        rows = [reference_elements(key, stream, n, MERSENNE61) for key in keys]
        sample = np.unique(np.r_[0, 1, np.linspace(0, n - 1, 64, dtype=int), n - 1])
        expected = [sum(sign * row[i] for row, sign in zip(rows, signs, strict=True))
                    % MERSENNE61 for i in sample]
        assert [int(got[i]) for i in sample] == expected
    assert scratch._sums is sums  # the longest call fits the first call's buffers
