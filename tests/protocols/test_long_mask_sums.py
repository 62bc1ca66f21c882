"""SecureSum's masked column sum of long vectors, compiled (``mask_sums._signed_sum_long_61``).

x̂ + Σ_{j>i} s_ij − Σ_{j<i} s_ij over GF(2^61 − 1) for vectors of
:data:`protocols.crypto.mask_sums.FUSE_MIN_HALF` elements or more is drawn block by block into
the owner's kept rows and summed in one compiled pass. Every result is checked against an
independent reference — pycryptodome's AES-CTR keystream, masked and summed with Python
integers' rules in numpy (values < 2^62, so no wrap-around) — across blocks, odd lengths,
keys of both signs, a rejected keystream word in either sign, a base outside the field, more
keys than the rows hold, and scratch scribbled over between calls.
"""

from __future__ import annotations

import numpy as np
import pytest
from Crypto.Cipher import AES
from Crypto.Util import Counter

from protocols.context import AesRandomness, add_one_stream_mask
from protocols.crypto import aes_ctr, keystream, mask_sums
from protocols.crypto.keystream import CHUNK_WORDS, StreamCiphers
from protocols.effects import Call
from protocols.field import MERSENNE61, prime_field

P = MERSENNE61
F61 = prime_field("2^61-1")


def keystream_words(key: bytes, stream: int, n_words: int) -> np.ndarray:
    """The first ``n_words`` 64-bit little-endian words of the stream's AES-256-CTR keystream
    (pycryptodome: counter block ``stream`` ‖ b), masked to 61 bits."""
    counter = Counter.new(64, prefix=stream.to_bytes(8, "big"), initial_value=0)
    data = AES.new(key, AES.MODE_CTR, counter=counter).encrypt(bytes(8 * n_words))
    return np.frombuffer(data, dtype="<u8").astype(np.uint64) & np.uint64(P)


def elements(words: np.ndarray, n: int) -> np.ndarray:
    """The first n field elements of masked words: rejected words (= p) skipped."""
    kept = words[words != np.uint64(P)]
    assert len(kept) >= n
    return kept[:n]


def reference(base: np.ndarray, keys: list[bytes], signs: list[int], stream: int,
              n: int) -> np.ndarray:
    total = base.astype(np.uint64) % np.uint64(P)
    for key, sign in zip(keys, signs, strict=True):
        row = elements(keystream_words(key, stream, n + 8), n)
        total = (total + (row if sign > 0 else np.uint64(P) - row)) % np.uint64(P)
    return total


@pytest.mark.parametrize("n", [mask_sums.FUSE_MIN_HALF, CHUNK_WORDS + 3, 100_000])
@pytest.mark.parametrize("signs", [[1], [-1], [1, -1], [-1, -1, 1], [1, 1, -1, -1, 1]])
def test_long_column_sum_equals_the_keystream_by_hand(n, signs):
    rng = np.random.default_rng(n + len(signs))
    keys = [rng.bytes(32) for _ in signs]
    base = rng.integers(0, P, n, dtype=np.uint64)
    base[:2] = [0, P - 1]
    stream = int(rng.integers(0, 2**63))
    ciphers = StreamCiphers()
    for call in range(2):  # the kept rows serve the second call as the first
        got = mask_sums.add_signed_stream_sum(base, keys, signs, stream + call, F61,
                                              ciphers=ciphers)
        assert got.dtype == np.uint64 and not np.shares_memory(got, base)
        assert np.array_equal(got, reference(base, keys, signs, stream + call, n))
    assert ciphers._stream_scratch()._rows is not None  # the compiled path ran


def test_many_keys_take_the_per_key_blocks_and_give_the_same_sum():
    n, n_keys = mask_sums.FUSE_MIN_HALF, 40  # blocks of 2^17 / 40 < 4096 words: numpy path
    rng = np.random.default_rng(3)
    keys = [rng.bytes(32) for _ in range(n_keys)]
    signs = [1 if k % 3 else -1 for k in range(n_keys)]
    base = rng.integers(0, P, n, dtype=np.uint64)
    ciphers = StreamCiphers()
    got = mask_sums.add_signed_stream_sum(base, keys, signs, 5, F61, ciphers=ciphers)
    assert np.array_equal(got, reference(base, keys, signs, 5, n))
    assert ciphers._stream_scratch()._rows is None


