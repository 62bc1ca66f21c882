"""A message in flight on the simulated network, from sending to reading (the SimPy driver).

One object per message (:class:`Envelope`), so that a run of M parties — up to M(M − 1)
messages per round — makes no tuple per hop, per mailbox entry and per queue besides.
"""

from __future__ import annotations

import numpy as np

from protocols.effects import Call
from sim.ledger import Row
from sim.network import Link

_new_tuple = tuple.__new__


class Envelope:
    """One message in flight: what its receiver is handed, and what its ledger row records.

    The ledger row is made once, on arrival (:meth:`row`), or at the end of the run for a
    message that never arrived (lost, or still in flight when the run aborted). ``key`` is
    its mailbox key — sender, protocol, call number and step — made once per send effect and
    shared by its envelopes. ``hops`` is its route: the :class:`~sim.network.Link` itself
    when it goes straight to its receiver (the network's per-sender table), else the
    ``((a, b), Link)`` of each hop. ``decoded``
    is shared by the envelopes of one broadcast's encoding (not rewritten in transit): once
    a receiver has decoded it, it holds its elements (aligned), shape, dtype and the bytes
    before the elements, and the others' arrays are made without repeating the checks
    (:func:`protocols.wire.decode_again`) — for a sealed copy, once its own plaintext is
    found to be that encoding.

    In flight, ``hop`` is the index of the hop it reaches next; in its receiver's mailbox,
    ``number`` is its number on its channel when sealed (None otherwise), and ``queued`` the
    message that arrived after it under the same key (a mailbox holds the first; the rest
    follow it). So a message is one object from sending to reading, and the ledger row it
    becomes — not a tuple per hop, per mailbox entry and per queue besides. An envelope is
    in at most one place at a time: a message delivered twice (a replay fault) is delivered
    as a copy (:meth:`copy`).
    """

    __slots__ = (
        "arrived_s",
        "call",
        "data",
        "decoded",
        "deferred",
        "elements",
        "hop",
        "hops",
        "key",
        "n_bytes",
        "number",
        "phase",
        "queued",
        "receiver",
        "round",
        "row_index",
        "sealed",
        "sender",
        "sent_s",
        "step",
    )

    def __init__(
        self, sender: int, receiver: int, call: Call, step: str, round_: int, data: bytes,
        sealed: bool, row_index: int, hops: tuple[tuple[tuple[object, object], Link], ...] | Link,
        phase: str, elements: int, n_bytes: int, sent_s: float,
        key: tuple[int, str, int, str],
        decoded: list[tuple[bytes, tuple[int, ...], np.dtype, bytes] | None] | None = None,
        deferred: tuple[bytes, int] | None = None,
    ) -> None:
        self.sender = sender
        self.receiver = receiver
        self.call = call
        self.step = step
        self.round = round_
        self.data = data
        self.sealed = sealed
        self.row_index = row_index
        self.hops = hops
        self.phase = phase
        self.elements = elements
        self.n_bytes = n_bytes
        self.sent_s = sent_s
        self.key = key
        self.decoded = decoded
        self.deferred = deferred
        self.hop = 0
        self.arrived_s = sent_s  # set on delivery to its receiver
        self.number: int | None = None
        self.queued: Envelope | None = None

    def row(self, delivered_s: float) -> Row:
        """Its ledger row, delivered at ``delivered_s``.

        Built as the tuple it is (``tuple.__new__``), which is what ``Row(...)`` does
        behind one more Python call.
        """
        call = self.call
        hops = self.hops
        return _new_tuple(Row, (self.sender, self.receiver, call.protocol, call.index,
                                self.step, self.phase, self.round, self.elements, self.n_bytes,
                                len(hops) if type(hops) is tuple else 1, self.sent_s,
                                delivered_s))

    @property
    def n_hops(self) -> int:
        """The links its route crosses."""
        return len(self.hops) if type(self.hops) is tuple else 1

    def with_data(self, data: bytes) -> Envelope:
        """The same message carrying other bytes (a tampered copy)."""
        return Envelope(self.sender, self.receiver, self.call, self.step, self.round, data,
                         self.sealed, self.row_index, self.hops, self.phase, self.elements,
                         self.n_bytes, self.sent_s, self.key)

    def copy(self) -> Envelope:
        """The same message, sent once more (a replayed copy), not yet in any mailbox."""
        return Envelope(self.sender, self.receiver, self.call, self.step, self.round,
                         self.data, self.sealed, self.row_index, self.hops, self.phase,
                         self.elements, self.n_bytes, self.sent_s, self.key, self.decoded,
                         self.deferred)


