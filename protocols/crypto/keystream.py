"""Pseudo-random streams of uniform field elements from AES-256 in counter mode.

The PRG-seeded SecureSum of the Tsikhanovich thesis (seed 001, §2.2) replaces exchanged random
shares by pseudo-random ones: "Party i, j simply have to coordinate a random seed for their
corresponding PRNGs". This module is that PRNG. Its masks must be fresh for every invocation
of the protocol — reusing a mask across rounds would reveal differences of inputs — so, as the
seeds digest recommends (``spec/seeds_digest.md`` §6 item 2), each stream is derived from
(pair seed, invocation counter):

* the 32-byte pair key (``PairKeys.mask_seed`` from :mod:`protocols.crypto.key_agreement`, or a
  private key from :func:`protocols.crypto.hkdf.derive_key`) is the AES-256 key;
* the 16-byte counter block is ``stream`` (the invocation counter, an unsigned 64-bit number)
  in its upper 8 bytes and the block counter, starting at 0, in its lower 8 bytes, both
  big-endian (NIST SP 800-38A counter mode; pycryptodome's ``AES.MODE_CTR`` with
  ``nonce=stream.to_bytes(8, "big")`` and ``initial_value=0``);
* the keystream is read as little-endian ``uint64`` words, and
  :meth:`~protocols.field.PrimeField.from_words` masks each word (or each group of
  ``words_per_element()`` words, for fields wider than 64 bits) to the bit length of p and
  rejects values ≥ p. Accepted candidates are taken in keystream order; when rejections leave
  the stream short, the same keystream continues with its next blocks.

Element i of a stream is therefore the i-th accepted candidate of one fixed keystream: the
output is a deterministic function of (key, stream) alone, exactly uniform over GF(p) (up to
the pseudo-randomness of AES), and the first n elements do not depend on how many are asked
for (prefix property). How much keystream is drawn per pass is only a performance choice.

The keystream comes from OpenSSL through the `cryptography` package, which measured ~2×
faster than pycryptodome for AES (``benchmarks/crypto.py``); the tests check every path
against pycryptodome's ``AES.MODE_CTR``, so the bytes are those of the layout above. What a
stream costs is mostly setting up a cipher: building an OpenSSL context (Python objects, the
key schedule) takes ~5–7 µs, encrypting the 8,000 bytes of a 1000-element stream ~1.5 µs.
So the keystream is produced in two ways that give the same bytes:

* **Short streams** (up to 512 KiB of keystream: SecureSum's masks, a party's private
  draws) are the ECB encryption of their counter blocks — block i of CTR's keystream is
  AES_K(stream ‖ i) — under one ECB encryptor per key. :class:`StreamCiphers` keeps those
  encryptors for their owner: :class:`protocols.context.AesRandomness` holds one for its
  party's own keys, so a key's context is built at most twice per run, not once per
  protocol call (≈ 1 KB each, kept from a key's second use on: M(M − 1) KB over an M-party
  run that uses its keys again, 1 GB at M = 1000). In one call the counter blocks are
  built once and encrypted under each key (the SecureSum pattern: one stream number,
  every peer's key) into a buffer of about 2 MiB of keys, which the mask sums of
  :mod:`protocols.crypto.mask_sums` mask, check and sum at once, so that no stream is
  materialised on its own. A :class:`StreamCiphers` keeps the buffer and counter
  blocks of its latest group shape when they are small (:data:`KEPT_GROUP_WORDS`), so a
  party's many calls of one size rewrite only the stream number. The module-level
  functions use encryptors built for the call (``StreamCiphers(keep=False)``).
* **One stream** of single-word elements (GF(2^61 − 1), primes below 2^31) is encrypted,
  masked and checked in its output (:func:`_direct_field_stream`), allocating nothing but
  itself, at little more than AES-CTR's cost (``benchmarks/mask_stream.py``); a rejected
  candidate sends it down the exact path below.
* **Long streams** (and the continuation of a short one that came up short) come from
  AES-256-CTR contexts in 512 KiB passes into one reused buffer, so that masking runs on
  cache-resident data (a context per pass costs little beside 512 KiB of encryption).

:func:`encrypt_blocks` is the same AES-256 on blocks the caller chooses (AES as a PRF: the
pre-shared key setup). Key derivation is :mod:`protocols.crypto.hkdf`; the raw CTR keystream
(its counter layout and :func:`~protocols.crypto.aes_ctr.keystream_words`) is
:mod:`protocols.crypto.aes_ctr`.

Nothing here keeps state between calls but what a :class:`StreamCiphers` keeps — its
owner's encryptors (ECB keeps no state between updates, so a kept encryptor gives the streams
of a fresh one), one group buffer and its single-stream scratch, rewritten before every use and
never returned — and nothing draws system randomness: keys come from the caller's seed bytes.
"""


