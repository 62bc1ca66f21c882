"""A coalition's view of a run, call by call: the unit every audit method compares.

A run is a sequence of protocol calls (a PD-NMF run makes one SecureSum call per topic per
sweep). :func:`split_run` reads the views of one run once and, for every call, returns what
the coalition received in it (:class:`CallRecord`) and what it holds about it — its inputs,
randomness, sent messages and declared outputs (the :class:`~protocols.simulator.CallView` a
simulator takes). :class:`Layout` fixes the order of the calls, messages and elements, so that
the coalition's views over many trials become one matrix with a row per trial and a column per
received field element, and every column can be named back (call, message, element).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parties.view import View
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import PrimeField
from protocols.field.mersenne127 import ELEMENT127
from protocols.simulator import CallView

MessageId = tuple[int, int, str, int]
"""(receiving member, sender, step, occurrence): one message of a call, in a coalition's view."""


def message_name(call: Call, message: MessageId) -> str:
    """``"secure_sum#3.column_sum from 2 to 0"`` (with ``(2nd)`` etc. for a repeated step)."""
    receiver, sender, step, k = message
    again = f" (#{k + 1})" if k else ""
    return f"{call.tag(step)}{again} from {sender} to {receiver}"


@dataclass
class CallRecord:
    """One call of one run, from the coalition's side."""

    call: Call
    received: dict[MessageId, np.ndarray] = field(default_factory=dict)
    view: CallView | None = None


def _payload(value: Any) -> np.ndarray:
    arr = np.ravel(np.asarray(value))
    if arr.dtype == ELEMENT127:  # the MPC engine's GF(2^127 − 1) records: as Python ints
        return arr["lo"].astype(object) | (arr["hi"].astype(object) << 64)
    return arr


def split_run(
    views: Mapping[int, View],
    members: Sequence[int],
    field_: PrimeField,
    parties: Sequence[int],
) -> dict[Call, CallRecord]:
    """Every call of a run with what the coalition received in it and held about it.

    Parameters
    ----------
    views : mapping of int to View
        Every party's view of one run (the honest parties' views give what the members sent).
    members : sequence of int
        The coalition.
    parties : sequence of int
        The data-holding parties.
    """
    members = tuple(sorted(members))
    member_set = set(members)
    records: dict[Call, CallRecord] = {}
    parts: dict[Call, dict[str, Any]] = {}

    def part(call: Call) -> dict[str, Any]:
        if call not in parts:
            records[call] = CallRecord(call)
            parts[call] = {"inputs": {}, "outputs": {}, "draws": {}, "sent": {}}
        return parts[call]

    for m in members:
        view = views[m]
        seen: dict[tuple[Call, int, str], int] = {}
        for msg in view.received:
            call = Call(msg.protocol, msg.call)
            part(call)
            k = seen.get((call, msg.sender, msg.step), 0)
            seen[(call, msg.sender, msg.step)] = k + 1
            records[call].received[(m, msg.sender, msg.step, k)] = _payload(msg.payload)
        for kind, entries in (("inputs", view.protocol_inputs), ("outputs", view.outputs)):
            for call, label, value in entries:
                if call is not None:
                    part(call)[kind].setdefault(m, []).append((label, value))
        for key, values in view.draws:
            part(Call(key[-3], key[-2]))["draws"][key] = values
    senders: dict[Call, dict[str, set[int]]] = {}  # the schedule: who sent each step
    for p, view in views.items():
        for msg in view.received:
            call = Call(msg.protocol, msg.call)
            senders.setdefault(call, {}).setdefault(msg.step, set()).add(msg.sender)
            if msg.sender in member_set:
                part(call)["sent"][(p, msg.sender, msg.step)] = _payload(msg.payload)
    for call, record in records.items():
        got = parts[call]
        record.view = CallView(
            call=call, field=field_, parties=tuple(parties), members=members,
            inputs={m: tuple(v) for m, v in got["inputs"].items()},
            outputs={m: tuple(v) for m, v in got["outputs"].items()},
            draws=got["draws"], sent=got["sent"],
            senders={step: tuple(sorted(who))
                     for step, who in senders.get(call, {}).items()},
        )
    return records


def _bytes(value: Any) -> bytes:
    arr = np.asarray(value)
    if arr.dtype == object:
        return repr(arr.tolist()).encode()
    return arr.dtype.str.encode() + repr(arr.shape).encode() + arr.tobytes()


def view_digest(view: CallView) -> str:
    """A digest of everything a simulator reads: equal digests, equal simulated laws."""
    h = hashlib.blake2b(digest_size=16)
    for m in view.members:
        for kind in (view.inputs, view.outputs):
            for label, value in kind.get(m, ()):
                h.update(label.encode() + b"\0" + _bytes(value))
        h.update(b"|")
    for key in sorted(view.draws, key=repr):
        h.update(repr(key).encode() + _bytes(view.draws[key]))
    for key in sorted(view.sent, key=repr):
        h.update(repr(key).encode() + _bytes(view.sent[key]))
    h.update(repr(sorted(view.senders.items())).encode())
    return h.hexdigest()


