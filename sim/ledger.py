"""The ledger: one immutable row per message, and every communication figure as a query on it.

Columns (:data:`COLUMNS`): ``sender``, ``receiver``, ``protocol`` (the innermost protocol that
sent the message), ``call`` (that protocol's call counter), ``step`` (the message's step within
the call), ``phase`` (the algorithm phase label, e.g. ``init`` or ``iter``; empty if none),
``round`` (one more than the highest round the sender had received before sending),
``elements`` (numbers carried; opaque bytes count zero), ``bytes`` (the payload's wire encoding
plus the sealing overhead when sealed), ``hops`` (links crossed), ``sent_s`` and
``delivered_s`` (simulated seconds).

Totals are never kept as running counters: :meth:`Ledger.totals`, :meth:`Ledger.per_party`
and :meth:`Ledger.summary` compute them from the rows.
"""

from __future__ import annotations

import csv
import io
from array import array
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

import numpy as np


class Row(NamedTuple):
    sender: int
    receiver: int
    protocol: str
    call: int
    step: str
    phase: str
    round: int
    elements: int
    bytes: int
    hops: int
    sent_s: float
    delivered_s: float


COLUMNS: tuple[str, ...] = Row._fields


class RowColumns:
    """Rows appended one message at a time, kept by column: what an MPI rank's parties send.

    A :class:`Row` is a tuple of twelve objects, ≈ 250 B with its large integers and floats
    (33 MB per rank for PD-NMF at M = 256 over 2 ranks); here a row is nine 8-byte numbers
    and three 4-byte indices into the names seen (protocol, step, phase): 84 B. Rows are
    made again when asked (:meth:`row`, :meth:`in_send_order`), equal to those appended.
    """

    __slots__ = ("_ids", "_names", "_numbers", "_times", "_where")

    def __init__(self) -> None:
        self._numbers: tuple[array, ...] = ()  # sender, receiver, call, round, elements,
        self._ids: tuple[array, ...] = ()  # bytes, hops; protocol, step, phase (name ids);
        self._times: tuple[array, ...] = ()  # sent_s, delivered_s
        self._names: list[str] = []
        self._where: dict[str, int] = {}  # a name's id
        self.clear()

    def clear(self) -> None:
        """Forget every row."""
        self._numbers = tuple(array("q") for _ in range(7))
        self._ids = tuple(array("i") for _ in range(3))
        self._times = (array("d"), array("d"))
        self._names, self._where = [], {}

    def _id(self, name: str) -> int:
        i = self._where.get(name)
        if i is None:
            i = self._where[name] = len(self._names)
            self._names.append(name)
        return i

    def append(self, sender: int, receiver: int, protocol: str, call: int, step: str,
               phase: str, round_: int, elements: int, n_bytes: int, hops: int,
               sent_s: float, delivered_s: float) -> None:
        """Append the row ``Row(sender, ..., delivered_s)``."""
        # written out column by column: a loop over zipped columns took twice as long, and an
        # MPI rank appends a row for every message its parties send
        numbers, ids, where = self._numbers, self._ids, self._where
        numbers[0].append(sender)
        numbers[1].append(receiver)
        numbers[2].append(call)
        numbers[3].append(round_)
        numbers[4].append(elements)
        numbers[5].append(n_bytes)
        numbers[6].append(hops)
        ids[0].append(where[protocol] if protocol in where else self._id(protocol))
        ids[1].append(where[step] if step in where else self._id(step))
        ids[2].append(where[phase] if phase in where else self._id(phase))
        self._times[0].append(sent_s)
        self._times[1].append(delivered_s)

    def __len__(self) -> int:
        return len(self._times[0])

    def row(self, i: int) -> Row:
        """Row ``i``, in the order appended."""
        (sender, receiver, call, round_, elements, n_bytes, hops) = (
            column[i] for column in self._numbers)
        protocol, step, phase = (self._names[column[i]] for column in self._ids)
        return Row(sender, receiver, protocol, call, step, phase, round_, elements, n_bytes,
                   hops, self._times[0][i], self._times[1][i])

    def __iter__(self) -> Iterator[Row]:
        return (self.row(i) for i in range(len(self)))

    def deliver(self, numbers: np.ndarray, times: np.ndarray) -> None:
        """Set the delivery times of rows ``numbers`` (int64) to ``times``."""
        delivered = np.frombuffer(self._times[1], dtype=np.float64)
        delivered[numbers] = times
        del delivered  # the column may grow again once no array views it

    def in_send_order(self) -> Iterator[Row]:
        """Every row by send time, rows sent at the same time in the order appended (the
        ledger's order: a stable sort)."""
        order = np.argsort(np.frombuffer(self._times[0], dtype=np.float64), kind="stable")
        return (self.row(i) for i in order.tolist())