from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from protocols.crypto.aes_ctr import BLOCK_BYTES, ctr_encryptor, keystream_arguments
from protocols.crypto.arguments import (
    KEY_BYTES,
    MAX_STREAM,
    as_bytes,
    as_count,
    as_key,
    as_stream,
    check_field,
)
from protocols.crypto.scratch import SLACK_WORDS as _SLACK_WORDS
from protocols.crypto.scratch import WORD_BYTES as _WORD_BYTES
from protocols.crypto.scratch import StreamScratch
from protocols.errors import InputError
from protocols.field import PrimeField

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers import CipherContext

__all__ = [
    "CHUNK_WORDS",
    "KEY_BYTES",
    "MAX_STREAM",
    "StreamCiphers",
    "encrypt_blocks",
    "field_stream",
    "field_streams",
]

CHUNK_WORDS = 1 << 16
"""Keystream words drawn per pass for long streams (512 KiB: stays in the L2 cache)."""

GROUP_WORDS = 1 << 18
"""Keystream words of the group of keys whose short streams are masked and summed at once
(2 MiB: larger groups measured faster at M = 300, d = 1000, up to this size)."""

STREAM_PASS_WORDS = 1 << 15
"""Keystream words per pass of a mask stream drawn straight into its output (256 KiB, masked
in place while in the L2 cache; shorter passes measured slower, from Python's cost per pass)."""

KEPT_GROUP_WORDS = 1 << 13
"""Largest group buffer (64 KiB of keystream words, with its counter blocks at most 128 KiB)
a :class:`StreamCiphers` keeps for its next call: one buffer, that of the latest group shape,
so that a party making many small calls of one size (PD-NMF: 2,001 elements, three keys)
allocates neither it nor its counter blocks again. Larger groups cost more to draw than to
allocate, and are not kept: a run of M = 1000 parties keeps at most 128 MiB of them (beside
the ~1 GB of their kept encryptors)."""

_MAX_STREAMS_REJECTIONS = 0.01  # batch path when fewer rejections than this are expected
_U64_DTYPE = np.dtype(np.uint64)
_I64_DTYPE = np.dtype(np.int64)
_WORD_MASKS = tuple(np.uint64((1 << bits) - 1) for bits in range(64))  # ints cost ~0.3 µs


# -- field elements ------------------------------------------------------------------------


def field_stream(key: bytes, stream: int, n: int, field: PrimeField) -> np.ndarray:
    """The first ``n`` uniform elements of GF(p) of stream ``stream`` under ``key``.

    Parameters
    ----------
    key : bytes
        32-byte AES-256 key (a pair's ``mask_seed`` or a
        :func:`protocols.crypto.hkdf.derive_key` key).
    stream : int
        Stream number in [0, 2^64), e.g. the protocol invocation counter; every invocation
        must use a new one so that masks are never reused.
    n : int
        Number of elements, n ≥ 0.
    field : PrimeField
        The field; candidates are masked to ``field.bits`` bits and values ≥ p rejected.

    Returns
    -------
    numpy.ndarray of ``field.dtype``, shape (n,)
        Element i is the i-th accepted candidate of the stream's keystream, so the result is
        a deterministic function of (key, stream) and a prefix of any longer request.

    Raises
    ------
    InputError
        If the key is not 32 bytes, ``stream`` is not in [0, 2^64), ``n`` < 0, or ``field``
        is not a :class:`~protocols.field.PrimeField`.
    """
    if not (type(key) is bytes and len(key) == KEY_BYTES and type(stream) is int
            and 0 <= stream <= MAX_STREAM and type(n) is int and n >= 0):  # else full checks
        key = as_key(key, "key")
        stream = as_stream(stream)
        n = as_count(n, "n")
    check_field(field)
    if 0 < n <= STREAM_PASS_WORDS and _single_word(field, n):  # a short stream, drawn lean
        own = _own_stream(key, stream, n, field)
        if own is not None:
            return own
        return _field_stream(StreamCiphers(keep=False), key, stream, n, field, direct=False)
    return _field_stream(StreamCiphers(keep=False), key, stream, n, field)


