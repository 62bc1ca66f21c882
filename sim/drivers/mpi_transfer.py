"""The MPI transport's send buffers: one per message in flight, reused once its send completed.

A message between two ranks is one MPI message: its frame (kind, parties, call, round, the
length of its data: ``_FRAME`` in :mod:`sim.drivers.mpi_rank`), then its data — the wire
encoding (:mod:`protocols.wire`), written straight into the buffer for an unsealed numeric
payload, or sealed into it (AES-GCM writes nonce ‖ ciphertext ‖ tag in place: no
concatenation). The buffer is sent as it is (``Isend``: nothing pickled, nothing joined) and
returns to :class:`SendBuffers` once its send completes. The receiver probes the message's
size and receives it at once into a buffer of that size.

Buffers are numpy arrays: for a large message numpy asks the kernel for transparent huge pages,
so fresh memory costs few page faults.
"""

from __future__ import annotations

import numpy as np

_POOL_PER_SIZE = 4  # free buffers kept per size
_POOL_BYTES = 64 << 20  # and at most this many bytes in all


class SendBuffers:
    """Send buffers by size, reused once the send that held one has completed."""

    __slots__ = ("_free", "_kept")

    def __init__(self) -> None:
        self._free: dict[int, list[np.ndarray]] = {}
        self._kept = 0

    def take(self, size: int) -> np.ndarray:
        """A writable uint8 buffer of ``size`` bytes (its contents are undefined)."""
        free = self._free.get(size)
        if free:
            self._kept -= size
            return free.pop()
        return np.empty(size, dtype=np.uint8)

    def give(self, buffer: np.ndarray) -> None:
        """``buffer``'s send completed: keep it for a later message of its size."""
        size = buffer.nbytes
        free = self._free.setdefault(size, [])
        if len(free) < _POOL_PER_SIZE and self._kept + size <= _POOL_BYTES:
            free.append(buffer)
            self._kept += size
