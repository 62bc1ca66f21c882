"""The MPI transport's frames and buffers: send buffers reused once their send completed, and
received storage reused once nothing refers to it.

A message between two ranks is one MPI message (two for a large unsealed payload, its data's
end sent from the program's array: :data:`SEND_IN_PLACE_FROM`): its frame (kind, parties,
call, round, the length of its data: :data:`FRAME`, written by :class:`Framing`), then its
data — the wire encoding (:mod:`protocols.wire`), written straight into the buffer for an
unsealed numeric payload, or sealed into it (AES-GCM writes nonce ‖ ciphertext ‖ tag in place: no
concatenation). The buffer is sent as it is (``Isend``: nothing pickled, nothing joined) and
returns to :class:`BufferPool` once its send completes. The receiver probes the message's
size and receives it at once into a ``bytes`` object of that size (:class:`ReceivedStorage`:
one no longer referred to, or a new one, :func:`received_storage`), which becomes the
payload's own storage — the view's record and the program's array are
read-only arrays over it (:func:`protocols.wire.decode`), a sealed message is opened over its
own ciphertext (:meth:`protocols.crypto.channel.SealedChannel.open_in_place`), and no byte of
the message is copied on the receiving side.

Send buffers are numpy arrays: for a large message numpy asks the kernel for transparent huge
pages, so fresh memory costs few page faults. Received storage asks the same
(``madvise(MADV_HUGEPAGE)`` from 4 MiB, as numpy does), and from 64 KiB has its pages mapped
in one call before MPI writes it (:mod:`protocols.fresh_bytes`): a view that keeps every
payload it received in memory makes each large receive touch fresh memory, and 4 KiB pages
faulted one by one cost ≈ 4 µs each on this machine.
"""

from __future__ import annotations

import struct
import zlib
from collections import deque
from dataclasses import dataclass
from sys import getrefcount
from typing import Any

import numpy as np

from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.fresh_bytes import new_bytes
from sim.drivers.interpreter import Key

DATA = 1  # the frame kind of a party message (the transport's control kinds are others)
TAIL_FOLLOWS = 2
"""The frame kind of a party message whose data ends in a second MPI message (tag
:data:`TAIL_TAG`) sent from the program's own array: see :data:`SEND_IN_PLACE_FROM`."""
TAIL_TAG = 2  # a control-range tag: the tails of TAIL_FOLLOWS messages, in order per sender
SEND_IN_PLACE_FROM = 2 << 20
"""Unsealed numeric payloads of this many bytes or more are not copied into a send buffer:
the message's frame and the wire header go as one small MPI message (kind
:data:`TAIL_FOLLOWS`), the elements as a second one straight from the program's array, and
the program resumes once that send completed (its rank receiving meanwhile), so the array
cannot change while MPI reads it. MPI keeps two messages of one sender in order, so the
receiver pairs each such frame with the next tail from its rank, received into the same
storage behind it: the same bytes arrive as from one message. Measured on this machine
(two ranks, one stream, five interleaved repetitions, medians, GB/s; raw mpi4py 11–13): at
2 MiB 2.25 → 3.55 with views and 3.91 → 6.53 without, at 8 MiB 1.26 → 3.96 and 4.38 →
8.47. Below 2 MiB waiting for the send costs more than the copy: at 1 MiB with views 2.28 →
1.18–1.35 GB/s, at 64 KiB without views 0.63 → 0.30. A derived datatype joining frame and
array in one message moved under 1 GB/s at every size (MPICH packs it)."""
FRAME = struct.Struct("<BQQQQBQHHQ")
"""kind, sender, receiver, call, round, sealed, sender's row, len(protocol), len(step),
len(data); then protocol and step as UTF-8, zero padding, and the data."""
_REAP_ON_POST = 4  # sends in flight tested (in order) each time one more is posted
IN_FLIGHT_BYTES = 32 << 20
"""Past this many bytes in flight a sending rank waits (receiving meanwhile) for its oldest
sends to complete: a burst of large messages cycles through a few warm buffers, as a
blocking ``Send`` loop does, instead of touching fresh memory for each."""

_POOL_PER_SIZE = 4  # free buffers kept per size
_POOL_BYTES = 64 << 20  # and at most this many bytes in all


def received_storage(size: int, writable_at: Any, kept: bool = True) -> tuple[bytes, Any]:
    """A new ``bytes`` object of ``size`` bytes, and a writable buffer over its characters.

    A transport receives a message into the writable buffer, then hands out only the
    ``bytes`` object (read-only views of it): the payload's storage is immutable from then on,
    as :func:`protocols.wire.decode` promises (a program cannot make it writeable again), and
    it was never copied. The object comes from :func:`protocols.fresh_bytes.new_bytes` (large
    ones advised as huge pages, and populated before MPI writes them if a view will keep
    them: ``kept``); its characters are uninitialised until written: the caller writes every
    byte.

    ``writable_at(address, size)`` makes the writable buffer (``MPI.buffer.fromaddress``);
    it views memory the ``bytes`` object owns, so it must not outlive it.
    """
    if size < 2:  # 0 and 1-byte objects may be shared; no message is this short
        raise ValueError(f"a received message of {size} bytes is shorter than its frame")
    raw, address = new_bytes(size, kept)
    return raw, writable_at(address, size)


