"""One run on one MPI rank: the transport under the shared interpreter.

:class:`Run` steps this rank's party loops (:class:`~sim.drivers.interpreter.Interpreter`)
and moves their messages: framed between ranks, handed over in memory within one; it ends the
run by termination waves and watches the other ranks' liveness (:mod:`sim.drivers.liveness`;
aborts and lost ranks: :mod:`sim.drivers.mpi_failure`; unread messages past a budget:
:mod:`sim.drivers.mpi_mailbox`). See :mod:`sim.drivers.mpi` for what each part means.
"""

from __future__ import annotations

import os
import time
from array import array
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.view import WALL, Message, View, received_message
from protocols import wire
from protocols.context import PartyContext
from protocols.crypto.sealing import NONCE_BYTES, SEAL_OVERHEAD_BYTES
from protocols.effects import Call
from protocols.errors import InputError, MpcsimError, ProtocolAbort
from sim.drivers.driver import ProgramFactory
from sim.drivers.envelopes import (
    Encoded,
    RunChannels,
    decode_received,
    encode_payload,
    kept_for,
    unseal,
    unseal_in_place,
)
from sim.drivers.interpreter import Interpreter, Key
from sim.drivers.liveness import Liveness
from sim.drivers.mpi_comm import (
    IDLE_SLEEP_MAX_S,
    IDLE_SLEEP_S,
    IDLE_SPINS,
    allgather_json,
    wait,
)
from sim.drivers.mpi_failure import CONTROL_TAG, LOSS_GRACE_S, RankFailure, RankLost
from sim.drivers.mpi_faults import FaultInjection
from sim.drivers.mpi_mailbox import Mailboxes
from sim.drivers.mpi_transfer import (
    DATA,
    IN_FLIGHT_BYTES,
    SEND_IN_PLACE_FROM,
    TAIL_FOLLOWS,
    TAIL_TAG,
    Envelope,
    Framing,
    InFlight,
    ReceivedStorage,
    message_tag,
)
from sim.faults import FaultLog
from sim.ledger import RowColumns

_LIVENESS_EVERY = 64


_WAITING = object()
"""What a waiting party's loop yields here: the run resumes it with the message it waited for
(:meth:`Run._arrive`) or throws the abort notice into it (:meth:`Run._aborted`)."""


class Deliveries:
    """(sender's rank, row number there, delivery time) of each message a rank's parties
    received, in three typed arrays: 24 B a message, where a tuple of three objects took
    ≈ 150 (17 MB per rank for PD-NMF at M = 256 over 2 ranks)."""

    __slots__ = ("ranks", "rows", "times")

    def __init__(self) -> None:
        self.ranks, self.rows, self.times = array("q"), array("q"), array("d")

    def append(self, rank: int, row: int, t: float) -> None:
        self.ranks.append(rank)
        self.rows.append(row)
        self.times.append(t)

    def clear(self) -> None:
        self.ranks, self.rows, self.times = array("q"), array("q"), array("d")


@dataclass
class RankOutcome:
    """One rank's share of a run: its parties' outputs, the rows they sent, and deliveries.

    ``deliveries`` holds (sender's rank, row number there, delivery time) of every message
    this rank's parties received; ``wall_s`` is the run's duration on this rank; ``faults``
    what this rank injected (:mod:`sim.drivers.mpi_faults`), if there was a plan.
    """

    outputs: dict[int, Any]
    rows: RowColumns
    deliveries: Deliveries
    wall_s: float
    faults: FaultLog | None = None


