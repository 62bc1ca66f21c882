"""The least driver of effect programs: the PD-NMF benchmark's driver floor.

Party programs speak effects (:mod:`protocols.effects`); the drivers' one interpreter
(:mod:`sim.drivers.interpreter`) resumes each program's generator, interprets what it yields
and sends back the result. :class:`LeastDriver` is the least transport under it for the four
effects a PD-NMF party yields (``Input``, ``SendEach``, ``RecvEach``, ``Output``), keeping
what the SimPy driver keeps of them:

* one SimPy process per party;
* a send effect's payload encoded once (:func:`protocols.wire.encode`), each message timed
  over its direct link (FIFO: transmission starts when the link is free, arrival a latency
  after it ends), the messages that arrive at one instant carried by one SimPy event;
* a ledger row per message, made on arrival;
* a mailbox per party keyed by (sender, protocol, call, step); a receive takes what is there
  or waits on one SimPy event;
* each encoding decoded once with its elements checked against the field
  (:func:`protocols.wire.decode`), each further receiver given an array over the same bytes;
* the cyclic garbage collector paused for the run, as the SimPy driver pauses it;
* in the views, a record of every received message and an immutable copy of every input and
  output (:func:`parties.view.frozen`); the program gets an array object of its own.

With ``sealing``, each message is sealed with AES-GCM and authenticated at its receiver as the
SimPy driver does it when nothing observes messages in flight.

Nothing else: no faults, no interceptor, no relays (every route is a direct
link), no abort handling (a failing program ends the benchmark) — what any transport of these
programs must do to keep this ledger and these views, written for this one pattern. Its
time over the logging floor is what interpreting effects costs at the least; the SimPy
transport's time over it is the price of its generality. This module is imported by
``benchmarks/pd_nmf.py``; it is not part of the installed package.
"""

from __future__ import annotations

import copy
import gc
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import simpy

from parties.view import View, another_sparse, frozen, is_immutable, received_message
from protocols import wire
from protocols.context import AesRandomness, PartyContext
from protocols.crypto.sealing import SEAL_OVERHEAD_BYTES
from protocols.effects import Call
from protocols.field import FixedPoint, prime_field
from sim.drivers.envelopes import RunChannels
from sim.drivers.interpreter import Interpreter, Key
from sim.ledger import Row
from sim.network import Network
from sim.simulation import party_seed, preshared_keys

_new_tuple = tuple.__new__