class ReceivedStorage:
    """Received messages' storage by size, each object reused once nothing else refers to it.

    A received message's ``bytes`` object is its payload's storage: the view's record and the
    program's arrays are read-only views of it, and they hold references to it. When the
    message's program has dropped its arrays and no view keeps them in memory (views spilled
    to disk, :mod:`sim.view_spill`, or not recorded), only this pool refers to the object — no
    one can observe it any more — and the next message of its size is received into it:
    warm memory, no page faults, as a raw receive loop into one buffer. An object still
    referred to is never written. Up to :data:`_STORAGE_PER_SIZE` objects per size are kept,
    :data:`_STORAGE_BYTES` in all; beyond them storage is new each time
    (:func:`received_storage`).
    """

    __slots__ = ("_by_size", "_kept", "_writable_at")

    def __init__(self, writable_at: Any) -> None:
        self._writable_at = writable_at
        self._by_size: dict[int, list[tuple[bytes, Any]]] = {}
        self._kept = 0

    def take(self, size: int, kept: bool = True) -> tuple[bytes, Any]:
        """Storage of ``size`` bytes and a writable buffer over it (see
        :func:`received_storage`); its previous contents are undefined."""
        slots = self._by_size.setdefault(size, [])
        for i in range(len(slots)):
            # references: the pool's tuple and getrefcount's argument — nothing else
            if getrefcount(slots[i][0]) == _FREE_REFS:
                return slots[i]
        storage = received_storage(size, self._writable_at, kept)
        if len(slots) < _STORAGE_PER_SIZE and self._kept + size <= _STORAGE_BYTES:
            slots.append(storage)
            self._kept += size
        return storage


_STORAGE_PER_SIZE = 8
_STORAGE_BYTES = 64 << 20
_FREE_REFS = 2
"""``sys.getrefcount`` of a pooled object nothing else refers to: the pool's tuple holds
it, and the call's argument."""


class BufferPool:
    """Send buffers by size, each reused once its send completed."""

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


_FIRST_DATA_TAG = 16  # tags below are the driver's control tags


def message_tag(call: Call, step: str, tag_ub: int) -> int:
    """The MPI tag of a message: call number and step, mapped into the data tags.

    ``(call · 2^10 + crc32(step) mod 2^10) mod (tag_ub − 16) + 16``. Tags 0..15 are the
    driver's control tags. Receivers match any tag (messages are routed by their frame) and
    check the tag against the frame.
    """
    raw = call.index * 1024 + zlib.crc32(step.encode()) % 1024
    return raw % (tag_ub - _FIRST_DATA_TAG) + _FIRST_DATA_TAG


@dataclass(slots=True)
class Envelope:
    """A party message on its receiving rank, until its receiver reads it."""

    sender: int
    receiver: int
    protocol: str
    call: int
    step: str
    round: int
    data: bytes | memoryview  # a received message's: a read-only view of its storage
    sealed: bool
    arrived_s: float = 0.0  # wall clock since the run's start, when it reached its receiver
    number: int | None = None  # its number on its sealed channel, given on arrival
    writable: Any = None  # a sealed received message's ``data``, writable: opened in place
    spilled: tuple[int, int] | None = None  # (offset, size) in its rank's mailbox file

    @property
    def key(self) -> Key:
        return (self.sender, self.protocol, self.call, self.step)


def data_offset(n_protocol: int, n_step: int) -> int:
    """Where a message's data starts after its frame: aligned to 16 bytes, so that the
    elements encoded into a send buffer are aligned too."""
    return (FRAME.size + n_protocol + n_step + 15) // 16 * 16


_NAMES_KEPT = 4096
"""(protocol, step) pairs whose encodings :class:`Framing` keeps (a protocol has a few steps;
a program that names every message afresh only refills the cache)."""


