"""The MPI driver: the same party programs on real processes, over mpi4py and MPICH.

DESIGN.md, "Drivers interpret effects": a program does not know what runs it. Here R MPI ranks
host the run's P participants by *block distribution* (:func:`block_owner`: rank r hosts the
r-th contiguous block of the sorted ids, the first P mod R blocks one longer), so R = P gives
one party per process and R < P interleaves the parties of a rank cooperatively: a rank steps
each of its programs until it waits for a message, then polls the network.

Effects (:mod:`protocols.effects`) are interpreted by the one interpreter both drivers share
(:mod:`sim.drivers.interpreter`); :class:`sim.drivers.mpi_rank.Run` is the transport under it,
and what differs from SimPy is what the transport does:

* ``Send``/``SendEach`` — the payload's wire encoding (:mod:`protocols.wire`), sealed with
  AES-GCM under the pair's channel key when sealing is on (message number n of its directed
  channel, the header — protocol, call, step, round — bound as associated data). Between
  ranks it travels as one MPI message of bytes, sent with a non-blocking ``Isend`` under an
  MPI tag derived from the call and the step (:func:`message_tag`): a fixed binary frame
  (``FRAME`` in :mod:`sim.drivers.mpi_transfer`: kind, sender, receiver, call, round, sealed,
  the sender's ledger row, the lengths; then protocol and step as UTF-8), then the data,
  written into a reused send buffer (:mod:`sim.drivers.mpi_transfer`): an unsealed numeric
  payload is encoded straight into it, a sealed one sealed into it in place. Nothing is
  pickled. The receiver probes the size and receives the message at once into a ``bytes``
  object that becomes the payload's storage (the frame erased, a sealed message opened over
  its own ciphertext): the view's record and the program's array are read-only views of it,
  and no received byte is copied. Storage nothing refers to any more is received into again
  (:class:`~sim.drivers.mpi_transfer.ReceivedStorage`); unread messages past a budget wait in
  the rank's mailbox file (:mod:`sim.drivers.mpi_mailbox`). Between two parties of
  one rank the same bytes are handed over in memory, so the bytes counted are the bytes that
  would travel.
* ``Recv``/``RecvEach``/``RecvAny`` — wait until the message with that (sender, call, step) is
  in the party's mailbox; open it (sequence number, AES-GCM, field range) when asked, as the
  SimPy driver does. ``RecvAny`` takes the first listed among messages already there.
* ``RecvWithin`` — waits until every listed sender's message came or ``timeout_s`` passed
  on the wall clock (:mod:`sim.drivers.mpi_faults`, which also injects a ``[[fault]]`` plan:
  crash, delay, link_down, tamper, replay). The view records the senders and the wall
  clock, as under SimPy.
* ``Compute(seconds)`` — the work was real, so nothing is simulated: the driver returns the
  party's wall clock (seconds since the run started) and does not wait.
* ``Input``/``Output`` — recorded in the party's view, as under SimPy.

Messages between two ranks arrive in the order they were sent (MPI's non-overtaking rule for
one communicator, receiving with any tag), so a channel's sealed messages are numbered on
arrival as under SimPy's FIFO links.

Ledger and views. A rank writes one row per message its parties send, with *wall-clock*
``sent_s`` and ``delivered_s`` (seconds since the run's common start, each rank's own clock:
across hosts they differ by the clocks' skew) and ``hops`` from the scenario's network, so
that every column but the times is the SimPy run's. Receiving ranks note delivery times and,
at the end, send them to the senders' ranks, which fill them into their rows; then every
rank's rows, views and outputs are gathered at every rank (all ranks then continue the
same algorithm code identically; rank 0 writes the files) — or, with ``views = "rank"``, rows
and outputs only: each rank keeps its parties' views (:mod:`sim.drivers.rank_views`). With a
``ledger_sink`` (scenario runs) no row travels either: each rank writes its own rows and
rank 0 merges the files (:mod:`sim.ledger_store`). The ledger is ordered by send time, so its
order may differ from SimPy's simulated order; the rows themselves are the same.

Termination without a clock. A rank is *passive* when none of its programs can run. Ranks run
waves of a non-blocking all-reduce of (active ranks, messages sent between ranks, messages
received, parties waiting); two consecutive waves that find every rank passive with equal and
unchanged send and receive counts prove that nothing is in flight and nothing can move again
(Mattern's four-counter method) — the run is over: complete if no party waits, a deadlock
otherwise. Every message has then been received, so a party's view also holds messages its
program never asked for, as under SimPy.

Failure never hangs a run.

* A program that raises, or a message that fails authentication or decoding: the failing
  party's rank sends a notice (party and call, nothing else) to every rank, which throws
  :meth:`~protocols.errors.ProtocolAbort.notice` into its waiting programs; the waves then
  end the run and every rank raises the abort. Only the failing party's rank holds the reason
  and cause; rank 0 receives the reason in the final exchange, so its ``error:`` line names
  party, call and reason.
* A rank that dies (killed by a signal): every rank keeps a TCP connection to rank 0 beside
  MPI; a process's death closes it, so rank 0 sees it at once, tells the survivors and raises
  :class:`RankLost` naming the dead rank's parties and the call in progress; survivors exit
  without MPI finalisation (which would wait for the dead). MPICH's ``mpiexec`` kills a whole
  job when one process dies by a signal unless given ``-disable-auto-cleanup``, which
  ``mpcsim run --ranks R`` passes. Even then Hydra's per-host proxy SIGKILLs every process
  it started on its host once it *reaps* one that a signal ended — on a loaded machine often
  before rank 0 has run again to read the death — so under Hydra a rank runs in a child of
  the process the proxy started, which waits for it and exits normally (``128 + N``)
  while the rank's liveness connections are up (:data:`ARMED_FD_ENV`); see :mod:`sim.cli`.

Waiting. MPICH's blocking calls poll in a busy loop, which on a machine with fewer cores than
ranks takes the processor from the ranks being waited for; the driver's collectives are
non-blocking and waited for politely (:func:`_wait`: yield the processor, then sleep briefly),
and an idle rank polls, yields, then sleeps up to 1 ms — except while its own sends are in
flight, which need its progress.

Departures. Results (outputs, rows, views) are gathered with pickle among the ranks of one job,
which run this same code (control data — host names, failures, the clock — travel as JSON or
raw numbers); party messages are never pickled. Isolation is stronger than in
one process: a rank holds only its own parties' contexts; but every rank reads the scenario,
so each loads the whole data set and knows the run seed (use ``key_source = "os"`` on a real
network, :mod:`sim.simulation`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from parties.view import View
from protocols.context import PartyContext
from protocols.errors import InputError
from protocols.field import PrimeField
from sim.drivers import mpi_mailbox
from sim.drivers.driver import DriverOutcome, Interceptor, ProgramFactory
from sim.drivers.liveness import ARMED_FD_ENV
from sim.drivers.mpi_comm import (
    EXTRA_HINT,
    allgather_bytes,
    allgather_json,
    dumps,
    is_root,
    load_mpi,
    loads,
    wait,
)
from sim.drivers.mpi_faults import merged_faults
from sim.drivers.mpi_rank import RankLost, RankOutcome, Run
from sim.drivers.mpi_transfer import message_tag
from sim.drivers.rank_views import RankViews, refrozen
from sim.ledger import Row, RowColumns
from sim.network import Network

__all__ = ["ARMED_FD_ENV", "EXTRA_HINT", "MpiDriver", "RankLost", "allgather_json",
           "block_owner", "is_root", "load_mpi", "message_tag"]


def block_owner(parties: Sequence[int], ranks: int) -> dict[int, int]:
    """The rank of every party under block distribution of sorted ids over ``ranks`` ranks.

    Rank r hosts ids ``[r·q + min(r, s), (r+1)·q + min(r+1, s))`` of the sorted list, with
    q, s = divmod(P, R): contiguous blocks whose sizes differ by at most one.
    """
    if ranks < 1:
        raise InputError(f"ranks = {ranks} must be at least 1")
    ids = sorted(parties)
    q, s = divmod(len(ids), ranks)
    owner = {}
    start = 0
    for r in range(ranks):
        size = q + (1 if r < s else 0)
        for pid in ids[start:start + size]:
            owner[pid] = r
        start += size
    return owner




@dataclass
class MpiRunInfo:
    """Where a run ran: ranks, distinct hosts, and each party's rank."""

    ranks: int
    hosts: int
    owner: dict[int, int] = field(default_factory=dict)