@contextmanager
def paused_gc() -> Iterator[None]:
    """Python's cyclic garbage collector paused for the block, as the SimPy driver pauses it
    for a run (which makes many objects and no cycles)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


class LeastDriver:
    """Runs effect programs on a network of direct links, with the SimPy driver's records.

    Parameters
    ----------
    network : Network
        Every pair must have a direct link.
    field : PrimeField
        The run's field: received elements are checked against it.
    sealing : bool
        Seal every message with AES-GCM under its pair's channel key and authenticate it at
        its receiver, as the SimPy driver does when nothing observes messages in flight: the
        sender's end seals the encoding and the receiver's end opens it, both in the run's
        scratch buffers (:meth:`sim.drivers.envelopes.RunChannels.seal_and_authenticate`).
    """

    def __init__(self, network: Network, field: Any, sealing: bool = False) -> None:
        self.network, self.field, self.sealing = network, field, sealing

    def run(self, contexts: dict[int, PartyContext],
            programs: dict[int, Callable[[PartyContext], Generator[Any, Any, Any]]],
            views: dict[int, View]) -> tuple[dict[int, Any], list[Row]]:
        """Run every program to its end; returns the outputs and the ledger rows.

        The cyclic garbage collector is paused meanwhile, as the SimPy driver pauses it: the
        run makes many objects and no cycles.
        """
        with paused_gc():
            return self._run(contexts, programs, views)

    def _run(self, contexts: dict[int, PartyContext],
             programs: dict[int, Callable[[PartyContext], Generator[Any, Any, Any]]],
             views: dict[int, View]) -> tuple[dict[int, Any], list[Row]]:
        run = _LeastRun(self, contexts, programs, views)
        for pid in sorted(contexts):
            run.env.process(run._party(pid))
        run.env.run()
        if run.waiting:
            raise RuntimeError(f"parties {sorted(run.waiting)} wait for messages never sent")
        return run.outputs, run.rows


class _Message:
    """One message from sending to reading (a fixed record; ``number`` is the interpreter's,
    unused here: the sealed entry carries the channel number)."""

    __slots__ = ("data", "decoded", "elements", "index", "key", "n_bytes", "number", "phase",
                 "round", "sealed", "sender", "sent", "to")

    def __init__(self, sender: int, to: int, key: tuple[int, str, int, str], data: bytes,
                 decoded: list[Any], round_: int, phase: str, elements: int, sent: float,
                 index: int, n_bytes: int, sealed: list[Any] | None) -> None:
        self.sender, self.to, self.key, self.data, self.decoded = sender, to, key, data, decoded
        self.round, self.phase, self.elements, self.sent = round_, phase, elements, sent
        self.index, self.n_bytes, self.sealed, self.number = index, n_bytes, sealed, None


class _LeastRun(Interpreter):
    """One run: the least transport under the interpreter's party loop."""

    def __init__(self, driver: LeastDriver, contexts: dict[int, PartyContext],
                 programs: dict[int, Any], views: dict[int, View]) -> None:
        self.env = simpy.Environment()
        self.network, self.field, self.sealing = driver.network, driver.field, driver.sealing
        self.contexts = self.participants = contexts
        self.programs, self.views = programs, views
        self.mailbox: dict[int, dict[tuple[int, str, int, str], _Message]] = {
            p: {} for p in contexts}
        self.waiting: dict[int, tuple[tuple[Key, ...], Any]] = {}
        self.max_round = dict.fromkeys(contexts, 0)
        self.last_call = {}
        self.link_free: dict[tuple[int, int], float] = {}
        self.channels = RunChannels()
        self.counters: dict[tuple[int, int], int] = {}  # next number to send, per channel
        self.expected: dict[tuple[int, int], int] = {}  # next number to receive
        self.rows: list[Any] = []
        self.outputs: dict[int, Any] = {}
        self.abort, self.faults, self.record_messages = None, None, True

    def _fail(self, pid: int, exc: BaseException) -> None:
        raise RuntimeError(f"party {pid} failed: {exc}") from exc

    def _clock(self) -> float:
        return float(self.env.now)

    def _take(self, pid: int, key: Key) -> _Message | None:
        return self.mailbox[pid].pop(key, None)  # one message per key in these programs

    def _wait(self, pid: int, keys: tuple[Key, ...]) -> simpy.Event:
        event = self.env.event()
        self.waiting[pid] = (keys, event)
        return event

    def _send(self, pid: int, payloads: Iterable[tuple[int, np.ndarray]], call: Call,
              step: str, sealed: bool) -> None:
        now = self.env.now
        round_ = self.max_round[pid] + 1
        phase = self.contexts[pid].phase
        key = (pid, call.protocol, call.index, step)
        links, link_free, rows = self.network.direct_links(pid), self.link_free, self.rows
        arrivals: dict[float, list[_Message]] = {}
        last: object = None
        data, elements, decoded = b"", 0, [None]
        ctx, sealing, counters = self.contexts[pid], self.sealing, self.counters
        for to, payload in payloads:
            if payload is not last:  # a broadcast's payload is encoded once
                data, elements, decoded, last = wire.encode(payload), payload.size, [None], payload
            n_bytes, bound = len(data), None
            if sealing:  # its channel's sending end and number, and (on arrival) the receiver's
                sequence = counters.get((pid, to), 0)
                counters[(pid, to)] = sequence + 1
                bound = [self.channels.sending(ctx, to), sequence, call, None]
                n_bytes += SEAL_OVERHEAD_BYTES
            link = links[to]
            free = link_free.get((pid, to), 0.0)
            end = (free if free > now else now) + n_bytes * 8.0 / link.bandwidth_bps
            link_free[(pid, to)] = end
            when = end + link.latency_s
            message = _Message(pid, to, key, data, decoded, round_, phase, elements, now,
                               len(rows), n_bytes, bound)
            rows.append(None)
            group = arrivals.get(when)
            if group is None:
                arrivals[when] = [message]
            else:
                group.append(message)
        timeout, arrive = self.env.timeout, self._arrive
        for when, group in arrivals.items():
            timeout(when - now, group).callbacks.append(arrive)

    def _arrive(self, event: simpy.Event) -> None:
        now, rows, waiting, mailbox = self.env.now, self.rows, self.waiting, self.mailbox
        for m in event.value:
            key = m.key
            rows[m.index] = _new_tuple(Row, (m.sender, m.to, key[1], key[2], key[3], m.phase,
                                             m.round, m.elements, m.n_bytes, 1, m.sent, now))
            if m.sealed is not None:  # the receiver numbers a channel's messages on arrival
                number = self.expected.get((m.sender, m.to), 0)
                self.expected[(m.sender, m.to)] = number + 1
                m.sealed[3] = number
            wait = waiting.get(m.to)
            if wait is not None and key in wait[0]:
                del waiting[m.to]
                wait[1].succeed(m)
            else:
                mailbox[m.to][key] = m

    def _consume(self, pid: int, message: _Message, number: int | None) -> np.ndarray:
        """The message's record in the view, and the program's own array (flat payloads)."""
        decoded, round_, sealed, key = message.decoded, message.round, message.sealed, message.key
        if sealed is not None:  # sealed by the sender's end, authenticated by the receiver's
            sending, sequence, call, channel_number = sealed
            self.channels.seal_and_authenticate(sending, sequence, message.data,
                                                self.contexts[pid], message.sender,
                                                channel_number, call, key[3], round_)
        checked = decoded[0]
        if checked is None:  # the first receiver of this encoding checks it
            data = message.data
            payload = wire.decode(data, self.field)
            decoded[0] = checked = (wire.body_of(payload, data), payload.dtype)
        else:  # wire.decode_again, in place
            payload = np.frombuffer(checked[0], checked[1])
        if round_ > self.max_round[pid]:
            self.max_round[pid] = round_
        self.views[pid].received.append(
            received_message(message.sender, key[1], key[2], key[3], round_, payload))
        return np.frombuffer(checked[0], checked[1])  # wire.another_array, in place


