"""The MPI driver: the same party programs on real processes, over mpi4py and MPICH.

DESIGN.md, "Drivers interpret effects": a program does not know what runs it. Here R MPI ranks
host the run's P participants by *block distribution* (:func:`block_owner`: rank r hosts the
r-th contiguous block of the sorted ids, the first P mod R blocks one longer), so R = P gives
one party per process and R < P interleaves the parties of a rank cooperatively: a rank steps
each of its programs until it waits for a message, then polls the network.

Effects (:mod:`protocols.effects`) mean what they mean under the SimPy driver
(:mod:`sim.drivers.simpy`):

* ``Send``/``SendEach`` — the payload's wire encoding (:mod:`protocols.wire`), sealed with
  AES-GCM under the pair's channel key when sealing is on (message number n of its directed
  channel, the header — protocol, call, step, round — bound as associated data). Between
  ranks it travels as two MPI messages of bytes, both sent with a non-blocking ``Isend``
  under an MPI tag derived from the call and the step (:func:`message_tag`): a fixed binary
  frame (:data:`_FRAME`: kind, sender, receiver, call, round, sealed, the sender's ledger
  row, the lengths; then protocol and step as UTF-8), then those bytes as they are (no
  copy into one buffer). Nothing is pickled. Between two parties of
  one rank the same bytes are handed over in memory, so the bytes counted are the bytes that
  would travel.
* ``Recv``/``RecvEach``/``RecvAny`` — wait until the message with that (sender, call, step) is
  in the party's mailbox; open it (sequence number, AES-GCM, field range) when asked, as the
  SimPy driver does. ``RecvAny`` takes the first listed among messages already there.
* ``RecvWithin`` — waits for every listed sender, like ``RecvEach``: there is no simulated
  clock to time out on, and no ``[[fault]]`` plan under this driver (the simulation refuses
  one), so a sender that never sends is a lost rank, which aborts the run. Real-time dropouts
  with a wall-clock timeout are not modelled here.
* ``Compute(seconds)`` — the work was real, so nothing is simulated: the driver returns the
  party's wall clock (seconds since the run started) and does not wait.
* ``Input``/``Output`` — recorded in the party's view, as under SimPy.

Messages between two ranks arrive in the order they were sent (MPI's non-overtaking rule for
one communicator, receiving with any tag), so a channel's sealed messages are numbered on
arrival as under SimPy's FIFO links.

Ledger and views. A rank writes one row per message its parties send, with *wall-clock*
``sent_s`` and ``delivered_s`` (seconds since the run's common start, each rank's own clock:
across hosts they differ by the clocks' skew) and ``hops`` from the scenario's network, so
that every column but the times is the SimPy run's. Receiving ranks note delivery times; at the
end every rank's rows, views and outputs are gathered at every rank (all ranks then continue the
same algorithm code identically; rank 0 writes the files). The ledger is ordered by send time,
so its order may differ from SimPy's simulated order; the rows themselves are the same.

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

import contextlib
import io
import json
import os
import pickle
import select
import socket
import struct
import time
import zlib
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from copyreg import dispatch_table
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from parties.view import WALL, Message, View, frozen, received_message
from protocols.context import PartyContext
from protocols.effects import Call
from protocols.errors import InputError, MpcsimError, ProtocolAbort
from protocols.field import PrimeField
from sim.drivers.driver import DriverOutcome, Interceptor, ProgramFactory
from sim.drivers.envelopes import (
    Encoded,
    RunChannels,
    encode_payload,
    open_payload,
    seal_payload,
)
from sim.drivers.interpreter import Interpreter, Key
from sim.ledger import Row
from sim.network import Network

EXTRA_HINT = "pip install -e '.[mpi]' (mpi4py and MPICH wheels)"
"""What to install when mpi4py is missing (the error names it)."""

_DATA, _ABORT, _LOST = 1, 2, 3
_BYE = b"B"  # sent on the liveness connection by a rank that finished normally
_CONTROL_TAG = 1
_FIRST_DATA_TAG = 16
# kind, sender, receiver, call, round, sealed, sender's row, len(protocol), len(step), len(data)
_FRAME = struct.Struct("<BQQQQBQHHQ")
_IDLE_SPINS = 2000  # polls that only yield the processor before an idle rank starts sleeping
_IDLE_SLEEP_S = 5e-5
_IDLE_SLEEP_MAX_S = 1e-3
_LIVENESS_EVERY = 64
_CONNECT_TIMEOUT_S = 60.0
_LOSS_GRACE_S = 1.0  # how long a failed run waits for a dead rank's connection to close
ARMED_FD_ENV = "MPCSIM_RANK_ARMED_FD"
"""Names the pipe to the process that waits for this rank (``_supervise_rank`` in
:mod:`sim.cli`), if any: ``A`` once the other ranks would report this rank's death (its
liveness connections are up), ``D`` once they would not any more (closed)."""
ARMED, DISARMED = b"A", b"D"


def load_mpi() -> Any:
    """Import ``mpi4py.MPI``; a missing extra is an :class:`~protocols.errors.InputError`."""
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise InputError(f"--driver mpi needs the MPI extra; install it with {EXTRA_HINT}"
                         ) from exc
    return MPI


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


def message_tag(call: Call, step: str, tag_ub: int) -> int:
    """The MPI tag of a message: call number and step, mapped into the data tags.

    ``(call · 2^10 + crc32(step) mod 2^10) mod (tag_ub − 16) + 16``. Tags 0..15 are the
    driver's control tags. Receivers match any tag (messages are routed by their frame) and
    check the tag against the frame.
    """
    raw = call.index * 1024 + zlib.crc32(step.encode()) % 1024
    return raw % (tag_ub - _FIRST_DATA_TAG) + _FIRST_DATA_TAG


class RankLost(ProtocolAbort):
    """A rank ended during the run (killed, or crashed outside any party program).

    The surviving ranks cannot finalise MPI with it; the CLI exits without doing so
    (:func:`exit_lost`). ``report`` is true on the one rank that prints the error.
    """

    def __init__(self, party: int, round: int | None, reason: str, call: str = "",
                 report: bool = True) -> None:
        super().__init__(party, round, reason, call)
        self.report = report

    def __str__(self) -> str:
        where = f"in call {self.call}" if self.call else "before its first message"
        return f"party {self.party} lost {where}: {self.reason}"


def _wait(request: Any, status: Any = None) -> None:
    """Complete a non-blocking MPI operation without spinning a processor.

    MPICH's blocking calls poll in a busy loop; with more ranks than cores (or cores shared
    with other work) a rank that waits so steals the processor from the ranks it waits for.
    """
    idle = 0
    while not request.Test(status):  # each Test also advances the operation
        idle += 1
        if idle < 20 * _IDLE_SPINS:
            os.sched_yield()
        else:
            time.sleep(min(_IDLE_SLEEP_S * (idle - _IDLE_SPINS + 1), _IDLE_SLEEP_MAX_S))


def _allgather_bytes(comm: Any, mpi: Any, blob: bytes) -> list[bytes]:
    """Every rank's ``blob``, at every rank (non-blocking collectives, waited politely)."""
    size = comm.Get_size()
    sizes = np.zeros(size, dtype=np.int64)
    _wait(comm.Iallgather(np.array([len(blob)], dtype=np.int64), sizes))
    displs = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    out = bytearray(int(sizes.sum()))
    counts = [int(c) for c in sizes]
    _wait(comm.Iallgatherv([blob, mpi.BYTE], [out, (counts, [int(d) for d in displs]),
                                              mpi.BYTE]))
    return [bytes(out[int(d):int(d) + c]) for d, c in zip(displs, counts, strict=True)]


