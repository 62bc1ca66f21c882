"""The reused buffers of a mask stream drawn straight into its output.

One :class:`StreamScratch` belongs to one owner's :class:`protocols.crypto.keystream.
StreamCiphers` (never to the module: no global state); the keystream module draws a stream of
one-word field elements through it in cache-sized passes, so a call allocates nothing but its
output (``benchmarks/mask_stream.py`` measures the page faults).
"""

from __future__ import annotations

import numpy as np

WORD_BYTES = 8
"""Bytes of one keystream word."""

SLACK_WORDS = 2
"""Words of room past a buffer's end: OpenSSL's ``update_into`` wants len(data) + 15 bytes."""


class StreamScratch:
    """The reused buffers of :func:`protocols.crypto.keystream._direct_field_stream`, owned by
    one :class:`~protocols.crypto.keystream.StreamCiphers`.

    :meth:`zeros` is the CTR plaintext (immutable zero bytes), :meth:`buffer` receives
    keystream (with the 15 bytes of room OpenSSL's ``update_into`` wants), and
    :meth:`counter_bytes` the counter blocks ``stream`` ‖ b of an ECB stream; each is built on
    first use and kept, and grown when too small. Every buffer is written in full before it is
    read, so nothing of one call reaches the next (``tests/isolation/test_red_team.py``
    overwrites them between two streams).
    """

    __slots__ = ("_buffer", "_counters", "_ramp", "_rows", "_sums", "_zeros")

    def __init__(self) -> None:
        self._zeros = b""
        self._ramp = b""  # 0, 1, 2, … as big-endian uint64 (immutable: read, never written)
        self._buffer: np.ndarray | None = None
        self._counters: np.ndarray | None = None
        self._sums: np.ndarray | None = None
        self._rows: np.ndarray | None = None

    def zeros(self, words: int) -> memoryview:
        """``words`` words of zero bytes."""
        if len(self._zeros) < WORD_BYTES * words:
            self._zeros = bytes(WORD_BYTES * words)
        return memoryview(self._zeros)[: WORD_BYTES * words]

    def buffer(self, words: int) -> np.ndarray:
        """A buffer of at least ``words`` words and the slack past them."""
        buffer = self._buffer
        if buffer is None or len(buffer) < words + SLACK_WORDS:
            buffer = self._buffer = np.empty(words + SLACK_WORDS, dtype=np.uint64)
        return buffer

    def counter_bytes(self, stream: int, n_blocks: int) -> memoryview:
        """The counter blocks ``stream`` ‖ b, b < ``n_blocks``, as bytes: both columns written
        on every call (a few µs beside the AES of the blocks), so that nothing left in the
        buffer — by an earlier call, or by the owner's own program — shapes a later stream. The
        block numbers are copied from immutable bytes kept beside (an ``arange`` per call cost
        more than the copy)."""
        counters = self._counters
        if counters is None or len(counters) < n_blocks:
            counters = self._counters = np.empty((n_blocks, 2), dtype=">u8")
        if len(self._ramp) < WORD_BYTES * n_blocks:
            self._ramp = np.arange(n_blocks, dtype=">u8").tobytes()
        rows = counters[:n_blocks]
        rows[:, 0] = stream
        rows[:, 1] = np.frombuffer(self._ramp, dtype=">u8", count=n_blocks)
        return memoryview(rows).cast("B")

    def sum_buffers(self, words: int) -> tuple[np.ndarray, np.ndarray]:
        """Two buffers of ``words`` words — a running sum and its temporary — for the fused
        signed sums of long streams (:func:`protocols.crypto.mask_sums._signed_sum_61`), kept
        and grown when too small. The caller zeroes the running sum before each block and
        writes the temporary before reading it, so nothing of one call reaches the next."""
        sums = self._sums
        if sums is None or sums.shape[1] < words:
            sums = self._sums = np.empty((2, words), dtype=np.uint64)
        return sums[0, :words], sums[1, :words]

    def rows(self, n_rows: int, words: int) -> tuple[np.ndarray, list[memoryview]]:
        """``n_rows`` keystream rows of ``words`` words each (and the slack past each), for the
        compiled signed sums of long streams (:func:`protocols.crypto.mask_sums.
        _signed_sum_long_61`): the rows as one (n_rows, words + slack) array and each row's
        writable bytes. Kept and grown when too small; the caller writes a row before reading
        it, so nothing of one call reaches the next."""
        stride = words + SLACK_WORDS
        rows = self._rows
        if rows is None or rows.shape[0] != n_rows or rows.shape[1] != stride:
            rows = self._rows = np.empty((n_rows, stride), dtype=np.uint64)
        return rows, [memoryview(row).cast("B") for row in rows]