def field_streams(keys: Sequence[bytes], stream: int, n: int, field: PrimeField) -> np.ndarray:
    """One ``n``-element stream per key, all with the same stream number.

    This is the SecureSum pattern — in one invocation a party needs its masks with every peer.
    The counter blocks are built once and encrypted under each key, and masking and rejection
    run once per group of keys (about 2 MiB of keystream); streams longer than 512 KiB, and
    fields where rejections are expected, are generated one key at a time. Either way row k
    equals ``field_stream(keys[k], stream, n, field)``. A party that draws streams under the
    same keys again should hold a :class:`StreamCiphers` and call its method of this name.

    Parameters
    ----------
    keys : sequence of bytes
        K keys of 32 bytes each.
    stream : int
        Stream number in [0, 2^64), shared by all keys.
    n : int
        Elements per key, n ≥ 0.
    field : PrimeField
        The field.

    Returns
    -------
    numpy.ndarray of ``field.dtype``, shape (K, n)
        Row k is the stream of ``keys[k]``.

    Raises
    ------
    InputError
        As :func:`field_stream`, naming the offending key by its index.
    """
    return StreamCiphers(keep=False).field_streams(keys, stream, n, field)


class StreamCiphers:
    """The AES-256 encryptors of one owner's stream keys, kept from a key's second use on.

    Building an OpenSSL cipher context costs several µs (object creation and the key schedule)
    — more than encrypting a 1000-element stream — so a party that draws a stream under the
    same key in every protocol call keeps one ECB encryptor per key and encrypts the counter
    blocks of each stream with it (ECB on the counter blocks is the CTR keystream; the module
    docstring). The methods are the module's functions of the same names, with the same
    arguments and results; the module's functions use a ``StreamCiphers(keep=False)``, which
    builds the encryptors a call needs and lets them go with it.

    Each kept encryptor holds ≈ 1 KB (the context and its key schedule): a party with K keys
    holds ≈ K KB, M(M − 1) KB over all parties of an M-party run (1 GB at M = 1000). A key's
    encryptor is kept when the key is used a second time, so a run that uses its keys once (one
    SecureSum at large M) holds none of them — only the keys it has met (≈ 100 B each) — and
    a run that uses them again pays one extra build per key. An instance belongs to one owner
    (:class:`protocols.context.AesRandomness` builds its own) and holds that owner's keys only;
    ECB encryption keeps no state between calls, so reusing an encryptor cannot change a
    stream.

    Parameters
    ----------
    keep : bool
        Keep each key's encryptor from its second use on (default); ``False`` builds them per
        call.
    """

    __slots__ = ("_encryptors", "_group", "_keep", "_met", "_scratch")

    def __init__(self, keep: bool = True) -> None:
        self._encryptors: dict[bytes, CipherContext] = {}
        self._met: set[bytes] = set()
        self._keep = keep
        self._group: _GroupBuffers | None = None
        self._scratch: StreamScratch | None = None

    def _stream_scratch(self) -> StreamScratch:
        """This owner's scratch buffers for single streams (built on first use, then kept)."""
        scratch = self._scratch
        if scratch is None:
            scratch = self._scratch = StreamScratch()
        return scratch

    @property
    def kept(self) -> int:
        """Number of encryptors kept (one per key used more than once so far)."""
        return len(self._encryptors)

    def _encryptor(self, key: bytes) -> CipherContext:
        encryptor = self._encryptors.get(key)
        if encryptor is None:
            encryptor = _ecb(key)
            if self._keep and key in self._met:  # its second use: keep it from now on
                self._encryptors[key] = encryptor
                self._met.discard(key)
            elif self._keep:
                self._met.add(key)
        return encryptor

    def keystream_words(
        self, key: bytes, stream: int, n_words: int, start_block: int = 0
    ) -> np.ndarray:
        """:func:`~protocols.crypto.aes_ctr.keystream_words` (the same words), from this owner's
        encryptor of ``key``."""
        key = as_key(key, "key")
        stream, n_words, start_block = keystream_arguments(stream, n_words, start_block)
        return _ecb_words(self._encryptor(key), stream, start_block, n_words)

    def field_stream(self, key: bytes, stream: int, n: int, field: PrimeField) -> np.ndarray:
        """:func:`field_stream`, with this owner's encryptor of ``key``."""
        key = as_key(key, "key")
        stream = as_stream(stream)
        n = as_count(n, "n")
        check_field(field)
        return _field_stream(self, key, stream, n, field)

    def field_streams(
        self, keys: Sequence[bytes], stream: int, n: int, field: PrimeField
    ) -> np.ndarray:
        """:func:`field_streams`, with this owner's encryptors."""
        if isinstance(keys, (bytes, bytearray, memoryview, str)):
            raise InputError("keys must be a sequence of 32-byte keys, not a single bytes object")
        key_list = [as_key(k, f"keys[{i}]") for i, k in enumerate(keys)]
        stream = as_stream(stream)
        n = as_count(n, "n")
        check_field(field)
        return _field_streams(self, key_list, stream, n, field)


