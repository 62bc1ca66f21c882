"""A rank's mailboxes under MPI: unread messages, past a budget in bytes waiting on disk.

Issue 32, item 3: memory per rank should grow with its own parties, not with M. A rank steps
its parties one after the other, so in an all-to-all round (SecureSum's shares) every own
party's M − 1 messages arrive before any of its programs reads one: at M = 256, d = 1,000 over
2 ranks that was 263 MB of unread data per rank, the whole of what its peak grew by with M
once the views were spilled (:mod:`sim.view_spill`). Here a rank's mailboxes hold at most
``budget`` bytes of unread data in memory (:data:`MAILBOX_BYTES` by default); a message that
arrives past it is written to the rank's mailbox file at once and read back when its receiver
takes it — into storage of its own, as if it had just arrived (the rank's
:class:`~sim.drivers.mpi_transfer.ReceivedStorage`), so everything after is unchanged: the
same envelope, opened in place if sealed, the same view record. What stays in memory per
spilled message is its envelope (≈ 200 B).

The file is an anonymous temporary file in the system's temporary directory (``TMPDIR``;
``tempfile.TemporaryFile``: unlinked from the start, so nothing is left behind whatever ends
the run), opened at the first spill. It lives in the
run's transport, never in a context: no program can reach it.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Iterable, Iterator
from typing import IO

from sim.drivers.interpreter import Key
from sim.drivers.mpi_transfer import Envelope, ReceivedStorage

MAILBOX_BYTES = 64 << 20
"""Unread message data a rank holds in memory before it spills arrivals to its mailbox file."""
SPILL_FROM = 1024
"""Shorter messages stay in memory whatever the budget: their envelope is most of them."""


class Mailboxes:
    """The unread messages of a rank's parties, by receiver and key, in order of arrival.

    A spilled message is read back into ``storage`` (the rank's received storage); ``kept``
    says whether views will keep restored payloads (:meth:`ReceivedStorage.take`).
    """

    def __init__(self, parties: Iterable[int], storage: ReceivedStorage,
                 budget: int = MAILBOX_BYTES, kept: bool = True) -> None:
        if budget < 0:
            raise ValueError(f"a mailbox budget of {budget} bytes must not be negative")
        self._boxes: dict[int, dict[Key, deque[Envelope]]] = {p: {} for p in parties}
        self._storage = storage
        self._kept = kept
        self.budget = budget
        self.held = 0  # bytes of unread data in memory now
        self.peak = 0  # the most it ever was
        self.spilled = 0  # bytes written to the file (each message once)
        self._file: IO[bytes] | None = None

    def __iter__(self) -> Iterator[int]:
        return iter(self._boxes)

    def put(self, envelope: Envelope) -> None:
        """File an arrived message under its receiver and key; spill its data if the budget
        is spent."""
        size = len(envelope.data)
        if self.held + size > self.budget and size >= SPILL_FROM:
            self._spill(envelope, size)
        else:
            self.held += size
            self.peak = max(self.peak, self.held)
        self._boxes[envelope.receiver].setdefault(envelope.key, deque()).append(envelope)

    def take(self, pid: int, key: Key) -> Envelope | None:
        """The first arrived message under ``key`` for ``pid`` (removed, its data in memory),
        or None."""
        box = self._boxes[pid]
        queue = box.get(key)
        if not queue:
            return None
        envelope = queue.popleft()
        if not queue:
            del box[key]
        return self._in_memory(envelope)

    def unread(self, pid: int) -> Iterator[Envelope]:
        """Every message still in ``pid``'s mailbox, in order of arrival per key, each with
        its data in memory as it is reached."""
        for queue in self._boxes[pid].values():
            for envelope in queue:
                yield self._in_memory(envelope)

    def close(self) -> None:
        """Close the mailbox file (its data goes with it)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    # -- the file ------------------------------------------------------------------------------

    def _spill(self, envelope: Envelope, size: int) -> None:
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="mpcsim-mailbox-")
        at = self.spilled
        written = os.pwrite(self._file.fileno(), envelope.data, at)
        if written != size:  # a full disk: say so rather than read back short data
            raise OSError(f"the mailbox file took {written} of a message's {size} bytes")
        self.spilled += size
        envelope.spilled = (at, size)
        envelope.data = b""  # its storage is freed now: memory keeps the envelope only
        envelope.writable = None

    def _in_memory(self, envelope: Envelope) -> Envelope:
        if envelope.spilled is None:
            self.held -= len(envelope.data)
            return envelope
        assert self._file is not None
        (at, size), envelope.spilled = envelope.spilled, None
        raw, writable = self._storage.take(size, self._kept)
        if os.preadv(self._file.fileno(), [writable], at) != size:
            raise OSError(f"the mailbox file gave back less than a message's {size} bytes")
        envelope.data = memoryview(raw)
        envelope.writable = memoryview(writable) if envelope.sealed else None
        return envelope
