"""One run of the SimPy driver: the transport under the interpreter's loop.

:class:`SimPyRun` holds the state of one run of :class:`sim.drivers.simpy.SimPyDriver` (so
that a driver holds no state between runs) — the SimPy environment, the mailboxes, the sealed
channels, the faults to inject and the ledger — and implements the transport that
:class:`~sim.drivers.interpreter.Interpreter` runs the party programs over: sending, timing over
the network's links, delivering, opening and failing. What the driver does, and what it
costs, is described in :mod:`sim.drivers.simpy`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, Protocol

import numpy as np
import simpy

from parties.view import Message, View, frozen, received_message
from protocols import wire
from protocols.context import PartyContext
from protocols.crypto.sealing import SEAL_OVERHEAD_BYTES
from protocols.effects import Call
from protocols.errors import AuthenticationError, MpcsimError, ProtocolAbort
from protocols.field import PrimeField
from sim.drivers.driver import DriverOutcome, Interceptor, ProgramFactory
from sim.drivers.envelopes import (
    Encoded,
    RunChannels,
    decode_received,
    encode_payload,
    seal_payload,
    unseal,
)
from sim.drivers.in_flight import Envelope as _Envelope
from sim.drivers.interpreter import Interpreter, Key
from sim.faults import Fault, FaultLog, FaultPlan
from sim.ledger import Row
from sim.network import Network

_frombuffer = np.frombuffer


def _interrupt_with(fault: Fault) -> Callable[[simpy.Event], None]:
    """A timer callback that crashes the process the timer carries, if it still runs."""

    def interrupt(event: simpy.Event) -> None:
        process = event.value
        if process.is_alive:
            process.interrupt(fault)

    return interrupt


class DriverSettings(Protocol):
    """What a run reads from its :class:`sim.drivers.simpy.SimPyDriver` (its parameters)."""

    network: Network
    sealing: bool
    interceptor: Interceptor | None
    record_messages: bool
    field: PrimeField | None
    faults: FaultPlan | None
    batch_arrivals: bool


class SimPyRun(Interpreter):
    """The state of one run (so that a driver holds no state between runs): the transport
    under :class:`~sim.drivers.interpreter.Interpreter`."""

    interrupt = simpy.Interrupt

    def __init__(
        self,
        driver: DriverSettings,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: Mapping[int, View],
    ) -> None:
        self.driver = driver
        self.network = driver.network
        self.contexts = contexts
        self.participants = contexts
        self.programs = programs
        self.views = views
        self.env = simpy.Environment()
        # per receiver and (sender, protocol, call, step): the first arrived message, which
        # the others that arrived under that key follow (_Envelope.queued)
        self.mailbox: dict[int, dict[tuple[int, str, int, str], _Envelope]] = {
            p: {} for p in contexts
        }
        # what a party waits for: the mailbox keys it accepts (several for RecvAny)
        self.waiting: dict[int, tuple[tuple[tuple[int, str, int, str], ...], simpy.Event]] = {}
        self.max_round: dict[int, int] = dict.fromkeys(contexts, 0)
        self.last_call: dict[int, Call] = {}
        self.counters: dict[tuple[int, int], int] = {}  # next sequence number to send
        self.expected: dict[tuple[int, int], int] = {}  # next sequence number to receive
        self.channels = RunChannels()  # the run's sealed channels, never a context's
        self.link_free: dict[tuple[object, object], float] = {}
        # in order of sending: a message's envelope until it arrives, then its ledger row
        self.rows: list[Row | _Envelope] = []
        # arrivals not yet scheduled, by the instant they happen: (delay, [envelope]), each
        # envelope with the hop it reaches then
        self.batch: dict[float, tuple[float, list[_Envelope]]] = {}
        self.outputs: dict[int, Any] = {}
        self.abort: ProtocolAbort | None = None
        self.faults = FaultLog(driver.faults) if driver.faults else None
        self.batch_arrivals = driver.batch_arrivals
        self.record_messages = driver.record_messages

    def execute(self) -> DriverOutcome:
        processes = {pid: self.env.process(self._party(pid)) for pid in sorted(self.contexts)}
        if self.faults is not None:
            for fault in self.faults.plan.of_kind("crash"):
                if fault.at_s is not None and fault.party in processes:
                    timer = self.env.timeout(fault.at_s, value=processes[fault.party])
                    timer.callbacks.append(_interrupt_with(fault))
        self.env.run()
        if self.waiting and self.abort is None:
            pid = min(self.waiting)
            sender, protocol, index, step = self.waiting[pid][0][0]
            what = f"'{step}' of {protocol}#{index} from party {sender}"
            if self.faults is not None and sender in self.faults.crashed:
                culprit = next(f for f in self.faults.involving(sender) if f.kind == "crash")
                self._fail(sender, MpcsimError(
                    f"{culprit.describe()}: party {pid} waits for {what}, which never came"))
            else:
                fired = self.faults.involving(pid) if self.faults is not None else []
                cause = f" (after {', '.join(f.describe() for f in fired)})" if fired else ""
                self._fail(pid, MpcsimError(
                    f"deadlock: waits for {what}, which was never sent{cause}"))
            self.env.run()
        if self.abort is None:
            self._record_unread()
        outcome = DriverOutcome(self.outputs, self._ledger(), float(self.env.now), self.faults)
        if self.abort is not None:
            self.abort.outcome = outcome  # what completed before it: the caller's to report
            raise self.abort
        return outcome

    def _crash(self, pid: int, fault: Fault, gen: Generator[Any, Any, Any]) -> None:
        """Party ``pid`` stops for good (a crash fault): its program is closed unfinished."""
        if self.faults is None:
            return
        call = self.last_call.get(pid)
        self.faults.record(fault, float(self.env.now), "crashed", party=pid,
                           call=f"{call.protocol}#{call.index}" if call else "")
        self.faults.crashed[pid] = float(self.env.now)
        self.waiting.pop(pid, None)
        gen.close()

    def _unread(self, pid: int) -> Iterator[_Envelope]:
        """Every message left in ``pid``'s mailbox: each key's first, then those queued behind."""
        for first in self.mailbox[pid].values():
            envelope: _Envelope | None = first
            while envelope is not None:
                yield envelope
                envelope = envelope.queued

    # -- the transport's hooks for the interpreter -------------------------------------------

    def _take(self, pid: int, key: Key) -> _Envelope | None:
        """The first arrived message under ``key`` in ``pid``'s mailbox (removed), or None."""
        box = self.mailbox[pid]
        envelope = box.get(key)
        if envelope is None:
            return None
        if envelope.queued is None:
            del box[key]
        else:  # the next one takes its place (and the key its place in the mailbox's order)
            box[key] = envelope.queued
        return envelope

    def _wait(self, pid: int, keys: tuple[Key, ...]) -> simpy.Event:
        event = self.env.event()
        self.waiting[pid] = (keys, event)
        return event

    def _wait_within(self, pid: int, keys: tuple[Key, ...], timer: simpy.Timeout
                     ) -> Generator[simpy.Event, Any, _Envelope | None]:
        event = self._wait(pid, keys)
        fired = yield event | timer
        if event in fired:
            return fired[event]
        self.waiting.pop(pid, None)
        return None

    def _timer(self, seconds: float) -> simpy.Timeout:
        return self.env.timeout(seconds)

    def _expired(self, timer: simpy.Timeout) -> bool:
        return bool(timer.processed)

    def _elapse(self, seconds: float) -> simpy.Timeout:
        return self.env.timeout(seconds)

    def _clock(self) -> float:
        return float(self.env.now)

    # -- messages ---------------------------------------------------------------------------

    def _send(
        self,
        pid: int,
        payloads: Iterable[tuple[int, np.ndarray]],
        call: Call,
        step: str,
        sealed: bool,
    ) -> None:
        """Send each ``(to, payload)`` in turn: encode (a payload object once), seal (or bind
        the sealing to delivery), route.

        The messages of one effect leave at the same simulated instant; those that reach
        their next node at the same instant travel as one SimPy event (:meth:`_flush`).
        """
        try:
            ctx = self.contexts[pid]
            contexts, counters, rows = self.contexts, self.counters, self.rows
            seal = self.driver.sealing and sealed
            interceptor = self.driver.interceptor
            round_ = self.max_round[pid] + 1
            now = self.env.now
            phase = ctx.phase
            direct = self.network.direct_links(pid)
            encoded: Encoded = {}
            # receivers of one encoding share its decoding: they get the very same bytes, or
            # (sealed) open their own copy and find those bytes in it
            shared = interceptor is None
            # nothing observes a message in flight: seal it on delivery (see _open)
            deferred = seal and interceptor is None and self.faults is None
            decoded: dict[int, list[Any]] = {}  # by id of the encoding, alive during the loop
            key = (pid, call.protocol, call.index, step)  # every envelope's mailbox key
            route_links, forward = self.network.route_links, self._forward
            # the previous message's payload object, its encoding and that one's decoding
            last_payload: object = None
            plain, elements, shared_decoding = b"", 0, None
            for to, payload in payloads:
                if to not in contexts or to == pid:
                    raise MpcsimError(f"party {pid} sent a message to unknown party {to}")
                if payload is not last_payload:  # a broadcast's payload is encoded once
                    last_plain = plain
                    plain, elements = (encoded.get(id(payload))
                                       or encode_payload(ctx, payload, encoded))
                    if shared and plain is not last_plain:
                        shared_decoding = decoded.setdefault(id(plain), [None])
                    last_payload = payload
                data, later = plain, None
                if seal:
                    sequence = counters.get((pid, to), 0)
                    if deferred:  # the sending end's key and the number, bound now
                        later = (self.channels.sending_key(ctx, to), sequence)
                    else:  # nonce ‖ ciphertext ‖ tag: SEAL_OVERHEAD_BYTES more
                        data = seal_payload(self.channels, ctx, to, sequence, plain, call, step,
                                            round_)
                    counters[(pid, to)] = sequence + 1
                n_bytes = len(data) + (SEAL_OVERHEAD_BYTES if later is not None else 0)
                if interceptor is not None:
                    data = interceptor(pid, to, call.tag(step), data)
                link = direct.get(to)
                hops = link if link is not None else route_links(pid, to)
                envelope = _Envelope(pid, to, call, step, round_, data, seal, len(rows), hops,
                                     phase, elements, n_bytes, now, key, shared_decoding,
                                     later)
                rows.append(envelope)  # becomes its ledger row on arrival
                forward(envelope, 0, now)
        finally:
            self._flush()

    def _forward(self, envelope: _Envelope, hop: int, t: float) -> None:
        """Queue ``envelope`` on hop ``hop`` of its route at time ``t`` (its arrival there:
        the current instant).

        Each directed link is a FIFO: transmission starts when the link is free, and the
        message reaches the next node ``latency`` after the transmission ends. A link is booked
        only when the message arrives at it, so a relayed message never holds a link ahead of
        messages that reach it earlier. The arrival joins the batch of its instant
        (:meth:`_flush` schedules it).
        """
        hops = envelope.hops
        if type(hops) is tuple:
            key, link = hops[hop]
        else:  # the direct link
            key, link = (envelope.sender, envelope.receiver), hops
        link_free = self.link_free
        free = link_free.get(key, 0.0)
        start = free if free > t else t  # max(t, free), which returns t when they are equal
        extra = 0.0
        if self.faults is not None:
            lost, extra = self.faults.on_link(key, start)
            if lost is not None:
                self.faults.record(lost, start, "lost", message=envelope.row_index,
                                   sender=envelope.sender, receiver=envelope.receiver)
                return
        end = start + envelope.n_bytes * 8.0 / link.bandwidth_bps
        link_free[key] = end
        delay = end + link.latency_s + extra - t
        when = t + delay  # the instant SimPy schedules it at
        envelope.hop = hop + 1
        batch = self.batch
        group = batch.get(when)
        if group is None:
            batch[when] = (delay, [envelope])
        else:
            group[1].append(envelope)
        if not self.batch_arrivals:
            self._flush()

    def _flush(self) -> None:
        """Schedule the batched arrivals: one SimPy event per instant, in order of first use.

        Arrivals are batched only between two scheduling actions of the driver (a send
        effect, or the arrivals of one instant), and the driver flushes before it schedules
        anything else. So the messages of one batch would have been consecutive events at the
        same instant, processed in the same order: one event for them changes nothing.
        """
        if self.batch:
            timeout, arrive = self.env.timeout, self._arrive
            for delay, arrivals in self.batch.values():
                timeout(delay, arrivals).callbacks.append(arrive)
            self.batch.clear()

    def _arrive(self, event: simpy.Event) -> None:
        """Messages reach their next node: relay them, or deliver them to their receivers."""
        now = self.env.now
        rows, faults, expected = self.rows, self.faults, self.expected
        waiting, mailbox = self.waiting, self.mailbox
        for envelope in event.value:
            hops = envelope.hops
            if type(hops) is tuple and envelope.hop < len(hops):  # relayed, not there yet
                self._forward(envelope, envelope.hop, now)
                continue
            receiver = envelope.receiver
            rows[envelope.row_index] = envelope.row(now)
            if envelope.sealed:  # the receiver numbers a channel's messages as they arrive
                if faults is not None:
                    envelope = self._tamper_or_replay(envelope, now)
                channel = (envelope.sender, receiver)
                number = expected.get(channel, 0)
                envelope.number = number
                expected[channel] = number + 1
            envelope.arrived_s = now
            key = envelope.key
            wait = waiting.get(receiver)
            if wait is not None and key in wait[0]:
                del waiting[receiver]
                self._flush()
                wait[1].succeed(envelope)
            else:
                box = mailbox[receiver]
                first = box.get(key)
                if first is None:
                    box[key] = envelope
                else:  # behind the last that arrived under its key
                    while first.queued is not None:
                        first = first.queued
                    first.queued = envelope
        self._flush()

    def _tamper_or_replay(self, envelope: _Envelope, now: float) -> _Envelope:
        """Apply a tamper fault (flip one ciphertext bit) or a replay fault (deliver twice)."""
        if self.faults is None:
            return envelope
        fault = self.faults.on_delivery(envelope.sender, envelope.receiver, envelope.call,
                                        envelope.step, envelope.sent_s)
        if fault is None:
            return envelope
        self.faults.record(fault, now, "tampered" if fault.kind == "tamper" else "replayed",
                           message=envelope.row_index, sender=envelope.sender,
                           receiver=envelope.receiver)
        if fault.kind == "replay":
            self._flush()
            again = envelope.copy()  # the original may still wait in a mailbox meanwhile
            again.hop = again.n_hops
            copy = self.env.timeout(0, value=[again])
            copy.callbacks.append(self._arrive)
            return envelope
        data = bytearray(envelope.data)
        data[len(data) // 2] ^= 0x01  # a bit inside the ciphertext
        return envelope.with_data(bytes(data))

    def _ledger(self) -> list[Row]:
        """The ledger rows: a message that never arrived keeps its send time as delivery."""
        return [r if type(r) is Row else r.row(r.sent_s) for r in self.rows]

    def _consume(self, pid: int, envelope: _Envelope, number: int | None) -> np.ndarray:
        """Open a message the program asked for and record it in the receiver's view.

        :meth:`ReceivedRecords._consume`'s steps, in one frame, and with the view record
        (:class:`~parties.view.Message`) made only when views are kept: the round is the
        envelope's, which is what the record would carry.
        """
        decoded = envelope.decoded
        checked = decoded[0] if decoded is not None and number is None else None
        if checked is not None:  # a broadcast's encoding, already checked: nothing to open
            body, shape, dtype, _ = checked
            payload = _frombuffer(body, dtype)  # wire.decode_again, in place
            if len(shape) != 1:
                payload = payload.reshape(shape)
        else:
            try:
                payload = self._open_payload(envelope, number)
            except Exception as exc:  # hostile bytes: the receiver's failure, not its program's
                self._fail(pid, exc)
                raise self._notice() from None
        max_round = self.max_round
        if envelope.round > max_round[pid]:
            max_round[pid] = envelope.round
        if not self.record_messages:
            # numeric payloads sit on immutable bytes (wire.decode); object arrays do not
            return frozen(payload) if payload.dtype.hasobject else payload
        call = envelope.call
        self.views[pid].received.append(received_message(
            envelope.sender, call.protocol, call.index, envelope.step, envelope.round, payload,
            envelope.arrived_s))
        # the program gets an array object of its own, so that reshaping it in place (or
        # changing its dtype) cannot change the view's record
        if checked is not None:  # wire.another_array of it: another array over `body`
            own = _frombuffer(body, dtype)
            return own if len(shape) == 1 else own.reshape(shape)
        if payload.dtype.hasobject:
            return frozen(payload)  # a copy: object arrays are never sealed
        own = wire.another_array(payload)
        return own if own is not None else frozen(payload.copy())

    def _open(self, envelope: _Envelope, number: int | None) -> Message:
        """Check, unseal and decode a message: its view record (:meth:`_open_payload`)."""
        call = envelope.call
        return received_message(envelope.sender, call.protocol, call.index, envelope.step,
                                envelope.round, self._open_payload(envelope, number),
                                envelope.arrived_s)

    def _open_payload(self, envelope: _Envelope, number: int | None) -> np.ndarray:
        """Check, unseal and decode a message: its payload, read-only.

        A sealed message must be the ``number``-th to arrive on its channel and authenticate
        under the receiver's key. It is opened when the program asks for it (or at the end of
        the run), not on arrival: a receiver may still be agreeing on the key when a fast
        peer's first sealed message reaches it. The receivers of one broadcast decode its
        encoding once: the first checks it; each further one gets an array of its own over
        the checked elements — unsealed, at once (the very same bytes); sealed, once its own
        copy has authenticated (opened into the run's scratch buffer, not kept).
        """
        decoded = envelope.decoded
        checked = decoded[0] if decoded is not None else None
        call = envelope.call
        data = envelope.data
        ctx = self.contexts[envelope.receiver]
        if envelope.deferred is not None and number is not None:
            # sealed on delivery: the sender's end seals the encoding, the receiver's end
            # authenticates it; then the encoding is the receiver's, as if unsealed
            key, sequence = envelope.deferred
            self.channels.seal_and_authenticate(key, sequence, data, ctx, envelope.sender,
                                                number, call, envelope.step, envelope.round)
            number = None
        if checked is not None and number is None:  # a broadcast, already checked
            body, shape, dtype, _ = checked
            return wire.decode_again(body, shape, dtype)
        try:
            if number is not None and checked is not None:
                # a sealed copy of a checked encoding: authenticate it, keep nothing of it.
                # The tag proves the plaintext is what the sender sealed, which is that
                # encoding (its header bytes are compared all the same)
                body, shape, dtype, head = checked
                plaintext = self.channels.open_transient(ctx, envelope.sender, number, data,
                                                         call, envelope.step, envelope.round)
                if len(plaintext) != len(head) + len(body) or plaintext[:len(head)] != head:
                    raise MpcsimError(  # copies of one encoding share `decoded`, nothing else
                        f"party {envelope.sender}'s sealed copy to party {envelope.receiver} "
                        "is not the encoding its broadcast's other copies carry")
                return wire.decode_again(body, shape, dtype)
            if number is not None:
                data = unseal(self.channels, ctx, envelope.sender, number, data, call,
                              envelope.step, envelope.round)
            payload = decode_received(envelope.receiver, envelope.sender, data, call,
                                      envelope.step, self.driver.field)
        except AuthenticationError as exc:  # name the injected fault that caused it, if any
            link = (envelope.sender, envelope.receiver)
            faults = [f for f in self.faults.plan.of_kind("tamper", "replay")
                      if f.index in self.faults.fired and f.link == link
                      ] if self.faults is not None else []
            if not faults:
                raise
            raise AuthenticationError(f"{exc} — injected by {faults[0].describe()}") from None
        if decoded is not None and decoded[0] is None:
            body = wire.body_of(payload, data)
            if body is not None:
                decoded[0] = (body, payload.shape, payload.dtype, data[:len(data) - len(body)])
        return payload

    # -- failure ----------------------------------------------------------------------------

    def _fail(self, pid: int, exc: BaseException) -> None:
        if self.abort is None:
            call = self.contexts[pid].failing_call(self.last_call.get(pid))
            self.abort = ProtocolAbort(pid, self.max_round[pid], f"{type(exc).__name__}: {exc}",
                                       f"{call.protocol}#{call.index}" if call else "")
            self.abort.__cause__ = exc
        for other in sorted(self.waiting):
            _, event = self.waiting.pop(other)
            event.fail(self._notice())