def allgather_json(comm: Any, value: Any) -> list[Any]:
    """Every rank's JSON-encodable ``value``, at every rank (small control data; no pickle)."""
    mpi = load_mpi()
    blobs = _allgather_bytes(comm, mpi, json.dumps(value).encode())
    return [json.loads(b) for b in blobs]


@dataclass(slots=True)
class _Envelope:
    sender: int
    receiver: int
    protocol: str
    call: int
    step: str
    round: int
    data: bytes
    sealed: bool
    arrived_s: float = 0.0  # wall clock since the run's start, when it reached its receiver
    number: int | None = None  # its number on its sealed channel, given on arrival

    @property
    def key(self) -> Key:
        return (self.sender, self.protocol, self.call, self.step)


_WAITING = object()
"""What a waiting party's loop yields here: the run resumes it with the message it waited for
(:meth:`_Run._arrive`) or throws the abort notice into it (:meth:`_Run._aborted`)."""


@dataclass
class RankOutcome:
    """One rank's share of a run: its parties' outputs, the rows they sent, and deliveries.

    ``deliveries`` holds (sender's rank, row number there, delivery time) of every message
    this rank's parties received; ``wall_s`` is the run's duration on this rank.
    """

    outputs: dict[int, Any]
    rows: list[Row]
    deliveries: list[tuple[int, int, float]]
    wall_s: float


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
        Must be empty (:meth:`check`): this transport injects no faults.
    comm : mpi4py communicator, optional
        ``MPI.COMM_WORLD`` by default; the driver works on a duplicate of it.
    """

    name = "mpi"

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
    ) -> None:
        mpi = load_mpi()
        self.MPI = mpi
        self.network = network
        self.sealing = sealing
        self.interceptor = interceptor
        self.record_messages = record_messages
        self.field = field
        self.comm = comm if comm is not None else mpi.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()
        hosts = allgather_json(self.comm, mpi.Get_processor_name())
        self.info = MpiRunInfo(self.size, len(set(hosts)))

    @staticmethod
    def check(faults: Any) -> None:
        """The MPI extra is installed; no ``[[fault]]`` plan (the transport injects none)."""
        load_mpi()  # a missing extra is the caller's error, named before anything runs
        if faults:
            raise InputError("[[fault]] injection is interpreted by the SimPy driver only; "
                             "remove the [[fault]] tables or run with --driver simpy")

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
    ) -> tuple[DriverOutcome, dict[int, View]]:
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
        _wait(self.comm.Ibarrier())  # wait for every rank without spinning; then Dup is quick
        comm = self.comm.Dup()
        try:
            outcome = _Run(self, comm, contexts, programs, views, owner).execute()
        except RankLost:
            raise  # a rank is gone: no collective call can complete any more
        except BaseException:
            comm.Free()
            raise
        comm.Free()
        return outcome

    def gather(
        self, outcome: RankOutcome, views: Mapping[int, View]
    ) -> tuple[DriverOutcome, dict[int, View]]:
        """Every rank's outputs, rows (delivery times filled in) and views, at every rank.

        ``views`` are this rank's parties' views, completed by the caller (seeds, draws).
        The outcome's time is the longest rank's wall time.
        """
        local = (outcome.outputs, outcome.rows, outcome.deliveries, dict(views), outcome.wall_s)
        parts = [_loads(blob) for blob in _allgather_bytes(self.comm, self.MPI, _dumps(local))]
        delivered = {(sender_rank, row): t for part in parts
                     for sender_rank, row, t in part[2]}
        outputs: dict[int, Any] = {}
        all_views: dict[int, View] = {}
        rows: list[Row] = []
        for rank, (outs, rank_rows, _, rank_views, _) in enumerate(parts):
            outputs.update(outs)
            for pid, view in rank_views.items():
                all_views[pid] = _refrozen(view)
            for i, row in enumerate(rank_rows):
                rows.append(row._replace(delivered_s=delivered.get((rank, i), row.delivered_s)))
        rows.sort(key=lambda r: r.sent_s)
        wall = max(part[4] for part in parts)
        return (DriverOutcome(dict(sorted(outputs.items())), rows, wall, wall_s=wall),
                dict(sorted(all_views.items())))

# -- gathering results (pickle among this job's own ranks; see the module docstring) -----------


def _dumps(value: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = dispatch_table.copy()
    pickler.dispatch_table[MappingProxyType] = lambda m: (MappingProxyType, (dict(m),))
    pickler.dump(value)
    return buffer.getvalue()


def _loads(blob: bytes) -> Any:
    return pickle.loads(blob)


def _refrozen(view: View) -> View:
    """A gathered view with its records immutable again (unpickled arrays are writeable)."""
    view.inputs = {k: frozen(v) for k, v in view.inputs.items()}
    view.received = [frozen(m) for m in view.received]
    view.protocol_inputs = [frozen(r) for r in view.protocol_inputs]
    view.outputs = [frozen(r) for r in view.outputs]
    view.draws = [frozen(d) for d in view.draws]
    view.observed = [frozen(o) for o in view.observed]
    view.aborts = [tuple(a) for a in view.aborts]
    return view


# -- one run on one rank -------------------------------------------------------------------------


class _Run(Interpreter):
    """One run on one rank: the MPI transport under
    :class:`~sim.drivers.interpreter.Interpreter`."""

    def __init__(
        self,
        driver: MpiDriver,
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
        self.faults = None  # no [[fault]] plan under MPI (the simulation refuses one)
        self.record_messages = driver.record_messages
        self.gens: dict[int, Generator[Any, Any, None]] = {}  # the loops still running
        self.ready: deque[tuple[int, Any, BaseException | None]] = deque()
        self.waiting: dict[int, tuple[tuple[Key, ...], Any]] = {}
        self.mailbox: dict[int, dict[Key, deque[_Envelope]]] = {p: {} for p in contexts}
        self.max_round: dict[int, int] = dict.fromkeys(contexts, 0)
        self.last_call: dict[int, Call] = {}
        self.counters: dict[tuple[int, int], int] = {}
        self.expected: dict[tuple[int, int], int] = {}
        self.channels = RunChannels()  # the run's sealed channels, never a context's
        self.rows: list[Row] = []
        self.deliveries: list[tuple[int, int, float]] = []
        self.outputs: dict[int, Any] = {}
        self.abort: ProtocolAbort | None = None  # the first abort this rank learned of
        self.own_failure: tuple[float, ProtocolAbort] | None = None
        self.requests: list[tuple[Any, bytes]] = []
        self.sent = 0
        self.received = 0
        self.last_from_rank: dict[int, str] = {}
        self.start = 0.0
        self.links: _Liveness

    # -- the loop ----------------------------------------------------------------------------

    def execute(self) -> DriverOutcome:
        links = self.links = _Liveness(self.comm, self.rank, self.size)
        clock = np.array([time.time()])
        _wait(self.comm.Ibcast(clock, root=0))  # rank 0's clock starts the run everywhere
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
                progressed |= self._poll()
                if self.requests or wave is not None:
                    self._check_peers()  # before a send's or the wave's Test touches a peer
                self._reap()
                spins += 1
                if spins % _LIVENESS_EVERY == 0 or idle > _IDLE_SPINS:
                    self._watch()
                if self.ready:
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
                    if idle < _IDLE_SPINS or self.requests:  # sends in flight need progress
                        os.sched_yield()
                    else:
                        time.sleep(min(_IDLE_SLEEP_S * (idle - _IDLE_SPINS + 1),
                                       _IDLE_SLEEP_MAX_S))
                else:
                    idle = 0
        except RankLost:
            raise
        except Exception:
            # an MPI operation may fail on a dead rank before its liveness connection closes
            # (the process's memory goes before its files): name the dead rank if there is one
            lost = links.check(_LOSS_GRACE_S)
            if lost is not None:
                self._lost(lost, links)
            raise
        finally:
            links.close()
        for request, _ in self.requests:
            _wait(request)
        self.requests.clear()
        self._finish(outcome[2])
        return RankOutcome(self.outputs, self.rows, self.deliveries, time.time() - t0)

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

    def _take(self, pid: int, key: Key) -> _Envelope | None:
        box = self.mailbox[pid]
        queue = box.get(key)
        if not queue:
            return None
        envelope = queue.popleft()
        if not queue:
            del box[key]
        return envelope

    def _wait(self, pid: int, keys: tuple[Key, ...]) -> object:
        self.waiting[pid] = (keys, _WAITING)
        return _WAITING

    def _clock(self) -> float:
        return time.time() - self.start

    def _unread(self, pid: int) -> Iterator[_Envelope]:
        for queue in self.mailbox[pid].values():
            yield from queue

    def _fail_unread(self, pid: int, exc: BaseException) -> None:
        self._fail(pid, exc, notify=False)

    # -- messages ------------------------------------------------------------------------------

    def _send(self, pid: int, payloads: Iterable[tuple[int, np.ndarray]], call: Call,
              step: str, sealed: bool) -> None:
        encoded: Encoded = {}  # a payload object is encoded once
        for to, payload in payloads:
            self._send_one(pid, to, payload, call, step, sealed, encoded)

    def _send_one(self, pid: int, to: int, payload: np.ndarray, call: Call, step: str,
                  sealed: bool, encoded: Encoded) -> None:
        if to not in self.owner or to == pid:
            raise MpcsimError(f"party {pid} sent a message to unknown party {to}")
        ctx = self.contexts[pid]
        data, elements = encode_payload(ctx, payload, encoded)
        round_ = self.max_round[pid] + 1
        is_sealed = self.driver.sealing and sealed
        if is_sealed:
            sequence = self.counters.get((pid, to), 0)
            self.counters[(pid, to)] = sequence + 1
            data = seal_payload(self.channels, ctx, to, sequence, data, call, step, round_)
        n_bytes = len(data)
        if self.driver.interceptor is not None:
            data = self.driver.interceptor(pid, to, call.tag(step), data)
        now = time.time() - self.start
        hops = len(self.driver.network.route_links(pid, to))
        row_index = len(self.rows)
        self.rows.append(Row(pid, to, call.protocol, call.index, step, ctx.phase, round_,
                             elements, n_bytes, hops, now, now))
        dest = self.owner[to]
        if dest == self.rank:
            self.deliveries.append((self.rank, row_index, now))
            self._arrive(_Envelope(pid, to, call.protocol, call.index, step, round_, data,
                                   is_sealed, now))
            return
        self._check_peers()
        protocol_raw, step_raw = call.protocol.encode(), step.encode()
        frame = b"".join((_FRAME.pack(_DATA, pid, to, call.index, round_, int(is_sealed),
                                      row_index, len(protocol_raw), len(step_raw), len(data)),
                          protocol_raw, step_raw))
        tag = message_tag(call, step, self.tag_ub)
        byte = self.MPI.BYTE
        # the data follows its frame from the same rank: MPI keeps the two in order
        self.requests.append((self.comm.Isend([frame, byte], dest=dest, tag=tag), frame))
        self.requests.append((self.comm.Isend([data, byte], dest=dest, tag=tag), data))
        self.sent += 1

    def _reap(self) -> None:
        """Advance the sends in flight; forget those that completed (their buffers may go)."""
        if self.requests:
            self.requests = [(r, b) for r, b in self.requests if not r.Test()]

    def _poll(self) -> bool:
        """Receive every message that has arrived; True if there was any."""
        got = False
        status = self.MPI.Status()
        while True:
            message = self.comm.improbe(source=self.MPI.ANY_SOURCE, tag=self.MPI.ANY_TAG,
                                        status=status)
            if message is None:
                return got
            got = True
            buffer = bytearray(status.Get_count(self.MPI.BYTE))
            message.Recv([buffer, self.MPI.BYTE])
            source, tag = status.Get_source(), status.Get_tag()
            if tag == _CONTROL_TAG:
                self._control(source, bytes(buffer))
            else:
                self._receive_frame(source, tag, bytes(buffer))

    def _receive_frame(self, source: int, tag: int, buffer: bytes) -> None:
        """A frame has arrived: receive its data (the next message from ``source``)."""
        self.received += 1
        try:
            kind, sender, receiver, index, round_, sealed, row, n_proto, n_step, n_data = (
                _FRAME.unpack_from(buffer))
            at = _FRAME.size
            protocol = buffer[at:at + n_proto].decode()
            step = buffer[at + n_proto:at + n_proto + n_step].decode()
        except (struct.error, UnicodeDecodeError) as exc:
            raise MpcsimError(f"rank {source} sent a malformed frame: {exc}") from None
        received = bytearray(n_data)
        status = self.MPI.Status()
        # the sender posted the data with the frame; wait for it while still watching for a
        # dead rank (its data may never come)
        request = self.comm.Irecv([received, self.MPI.BYTE], source=source, tag=tag)
        spins = 0
        while True:
            self._check_peers()
            if request.Test(status):
                break
            spins += 1
            if spins % _LIVENESS_EVERY == 0:
                self._watch()
            os.sched_yield()
        if status.Get_count(self.MPI.BYTE) != n_data:
            raise MpcsimError(f"rank {source} sent {status.Get_count(self.MPI.BYTE)} bytes of "
                              f"data where its frame announced {n_data}")
        data = bytes(received)  # immutable: payloads are decoded onto it
        now = time.time() - self.start
        if (kind != _DATA or self.owner.get(sender) != source
                or self.owner.get(receiver) != self.rank
                or message_tag(Call(protocol, index), step, self.tag_ub) != tag):
            raise MpcsimError(
                f"rank {source} sent a frame whose header does not match its route or tag "
                f"(party {sender} to party {receiver}, {protocol}#{index}.{step})"
            )
        self.deliveries.append((source, row, now))
        self.last_from_rank[source] = f"{protocol}#{index}"
        self._arrive(_Envelope(sender, receiver, protocol, index, step, round_, data,
                               bool(sealed), now))

    def _arrive(self, envelope: _Envelope) -> None:
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
            self.mailbox[receiver].setdefault(key, deque()).append(envelope)

    def _open(self, envelope: _Envelope, number: int | None) -> Message:
        message = open_payload(self.channels, self.contexts[envelope.receiver], envelope.sender,
                               number, envelope.data, Call(envelope.protocol, envelope.call),
                               envelope.step, envelope.round, self.driver.field)
        return received_message(message.sender, message.protocol, message.call, message.step,
                                message.round, message.payload, envelope.arrived_s)

    # -- failure -------------------------------------------------------------------------------

    def _fail(self, pid: int, exc: BaseException, *, notify: bool = True,
              at: float | None = None) -> None:
        """Party ``pid`` (of this rank) failed: abort here and tell every other rank.

        ``at`` orders failures across ranks (the earliest is the run's); a deadlock found
        once the run is over comes after every real failure and tells nobody.
        """
        call = self.contexts[pid].failing_call(self.last_call.get(pid))
        abort = ProtocolAbort(pid, self.max_round[pid], f"{type(exc).__name__}: {exc}",
                              f"{call.protocol}#{call.index}" if call else "")
        abort.__cause__ = exc
        if self.own_failure is None:
            self.own_failure = (time.time() if at is None else at, abort)
        if self.abort is not None or not notify:
            self.abort = self.abort or ProtocolAbort.notice(pid, abort.call)
            return
        notice = struct.pack("<BQ", _ABORT, pid) + abort.call.encode()
        for rank in range(self.size):
            if rank != self.rank:
                request = self.comm.Isend([notice, self.MPI.BYTE], dest=rank, tag=_CONTROL_TAG)
                self.requests.append((request, notice))
                self.sent += 1  # control messages count too: none may be left in flight
        self._aborted(ProtocolAbort.notice(pid, abort.call))

    def _aborted(self, notice: ProtocolAbort) -> None:
        """Throw the notice into every waiting program (and any that waits later)."""
        if self.abort is None:
            self.abort = notice
        for pid in sorted(self.waiting):
            del self.waiting[pid]
            self.ready.append((pid, None, self._notice()))

    def _control(self, source: int, buffer: bytes) -> None:
        kind, party = struct.unpack_from("<BQ", buffer)
        text = buffer[9:].decode(errors="replace")
        if kind == _ABORT:
            self.received += 1
            self._aborted(ProtocolAbort.notice(party, text))
        elif kind == _LOST:  # rank 0 found a dead rank and reports it: end quietly
            raise RankLost(party, None, text, "", report=False)
        else:
            raise MpcsimError(f"rank {source} sent an unknown control message ({kind})")

    def _check_peers(self) -> None:
        """Raise :class:`RankLost` if a rank's liveness connection closed (a select, ~µs).

        Called before every MPI operation that needs another rank's side — a send, the test
        of a send in flight or of the termination wave, the wait for a frame's data. MPICH ends
        a process whose operation touches a dead rank at once, with no error the driver could
        catch (``mpiexec -disable-auto-cleanup`` spares only the ranks that never do), so the
        death must be read on the liveness connection first; probing for arrivals is safe.
        """
        lost = self.links.check()
        if lost is not None:
            self._lost(lost, self.links)

    def _watch(self) -> None:
        """Raise :class:`RankLost` if a rank died (or rank 0 reported one that did)."""
        self._check_peers()
        if self.comm.iprobe(source=self.MPI.ANY_SOURCE, tag=_CONTROL_TAG):
            status = self.MPI.Status()
            buffer = bytearray(64 + 4096)
            self.comm.Recv([buffer, self.MPI.BYTE], source=self.MPI.ANY_SOURCE,
                           tag=_CONTROL_TAG, status=status)
            self._control(status.Get_source(), bytes(buffer[:status.Get_count(self.MPI.BYTE)]))

    def _lost(self, rank: int, links: _Liveness) -> None:
        """Rank ``rank`` died: name its parties and the call in progress, end every rank."""
        if self.rank != 0:  # rank 0 died: the next rank reports it
            hosted = sorted(p for p, r in self.owner.items() if r == 0)
            raise RankLost(hosted[0] if hosted else 0, None,
                           "rank 0 ended during the run, killed or crashed",
                           self.last_from_rank.get(0, ""), report=self.rank == 1)
        theirs = sorted(p for p, r in self.owner.items() if r == rank)
        party, call = (theirs[0] if theirs else -1), ""
        for pid in sorted(self.waiting):
            for sender, protocol, index, _step in self.waiting[pid][0]:
                if self.owner.get(sender) == rank:
                    party, call = sender, f"{protocol}#{index}"
                    break
            if call:
                break
        if not call:
            call = self.last_from_rank.get(rank, "")
        reason = (f"rank {rank} (hosting parties {theirs[0]}..{theirs[-1]}) ended during the "
                  "run, killed or crashed" if theirs else f"rank {rank} ended during the run")
        lost = struct.pack("<BQ", _LOST, max(party, 0)) + reason.encode()
        for other in range(1, self.size):
            if other != rank and links.alive(other):
                self.comm.Isend([lost, self.MPI.BYTE], dest=other, tag=_CONTROL_TAG)
        raise RankLost(party, None, reason, call)


class _Liveness:
    """A TCP connection from every rank to rank 0, beside MPI: a dead process closes its own.

    Rank 0 listens on an ephemeral port and broadcasts its host name and port; the others
    connect. ``check`` reports a rank whose connection closed (rank 0 sees every rank; the
    others see rank 0).
    """

    def __init__(self, comm: Any, rank: int, size: int) -> None:
        self.rank = rank
        self.size = size
        self.peers: dict[int, socket.socket] = {}
        self.dead: set[int] = set()
        if size == 1:
            return
        server = None
        address = bytearray(512)
        if rank == 0:
            server = socket.create_server(("", 0))
            named = json.dumps([socket.gethostname(), server.getsockname()[1]]).encode()
            address[:len(named)] = named
        _wait(comm.Ibcast([address, load_mpi().BYTE], root=0))
        host, port = json.loads(bytes(address).rstrip(b"\0"))
        if rank == 0:
            assert server is not None
            server.settimeout(_CONNECT_TIMEOUT_S)
            for _ in range(size - 1):
                conn, _ = server.accept()
                peer = int.from_bytes(conn.recv(4), "big")
                self.peers[peer] = conn
            server.close()
        else:
            conn = socket.create_connection((host, port), timeout=_CONNECT_TIMEOUT_S)
            conn.sendall(rank.to_bytes(4, "big"))
            self.peers[0] = conn
        for conn in self.peers.values():
            conn.setblocking(False)
        _tell_supervisor(ARMED)

    def alive(self, rank: int) -> bool:
        return rank not in self.dead

    def check(self, timeout: float = 0.0) -> int | None:
        """A rank whose connection has closed, if any (waiting up to ``timeout`` seconds)."""
        if not self.peers:
            return None
        socks = [s for r, s in self.peers.items() if r not in self.dead]
        readable, _, _ = select.select(socks, [], [], timeout)
        for sock in readable:
            try:
                chunk = sock.recv(1)
            except OSError:
                chunk = b""
            rank = next(r for r, s in self.peers.items() if s is sock)
            self.dead.add(rank)  # finished (it said goodbye) or dead: not watched any more
            if chunk != _BYE:
                return rank
        return None

    def close(self) -> None:
        """Say goodbye (this rank finished normally) and close every connection."""
        _tell_supervisor(DISARMED)
        for sock in self.peers.values():
            try:
                sock.setblocking(True)
                sock.sendall(_BYE)
            except OSError:
                pass
            sock.close()
        self.peers.clear()


def _tell_supervisor(state: bytes) -> None:
    """Tell the process that waits for this rank whether a death would be reported."""
    fd = os.environ.get(ARMED_FD_ENV)
    if fd is not None:
        try:
            os.write(int(fd), state)
        except (OSError, ValueError):  # no such pipe: nobody waits to be told
            pass


def is_root() -> bool:
    """Whether this process is rank 0 of ``MPI.COMM_WORLD`` (the one that reports)."""
    return load_mpi().COMM_WORLD.Get_rank() == 0


def exit_lost() -> None:
    """End this process at once, without MPI finalisation (a rank of the job is gone)."""
    os._exit(1)


def exit_interrupted(status: int) -> None:
    """End this rank at once with ``status`` (SIGINT or SIGTERM reached every rank).

    Without MPI finalisation, which would wait for peers that may be mid-message; stdio is
    flushed first. See :mod:`sim.interrupt`.
    """
    import sys

    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