def test_a_base_outside_the_field_is_field_add():
    n = mask_sums.FUSE_MIN_HALF + 1
    keys, signs = [bytes([1]) * 32, bytes([2]) * 32], [1, -1]
    base = np.full(n, P, dtype=np.uint64)
    base[-1] = 2**64 - 1
    mask = mask_sums.signed_stream_sum(keys, signs, 9, n, F61)
    got = mask_sums.add_signed_stream_sum(base, keys, signs, 9, F61, ciphers=StreamCiphers())
    assert np.array_equal(got, F61.add(base, mask))  # field.add's rule for such a base
    assert np.array_equal(mask, reference(np.zeros(n, np.uint64), keys, signs, 9, n))


class _Rejecting:
    """A CTR encryptor whose keystream word ``word`` of the stream masks to p (its first
    pass starts at word ``start_word``)."""

    def __init__(self, inner, word: int, start_word: int) -> None:
        self.inner, self.word, self.start = inner, word, start_word

    def update_into(self, data, buf):
        written = self.inner.update_into(data, buf)  # whole words: passes are word-aligned
        at = self.word - self.start
        if 0 <= at < written // 8:
            np.frombuffer(buf, dtype=np.uint64, count=written // 8)[at] = np.uint64(2**64 - 1)
        self.start += written // 8  # a context's next pass continues its keystream
        return written


@pytest.mark.parametrize("bad", [0, 1])  # a key that enters with +, one with −
@pytest.mark.parametrize("word", [5, CHUNK_WORDS + 11])  # in the first block, in the second
def test_a_rejected_word_draws_the_stream_exactly(monkeypatch, bad, word):
    n, stream = CHUNK_WORDS + 1000, 17
    keys, signs = [bytes([7]) * 32, bytes([8]) * 32], [1, -1]
    base = np.random.default_rng(1).integers(0, P, n, dtype=np.uint64)
    real_ctr = aes_ctr.ctr_encryptor
    real_ecb = keystream._ecb

    def ctr(key, stream_, start_block=0):
        inner = real_ctr(key, stream_, start_block)
        return _Rejecting(inner, word, 2 * start_block) if key == keys[bad] else inner

    class Ecb:  # the exact path's ECB draws see the same rejected word
        def __init__(self, key):
            self.inner, self.key = real_ecb(key), key

        def update_into(self, data, buf):
            written = self.inner.update_into(data, buf)
            if self.key == keys[bad]:
                at = word - 2 * int.from_bytes(bytes(data[8:16]), "big")
                if 0 <= at < written // 8:
                    np.frombuffer(buf, dtype=np.uint64, count=written // 8)[at] = (
                        np.uint64(2**64 - 1))
            return written

    for module in (mask_sums, keystream):
        if hasattr(module, "ctr_encryptor"):
            monkeypatch.setattr(module, "ctr_encryptor", ctr)
    monkeypatch.setattr(keystream, "_ecb", Ecb)
    got = mask_sums.add_signed_stream_sum(base, keys, signs, stream, F61, ciphers=StreamCiphers())
    total = base.copy()
    for k, (key, sign) in enumerate(zip(keys, signs, strict=True)):
        words = keystream_words(key, stream, n + 8)
        if k == bad:
            words[word] = P  # every later element moves up one word
        row = elements(words, n)
        total = (total + (row if sign > 0 else np.uint64(P) - row)) % np.uint64(P)
    assert np.array_equal(got, total)


def test_scribbled_rows_between_calls_reach_no_later_sum():
    """The rows are the owner's scratch: whatever is left in them (by a call, or written by
    the owner's own program) does not shape the next column sum."""
    n, party, peers = 100_000, 1, (0, 2)
    seeds = {0: bytes([3]) * 32, 2: bytes([4]) * 32}
    randomness = AesRandomness(F61, bytes(32), party)
    for peer, seed in seeds.items():
        randomness.set_pair_seed(peer, seed)
    base = np.random.default_rng(2).integers(0, P, n, dtype=np.uint64)
    for index in range(3):
        call = Call("secure_sum", index)
        got = add_one_stream_mask(randomness, party, peers, call, base, F61)
        expected = reference(base, [seeds[0], seeds[2]], [-1, 1], index * 65536, n)
        assert np.array_equal(got, expected)
        rows = randomness.ciphers._stream_scratch()._rows
        assert rows is not None
        rows[...] = np.uint64(P)  # every word a rejected candidate, were it read