class Ledger:
    """An immutable sequence of :class:`Row`, in the order messages were sent."""

    def __init__(self, rows: Iterable[Row], faults: Iterable[Mapping[str, object]] = ()) -> None:
        self._rows: tuple[Row, ...] = tuple(rows)
        self.faults: tuple[Mapping[str, object], ...] = tuple(faults)
        """Injected faults as they fired (:mod:`sim.faults`): fault, kind, time, effect, and
        the message (row index) or party concerned."""

    def with_faults(self, faults: Iterable[Mapping[str, object]]) -> Ledger:
        """These rows with the run's injected faults."""
        return Ledger(self._rows, faults)

    def __len__(self) -> int:
        return len(self._rows)

    def __iter__(self) -> Iterator[Row]:
        return iter(self._rows)

    def __getitem__(self, i: int) -> Row:
        return self._rows[i]

    def column(self, name: str) -> np.ndarray:
        """One column as an array (ints, floats or strings)."""
        idx = COLUMNS.index(name)
        values = [r[idx] for r in self]
        if name in ("protocol", "step", "phase"):
            return np.array(values, dtype=object)
        if name in ("sent_s", "delivered_s"):
            return np.array(values, dtype=np.float64)
        return np.array(values, dtype=np.int64)

    def matching(
        self,
        protocol: str | tuple[str, ...] | None = None,
        phase: str | None = None,
        sender: int | None = None,
        receiver: int | None = None,
    ) -> Iterator[Row]:
        """The rows matching every given criterion, one at a time (a phase matches itself
        and its sub-phases; ``protocol`` may name several)."""
        protocols = (protocol,) if isinstance(protocol, str) else protocol
        for r in self:
            if ((protocols is None or r.protocol in protocols)
                    and (phase is None or r.phase == phase or r.phase.startswith(phase + "/"))
                    and (sender is None or r.sender == sender)
                    and (receiver is None or r.receiver == receiver)):
                yield r

    def select(
        self,
        protocol: str | tuple[str, ...] | None = None,
        phase: str | None = None,
        sender: int | None = None,
        receiver: int | None = None,
    ) -> Ledger:
        """The rows matching every given criterion (:meth:`matching`), as a ledger in
        memory."""
        return Ledger(self.matching(protocol, phase, sender, receiver))

    def elements_by_sender(self, protocol: str | tuple[str, ...] | None = None,
                           phase: str | None = None) -> dict[int, int]:
        """Elements each sender sent in the rows matching ``protocol`` and ``phase``
        (:meth:`matching`): one pass, no row kept — a stored ledger's matching rows may not
        fit in memory."""
        sent: dict[int, int] = {}
        for r in self.matching(protocol, phase):
            sent[r.sender] = sent.get(r.sender, 0) + r.elements
        return sent

    def totals(self) -> dict[str, int]:
        """Messages, elements, bytes and rounds of the whole run, in one pass over the rows."""
        n = elements = n_bytes = rounds = 0
        for r in self:
            n += 1
            elements += r.elements
            n_bytes += r.bytes
            rounds = max(rounds, r.round)
        return {"messages": n, "elements": elements, "bytes": n_bytes, "rounds": rounds}

    def rounds(self) -> int:
        """Length of the longest chain of dependent messages (the highest round)."""
        return max((r.round for r in self), default=0)

    def per_party(self, roles: Mapping[int, str]) -> list[dict[str, object]]:
        """Messages, elements and bytes sent and received, for every participant in ``roles``.

        One pass over the rows with three counters per party (a row of a party outside
        ``roles`` is not counted), whether the rows are in memory or streamed from a file
        (:class:`sim.ledger_store.StoredLedger`).
        """
        sent = {p: [0, 0, 0] for p in roles}
        got = {p: [0, 0, 0] for p in roles}
        for r in self:
            for table, party in ((sent, r.sender), (got, r.receiver)):
                counts = table.get(party)
                if counts is not None:
                    counts[0] += 1
                    counts[1] += r.elements
                    counts[2] += r.bytes
        return [{"party": p, "role": roles[p],
                 "messages_sent": sent[p][0], "elements_sent": sent[p][1],
                 "bytes_sent": sent[p][2], "messages_received": got[p][0],
                 "elements_received": got[p][1], "bytes_received": got[p][2]}
                for p in sorted(roles)]

    def summary(self, by: str = "protocol") -> dict[str, dict[str, int]]:
        """Calls, messages, elements, bytes and rounds grouped by ``protocol`` or ``phase``.

        The rounds of a group are summed over its calls; a call's rounds are the number of
        distinct communication rounds its messages occupy (max − min + 1). One pass over the
        rows, keeping counters per group and the round span per call.
        """
        if by not in ("protocol", "phase"):
            raise ValueError("summary groups by 'protocol' or 'phase'")
        groups: dict[str, dict[str, int]] = {}
        calls: dict[str, dict[tuple[str, int], list[int]]] = {}
        for r in self:
            name = getattr(r, by)
            g = groups.get(name)
            if g is None:
                g = groups[name] = {"messages": 0, "elements": 0, "bytes": 0}
                calls[name] = {}
            g["messages"] += 1
            g["elements"] += r.elements
            g["bytes"] += r.bytes
            span = calls[name].setdefault((r.protocol, r.call), [r.round, r.round])
            span[0], span[1] = min(span[0], r.round), max(span[1], r.round)
        return {name: {"calls": len(calls[name]), "messages": g["messages"],
                       "elements": g["elements"], "bytes": g["bytes"],
                       "rounds": sum(hi - lo + 1 for lo, hi in calls[name].values())}
                for name, g in groups.items()}

    def write_csv(self, path: str | Path) -> None:
        """Write :meth:`to_csv`'s text to the file ``path``."""
        Path(path).write_bytes(self.to_csv().encode())

    def to_csv(self) -> str:
        """The ledger as CSV text (deterministic: floats written with ``repr``)."""
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in self._rows:
            writer.writerow(
                [
                    *r[:10],
                    repr(float(r.sent_s)),
                    repr(float(r.delivered_s)),
                ]
            )
        return buf.getvalue()