def least_driver_run(
    programs: dict[int, Callable[[PartyContext, Any], Generator[Any, Any, Any]]],
    inputs: dict[int, Any], seed: int = 1, sealing: bool = False,
) -> tuple[dict[int, Any], list[Row], dict[int, View]]:
    """Run ``programs[p](ctx, inputs[p])`` for parties 0..M−1 on :class:`LeastDriver`.

    Contexts as the simulation makes them (field GF(2^61 − 1), 24 fractional bits, one-way
    seeds, AES mask randomness) with pre-shared pair keys (no key agreement); each input is
    recorded in the party's view as an immutable copy, which the program gets (a sparse
    matrix as another matrix object over the record's arrays), as in the simulation.
    """
    field = prime_field("2^61-1")
    sites = tuple(sorted(programs))
    roles = dict.fromkeys(sites, "site")
    keys = preshared_keys(seed, list(sites))
    contexts, views, bound = {}, {}, {}
    for p in sites:
        own = copy.copy(field)
        ctx = PartyContext(party=p, role="site", parties=sites, roles=roles,
                           fixed=FixedPoint(own, 24), rng_seed=party_seed(seed, p, "rng"),
                           randomness=AesRandomness(own, party_seed(seed, p, "masks"), p))
        pairs = {q: keys[(min(p, q), max(p, q))] for q in sites if q != p}
        ctx.install_all_pair_keys({q: k[0] for q, k in pairs.items()},
                                  {q: k[1] for q, k in pairs.items()})
        record = frozen(inputs[p])
        views[p] = View(party=p, role="site", inputs={"X": record})
        contexts[p] = ctx
        given = record if is_immutable(record) else another_sparse(record)
        bound[p] = (lambda ctx, program=programs[p], given=given: program(ctx, given))
    outputs, rows = LeastDriver(Network.build(len(sites)), field, sealing).run(contexts, bound,
                                                                              views)
    return outputs, rows, views
