"""The mask stream drawn straight into its output
(:func:`protocols.crypto.keystream._direct_field_stream`).

Every expected value is built here from `cryptography`'s own AES-256-CTR (counter block =
stream ‖ 0, big-endian, as the :mod:`protocols.crypto.keystream` docstring documents) and the
documented
rule — little-endian 64-bit words, masked to the bit length of p, values ≥ p rejected, accepted
candidates in keystream order — never from the code under test. The sizes straddle the
path's boundaries (one scratch pass, in-place passes, the two tail words written through the
scratch buffer), and planted rejected words, at the start, in the middle, across a pass
boundary and among the tail words, must shift the stream exactly as the rule says.
"""

from __future__ import annotations

import numpy as np
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from protocols.crypto import keystream as prg
from protocols.field import MERSENNE61, prime_field

KEY = bytes(range(7, 39))
OTHER = bytes(range(100, 132))
F61 = prime_field(MERSENNE61)
F31 = prime_field((1 << 31) - 1)
F_REJECTING = prime_field(31)  # 5 bits: one candidate in 32 is rejected
PASS = prg.STREAM_PASS_WORDS
SIZES = [1, 2, 3, 999, 1000, prg.KEPT_GROUP_WORDS, prg.KEPT_GROUP_WORDS + 1, PASS - 1, PASS,
         PASS + 1, PASS + 2, PASS + 3, 3 * PASS + 5]


def keystream(key: bytes, stream: int, n_words: int) -> np.ndarray:
    """``n_words`` words of AES-256-CTR keystream from counter block stream ‖ 0 (cryptography)."""
    counter = stream.to_bytes(8, "big") + bytes(8)
    data = Cipher(algorithms.AES(key), modes.CTR(counter)).encryptor().update(bytes(8 * n_words))
    return np.frombuffer(data, dtype="<u8").copy()


def by_rule(words: np.ndarray, p: int, n: int) -> list[int]:
    """The first n accepted candidates: words masked to p's bit length, values ≥ p dropped."""
    mask = (1 << p.bit_length()) - 1
    accepted = [v for v in (int(w) & mask for w in words.tolist()) if v < p]
    assert len(accepted) >= n, "the test drew too little keystream"
    return accepted[:n]


def expected(key: bytes, stream: int, n: int, p: int, extra: int = 64) -> np.ndarray:
    return np.array(by_rule(keystream(key, stream, n + extra), p, n), dtype=np.uint64)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("field", [F61, F31], ids=["2^61-1", "2^31-1"])
def test_streams_equal_cryptography_ctr_masked_by_the_rule(field, n: int) -> None:
    want = expected(KEY, 2**63 + 9, n, field.p)
    kept = prg.StreamCiphers()
    results = [prg.field_stream(KEY, 2**63 + 9, n, field)]
    results += [kept.field_stream(KEY, 2**63 + 9, n, field) for _ in range(3)]  # kept from #2
    for got in results:
        assert got.dtype == field.dtype and got.shape == (n,) and got.flags.writeable
        np.testing.assert_array_equal(got.astype(np.uint64), want)
    assert kept.kept == (n <= prg.KEPT_GROUP_WORDS)  # longer streams: a CTR context per call


def test_one_owner_interleaving_sizes_streams_keys_and_fields_matches_the_reference() -> None:
    """The kept scratch (zeros, buffer, counter blocks) grows and is rewritten: no call's
    buffers leak into the next one's elements."""
    kept = prg.StreamCiphers()
    calls = [(KEY, 5, 2001, F61), (OTHER, 5, 3, F61), (KEY, 6, 2001, F61), (KEY, 6, 9000, F31),
             (OTHER, 7, 40_000, F61), (KEY, 5, 2001, F61), (OTHER, 5, 7, F31), (KEY, 8, 1, F61)]
    for key, stream, n, field in calls * 2:
        got = kept.field_stream(key, stream, n, field)
        np.testing.assert_array_equal(got.astype(np.uint64), expected(key, stream, n, field.p))


def test_rows_of_field_streams_are_written_in_place_and_equal_the_reference() -> None:
    n = PASS + 7  # long rows: each is drawn into its row of the output
    keys = [KEY, OTHER, bytes(32)]
    rows = prg.field_streams(keys, 3, n, F61)
    for key, row in zip(keys, rows, strict=True):
        np.testing.assert_array_equal(row, expected(key, 3, n, MERSENNE61))