class Framing:
    """Frames messages into send buffers and reads received frames.

    A frame's names — protocol and step, UTF-8, padded to the data's alignment — are encoded
    once per pair and kept (up to :data:`_NAMES_KEPT` pairs, then forgotten at once): most
    messages of a run share a few pairs, and encoding and writing them piecewise took 60 %
    of a message's framing (5.7 → 2.2 µs). Decoding two short names costs less than a
    cache lookup keyed by their bytes would.
    """

    __slots__ = ("_encoded", "buffers")

    def __init__(self, buffers: BufferPool) -> None:
        self.buffers = buffers
        self._encoded: dict[tuple[str, str], tuple[bytes, int, int]] = {}

    def _names(self, protocol: str, step: str) -> tuple[bytes, int, int]:
        """protocol ‖ step ‖ zero padding to the data's offset, and the two lengths."""
        key = (protocol, step)
        names = self._encoded.get(key)
        if names is None:
            protocol_raw, step_raw = protocol.encode(), step.encode()
            at = data_offset(len(protocol_raw), len(step_raw))
            padded = (protocol_raw + step_raw).ljust(at - FRAME.size, b"\0")
            names = (padded, len(protocol_raw), len(step_raw))
            if len(self._encoded) >= _NAMES_KEPT:
                self._encoded.clear()
            self._encoded[key] = names
        return names

    def framed(self, pid: int, to: int, call: Call, step: str, round_: int, sealed: bool,
               row_index: int, n_data: int, held: int | None = None
               ) -> tuple[np.ndarray, memoryview, int]:
        """A send buffer holding a message's frame, a writable view of it, and where its
        ``n_data`` bytes go — or, with ``held``, only the first ``held`` of them (the frame's
        kind is then :data:`TAIL_FOLLOWS`: the rest follow as a tail)."""
        names, n_protocol, n_step = self._names(call.protocol, step)
        at = FRAME.size + len(names)
        buffer = self.buffers.take(at + (n_data if held is None else held))
        view = memoryview(buffer)
        FRAME.pack_into(view, 0, DATA if held is None else TAIL_FOLLOWS, pid, to, call.index,
                        round_, int(sealed), row_index, n_protocol, n_step, n_data)
        view[FRAME.size:at] = names
        return buffer, view, at

    @staticmethod
    def tail_bytes(head: bytes, source: int) -> int:
        """How many bytes of data follow a :data:`TAIL_FOLLOWS` message ``head`` (frame and
        the data's start) in its tail. Raises :class:`~protocols.errors.MpcsimError` naming
        rank ``source`` if the frame is malformed or announces no tail."""
        try:
            *_, n_proto, n_step, n_data = FRAME.unpack_from(head)
        except struct.error as exc:
            raise MpcsimError(f"rank {source} sent a malformed frame: {exc}") from None
        tail = data_offset(n_proto, n_step) + n_data - len(head)
        if tail <= 0:
            raise MpcsimError(f"rank {source} announced a tail of {tail} bytes")
        return tail

    def read_frame(self, raw: bytes, source: int
                   ) -> tuple[int, int, int, int, int, bool, int, str, str, int]:
        """A received message's frame: kind, sender, receiver, call, round, sealed, the
        sender's row, protocol, step, and where its data starts (checked against the
        message's length).

        Raises :class:`~protocols.errors.MpcsimError` naming rank ``source`` on a malformed
        frame.
        """
        try:
            kind, sender, receiver, index, round_, sealed, row, n_proto, n_step, n_data = (
                FRAME.unpack_from(raw))
            at = FRAME.size
            protocol = raw[at:at + n_proto].decode()
            step = raw[at + n_proto:at + n_proto + n_step].decode()
        except (struct.error, UnicodeDecodeError) as exc:
            raise MpcsimError(f"rank {source} sent a malformed frame: {exc}") from None
        at = data_offset(n_proto, n_step)
        if len(raw) != at + n_data:  # a TAIL_FOLLOWS frame never gets here without its tail
            raise MpcsimError(f"rank {source} sent {len(raw) - at} bytes of data where its "
                              f"frame announced {n_data}")
        return kind, sender, receiver, index, round_, bool(sealed), row, protocol, step, at


class InFlight:
    """A rank's sends in flight, each with the buffer it reads, oldest first.

    Posting a send also tests the oldest few: a program that sends many messages in one
    step gives MPI progress as it goes (a rendezvous transfer moves only while its sender is
    inside MPI), and their buffers return to :class:`BufferPool` warm, for the next ones.
    """

    __slots__ = ("_sends", "buffers", "bytes")

    def __init__(self) -> None:
        self.buffers = BufferPool()
        self.bytes = 0  # the bytes of the sends in flight
        self._sends: deque[tuple[Any, Any]] = deque()

    def __bool__(self) -> bool:
        return bool(self._sends)

    def add(self, request: Any, buffer: Any) -> None:
        """Keep ``buffer`` (which ``request`` reads) until the request completes."""
        self._sends.append((request, buffer))
        self.bytes += len(buffer)
        sends = self._sends
        for _ in range(_REAP_ON_POST):
            if not sends or not sends[0][0].Test():
                break
            self._done(sends.popleft()[1])

    def reap(self) -> None:
        """Advance every send in flight; forget those that completed."""
        if self._sends:
            running: deque[tuple[Any, Any]] = deque()
            for request, buffer in self._sends:
                if request.Test():
                    self._done(buffer)
                else:
                    running.append((request, buffer))
            self._sends = running

    def requests(self) -> list[Any]:
        return [request for request, _ in self._sends]

    def clear(self) -> None:
        self._sends.clear()
        self.bytes = 0

    def _done(self, buffer: Any) -> None:
        self.bytes -= len(buffer)
        if type(buffer) is np.ndarray:
            self.buffers.give(buffer)