def encrypt_blocks(key: bytes, blocks: bytes) -> bytes:
    """AES-256 of each 16-byte block of ``blocks`` under ``key`` (ECB: AES as a PRF per block).

    The pre-shared key setup (:func:`sim.simulation.preshared_keys`) derives every pair's keys
    this way in one batch; the keystreams above are the same permutation applied to counter
    blocks.

    Raises
    ------
    InputError
        If the key is not 32 bytes or ``blocks`` is not a whole number of blocks.
    """
    key = as_key(key, "key")
    data = as_bytes(blocks, "blocks")
    if len(data) % BLOCK_BYTES:
        raise InputError(f"blocks must be a multiple of {BLOCK_BYTES} bytes, got {len(data)}")
    return _ecb(key).update(data)


def _ecb(key: bytes) -> CipherContext:
    """An AES-256 ECB encryptor of ``key`` (OpenSSL); it keeps no state between updates."""
    return Cipher(algorithms.AES(key), modes.ECB()).encryptor()


def _counter_blocks(stream: int, start_block: int, n_blocks: int) -> memoryview:
    """The counter blocks ``stream`` ‖ ``start_block + b``, b < ``n_blocks`` (big-endian)."""
    blocks = np.empty((n_blocks, 2), dtype=">u8")
    blocks[:, 0] = stream
    blocks[:, 1] = np.arange(n_blocks, dtype=np.uint64) + np.uint64(start_block)
    return memoryview(blocks).cast("B")


