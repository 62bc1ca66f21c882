"""The SimPy driver: runs one party program per participant on the simulated network.

Each program runs as a SimPy process. The driver interprets its effects
(:mod:`protocols.effects`):

* ``Send``/``SendEach`` — the payload is encoded (:mod:`protocols.wire`), sealed with AES-GCM
  under the pair's channel key when sealing is on, timed over the route's links
  (:mod:`sim.network`: store-and-forward, FIFO links) and delivered to the receiver's mailbox
  at the simulated delivery time. The ledger gets one row per message.
* ``Recv``/``RecvEach`` — wait until the message with that (sender, call, step) is in the
  mailbox (arrival order does not matter), unseal, decode and record it in the receiver's view.
* ``RecvAny`` — wait for the first of several (sender, call, step) messages; returns its
  index in the list and the array (the first listed wins among messages already there).
* ``Compute`` — the party's clock advances by the declared seconds of local work; the driver
  returns the clock after it.
* ``Input``/``Output`` — recorded in the party's view.

A message's round is one more than the highest round its sender had received before sending.

Failure never hangs a run: when a program raises, the driver raises
:class:`~protocols.errors.ProtocolAbort` (party, round, reason) inside every peer that is
waiting — and inside any peer that waits later — and the run ends with that abort. When no
event is left but some party still waits for a message, that is a deadlock and ends the same
way.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from parties.view import Message, View
from protocols import wire
from protocols.channels import SEAL_OVERHEAD_BYTES, message_nonce, open_sealed, seal
from protocols.context import PartyContext
from protocols.effects import (
    Call,
    Compute,
    Input,
    Output,
    Recv,
    RecvAny,
    RecvEach,
    Send,
    SendEach,
)
from protocols.errors import MpcsimError, ProtocolAbort
from sim.ledger import Row
from sim.network import Network

Interceptor = Callable[[int, int, str, bytes], bytes]
ProgramFactory = Callable[[PartyContext], Generator[Any, Any, Any]]


@dataclass(frozen=True, slots=True)
class _Envelope:
    sender: int
    receiver: int
    call: Call
    step: str
    round: int
    data: bytes
    nonce: bytes | None
    row: Row  # the ledger row, completed with the delivery time on arrival
    row_index: int
    hops: tuple[tuple[tuple[object, object], Any], ...]

    @property
    def key(self) -> tuple[int, str, int, str]:
        return (self.sender, self.call.protocol, self.call.index, self.step)


def _aad(sender: int, receiver: int, call: Call, step: str) -> bytes:
    return f"{sender}>{receiver}|{call.tag(step)}".encode()


@dataclass
class DriverOutcome:
    outputs: dict[int, Any]
    rows: list[Row]
    simulated_s: float


class SimPyDriver:
    """Interpret party programs on a :class:`~sim.network.Network` with SimPy.

    Parameters
    ----------
    network : Network
        Links and their latency and bandwidth.
    sealing : bool
        Seal every message (except those sent with ``sealed=False``) with AES-GCM.
    interceptor : callable, optional
        ``interceptor(sender, receiver, tag, data) -> data`` rewrites the bytes in transit
        (an active network adversary, for tests of sealing).
    record_messages : bool
        Append every received message to its receiver's view (off only for runs too large
        to keep them).
    """

    def __init__(
        self,
        network: Network,
        *,
        sealing: bool = True,
        interceptor: Interceptor | None = None,
        record_messages: bool = True,
    ) -> None:
        self.network = network
        self.sealing = sealing
        self.interceptor = interceptor
        self.record_messages = record_messages

    def run(
        self,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: Mapping[int, View],
    ) -> DriverOutcome:
        """Run every program to completion; raise :class:`ProtocolAbort` if a party fails.

        Python's cyclic garbage collector is paused for the run and restored afterwards: a
        run keeps up to millions of live objects (ledger rows, envelopes, events), none of them
        in reference cycles, and every collection would traverse them all (a quarter of the
        wall time at M = 400). Cycles made meanwhile are collected once it is back on.
        """
        collecting = gc.isenabled()
        gc.disable()
        try:
            return _Run(self, contexts, programs, views).execute()
        finally:
            if collecting:
                gc.enable()


class _Run:
    """The state of one run (so that a driver holds no state between runs)."""

    def __init__(
        self,
        driver: SimPyDriver,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: Mapping[int, View],
    ) -> None:
        self.driver = driver
        self.network = driver.network
        self.contexts = contexts
        self.programs = programs
        self.views = views
        self.env = simpy.Environment()
        self.mailbox: dict[int, dict[tuple[int, str, int, str], list[_Envelope]]] = {
            p: {} for p in contexts
        }
        # what a party waits for: the mailbox keys it accepts (several for RecvAny)
        self.waiting: dict[int, tuple[tuple[tuple[int, str, int, str], ...], simpy.Event]] = {}
        self.max_round: dict[int, int] = dict.fromkeys(contexts, 0)
        self.counters: dict[tuple[int, int], int] = {}
        self.link_free: dict[tuple[object, object], float] = {}
        self.rows: list[Row] = []
        self.outputs: dict[int, Any] = {}
        self.abort: ProtocolAbort | None = None

    def execute(self) -> DriverOutcome:
        for pid in sorted(self.contexts):
            self.env.process(self._party(pid))
        self.env.run()
        if self.waiting and self.abort is None:
            pid = min(self.waiting)
            sender, protocol, index, step = self.waiting[pid][0][0]
            self._fail(
                pid,
                MpcsimError(
                    f"deadlock: waits for '{step}' of {protocol}#{index} from party {sender}, "
                    "which was never sent"
                ),
            )
            self.env.run()
        if self.abort is not None:
            raise self.abort
        self._record_unread()
        return DriverOutcome(self.outputs, self.rows, float(self.env.now))

    def _record_unread(self) -> None:
        """Put messages that arrived but were never asked for into their receivers' views.

        An honest-but-curious party sees everything delivered to it, whether or not its
        program reads it; such messages follow the ones it read, in order of arrival.
        """
        if not self.driver.record_messages:
            return
        for pid in sorted(self.mailbox):
            for queue in self.mailbox[pid].values():
                for envelope in queue:
                    self.views[pid].received.append(self._message(pid, envelope))

    # -- one party's process ----------------------------------------------------------------

    def _party(self, pid: int) -> Generator[simpy.Event, Any, None]:
        try:
            gen = self.programs[pid](self.contexts[pid])
        except Exception as exc:  # a program that fails before its first effect
            self._fail(pid, exc)
            return
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = gen.send(value) if error is None else gen.throw(error)
            except StopIteration as stop:
                self.outputs[pid] = stop.value
                return
            except ProtocolAbort as exc:
                if self.abort is None:
                    self._fail(pid, exc)
                return
            except Exception as exc:
                self._fail(pid, exc)
                return
            value, error = None, None
            try:
                kind = type(effect)
                if kind is Send:
                    self._send(pid, effect.to, effect.payload, effect.call, effect.step,
                               effect.sealed)
                elif kind is SendEach:
                    encoded: dict[int, tuple[bytes, int]] = {}  # a broadcast encodes once
                    for to in sorted(effect.payloads):
                        self._send(pid, to, effect.payloads[to], effect.call, effect.step,
                                   effect.sealed, encoded)
                elif kind is Recv:
                    value = yield from self._receive(pid, effect.sender, effect.call, effect.step)
                elif kind is RecvEach:
                    got = {}
                    for sender in effect.senders:
                        got[sender] = yield from self._receive(pid, sender, effect.call,
                                                               effect.step)
                    value = got
                elif kind is RecvAny:
                    value = yield from self._receive_any(pid, effect.keys)
                elif kind is Compute:
                    yield self.env.timeout(effect.seconds)
                    value = float(self.env.now)
                elif kind is Input:
                    self.views[pid].protocol_inputs.append((effect.call, effect.label,
                                                            effect.value))
                elif kind is Output:
                    self.views[pid].outputs.append((effect.call, effect.label, effect.value))
                else:
                    raise MpcsimError(f"party {pid} yielded {effect!r}, which is not an effect")
            except ProtocolAbort as abort:
                error = abort
            except Exception as exc:
                error = exc

    def _receive(
        self, pid: int, sender: int, call: Call, step: str
    ) -> Generator[simpy.Event, Any, np.ndarray]:
        if sender not in self.contexts or sender == pid:
            raise MpcsimError(f"party {pid} waits for a message from unknown party {sender}")
        key = (sender, call.protocol, call.index, step)
        queue = self.mailbox[pid].get(key)
        if queue:
            envelope = queue.pop(0)
            if not queue:
                del self.mailbox[pid][key]
        else:
            if self.abort is not None:
                raise self.abort
            event = self.env.event()
            self.waiting[pid] = ((key,), event)
            envelope = yield event
        return self._consume(pid, envelope)

    def _receive_any(
        self, pid: int, keys: tuple[tuple[int, Call, str], ...]
    ) -> Generator[simpy.Event, Any, tuple[int, np.ndarray]]:
        if not keys:
            raise MpcsimError(f"party {pid} waits for any of no messages")
        wanted = []
        for sender, call, step in keys:
            if sender not in self.contexts or sender == pid:
                raise MpcsimError(f"party {pid} waits for a message from unknown party {sender}")
            wanted.append((sender, call.protocol, call.index, step))
        for key in wanted:
            queue = self.mailbox[pid].get(key)
            if queue:
                envelope = queue.pop(0)
                if not queue:
                    del self.mailbox[pid][key]
                break
        else:
            if self.abort is not None:
                raise self.abort
            event = self.env.event()
            self.waiting[pid] = (tuple(wanted), event)
            envelope = yield event
        return wanted.index(envelope.key), self._consume(pid, envelope)

    # -- messages ---------------------------------------------------------------------------

    def _send(
        self,
        pid: int,
        to: int,
        payload: np.ndarray,
        call: Call,
        step: str,
        sealed: bool,
        encoded: dict[int, tuple[bytes, int]] | None = None,
    ) -> None:
        if to not in self.contexts or to == pid:
            raise MpcsimError(f"party {pid} sent a message to unknown party {to}")
        ctx = self.contexts[pid]
        cached = encoded.get(id(payload)) if encoded is not None else None
        if cached is None:
            arr = np.asarray(payload)
            width = ctx.field.element_bytes if arr.dtype == object else None
            cached = (wire.encode(arr, width), wire.payload_elements(arr))
            if encoded is not None:
                encoded[id(payload)] = cached
        data, elements = cached
        nonce = None
        if self.driver.sealing and sealed:
            channel_key = ctx.channel_keys.get(to)
            if channel_key is None:
                raise MpcsimError(
                    f"party {pid} has no channel key for party {to}: sealing needs key agreement"
                )
            count = self.counters.get((pid, to), 0)
            self.counters[(pid, to)] = count + 1
            nonce = message_nonce(pid, to, count)
            n_bytes = len(data) + SEAL_OVERHEAD_BYTES  # GCM tag + the nonce carried along
            data = seal(channel_key, nonce, data, _aad(pid, to, call, step))
        else:
            n_bytes = len(data)
        if self.driver.interceptor is not None:
            data = self.driver.interceptor(pid, to, call.tag(step), data)
        now = float(self.env.now)
        hops = self.network.route_links(pid, to)
        round_ = self.max_round[pid] + 1
        row = Row(pid, to, call.protocol, call.index, step, ctx.phase, round_, elements, n_bytes,
                  len(hops), now, now)
        self.rows.append(row)  # the delivery time is filled in on arrival
        envelope = _Envelope(pid, to, call, step, round_, data, nonce, row, len(self.rows) - 1,
                             hops)
        self._forward(envelope, 0, now)

    def _forward(self, envelope: _Envelope, hop: int, t: float) -> None:
        """Queue ``envelope`` on hop ``hop`` of its route at time ``t`` (its arrival there).

        Each directed link is a FIFO: transmission starts when the link is free, and the
        message reaches the next node ``latency`` after the transmission ends. A link is booked
        only when the message arrives at it, so a relayed message never holds a link ahead of
        messages that reach it earlier.
        """
        key, link = envelope.hops[hop]
        start = max(t, self.link_free.get(key, 0.0))
        end = start + envelope.row.bytes * 8.0 / link.bandwidth_bps
        self.link_free[key] = end
        arrival = end + link.latency_s
        event = self.env.timeout(arrival - float(self.env.now), value=(envelope, hop + 1))
        event.callbacks.append(self._arrive)

    def _arrive(self, event: simpy.Event) -> None:
        envelope, hop = event.value
        now = float(self.env.now)
        if hop < len(envelope.hops):
            self._forward(envelope, hop, now)
            return
        self.rows[envelope.row_index] = envelope.row._replace(delivered_s=now)
        self._deliver(envelope)

    def _deliver(self, envelope: _Envelope) -> None:
        waiting = self.waiting.get(envelope.receiver)
        if waiting is not None and envelope.key in waiting[0]:
            del self.waiting[envelope.receiver]
            waiting[1].succeed(envelope)
        else:
            self.mailbox[envelope.receiver].setdefault(envelope.key, []).append(envelope)

    def _consume(self, pid: int, envelope: _Envelope) -> np.ndarray:
        """Unseal and decode a message the program asked for; record it in the view."""
        message = self._message(pid, envelope)
        self.max_round[pid] = max(self.max_round[pid], envelope.round)
        if self.driver.record_messages:
            self.views[pid].received.append(message)
        return message.payload

    def _message(self, pid: int, envelope: _Envelope) -> Message:
        """The view record of an envelope, unsealed and decoded."""
        data = envelope.data
        if envelope.nonce is not None:
            data = open_sealed(self.contexts[pid].channel_keys[envelope.sender], envelope.nonce,
                               data, _aad(envelope.sender, pid, envelope.call, envelope.step))
        return Message(envelope.sender, envelope.call.protocol, envelope.call.index,
                       envelope.step, envelope.round, wire.decode(data))

    # -- failure ----------------------------------------------------------------------------

    def _fail(self, pid: int, exc: BaseException) -> None:
        if self.abort is None:
            if isinstance(exc, ProtocolAbort):
                self.abort = exc
            else:
                self.abort = ProtocolAbort(pid, self.max_round[pid], f"{type(exc).__name__}: {exc}")
                self.abort.__cause__ = exc
        for other in sorted(self.waiting):
            _, event = self.waiting.pop(other)
            event.fail(self.abort)