@dataclass(frozen=True)
class Layout:
    """The order of calls, messages and elements of a coalition's view vector.

    Attributes
    ----------
    calls : tuple of Call
        The compared calls, by call number.
    messages : tuple of tuple of MessageId
        Per call, its messages: steps in the order they first appear, then receiver, sender.
    sizes : tuple of tuple of int
        Per call and message, the number of elements.
    """

    calls: tuple[Call, ...]
    messages: tuple[tuple[MessageId, ...], ...]
    sizes: tuple[tuple[int, ...], ...]

    @classmethod
    def of(cls, records: Mapping[Call, Mapping[MessageId, np.ndarray]],
           calls: Iterable[Call] | None = None) -> Layout:
        """The layout of one run's received messages (``records``: call → message → payload)."""
        chosen = sorted(records if calls is None else calls, key=lambda c: (c.index, c.protocol))
        messages, sizes = [], []
        for call in chosen:
            received = records.get(call, {})
            order = {step: i for i, step in enumerate(dict.fromkeys(k[2] for k in received))}
            ids = sorted(received, key=lambda k: (order[k[2]], k[0], k[1], k[3]))
            messages.append(tuple(ids))
            sizes.append(tuple(int(np.size(received[k])) for k in ids))
        return cls(tuple(chosen), tuple(messages), tuple(sizes))

    def matches(self, records: Mapping[Call, Mapping[MessageId, np.ndarray]]) -> bool:
        """Whether one run's messages have this layout (same messages, same sizes)."""
        for call, ids, sizes in zip(self.calls, self.messages, self.sizes, strict=True):
            received = records.get(call, {})
            if set(received) != set(ids):
                return False
            if any(int(np.size(received[k])) != s for k, s in zip(ids, sizes, strict=True)):
                return False
        return True

    def first_difference(
        self, records: Mapping[Call, Mapping[MessageId, np.ndarray]]
    ) -> tuple[int, str]:
        """(call number, message) of the first place where a run departs from this layout."""
        for call, ids, sizes in zip(self.calls, self.messages, self.sizes, strict=True):
            received = records.get(call, {})
            for k, s in zip(ids, sizes, strict=True):
                if k not in received or int(np.size(received[k])) != s:
                    return call.index, message_name(call, k)
            extra = sorted(set(received) - set(ids), key=repr)
            if extra:
                return call.index, message_name(call, extra[0])
        return -1, ""

    @property
    def width(self) -> int:
        return sum(sum(s) for s in self.sizes)

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per column: (call position, message position within the call, element index)."""
        calls, msgs, elems = [], [], []
        for c, sizes in enumerate(self.sizes):
            for j, size in enumerate(sizes):
                calls.append(np.full(size, c))
                msgs.append(np.full(size, j))
                elems.append(np.arange(size))
        if not calls:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty
        return (np.concatenate(calls).astype(np.int64), np.concatenate(msgs).astype(np.int64),
                np.concatenate(elems).astype(np.int64))

    def row(self, records: Mapping[Call, Mapping[MessageId, np.ndarray]],
            dtype: np.dtype) -> np.ndarray:
        """One run's view vector (its messages in layout order, flattened).

        Each message is cast to ``dtype`` before they are joined: joining an int64 payload (a
        public seed) with uint64 field elements would otherwise promote all to float64 and
        round the elements."""
        parts = [np.ravel(records[call][k]).astype(dtype, copy=False)
                 for call, ids in zip(self.calls, self.messages, strict=True) for k in ids]
        if not parts:
            return np.zeros(0, dtype=dtype)
        return np.concatenate(parts)

    def describe(self, column: int) -> tuple[int, str, int]:
        """(call number, message name, element) of a column."""
        offset = 0
        for call, ids, sizes in zip(self.calls, self.messages, self.sizes, strict=True):
            for k, size in zip(ids, sizes, strict=True):
                if column < offset + size:
                    return call.index, message_name(call, k), column - offset
                offset += size
        raise IndexError(f"column {column} is outside a layout of {offset} elements")


def select_calls(records: Mapping[Call, CallRecord], calls: Sequence[int] | None) -> list[Call]:
    """The calls to compare: all, or those with the given call numbers.

    A number selects every call that has it: calls with explicit tags (the dealer's, numbered
    by the instance they serve) may share a number with a call of the parties' counter.
    """
    ordered = sorted(records, key=lambda c: (c.index, c.protocol))
    if calls is None:
        return ordered
    present = {c.index for c in records}
    missing = sorted(set(calls) - present)
    if missing:
        numbers = sorted(present)
        span = f"{numbers[0]}..{numbers[-1]}" if numbers else "none"
        raise InputError(f"calls = {missing} are not in the run (its call numbers: {span}); "
                         "name calls that the run makes, or 'all'")
    wanted = set(calls)
    return [c for c in ordered if c.index in wanted]