@pytest.mark.parametrize("n", [1000, 20_000, 3 * PASS + 5])
def test_a_field_with_real_rejections_forced_onto_the_path_falls_back_exactly(monkeypatch, n):
    """GF(31) rejects one candidate in 32: forced onto the direct path (which only masks), the
    first pass meets a rejection and the stream must still be the rule's."""
    monkeypatch.setattr(prg, "_MAX_STREAMS_REJECTIONS", float("inf"))
    want = expected(KEY, 4, n, 31, extra=n // 8 + 64)
    for ciphers in (prg.StreamCiphers(keep=False), prg.StreamCiphers()):
        got = ciphers.field_stream(KEY, 4, n, F_REJECTING)
        np.testing.assert_array_equal(got.astype(np.uint64), want)


class _PlantingCtr:
    """A CTR context whose keystream word ``word`` (counted from block 0 of the stream) is all
    ones, so that it masks to p = 2^61 − 1: a rejected candidate, planted."""

    def __init__(self, inner, start_block: int, word: int) -> None:
        self.inner, self.word = inner, word
        self.position = 2 * start_block  # words of keystream already produced

    def _plant(self, buf, written: int) -> None:
        at = self.word - self.position
        if 0 <= at < written // 8:
            np.frombuffer(buf, dtype=np.uint64, count=written // 8)[at] = np.uint64(2**64 - 1)
        self.position += written // 8

    def update_into(self, data, buf) -> int:
        written = self.inner.update_into(data, buf)
        self._plant(buf, written)
        return written

    def update(self, data) -> bytes:
        out = bytearray(self.inner.update(data))
        self._plant(memoryview(out), len(out))
        return bytes(out)


class _PlantingEcb:
    """An ECB encryptor on counter blocks whose keystream word ``word`` is all ones."""

    def __init__(self, inner, word: int) -> None:
        self.inner, self.word = inner, word

    def update_into(self, data, buf) -> int:
        written = self.inner.update_into(data, buf)
        first_block = int.from_bytes(bytes(data[8:16]), "big")
        at = self.word - 2 * first_block
        if 0 <= at < written // 8:
            np.frombuffer(buf, dtype=np.uint64, count=written // 8)[at] = np.uint64(2**64 - 1)
        return written


@pytest.mark.parametrize(("n", "word"), [
    (50, 0), (50, 49), (2001, 1000), (20_000, 0), (20_000, 19_998), (20_000, 19_999),
    (3 * PASS + 5, PASS - 1), (3 * PASS + 5, PASS), (3 * PASS + 5, 3 * PASS + 4),
])
def test_a_planted_rejected_word_shifts_the_stream_by_one_word(monkeypatch, n, word):
    real_ctr, real_ecb = prg.ctr_encryptor, prg._ecb
    monkeypatch.setattr(prg, "ctr_encryptor", lambda key, stream, start_block=0: _PlantingCtr(
        real_ctr(key, stream, start_block), start_block, word))
    monkeypatch.setattr(prg, "_ecb", lambda key: _PlantingEcb(real_ecb(key), word))
    words = keystream(KEY, 2, n + 8)
    clean = by_rule(words, MERSENNE61, n)
    words[word] = np.uint64(2**64 - 1)
    want = np.array(by_rule(words, MERSENNE61, n), dtype=np.uint64)
    assert want.tolist() != clean  # the planted word did move the stream
    for ciphers in (prg.StreamCiphers(keep=False), prg.StreamCiphers(), prg.StreamCiphers()):
        np.testing.assert_array_equal(ciphers.field_stream(KEY, 2, n, F61), want)
    kept = prg.StreamCiphers()
    for _ in range(3):  # the kept encryptor's path, from the second call on
        np.testing.assert_array_equal(kept.field_stream(KEY, 2, n, F61), want)



@pytest.mark.parametrize("n", [1, 1000, prg.KEPT_GROUP_WORDS + 1, 20_000, PASS])
@pytest.mark.parametrize("keep", [False, True])
def test_each_short_stream_is_an_array_of_its_own(n: int, keep: bool) -> None:
    """Short streams are encrypted straight into an array of their own (the module function,
    and a kept owner above one scratch pass): two calls share no memory, and scribbling over
    the first changes neither the second nor a third drawn after it."""
    want = expected(OTHER, 11, n, MERSENNE61)
    ciphers = prg.StreamCiphers(keep=keep)
    first, second = (ciphers.field_stream(OTHER, 11, n, F61) for _ in range(2))
    assert not np.shares_memory(first, second)
    first[...] = np.uint64(2**64 - 1)
    np.testing.assert_array_equal(second, want)
    np.testing.assert_array_equal(ciphers.field_stream(OTHER, 11, n, F61), want)
    np.testing.assert_array_equal(prg.field_stream(OTHER, 11, n, F61), want)