def _ecb_words(
    encryptor: CipherContext, stream: int, start_block: int, n_words: int
) -> np.ndarray:
    """Keystream words from block ``start_block`` on: the ECB encryption of the counters."""
    n_blocks = -(-n_words // 2)
    buffer = np.empty(2 * n_blocks + _SLACK_WORDS, dtype=np.uint64)
    if n_blocks:
        encryptor.update_into(_counter_blocks(stream, start_block, n_blocks),
                              memoryview(buffer).cast("B"))
    return buffer[:n_words]


def _field_streams(
    ciphers: StreamCiphers, keys: list[bytes], stream: int, n: int, field: PrimeField
) -> np.ndarray:
    """:func:`field_streams` on checked arguments."""
    n_keys = len(keys)
    per = field.words_per_element()
    out = np.empty((n_keys, n), dtype=field.dtype)
    if n_keys == 0 or n == 0:
        return out
    if n * per > CHUNK_WORDS or n_keys * n * _rejection_rate(field) > _MAX_STREAMS_REJECTIONS:
        # Long streams, or a field where rejections are expected: one stream at a time.
        for k, key in enumerate(keys):
            _field_stream(ciphers, key, stream, n, field, out=out[k])
        return out
    n_words = n * per
    for start, words in _keystream_groups(ciphers, keys, stream, n_words):
        rows = words[:, :n_words]
        accepted = field.from_words(rows.reshape(-1))
        if len(accepted) == len(rows) * n:
            out[start : start + len(rows)] = accepted.reshape(len(rows), n)
            continue
        # A candidate was rejected (rare for the fields that take this path): redo each short
        # row from the start of its keystream, which yields the same elements by design.
        for k, row_words in enumerate(rows, start):
            row = field.from_words(row_words)
            if len(row) == n:
                out[k] = row
            else:
                _field_stream(ciphers, keys[k], stream, n, field, out=out[k])
    return out


class _GroupBuffers:
    """A group's counter blocks and keystream buffer, kept by a :class:`StreamCiphers`.

    ``counters`` holds the blocks ``stream`` ‖ b for b < ``n_blocks`` (the stream column is
    rewritten for each call); ``buffer`` holds ``rows`` rows of 2·``n_blocks`` keystream
    words, and ``row_bytes[k]`` is the writable bytes from row k on (OpenSSL's
    ``update_into`` wants 15 bytes of room past the output: the slack words).
    """

    __slots__ = ("buffer", "counter_bytes", "counters", "n_blocks", "row_bytes", "rows",
                 "streams", "words")

    def __init__(self, n_blocks: int, rows: int) -> None:
        self.n_blocks, self.rows = n_blocks, rows
        self.counters = np.empty((n_blocks, 2), dtype=">u8")
        self.counters[:, 1] = np.arange(n_blocks, dtype=np.uint64)
        self.streams = self.counters[:, 0]  # the stream column: ``fill`` it for each draw
        self.counter_bytes = memoryview(self.counters).cast("B")
        stride = 2 * n_blocks
        self.buffer = np.empty(rows * stride + _SLACK_WORDS, dtype=np.uint64)
        view = memoryview(self.buffer).cast("B")
        self.row_bytes = [view[k * _WORD_BYTES * stride :] for k in range(rows)]
        self.words = self.buffer[: rows * stride].reshape(rows, stride)


def _group_buffers(ciphers: StreamCiphers, n_blocks: int, rows: int) -> _GroupBuffers:
    """The buffers of a group of ``rows`` keys and ``n_blocks`` blocks: the kept ones when they
    fit, else new ones (kept for the next call when at most :data:`KEPT_GROUP_WORDS` words)."""
    kept = ciphers._group
    if kept is not None and kept.n_blocks == n_blocks and kept.rows == rows:
        return kept
    group = _GroupBuffers(n_blocks, rows)
    if 2 * n_blocks * rows <= KEPT_GROUP_WORDS:
        ciphers._group = group
    return group


def _keystream_groups(
    ciphers: StreamCiphers, keys: Sequence[bytes], stream: int, n_words: int
) -> Iterator[tuple[int, np.ndarray]]:
    """The first ``n_words`` keystream words of every key, a group of keys at a time.

    Yields (index of the group's first key, words of shape (group, stride)), stride being
    ``n_words`` rounded up to whole blocks. Groups hold about GROUP_WORDS words, so that
    masking and summing run on cache-resident data (one pass over a 16 MB batch is twice as
    slow), and reuse one buffer (:func:`_group_buffers`): each group's words are valid until
    the next group — or the next call on ``ciphers`` — is drawn.
    """
    n_blocks = -(-n_words // 2)
    group = max(1, GROUP_WORDS // (2 * n_blocks))
    buffers = _group_buffers(ciphers, n_blocks, min(group, len(keys)))
    buffers.streams.fill(stream)
    for start in range(0, len(keys), group):
        yield start, _draw_rows(ciphers, buffers, keys[start : start + group])


def _draw_rows(ciphers: StreamCiphers, buffers: _GroupBuffers, keys: Sequence[bytes]
               ) -> np.ndarray:
    """Each key's keystream into its row of ``buffers`` (its counter blocks, as filled,
    encrypted under the key's ECB encryptor); returns the rows drawn, shape (len(keys), ·)."""
    counters, kept = buffers.counter_bytes, ciphers._encryptors
    for row, key in zip(buffers.row_bytes, keys, strict=False):  # the last group may be short
        (kept.get(key) or ciphers._encryptor(key)).update_into(counters, row)
    return buffers.words[: len(keys)]


def _field_stream(
    ciphers: StreamCiphers, key: bytes, stream: int, n: int, field: PrimeField,
    out: np.ndarray | None = None, direct: bool = True,
) -> np.ndarray:
    """:func:`field_stream` without validation, optionally writing into ``out`` (shape (n,)).

    Fields of one word per element where rejections are rare take :func:`_direct_field_stream`
    (unless ``direct=False``: the caller tried it). Otherwise (or when that path meets a
    rejected candidate), a short stream is one encryption
    of its counter blocks under the key's ECB encryptor; a long stream, or the continuation of
    a short one that came up short, is drawn from a CTR context in passes of at most
    CHUNK_WORDS words through one reused buffer. All read the same keystream.
    """
    if n == 0:
        return np.empty(0, dtype=field.dtype) if out is None else out
    drawn = _direct_field_stream(ciphers, key, stream, n, field, out) if direct else None
    if drawn is not None:
        return drawn
    per = field.words_per_element()
    used = 0  # keystream words consumed so far (always whole candidates)
    first = np.empty(0, dtype=field.dtype)
    count = _candidates(field, n)
    if count * per <= CHUNK_WORDS:
        used = count * per
        first = field.from_words(_ecb_words(ciphers._encryptor(key), stream, 0, used))
        if len(first) >= n:
            first = first[:n]
            if out is None:
                return _owned(first)
            out[:] = first
            return out
    if out is None:
        out = np.empty(n, dtype=field.dtype)
    filled = len(first)
    out[:filled] = first
    cipher = ctr_encryptor(key, stream, used // 2)
    if used % 2:
        cipher.update(bytes(_WORD_BYTES))  # skip the half block already consumed
    zeros = memoryview(bytearray(_WORD_BYTES * CHUNK_WORDS))
    buffer = np.empty(CHUNK_WORDS + _SLACK_WORDS, dtype=np.uint64)
    buffer_bytes = memoryview(buffer).cast("B")
    max_count = CHUNK_WORDS // per
    while filled < n:
        count = min(_candidates(field, n - filled), max_count)
        size = _WORD_BYTES * per * count
        cipher.update_into(zeros[:size], buffer_bytes)
        accepted = field.from_words(buffer[: per * count])
        take = min(len(accepted), n - filled)
        out[filled : filled + take] = accepted[:take]
        filled += take
    return out


def _direct_field_stream(
    ciphers: StreamCiphers, key: bytes, stream: int, n: int, field: PrimeField,
    out: np.ndarray | None,
) -> np.ndarray | None:
    """:func:`_field_stream` for fields whose elements are single masked words
    (:func:`_single_word`), or None. Element i is keystream word i masked to ``field.bits``
    bits unless a candidate is rejected. With no ``out``, a stream of at most
    :data:`KEPT_GROUP_WORDS` words under a kept encryptor is the ECB encryption of its counter
    blocks into the owner's scratch buffer (:class:`StreamScratch`), masked into a new output;
    else one of at most :data:`STREAM_PASS_WORDS` is :func:`_own_stream`. A longer one (or one
    into ``out``) is written by a CTR context straight into the output, a pass of
    :data:`STREAM_PASS_WORDS` words at a time, each masked and checked in place while
    cache-resident (only the last two words, for which ``update_into`` lacks room, go through
    the scratch buffer). A rejected candidate (probability (2^bits − p)/2^bits each) returns
    None, and the caller draws the stream exactly, continuation and all.
    """
    if not _single_word(field, n):
        return None
    if out is not None and (out.dtype != field.dtype or out.ndim != 1
                            or not out.flags.c_contiguous):
        return None
    if out is None and n <= STREAM_PASS_WORDS and (n > KEPT_GROUP_WORDS or not ciphers._keep):
        return _own_stream(key, stream, n, field)
    p = field.p
    mask = _WORD_MASKS[p.bit_length()]
    if out is None:
        out = np.empty(n, dtype=field.dtype)
    words = out.view(np.uint64)
    scratch = ciphers._stream_scratch()
    if n <= KEPT_GROUP_WORDS:  # one pass through the scratch buffer
        buffer = scratch.buffer(n + 1)
        if ciphers._keep:
            ciphers._encryptor(key).update_into(scratch.counter_bytes(stream, -(-n // 2)),
                                                memoryview(buffer).cast("B"))
        else:
            ctr_encryptor(key, stream).update_into(scratch.zeros(n), memoryview(buffer).cast("B"))
        np.bitwise_and(buffer[:n], mask, out=words)
        return out if words[words.argmax()] < p else None
    zero_words = min(n, KEPT_GROUP_WORDS)  # the plaintext of one update: 64 KiB at most
    zeros = scratch.zeros(zero_words)
    out_bytes = memoryview(words).cast("B")
    cipher = ctr_encryptor(key, stream)
    in_place = n - _SLACK_WORDS  # words with 15 bytes of room after them in the output
    for start in range(0, n, STREAM_PASS_WORDS):
        end = min(start + STREAM_PASS_WORDS, n)
        at, stop = start, min(end, in_place)
        while at < stop:
            size = min(zero_words, stop - at)
            cipher.update_into(zeros[: _WORD_BYTES * size], out_bytes[_WORD_BYTES * at :])
            at += size
        if at < end:  # the last words: through the scratch buffer
            rest = scratch.buffer(end - at)
            cipher.update_into(zeros[: _WORD_BYTES * (end - at)], memoryview(rest).cast("B"))
            words[at:end] = rest[: end - at]
        chunk = words[start:end]
        np.bitwise_and(chunk, mask, out=chunk)
        if chunk[chunk.argmax()] >= p:
            return None
    return out


def _single_word(field: PrimeField, n: int) -> bool:
    """Whether :func:`_direct_field_stream` applies: elements of one word of ≤ 63 bits
    (``uint64``/``int64``), fewer than :data:`_MAX_STREAMS_REJECTIONS` rejections expected."""
    p = field.p
    bits = p.bit_length()
    return (bits <= 63 and field.dtype in (_U64_DTYPE, _I64_DTYPE)
            and n * (1.0 - p / float(1 << bits)) <= _MAX_STREAMS_REJECTIONS)


def _own_stream(key: bytes, stream: int, n: int, field: PrimeField) -> np.ndarray | None:
    """``n`` ≥ 1 single-word elements encrypted by one CTR update straight into a zeroed array
    of their own (its own plaintext; two words longer: the room ``update_into`` wants), masked
    and checked in place (``argmax``: a reduction costs ~1 µs more to set up), or None on a
    rejected candidate. No scratch: an owner keeps no zeros for these sizes."""
    p, full = field.p, np.zeros(n + _SLACK_WORDS, np.uint64)
    data = memoryview(full).cast("B")
    ctr_encryptor(key, stream).update_into(data[: _WORD_BYTES * n], data)
    words = full[:n]
    np.bitwise_and(words, _WORD_MASKS[p.bit_length()], words)
    if words[words.argmax()] >= p:
        return None
    return words if field.dtype is _U64_DTYPE else words.view(field.dtype)


def _rejection_rate(field: PrimeField) -> float:
    """Probability that one masked candidate is ≥ p."""
    return 1.0 - field.p / float(1 << field.bits)


def _candidates(field: PrimeField, need: int) -> int:
    """Candidates to draw so that ``need`` are accepted with high probability (mean + 4 sd).

    Only the amount of keystream drawn per pass depends on this; the output does not.
    """
    rejection = _rejection_rate(field)
    if need * rejection < 1e-6:
        return need
    acceptance = 1.0 - rejection
    return math.ceil((need + 4.0 * math.sqrt(need * rejection)) / acceptance) + 1


def _owned(values: np.ndarray) -> np.ndarray:
    """``values`` as a writeable array (from_words on a read-only keystream may return one)."""
    return values if values.flags.writeable else values.copy()
