"""The SimPy driver: runs one party program per participant on the simulated network.

The driver is the interface of :mod:`sim.drivers.driver`; one run's state and transport are
:class:`sim.drivers.simpy_run.SimPyRun`.

Each program runs as a SimPy process: the loop of :mod:`sim.drivers.interpreter`, which
interprets the effects, over this transport. A send's payload is encoded
(:mod:`protocols.wire`), sealed with AES-GCM under the pair's channel key when sealing is on
(message number n of its directed channel), timed over the route's links (:mod:`sim.network`:
store-and-forward, FIFO links) and delivered to the receiver's mailbox at the simulated
delivery time; the ledger gets one row per message. When nothing observes a message in flight
(no interceptor, no fault plan), the sender's channel end and number are bound at sending and
the bytes are sealed on delivery, into a scratch buffer the receiver authenticates them in:
the same bytes and the same checks, without a fresh buffer per message
(:meth:`RunChannels.seal_and_authenticate` in :mod:`sim.drivers.envelopes`). ``Compute``
advances the party's clock by the declared seconds; ``RecvWithin`` times out in simulated
seconds. Views record simulated arrival times and clocks.

Faults (:mod:`sim.faults`) are injected here, from the run's :class:`~sim.faults.FaultPlan`:
a crashed party's program is closed where it stands (at a time, or before/after sending a
given step); a link that is down loses what reaches it; a delayed link adds latency; a
tampered message has one ciphertext bit flipped and a replayed one is delivered twice — the
channel layer refuses both. A run that then waits for what will never come ends with a
:class:`~protocols.errors.ProtocolAbort` naming the fault and the party.

A message's round is one more than the highest round its sender had received before sending.

Failure never hangs a run (the interpreter's notices); when no event is left but some party
still waits for a message, that is a deadlock, and the run ends with the abort all the same.

Received bytes are hostile. The receiver numbers a channel's sealed messages as they arrive
(links are FIFO) and opens each when its program asks for it — or at the end of the run, if
it never does: the message must carry that number (:func:`protocols.crypto.sealing.open_message`)
and pass AES-GCM authentication against its header (protocol, call, step, round); then it is
decoded with the run's field, so an element outside [0, p) is refused. A message that fails
either, read or not, aborts the run as a failure of the receiving party, naming the sender —
the program is not asked to handle it — and nothing else escapes :meth:`SimPyDriver.run`.

What a program is handed: read-only arrays, a second array object over the view record's
immutable bytes (:func:`protocols.wire.another_array`).

The cost of a message. A run of M parties exchanges up to M(M − 1) messages per round, so the
driver keeps each message's work small and independent of M: the messages of one send effect
that reach their next node at the same instant travel as one SimPy event (batched between two
scheduling actions of the driver, so SimPy's order of events — and with it every delivery,
wake-up and ledger row — is what one event per message gives, which
:attr:`SimPyDriver.batch_arrivals` keeps for comparison); a message is one object from
sending to reading — its envelope carries its route (a direct link, from a per-sender table
of the network), its next hop, its mailbox key (made once per send effect), its number on its
channel and the message queued behind it under that key — and its ledger row is made once, on
arrival; the receivers of a broadcast's one encoding decode it once
(:func:`protocols.wire.decode_again`); a receive takes what is already in the mailbox without
a round trip through SimPy; and a view record is made only when views are kept.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from parties.view import View
from protocols.context import PartyContext
from protocols.field import PrimeField
from sim.drivers.driver import DriverOutcome, Interceptor, ProgramFactory
from sim.drivers.simpy_run import SimPyRun
from sim.faults import FaultPlan
from sim.network import Network


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
    field : PrimeField, optional
        The run's field: received payloads of its element dtype must hold elements of it
        (:func:`protocols.wire.decode`). The driver's own object, never a party's.
    faults : FaultPlan, optional
        Faults to inject (:mod:`sim.faults`).

    Attributes
    ----------
    batch_arrivals : bool
        Messages that reach a node at the same instant travel as one SimPy event (the
        default). False gives every message its own event — the straightforward path, which
        records exactly the same run; tests compare the two.
    """

    batch_arrivals: bool = True

    def __init__(
        self,
        network: Network,
        *,
        sealing: bool = True,
        interceptor: Interceptor | None = None,
        record_messages: bool = True,
        field: PrimeField | None = None,
        faults: FaultPlan | None = None,
    ) -> None:
        self.network = network
        self.faults = faults or None
        self.sealing = sealing
        self.interceptor = interceptor
        self.record_messages = record_messages
        self.field = field

    @staticmethod
    def check(faults: FaultPlan) -> None:
        """Every fault plan can be injected here."""

    @staticmethod
    def describe() -> dict[str, Any]:
        """The report's ``driver``."""
        return {"name": "simpy", "ranks": 1, "hosts": 1}

    def place(self, participants: Sequence[int]) -> None:
        """Every participant runs in this process."""

    def hosts(self, pid: int) -> bool:
        return True

    def shared(self, value: Any) -> Any:
        return value

    def interpret(
        self,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: dict[int, View],
        settle: Callable[[], None],
    ) -> tuple[DriverOutcome, dict[int, View]]:
        """:meth:`run`, then ``settle()``: the interface of :mod:`sim.drivers.driver`."""
        outcome = self.run(contexts, programs, views)
        settle()
        return outcome, views

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
            return SimPyRun(self, contexts, programs, views).execute()
        finally:
            if collecting:
                gc.enable()
