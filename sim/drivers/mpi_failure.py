"""How a rank of an MPI run fails, and learns that another did (:class:`RankFailure`).

Mixed into :class:`sim.drivers.mpi_rank.Run` (see :mod:`sim.drivers.mpi`, "Failure never hangs
a run"): a party that raises makes its rank send an abort notice — party and call, nothing
else — to every other rank (:meth:`RankFailure._fail`), which throws
:meth:`~protocols.errors.ProtocolAbort.notice` into its waiting programs
(:meth:`RankFailure._aborted`); a rank that dies is seen on its liveness connection
(:mod:`sim.drivers.liveness`) before any MPI operation touches it, and rank 0 tells the
survivors, every rank ending with :class:`RankLost`.
"""

from __future__ import annotations

import struct
import time
from typing import Any

from protocols.errors import MpcsimError, ProtocolAbort
from sim.drivers.liveness import Liveness

ABORT, LOST = 2, 3  # control kinds (a party message's frame is DATA)
CONTROL_TAG = 1
LOSS_GRACE_S = 1.0  # how long a failed run waits for a dead rank's connection to close


class RankLost(ProtocolAbort):
    """A rank ended during the run (killed, or crashed outside any party program).

    The surviving ranks cannot finalise MPI with it; the CLI exits without doing so
    (:func:`sim.drivers.launch.exit_lost`). ``report`` is true on the one rank that prints
    the error.
    """

    def __init__(self, party: int, round: int | None, reason: str, call: str = "",
                 report: bool = True) -> None:
        super().__init__(party, round, reason, call)
        self.report = report

    def __str__(self) -> str:
        where = f"in call {self.call}" if self.call else "before its first message"
        return f"party {self.party} lost {where}: {self.reason}"


class RankFailure:
    """Aborts and lost ranks (see the module docstring).

    The run provides ``comm``, ``MPI``, ``rank``, ``size``, ``contexts``, ``owner``,
    ``waiting``, ``ready``, ``max_round``, ``last_call``, ``requests``, ``links``,
    ``last_from_rank``, ``abort``, ``own_failure``, ``sent``, ``received`` and
    ``_notice``.
    """

    comm: Any
    MPI: Any
    rank: int
    size: int
    contexts: Any
    owner: Any
    waiting: dict[int, Any]
    ready: Any
    max_round: dict[int, int]
    last_call: dict[int, Any]
    requests: Any
    links: Liveness
    last_from_rank: dict[int, tuple[str, int]]  # (protocol, call) of each rank's last message
    abort: ProtocolAbort | None
    own_failure: tuple[float, ProtocolAbort] | None
    sent: int
    received: int

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
        notice = struct.pack("<BQ", ABORT, pid) + abort.call.encode()
        for rank in range(self.size):
            if rank != self.rank:
                request = self.comm.Isend([notice, self.MPI.BYTE], dest=rank, tag=CONTROL_TAG)
                self.requests.add(request, notice)
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
        if kind == ABORT:
            self.received += 1
            self._aborted(ProtocolAbort.notice(party, text))
        elif kind == LOST:  # rank 0 found a dead rank and reports it: end quietly
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
        if self.comm.iprobe(source=self.MPI.ANY_SOURCE, tag=CONTROL_TAG):
            status = self.MPI.Status()
            buffer = bytearray(64 + 4096)
            self.comm.Recv([buffer, self.MPI.BYTE], source=self.MPI.ANY_SOURCE,
                           tag=CONTROL_TAG, status=status)
            self._control(status.Get_source(), bytes(buffer[:status.Get_count(self.MPI.BYTE)]))

    def _last_call_from(self, rank: int) -> str:
        """``protocol#call`` of the last message received from ``rank`` ("" if none)."""
        last = self.last_from_rank.get(rank)
        return f"{last[0]}#{last[1]}" if last is not None else ""

    def _lost(self, rank: int, links: Liveness) -> None:
        """Rank ``rank`` died: name its parties and the call in progress, end every rank."""
        if self.rank != 0:  # rank 0 died: the next rank reports it
            hosted = sorted(p for p, r in self.owner.items() if r == 0)
            raise RankLost(hosted[0] if hosted else 0, None,
                           "rank 0 ended during the run, killed or crashed",
                           self._last_call_from(0), report=self.rank == 1)
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
            call = self._last_call_from(rank)
        reason = (f"rank {rank} (hosting parties {theirs[0]}..{theirs[-1]}) ended during the "
                  "run, killed or crashed" if theirs else f"rank {rank} ended during the run")
        lost = struct.pack("<BQ", LOST, max(party, 0)) + reason.encode()
        for other in range(1, self.size):
            if other != rank and links.alive(other):
                self.comm.Isend([lost, self.MPI.BYTE], dest=other, tag=CONTROL_TAG)
        raise RankLost(party, None, reason, call)