class MpiDriver:
    """Interpret party programs on MPI ranks (see the module docstring).

    Parameters
    ----------
    network : Network
        The scenario's network: only its routes' hop counts are used (the ledger's ``hops``).
    sealing, interceptor, record_messages, field
        As for :class:`sim.drivers.simpy.SimPyDriver`.
    faults : FaultPlan, optional
        Faults the transport injects, on the wall clock (:mod:`sim.drivers.mpi_faults`).
    comm : mpi4py communicator, optional
        ``MPI.COMM_WORLD`` by default; the driver works on a duplicate of it.
    views : {"gathered", "rank"}
        Every view at every rank at the end (the default), or each rank's own parties' views
        only (:class:`~sim.drivers.rank_views.RankViews`; :class:`sim.simulation.Simulation`'s
        ``views``).
    ledger_sink : callable, optional
        ``ledger_sink(rows) -> ledger``, collective: each rank writes its own parties' rows
        and gets the merged ledger (:class:`sim.ledger_store.LedgerSink`), instead of every
        row gathered at every rank.
    mailbox_bytes : int, optional
        Unread message data a rank holds in memory; past it, arrivals wait in the rank's
        mailbox file until read (:mod:`sim.drivers.mpi_mailbox`; its ``MAILBOX_BYTES`` by
        default).
    """

    name = "mpi"
    view_places = ("gathered", "rank")
    """Where the views may be at the end (:class:`sim.simulation.Simulation`'s ``views``)."""

    def __init__(
        self,
        network: Network,
        *,
        sealing: bool = True,
        interceptor: Interceptor | None = None,
        record_messages: bool = True,
        field: PrimeField | None = None,
        faults: Any = None,
        comm: Any = None,
        views: str = "gathered",
        ledger_sink: Callable[[RowColumns], Any] | None = None,
        mailbox_bytes: int | None = None,
    ) -> None:
        if views not in ("gathered", "rank"):
            raise InputError(f"views = {views!r} must be 'gathered' or 'rank'")
        if mailbox_bytes is None:
            mailbox_bytes = mpi_mailbox.MAILBOX_BYTES
        if mailbox_bytes < 0:
            raise InputError(f"mailbox_bytes = {mailbox_bytes} must not be negative")
        self.mailbox_bytes = mailbox_bytes
        self.views = views
        self.ledger_sink = ledger_sink
        mpi = load_mpi()
        self.MPI = mpi
        self.network = network
        self.sealing = sealing
        self.interceptor = interceptor
        self.record_messages = record_messages
        self.field = field
        self.faults = faults or None
        self.comm = comm if comm is not None else mpi.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        hosts = allgather_json(self.comm, mpi.Get_processor_name())
        self.info = MpiRunInfo(self.size, len(set(hosts)))

    @staticmethod
    def check(faults: Any) -> None:
        """The MPI extra is installed (a ``[[fault]]`` plan is injected by the transport:
        :mod:`sim.drivers.mpi_faults`)."""
        load_mpi()  # a missing extra is the caller's error, named before anything runs

    @staticmethod
    def describe() -> dict[str, Any]:
        """The report's ``driver``: ranks and distinct hosts (every rank must call it)."""
        mpi = load_mpi()
        hosts = allgather_json(mpi.COMM_WORLD, mpi.Get_processor_name())
        return {"name": "mpi", "ranks": mpi.COMM_WORLD.Get_size(), "hosts": len(set(hosts))}

    def place(self, participants: Sequence[int]) -> None:
        """Block distribution of the participants over the ranks (:func:`block_owner`)."""
        self.owners(participants)

    def hosts(self, pid: int) -> bool:
        return self.info.owner[pid] == self.rank

    def shared(self, value: Any) -> Any:
        """Rank 0's ``value`` (a trusted setup's master secret) at every rank."""
        return self.comm.bcast(value, root=0)

    def interpret(
        self,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: dict[int, View],
        settle: Callable[[], None],
    ) -> tuple[DriverOutcome, Mapping[int, View]]:
        """:meth:`run` this rank's parties, ``settle()`` their views, :meth:`gather` all."""
        outcome = self.run(contexts, programs, views, self.info.owner)
        settle()
        return self.gather(outcome, views)

    def owners(self, parties: Sequence[int]) -> dict[int, int]:
        """Each party's rank (:func:`block_owner`)."""
        owner = block_owner(parties, self.size)
        self.info.owner = owner
        return owner

    def run(
        self,
        contexts: Mapping[int, PartyContext],
        programs: Mapping[int, ProgramFactory],
        views: Mapping[int, View],
        owner: Mapping[int, int],
    ) -> RankOutcome:
        """Run this rank's programs to global completion; raise the abort if any party failed.

        ``contexts``, ``programs`` and ``views`` hold this rank's parties only; ``owner`` maps
        every participant to its rank. Returns this rank's outputs and rows (gather them with
        :meth:`gather`).
        """
        wait(self.comm.Ibarrier())  # wait for every rank without spinning; then Dup is quick
        comm = self.comm.Dup()
        try:
            outcome = Run(self, comm, contexts, programs, views, owner).execute()
        except RankLost:
            raise  # a rank is gone: no collective call can complete any more
        except BaseException:
            comm.Free()
            raise
        comm.Free()
        return outcome

    def gather(
        self, outcome: RankOutcome, views: Mapping[int, View]
    ) -> tuple[DriverOutcome, Mapping[int, View]]:
        """Every rank's outputs, rows (delivery times filled in) and views, at every rank —
        or, with ``views = "rank"``, this rank's views only, in a
        :class:`~sim.drivers.rank_views.RankViews`.

        ``views`` are this rank's parties' views, completed by the caller (seeds, draws).
        The outcome's time is the longest rank's wall time.
        """
        keep = self.views == "rank"  # then views stay here; outputs and rows travel
        stored = self.ledger_sink is not None  # then rows stay here too, written to disk
        self._delivery_times(outcome)
        ledger = self._store_rows(outcome) if stored else None
        local = (outcome.outputs, [] if stored else list(outcome.rows),
                 {} if keep else dict(views), outcome.wall_s, outcome.faults)
        parts = [loads(blob) for blob in allgather_bytes(self.comm, self.MPI, dumps(local))]
        outputs: dict[int, Any] = {}
        all_views: dict[int, View] = {}
        rows: list[Row] = []
        for outs, rank_rows, rank_views, _, _ in parts:
            outputs.update(outs)
            for pid, view in rank_views.items():
                all_views[pid] = refrozen(view)
            rows.extend(rank_rows)
        rows.sort(key=lambda r: r.sent_s)
        wall = max(part[3] for part in parts)
        faults = merged_faults([part[4] for part in parts])
        done = DriverOutcome(dict(sorted(outputs.items())), ledger if stored else rows, wall,
                             faults, wall_s=wall)
        if keep:
            return done, RankViews(views, self.info.owner, self.rank, self.comm, self.MPI)
        return done, dict(sorted(all_views.items()))

    def _delivery_times(self, outcome: RankOutcome) -> None:
        """This rank's rows, with the delivery times their receivers' ranks measured (collective).

        Each rank sends every other rank the (row number, delivery time) pairs of the messages
        it received from that rank's parties — two numbers per message, not rows — and
        sets them in its rows' column of delivery times: a row travels (or is stored) once,
        with its time, and no rank builds a table of every delivery or a second copy of
        every row.
        """
        delivered = outcome.deliveries  # two numbers a message travel, as numpy arrays
        ranks = np.frombuffer(delivered.ranks, dtype=np.int64)
        numbers = np.frombuffer(delivered.rows, dtype=np.int64)
        times = np.frombuffer(delivered.times, dtype=np.float64)
        outgoing = [(numbers[ranks == r], times[ranks == r]) for r in range(self.size)]
        del ranks, numbers, times
        delivered.clear()
        wait(self.comm.Ibarrier())  # every rank here, waited politely: then alltoall is quick
        for part_numbers, part_times in self.comm.alltoall(outgoing):
            outcome.rows.deliver(part_numbers, part_times)

    def _store_rows(self, outcome: RankOutcome) -> Any:
        """This rank's rows (their delivery times filled in) to the ledger sink; the sink's
        merged ledger (collective)."""
        assert self.ledger_sink is not None
        return self.ledger_sink(outcome.rows)  # empties rows: this rank keeps none