class Run(RankFailure, FaultInjection, Interpreter):
    """One run on one rank: the MPI transport under
    :class:`~sim.drivers.interpreter.Interpreter`."""

    def __init__(
        self,
        driver: Any,  # the sim.drivers.mpi.MpiDriver that runs it (which imports this)
        comm: Any,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: Mapping[int, View],
        owner: Mapping[int, int],
    ) -> None:
        self.driver = driver
        self.MPI = driver.MPI
        self.comm = comm
        self.rank = driver.rank
        self.size = driver.size
        self.tag_ub = int(comm.Get_attr(self.MPI.TAG_UB))
        self.contexts = contexts
        self.programs = programs
        self.views = views
        for view in views.values():  # every time this rank records is its wall clock
            view.clock = WALL
        self.owner = owner
        self.participants = owner
        self._init_faults(driver.faults)
        self.record_messages = driver.record_messages
        self.gens: dict[int, Generator[Any, Any, None]] = {}  # the loops still running
        self.ready: deque[tuple[int, Any, BaseException | None]] = deque()
        self.waiting: dict[int, tuple[tuple[Key, ...], Any]] = {}
        self.max_round: dict[int, int] = dict.fromkeys(contexts, 0)
        self.last_call: dict[int, Call] = {}
        self.counters: dict[tuple[int, int], int] = {}
        self.expected: dict[tuple[int, int], int] = {}
        # the run's sealed channels, never a context's: as many kept as its parties need
        self.channels = RunChannels(kept_for(len(contexts)))
        self.rows = RowColumns()  # the rows this rank's parties sent, by column
        self.deliveries = Deliveries()
        self.outputs: dict[int, Any] = {}
        self.abort: ProtocolAbort | None = None  # the first abort this rank learned of
        self.own_failure: tuple[float, ProtocolAbort] | None = None
        self.requests = InFlight()  # sends in flight, with their (reused) buffers
        self.tails: list[Any] = []  # sends from a program's array: done before it resumes
        self.framing = Framing(self.requests.buffers)
        self.storage = ReceivedStorage(self.MPI.buffer.fromaddress)
        self.mailbox = Mailboxes(contexts, self.storage, driver.mailbox_bytes,
                                 kept=self.record_messages)  # past its budget, on disk
        self.sent = 0
        self.received = 0
        self.last_from_rank: dict[int, tuple[str, int]] = {}  # its last message's call
        self.start = 0.0
        self.links: Liveness

    # -- the loop ----------------------------------------------------------------------------

    def execute(self) -> RankOutcome:
        links = self.links = Liveness(self.comm, self.rank, self.size)
        clock = np.array([time.time()])
        wait(self.comm.Ibcast(clock, root=0))  # rank 0's clock starts the run everywhere
        t0 = self.start = float(clock[0])
        for pid in sorted(self.contexts):
            self.gens[pid] = self._party(pid)
            self.ready.append((pid, None, None))
        wave: Any = None
        previous: tuple[int, ...] | None = None
        idle = 0
        spins = 0
        outcome: tuple[int, ...] | None = None
        try:
            while outcome is None:
                progressed = False
                while self.ready:
                    self._step(*self.ready.popleft())
                    progressed = True
                    # due timers first (a crash at its time), then arrivals: into the
                    # mailboxes and their budget at once, not MPI's unexpected queue
                    self._fire_timers()
                    self._poll()
                progressed |= self._fire_timers()
                progressed |= self._poll()
                if self.requests or wave is not None:
                    self._check_peers()  # before a send's or the wave's Test touches a peer
                self.requests.reap()
                spins += 1
                if spins % _LIVENESS_EVERY == 0 or idle > IDLE_SPINS:
                    self._watch()
                if self.ready:
                    continue
                if wave is None and self._timers_pending():  # not passive: time will tell
                    self._idle_for_timers()
                    continue
                if wave is None:  # passive: join the next wave
                    self._check_peers()
                    waiting = len(self.gens)
                    counts = np.array([self.sent, self.received, waiting], dtype=np.int64)
                    totals_buf = np.zeros(3, dtype=np.int64)
                    wave = (self.comm.Iallreduce(counts, totals_buf, op=self.MPI.SUM),
                            totals_buf, counts)
                    continue
                if wave[0].Test():
                    totals = tuple(int(v) for v in wave[1])
                    wave = None
                    if previous == totals and totals[0] == totals[1]:
                        outcome = totals
                        break
                    previous = totals
                    continue
                if not progressed:
                    idle += 1
                    if idle < IDLE_SPINS or self.requests:
                        # messages in flight need this rank's progress
                        os.sched_yield()
                    else:
                        time.sleep(min(IDLE_SLEEP_S * (idle - IDLE_SPINS + 1),
                                       IDLE_SLEEP_MAX_S))
                else:
                    idle = 0
        except RankLost:
            raise
        except Exception:
            # an MPI operation may fail on a dead rank before its liveness connection closes
            # (the process's memory goes before its files): name the dead rank if there is one
            lost = links.check(LOSS_GRACE_S)
            if lost is not None:
                self._lost(lost, links)
            raise
        finally:
            links.close()
        for request in self.requests.requests():
            wait(request)
        self.requests.clear()
        try:
            self._finish(outcome[2])  # reads the messages nobody asked for
        finally:
            self.mailbox.close()
        return RankOutcome(self.outputs, self.rows, self.deliveries, time.time() - t0,
                           self.faults)

    def _finish(self, waiting_parties: int) -> None:
        """Agree on how the run ended; raise the abort everywhere if it failed."""
        if waiting_parties and self.abort is None:
            for pid in sorted(self.waiting):
                sender, protocol, index, step = self.waiting[pid][0][0]
                self._fail(pid, MpcsimError(
                    f"deadlock: waits for '{step}' of {protocol}#{index} from party "
                    f"{sender}, which was never sent"), notify=False, at=float("inf"))
                break
        if self.abort is None:
            self._record_unread()
        own = None
        if self.own_failure is not None:
            t, abort = self.own_failure
            cause = abort.__cause__
            user = str(cause) if isinstance(cause, InputError) else None
            own = (t, abort.party, abort.round, abort.reason, abort.call, user)
        reports = allgather_json(self.comm, own)
        failures = sorted((r for r in reports if r is not None), key=lambda r: (r[0], r[1]))
        if not failures:
            return
        _, party, round_, reason, call, user = failures[0]
        abort = ProtocolAbort(party, round_, reason, call)
        if self.own_failure is not None and self.own_failure[1].party == party:
            abort.__cause__ = self.own_failure[1].__cause__
        elif user is not None:  # a user's mistake (bad input) stays one on every rank
            abort.__cause__ = InputError(user)
        raise abort

    # -- the transport's hooks for the interpreter --------------------------------------------

    def _step(self, pid: int, value: Any, error: BaseException | None) -> None:
        """Resume party ``pid``'s loop until it waits for a message that is not there."""
        gen = self.gens.get(pid)
        if gen is None:
            return
        try:
            if error is None:
                gen.send(value)
            else:
                gen.throw(error)
        except StopIteration:
            del self.gens[pid]

    def _take(self, pid: int, key: Key) -> Envelope | None:
        return self.mailbox.take(pid, key)

    def _wait(self, pid: int, keys: tuple[Key, ...]) -> object:
        self.waiting[pid] = (keys, _WAITING)
        return _WAITING

    def _clock(self) -> float:
        return time.time() - self.start

    def _unread(self, pid: int) -> Iterator[Envelope]:
        return self.mailbox.unread(pid)

    def _fail_unread(self, pid: int, exc: BaseException) -> None:
        self._fail(pid, exc, notify=False)

    # -- messages ------------------------------------------------------------------------------

    def _send(self, pid: int, payloads: Iterable[tuple[int, np.ndarray]], call: Call,
              step: str, sealed: bool) -> None:
        encoded: Encoded = {}  # a payload object is encoded once
        for to, payload in payloads:
            self._send_one(pid, to, payload, call, step, sealed, encoded)
        if self.tails:
            self._complete_tails()

    def _send_one(self, pid: int, to: int, payload: np.ndarray, call: Call, step: str,
                  sealed: bool, encoded: Encoded) -> None:
        if to not in self.owner or to == pid:
            raise MpcsimError(f"party {pid} sent a message to unknown party {to}")
        ctx = self.contexts[pid]
        round_ = self.max_round[pid] + 1
        is_sealed = self.driver.sealing and sealed
        dest = self.owner[to]
        now = time.time() - self.start
        row_index = len(self.rows)
        if dest != self.rank and self.driver.interceptor is None and self.faults is None:
            elements, n_bytes = self._send_remote(ctx, to, dest, payload, call, step, round_,
                                                  is_sealed, row_index, encoded)
            data = None
        else:
            data, elements = encode_payload(ctx, payload, encoded)
            if is_sealed:
                data = self.channels.sending(ctx, to).seal(
                    self._next_number(pid, to), data, self.channels.header(call, step, round_))
            n_bytes = len(data)
            if self.driver.interceptor is not None:
                data = self.driver.interceptor(pid, to, call.tag(step), data)
        hops = self.driver.network.hops(pid, to)
        self.rows.append(pid, to, call.protocol, call.index, step, ctx.phase, round_, elements,
                         n_bytes, hops, now, now)
        if data is not None:  # through the fault plan, if any (mpi_faults)
            self._inject(pid, to, call, step, now, data, row_index, lambda d, held: (
                self._deliver(pid, to, call, step, round_, is_sealed, row_index, d,
                              self._clock() if held else now)))

    def _deliver(self, pid: int, to: int, call: Call, step: str, round_: int, sealed: bool,
                 row_index: int, data: bytes, now: float) -> None:
        """Hand ``data`` to a party of this rank, or frame it and send it to its rank."""
        dest = self.owner[to]
        if dest == self.rank:
            self.deliveries.append(self.rank, row_index, now)
            self._arrive(Envelope(pid, to, call.protocol, call.index, step, round_, data,
                                  sealed, now))
            return
        buffer, view, at = self.framing.framed(pid, to, call, step, round_, sealed, row_index,
                                               len(data))
        view[at:] = data
        self._post(buffer, dest, call, step)

    def _next_number(self, pid: int, to: int) -> int:
        """The sequence number of ``pid``'s next sealed message to ``to``."""
        sequence = self.counters.get((pid, to), 0)
        self.counters[(pid, to)] = sequence + 1
        return sequence

    def _send_remote(self, ctx: PartyContext, to: int, dest: int, payload: np.ndarray,
                     call: Call, step: str, round_: int, is_sealed: bool, row_index: int,
                     encoded: Encoded) -> tuple[int, int]:
        """Write the message into one send buffer behind its frame, and post its send.

        Numeric payloads are encoded straight into the buffer (one copy of the elements) and,
        if sealed, sealed there in place (one more pass, over memory just written: no encoding
        in fresh memory first); ``object`` payloads are encoded, then copied or sealed into it.
        Returns the payload's elements and the bytes the ledger counts.
        """
        pid = ctx.party
        arr = np.asarray(payload)
        if arr.dtype != object:
            head, dtype = wire.encoded_head(arr)
            n_data = len(head) + arr.size * dtype.itemsize
            if (n_data >= SEND_IN_PLACE_FROM and not is_sealed and arr.dtype == dtype
                    and arr.flags.c_contiguous):  # the elements from the program's array
                buffer, view, at = self.framing.framed(pid, to, call, step, round_, False,
                                                       row_index, n_data, held=len(head))
                view[at:] = head
                self._post(buffer, dest, call, step, tail=arr)
                return wire.payload_elements(arr), n_data
            room = SEAL_OVERHEAD_BYTES if is_sealed else 0
            buffer, view, at = self.framing.framed(pid, to, call, step, round_, is_sealed,
                                                   row_index, n_data + room)
            start = at + NONCE_BYTES if is_sealed else at
            view[start:start + len(head)] = head
            buffer[start + len(head):start + n_data].view(dtype)[:] = arr.reshape(-1)
            if is_sealed:
                self.channels.sending(ctx, to).seal_in_place(
                    self._next_number(pid, to), view[at:],
                    self.channels.header(call, step, round_))
            self._post(buffer, dest, call, step)
            return wire.payload_elements(arr), n_data + room
        data, elements = encode_payload(ctx, payload, encoded)
        if not is_sealed:
            n_bytes = len(data)
            buffer, view, at = self.framing.framed(pid, to, call, step, round_, False,
                                                   row_index, n_bytes)
            view[at:] = data
        else:
            n_bytes = len(data) + SEAL_OVERHEAD_BYTES
            buffer, view, at = self.framing.framed(pid, to, call, step, round_, True,
                                                   row_index, n_bytes)
            self.channels.sending(ctx, to).seal_into(
                self._next_number(pid, to), data, view[at:],
                self.channels.header(call, step, round_))
        self._post(buffer, dest, call, step)
        return elements, n_bytes

    def _post(self, buffer: np.ndarray, dest: int, call: Call, step: str,
              tail: np.ndarray | None = None) -> None:
        """Send ``buffer`` (frame and data) to rank ``dest``; it returns to the pool after.
        With ``tail``, the data's end follows from that array (a :data:`TAIL_FOLLOWS` frame),
        posted before this rank waits for anything: its receiver waits for it.

        Below :data:`~sim.drivers.mpi_transfer.SEND_IN_PLACE_FROM` the payload is copied into
        the buffer: a send from the program's array must complete before the program runs
        on, and for short messages waiting costs more than the copy.
        """
        self._check_peers()
        request = self.comm.Isend([buffer, self.MPI.BYTE], dest=dest,
                                  tag=message_tag(call, step, self.tag_ub))
        self.requests.add(request, buffer)
        if tail is not None:
            self.tails.append(self.comm.Isend([tail, self.MPI.BYTE], dest=dest, tag=TAIL_TAG))
        self.sent += 1
        while self.requests.bytes > IN_FLIGHT_BYTES:
            # the receivers hold the rest: let the oldest complete, receiving meanwhile
            self._poll()
            self.requests.reap()
            if self.requests.bytes > IN_FLIGHT_BYTES:
                self._check_peers()
                os.sched_yield()

    def _complete_tails(self) -> None:
        """Wait until every send from a program's array completed, receiving meanwhile
        (:data:`~sim.drivers.mpi_transfer.SEND_IN_PLACE_FROM`): the program may change its
        arrays once it resumes."""
        tails = self.tails
        while True:
            self._poll()
            self._check_peers()  # before a Test touches the receiving rank
            tails[:] = [request for request in tails if not request.Test()]
            if not tails:
                return
            os.sched_yield()

    def _poll(self) -> bool:
        """Receive every message that has arrived; True if there was any.

        A probe tells the message's size, so it is received at once into storage of that
        size (:class:`ReceivedStorage`: reused once nothing refers to it, else new), which
        becomes the payload's: no copy of its bytes.
        """
        got = False
        status = self.MPI.Status()
        while True:
            message = self.comm.improbe(source=self.MPI.ANY_SOURCE, tag=self.MPI.ANY_TAG,
                                        status=status)
            if message is None:
                return got
            got = True
            size, source = status.Get_count(self.MPI.BYTE), status.Get_source()
            tag = status.Get_tag()
            if tag == TAIL_TAG:  # MPI keeps a sender's messages in order: never before
                raise MpcsimError(f"rank {source} sent a tail without its frame")
            if tag == CONTROL_TAG:
                buffer = bytearray(size)
                message.Recv([buffer, self.MPI.BYTE])
                self._control(source, bytes(buffer))
                continue
            try:  # storage nothing refers to any more is reused: warm memory
                raw, writable = self.storage.take(size, kept=self.record_messages)
            except ValueError as exc:
                raise MpcsimError(f"rank {source} sent a malformed frame: {exc}") from None
            message.Recv([writable, self.MPI.BYTE])
            if raw[0] == TAIL_FOLLOWS:
                raw, writable = self._receive_tail(source, raw)
            self._receive_message(source, tag, raw, writable)

    def _receive_tail(self, source: int, head: bytes) -> tuple[bytes, Any]:
        """The storage of a message whose data ends in a tail: ``head`` (its frame and the
        data's start) followed by the next tail from rank ``source``, received behind it."""
        n_tail = self.framing.tail_bytes(head, source)
        status = self.MPI.Status()
        idle = 0
        while True:  # its sender posted the tail with the frame: it is there or on its way
            message = self.comm.improbe(source=source, tag=TAIL_TAG, status=status)
            if message is not None:
                break
            idle += 1
            if idle % _LIVENESS_EVERY == 0:
                self._check_peers()
            os.sched_yield()
        got = status.Get_count(self.MPI.BYTE)
        if got != n_tail:
            raise MpcsimError(f"rank {source} sent a tail of {got} bytes where its frame "
                              f"announced {n_tail}")
        raw, writable = self.storage.take(len(head) + n_tail, kept=self.record_messages)
        into = memoryview(writable)
        into[:len(head)] = head
        into[0] = DATA  # one message now, as if it had come whole
        message.Recv([into[len(head):], self.MPI.BYTE])
        return raw, writable

    def _receive_message(self, source: int, tag: int, raw: bytes, writable: Any) -> None:
        """A message has arrived from rank ``source``: check its frame, hand over its data."""
        self.received += 1
        kind, sender, receiver, index, round_, sealed, row, protocol, step, at = (
            self.framing.read_frame(raw, source))
        if (kind != DATA or self.owner.get(sender) != source
                or self.owner.get(receiver) != self.rank
                or message_tag(Call(protocol, index), step, self.tag_ub) != tag):
            raise MpcsimError(
                f"rank {source} sent a frame whose header does not match its route or tag "
                f"(party {sender} to party {receiver}, {protocol}#{index}.{step})"
            )
        # the storage outlives the message as its payload's: what only the transport may see
        # (the frame: the sender rank's row count) is erased before anything can see it
        memoryview(writable)[:at] = bytes(at)
        now = time.time() - self.start
        self.deliveries.append(source, row, now)
        self.last_from_rank[source] = (protocol, index)
        self._arrive(Envelope(sender, receiver, protocol, index, step, round_,
                              memoryview(raw)[at:], sealed, now,
                              writable=memoryview(writable)[at:] if sealed else None))

    def _arrive(self, envelope: Envelope) -> None:
        if envelope.sealed:  # the receiver numbers a channel's messages as they arrive
            channel = (envelope.sender, envelope.receiver)
            envelope.number = self.expected.get(channel, 0)
            self.expected[channel] = envelope.number + 1
        key = envelope.key
        receiver = envelope.receiver
        wait = self.waiting.get(receiver)
        if wait is not None and key in wait[0]:  # handed to the party that waits for it
            del self.waiting[receiver]
            self.ready.append((receiver, envelope, None))
        else:
            self.mailbox.put(envelope)

    def _open(self, envelope: Envelope, number: int | None) -> Message:
        ctx, call = self.contexts[envelope.receiver], Call(envelope.protocol, envelope.call)
        writable, envelope.writable = envelope.writable, None
        if number is None:
            data = envelope.data
        elif writable is None:
            data = unseal(self.channels, ctx, envelope.sender, number, envelope.data, call,
                          envelope.step, envelope.round)
        else:  # opened over its ciphertext; nonce and tag erased, the plaintext read in place
            opened = unseal_in_place(self.channels, ctx, envelope.sender, number, writable,
                                     call, envelope.step, envelope.round)
            end = NONCE_BYTES + len(opened)
            writable[:NONCE_BYTES] = bytes(NONCE_BYTES)
            writable[end:] = bytes(len(writable) - end)
            data = envelope.data[NONCE_BYTES:end]
        payload = decode_received(envelope.receiver, envelope.sender, data, call, envelope.step,
                                  self.driver.field)
        return received_message(envelope.sender, envelope.protocol, envelope.call,
                                envelope.step, envelope.round, payload, envelope.arrived_s)
