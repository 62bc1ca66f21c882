"""Sums of signed pairwise masks over AES-CTR streams: SecureSum's one-pass mask.

In the PRG-seeded SecureSum (Tsikhanovich thesis, seed 001, §2.2; the one-stream mask of
Bonawitz et al. 2017) a party adds Σ_j ±s_ij, the streams it shares with its peers
(:mod:`protocols.crypto.keystream`). For GF(2^61 − 1) these sums are formed without
materialising the streams one by one: short streams are drawn a group of keys at a time
(about 2 MiB of keystream) and masked, checked and summed over the group's rows — in one
compiled pass (:mod:`protocols.field.mersenne61_kernels`) from
:data:`protocols.field.mersenne61.KERNEL_MIN_ELEMENTS` elements on, in numpy below
(:func:`protocols.field.mersenne61.sum_rows61`) — and :func:`add_signed_keys_sum` adds the sum
to SecureSum's x̂ in the same pass. Long streams (from :data:`FUSE_MIN_HALF` elements on) are
summed block by block at their keystream offsets into a cache-sized buffer. A rejected word
(probability 2^−61) would shift later elements; when one occurs, the streams concerned are
drawn exactly, so every result equals the sum of the materialised streams.

Every function takes the :class:`~protocols.crypto.keystream.StreamCiphers` of the party that
draws (its kept encryptors); without one, encryptors are built for the call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from protocols.crypto.aes_ctr import ctr_encryptor
from protocols.crypto.arguments import (
    KEY_BYTES,
    MAX_STREAM,
    as_count,
    as_key,
    as_stream,
    check_field,
)
from protocols.crypto.keystream import (
    _WORD_BYTES,
    CHUNK_WORDS,
    GROUP_WORDS,
    StreamCiphers,
    _draw_rows,
    _field_streams,
    _group_buffers,
    _keystream_groups,
)
from protocols.errors import InputError
from protocols.field import MERSENNE61, Mersenne61Field, PrimeField, mersenne61
from protocols.field.mersenne61 import is_flat_u64, reduce61_inplace, sum_rows61

__all__ = [
    "FUSE_MIN_HALF",
    "SignedKeys",
    "add_signed_keys_sum",
    "add_signed_stream_sum",
    "pair_mask_sum",
    "signed_stream_sum",
]


FUSE_MIN_HALF = 1 << 13
"""Half-stream length from which :func:`pair_mask_sum` fuses generation and summation."""


def pair_mask_sum(
    keys: Sequence[bytes], signs: Sequence[int], stream: int, half: int, field: PrimeField,
    ciphers: StreamCiphers | None = None,
) -> np.ndarray:
    """Σ_k signs[k]·(second half − first half) of the 2·half-element streams of ``keys``.

    With s_k = ``field_stream(keys[k], stream, 2·half, field)`` this is
    Σ_k signs[k]·(s_k[half:] − s_k[:half]): the net pairwise mask a party adds in the PRG
    SecureSum (:func:`protocols.sharing.pair_shares`: the first half of a pair's stream is
    the lower party's share for the higher one, the second half the reverse).

    For GF(2^61 − 1) the streams are never materialised one by one. Halves of at least
    :data:`FUSE_MIN_HALF` elements are summed block by block over positions: each block of
    each half is drawn at its keystream offset (element i of a stream is keystream word i as
    long as no earlier word was rejected) straight into a cache-sized buffer and added to the
    running sum, so the masks never travel to memory. Shorter halves are drawn for a group of
    keys at a time (about 2 MiB of keystream), masked, and summed over the group's rows.
    A rejected word (probability 2^−61 each) would shift later elements; if one occurs, the
    streams concerned are drawn exactly (with continuation), so the result is always exact.

    Parameters
    ----------
    keys : sequence of bytes
        K 32-byte keys.
    signs : sequence of int
        +1 or −1 for each key.
    stream : int
        Stream number in [0, 2^64).
    half : int
        Length of each half, ≥ 0.
    field : PrimeField
    ciphers : StreamCiphers, optional
        The drawing party's encryptors; without them, encryptors are built for the call.

    Returns
    -------
    numpy.ndarray of ``field.dtype``, shape (half,)
    """
    key_list, sign_list, stream, half = _signed_arguments(keys, signs, stream, half, field)
    return _signed_sum(_own(ciphers), key_list, sign_list, stream, half, field, halves=2)


def signed_stream_sum(
    keys: Sequence[bytes], signs: Sequence[int], stream: int, n: int, field: PrimeField,
    ciphers: StreamCiphers | None = None,
) -> np.ndarray:
    """Σ_k signs[k]·s_k of the ``n``-element streams s_k = ``field_stream(keys[k], stream, n)``.

    The one-stream pairwise mask (the usual form, e.g. Bonawitz et al. 2017): the pair
    {i, j}, i < j, draws one n-element stream s_ij per invocation; i adds it and j subtracts
    it, so the masks cancel in the sum. It costs half the keystream of :func:`pair_mask_sum`
    (whose two shares per pair enter only through their difference, which is distributed as
    one uniform stream). For GF(2^61 − 1) the streams are summed without materialising them
    one by one, as in :func:`pair_mask_sum`.

    Parameters
    ----------
    keys : sequence of bytes
        K 32-byte keys.
    signs : sequence of int
        +1 or −1 for each key.
    stream : int
        Stream number in [0, 2^64).
    n : int
        Stream length, ≥ 0.
    field : PrimeField
    ciphers : StreamCiphers, optional
        The drawing party's encryptors; without them, encryptors are built for the call.

    Returns
    -------
    numpy.ndarray of ``field.dtype``, shape (n,)
    """
    key_list, sign_list, stream, n = _signed_arguments(keys, signs, stream, n, field)
    return _signed_sum(_own(ciphers), key_list, sign_list, stream, n, field, halves=1)


class SignedKeys:
    """Stream keys with a sign each, checked once: the + keys first, then the − keys.

    SecureSum's column sum adds the pair streams of the higher peers and subtracts those of the
    lower ones (the one-stream mask; thesis seed 001, §2.2, Table 2.1), with the same keys and
    signs in every call of a run: a party's randomness builds this once per set of peers
    (:class:`protocols.context.AesRandomness`) and hands it to
    :func:`add_signed_keys_sum`, so the keys are not checked and sorted again in
    every call. Immutable: the keys are a tuple of ``bytes``.

    Parameters
    ----------
    keys : sequence of bytes
        32-byte keys.
    signs : sequence of int
        +1 or −1 for each key.

    Raises
    ------
    InputError
        If a key is not 32 bytes, or a sign is not ±1, or the counts differ.
    """

    __slots__ = ("keys", "n_plus")

    keys: tuple[bytes, ...]
    n_plus: int

    def __init__(self, keys: Sequence[bytes], signs: Sequence[int]) -> None:
        key_list, sign_list = _checked_keys_and_signs(keys, signs)
        plus = [k for k, s in zip(key_list, sign_list, strict=True) if s > 0]
        minus = [k for k, s in zip(key_list, sign_list, strict=True) if s < 0]
        object.__setattr__(self, "keys", (*plus, *minus))
        object.__setattr__(self, "n_plus", len(plus))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"SignedKeys is immutable; cannot set {name!r}")

    @property
    def signs(self) -> list[int]:
        """The sign of each of :attr:`keys`: +1 for the first :attr:`n_plus`, then −1."""
        return [1] * self.n_plus + [-1] * (len(self.keys) - self.n_plus)


def add_signed_stream_sum(
    base: np.ndarray, keys: Sequence[bytes], signs: Sequence[int], stream: int,
    field: PrimeField, ciphers: StreamCiphers | None = None,
) -> np.ndarray:
    """``field.add(base, signed_stream_sum(keys, signs, stream, len(base), field))``.

    SecureSum's column sum x̂ + Σ_j ±s_ij in one step: for GF(2^61 − 1), a flat ``uint64``
    ``base`` and short streams, the masks are added to ``base`` in the pass that sums them
    (:func:`protocols.field.mersenne61_kernels.signed_rows_sum`); otherwise — and when ``base``
    holds a value ≥ p — the mask is summed first and added with ``field.add``. The result
    is the same either way.
    """
    base = np.asarray(base)
    if base.ndim != 1:
        raise InputError(f"base must be a flat vector, got shape {base.shape}")
    return add_signed_keys_sum(base, SignedKeys(keys, signs), stream, field, ciphers)

def add_signed_keys_sum(
    base: np.ndarray, signed: SignedKeys, stream: int, field: PrimeField,
    ciphers: StreamCiphers | None = None,
) -> np.ndarray:
    """:func:`add_signed_stream_sum` with keys and signs checked once (:class:`SignedKeys`).

    A party's SecureSum calls take this path (:class:`protocols.context.AesRandomness`):
    only ``base``, ``stream`` and ``field`` are checked per call, exact types first.
    """
    if type(stream) is not int or not 0 <= stream <= MAX_STREAM:
        stream = as_stream(stream)
    if type(field) is Mersenne61Field:
        on_61 = True
    else:
        check_field(field)
        on_61 = isinstance(field, Mersenne61Field)
    if type(base) is not np.ndarray:
        base = np.asarray(base)
    if base.ndim != 1:
        raise InputError(f"base must be a flat vector, got shape {base.shape}")
    n = len(base)
    keys = signed.keys
    if (keys and on_61 and mersenne61.KERNEL_MIN_ELEMENTS <= n < FUSE_MIN_HALF
            and is_flat_u64(base)):
        fused = _signed_sum_short_61(ciphers, keys, signed.n_plus, stream, n, 1, base)
        if fused is not None:
            return fused
    if keys and on_61 and n >= FUSE_MIN_HALF and is_flat_u64(base):
        fused = _signed_sum_long_61(ciphers, keys, signed.n_plus, stream, n, base)
        if fused is not None:
            return fused
    return field.add(base, _signed_sum(ciphers, list(keys), signed.signs, stream, n, field, 1))


def _signed_sum(
    ciphers: StreamCiphers, keys: list[bytes], signs: list[int], stream: int, n: int,
    field: PrimeField, halves: int,
) -> np.ndarray:
    """Σ_k signs[k]·s_k (``halves`` = 1) or Σ_k signs[k]·(s_k[n:] − s_k[:n]) (``halves`` = 2).

    s_k is the (halves·n)-element stream of ``keys[k]``; the shared body of
    :func:`signed_stream_sum` and :func:`pair_mask_sum`.
    """
    if not keys or n == 0:
        return field.zeros(n)
    if isinstance(field, Mersenne61Field):
        if n >= FUSE_MIN_HALF:
            fused = _signed_sum_61(_terms(keys, signs, n, halves), stream, n, ciphers)
        elif n >= mersenne61.KERNEL_MIN_ELEMENTS:
            plus = [key for key, sign in zip(keys, signs, strict=True) if sign > 0]
            ordered = plus + [key for key, sign in zip(keys, signs, strict=True) if sign < 0]
            fused = _signed_sum_short_61(ciphers, ordered, len(plus), stream, n, halves)
        else:
            fused = _signed_sum_short_61_numpy(ciphers, keys, signs, stream, n, halves)
        if fused is not None:  # None: a rejected word; the streams are drawn exactly below
            return fused
    streams = _field_streams(ciphers, keys, stream, halves * n, field)
    plus, minus = [], []
    for row, sign in zip(streams, signs, strict=True):
        first, second = (row[n:], row[:n]) if halves == 2 else (row, None)
        (plus if sign > 0 else minus).append(first)
        if second is not None:
            (minus if sign > 0 else plus).append(second)
    if not plus:  # the highest party of the pairs only subtracts
        return field.neg(field.sum_arrays(minus))
    return field.combine(plus, minus)


def _terms(keys: list[bytes], signs: list[int], n: int, halves: int
           ) -> list[tuple[bytes, int, int]]:
    """The (key, offset in words, ±1) terms of :func:`_signed_sum_61`."""
    if halves == 1:
        return [(key, 0, sign) for key, sign in zip(keys, signs, strict=True)]
    terms = []
    for key, sign in zip(keys, signs, strict=True):
        terms += [(key, n, sign), (key, 0, -sign)]  # sign·(second half − first half)
    return terms


def _signed_sum_short_61(
    ciphers: StreamCiphers, ordered: Sequence[bytes], n_plus: int, stream: int, n: int,
    halves: int, base: np.ndarray | None = None,
) -> np.ndarray | None:
    """:func:`_signed_sum` over GF(2^61 − 1) (plus ``base``) for streams that fit a group buffer.

    ``ordered`` holds the keys that enter with + (the first ``n_plus``), then those that enter
    with − (:class:`SignedKeys`); each group's raw keystream is masked and summed into
    the total in one compiled pass (:func:`protocols.field.mersenne61_kernels.signed_rows_sum`).
    Element i of a stream is its masked word i as long as no earlier word was rejected; if a
    word is rejected (probability 2^−61 each), or ``base`` holds a value ≥ p, this returns
    None and the caller takes the general path, which draws the streams exactly (with
    continuation).
    """
    signed_rows_sum = mersenne61.mersenne61_kernels().signed_rows_sum
    total = base if base is not None else np.empty(0, dtype=np.uint64)  # empty: no base
    out = np.empty(n, dtype=np.uint64)
    n_blocks = -(-halves * n // 2)
    if 0 < len(ordered) <= GROUP_WORDS // (2 * n_blocks):  # one group (SecureSum's calls)
        buffers = _group_buffers(ciphers, n_blocks, len(ordered))
        buffers.streams.fill(stream)
        words = _draw_rows(ciphers, buffers, ordered)
        return out if signed_rows_sum(words, n, n_plus, halves, total, out) else None
    for start, words in _keystream_groups(ciphers, ordered, stream, halves * n):
        plus_here = min(max(n_plus - start, 0), len(words))  # rows [0, plus_here) enter with +
        if total is out:  # a later group: its sum goes to a new array (no aliasing)
            out = np.empty(n, dtype=np.uint64)
        if not signed_rows_sum(words, n, plus_here, halves, total, out):
            return None
        total = out
    return out


def _signed_sum_short_61_numpy(
    ciphers: StreamCiphers, keys: list[bytes], signs: list[int], stream: int, n: int,
    halves: int,
) -> np.ndarray | None:
    """:func:`_signed_sum_short_61` in numpy, for streams shorter than
    :data:`protocols.field.mersenne61.KERNEL_MIN_ELEMENTS`.

    The keys are taken + first, then −; each group's keystream is masked to 61 bits in place,
    every term that enters with − is replaced by p − r (in [1, p]), and the group's rows (or
    row halves) are summed into the total. Element i of a stream is its masked word i as long
    as no earlier word was rejected; if a word is rejected (probability 2^−61 each), this
    returns None and the caller draws the streams exactly, with continuation.
    """
    p = np.uint64(MERSENNE61)
    length = halves * n  # elements, and words, of each key's stream
    order = [k for k, s in enumerate(signs) if s > 0] + [k for k, s in enumerate(signs) if s < 0]
    n_plus = sum(s > 0 for s in signs)
    ordered = [keys[k] for k in order]
    total: np.ndarray | None = None
    scratch = np.empty(n, dtype=np.uint64)
    for start, words in _keystream_groups(ciphers, ordered, stream, length):
        np.bitwise_and(words, p, out=words)
        words[:, length:] = 0  # the unused half block of an odd length
        rows = words[:, :length]
        if words.max() == p:  # a rejected candidate: positions shift from there on
            return None
        plus = min(max(n_plus - start, 0), len(rows))  # rows [0, plus) have sign +1
        if halves == 1:
            np.subtract(p, rows[plus:], out=rows[plus:])
            terms = rows
        else:  # sign·(second half − first half)
            parts = rows.reshape(len(rows), 2, n)
            np.subtract(p, parts[:plus, 0], out=parts[:plus, 0])
            np.subtract(p, parts[plus:, 1], out=parts[plus:, 1])
            terms = parts.reshape(2 * len(rows), n)
        group_sum = sum_rows61(terms)
        if total is None:
            total = group_sum
        else:
            _add61(total, group_sum, scratch)
    return total if total is not None else np.zeros(n, dtype=np.uint64)


def _add61(total: np.ndarray, values: np.ndarray, scratch: np.ndarray) -> None:
    """total ← (total + values) mod 2^61 − 1, in place, for total and values in [0, p)."""
    np.add(total, values, out=total)  # < 2p < 2^62
    np.subtract(total, np.uint64(MERSENNE61), out=scratch)  # wraps (huge) where total < p
    np.minimum(total, scratch, out=total)


def _signed_arguments(
    keys: Sequence[bytes], signs: Sequence[int], stream: int, n: int, field: PrimeField
) -> tuple[list[bytes], list[int], int, int]:
    """The checked arguments of :func:`pair_mask_sum` and :func:`signed_stream_sum`."""
    key_list, sign_list = _checked_keys_and_signs(keys, signs)
    stream = as_stream(stream)
    n = as_count(n, "n")
    check_field(field)
    return key_list, sign_list, stream, n


def _checked_keys_and_signs(
    keys: Sequence[bytes], signs: Sequence[int]
) -> tuple[list[bytes], list[int]]:
    """Keys as 32-byte ``bytes`` and signs as ±1 ints, as many of each (else InputError)."""
    if isinstance(keys, (bytes, bytearray, memoryview, str)):
        raise InputError("keys must be a sequence of 32-byte keys, not a single bytes object")
    key_list = list(keys)
    for i, k in enumerate(key_list):
        if type(k) is not bytes or len(k) != KEY_BYTES:
            key_list[i] = as_key(k, f"keys[{i}]")
    sign_list = [int(s) for s in signs]
    if len(sign_list) != len(key_list) or not set(sign_list) <= {1, -1}:
        raise InputError("signs must hold +1 or -1 for every key")
    return key_list, sign_list


def _signed_sum_61(
    terms: list[tuple[bytes, int, int]], stream: int, n: int,
    ciphers: StreamCiphers | None = None,
) -> np.ndarray | None:
    """Σ sign·(words offset … offset + n − 1 of the key's stream), over GF(2^61 − 1).

    Each term is (key, offset in words, ±1); element i of a stream is its keystream word i
    masked to 61 bits as long as no earlier word was rejected, so each block of each term is
    drawn at its keystream offset straight into a cache-sized buffer and added to the running
    sum. Returns None if a drawn word is rejected (probability 2^−61 each): the caller then
    recomputes from materialised streams, so the result is always exact. The blocks are long
    (CHUNK_WORDS words), so a fresh CTR context per block costs little beside its encryption.

    With ``ciphers`` (the drawing party's), the plaintext, keystream and running-sum buffers
    are that owner's :class:`~protocols.crypto.scratch.StreamScratch`, kept from call to call
    (2.5 MiB less to allocate, and its page faults, per call); every buffer is written before
    it is read (the running sum zeroed per block), so nothing of one call reaches the next.
    Without it they are allocated for the call.
    """
    p = np.uint64(MERSENNE61)
    block = CHUNK_WORDS
    scratch = _own(ciphers)._stream_scratch()
    zeros = scratch.zeros(block + 1)
    # update_into needs a block's worth of slack (15 bytes) past the output
    buf = scratch.buffer(block + 1)
    view = memoryview(buf).cast("B")
    acc, tmp = scratch.sum_buffers(block)
    out = np.empty(n, dtype=np.uint64)
    for start in range(0, n, block):
        size_n = min(block, n - start)
        a, t = acc[:size_n], tmp[:size_n]
        a[:] = 0
        pending = 0
        for key, offset, sign in terms:
            word = offset + start
            skip = word % 2  # the first word may sit in the second half of a block
            size = _WORD_BYTES * (size_n + skip)
            ctr_encryptor(key, stream, word // 2).update_into(zeros[:size], view)
            words = buf[skip : skip + size_n]
            np.bitwise_and(words, p, out=words)
            if np.any(words == p):  # a rejected candidate: positions shift
                return None
            if sign > 0:
                np.add(a, words, out=a)
            else:
                np.subtract(p, words, out=t)  # −r enters as p − r, in [1, p]
                np.add(a, t, out=a)
            pending += 1
            if pending >= 6:  # a < 7·2^61 < 2^64
                reduce61_inplace(a, t)
                pending = 0
        reduce61_inplace(a, t)
        out[start : start + size_n] = a
    return out


LONG_ROWS_WORDS = 1 << 17
"""Keystream words the compiled long-stream sum (:func:`_signed_sum_long_61`) holds at once,
over all keys (1 MiB: a block of every key's stream stays cache-resident between its
encryption and its pass)."""
_LONG_MIN_BLOCK = 1 << 12  # shorter blocks (many keys): the numpy path's per-key blocks


def _signed_sum_long_61(
    ciphers: StreamCiphers | None, ordered: Sequence[bytes], n_plus: int, stream: int, n: int,
    base: np.ndarray,
) -> np.ndarray | None:
    """``base`` + Σ ± the n-element streams of ``ordered`` over GF(2^61 − 1), compiled.

    SecureSum's column sum x̂ + Σ_{j>i} s_ij − Σ_{j<i} s_ij (thesis seed 001, §2.2, the
    ``prg`` variant) for long vectors: block by block over positions, each key's keystream
    words of the block are drawn (AES-256-CTR from the block's counter) into a row of the
    owner's kept scratch (:meth:`~protocols.crypto.scratch.StreamScratch.rows`), and one pass
    of :func:`protocols.field.mersenne61_kernels.signed_rows_sum` masks them to 61 bits, adds
    the + rows (the first ``n_plus`` of ``ordered``), subtracts the − rows and adds ``base``
    — where :func:`_signed_sum_61` makes a numpy pass per step and the caller one more for
    ``base``. Element i of a stream is its masked word i as long as no earlier word was
    rejected, so the result is :func:`_signed_sum_61`'s plus ``base``, bit for bit; a rejected
    word (probability 2^−61 each) or a value ≥ p in ``base`` returns None, and the caller
    takes the exact path. None too when there are too many keys for blocks of at least
    ``_LONG_MIN_BLOCK`` words (the numpy path then draws one key at a time).
    """
    block = min(CHUNK_WORDS, LONG_ROWS_WORDS // len(ordered)) & ~1  # blocks start on a block
    if block < _LONG_MIN_BLOCK:
        return None
    signed_rows_sum = mersenne61.mersenne61_kernels().signed_rows_sum
    scratch = _own(ciphers)._stream_scratch()
    zeros = scratch.zeros(block)
    words, row_bytes = scratch.rows(len(ordered), block)
    out = np.empty(n, dtype=np.uint64)
    for start in range(0, n, block):
        size_n = min(block, n - start)
        plain = zeros[: _WORD_BYTES * size_n]
        for key, row in zip(ordered, row_bytes, strict=True):
            ctr_encryptor(key, stream, start // 2).update_into(plain, row)
        if not signed_rows_sum(words, size_n, n_plus, 1, base[start : start + size_n],
                               out[start : start + size_n]):
            return None
    return out


def _own(ciphers: StreamCiphers | None) -> StreamCiphers:
    """The caller's encryptors, or encryptors built for this call."""
    return StreamCiphers(keep=False) if ciphers is None else ciphers
