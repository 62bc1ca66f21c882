"""``[[fault]]`` under MPI: the faults of :mod:`sim.faults` injected by the MPI transport, and
``RecvWithin`` timed out on the wall clock.

:class:`FaultInjection` is mixed into :class:`sim.drivers.mpi_rank.Run`. Every time is wall
clock, seconds since the run's common start (:meth:`Run._clock`), so ``at_s``,
``duration_s``, ``extra_ms`` and ``RecvWithin``'s ``timeout_s`` are real seconds here.

``crash``
    On a message (``call``/``step``, ``when``): as under SimPy (the interpreter asks the plan
    before each send). At ``at_s``: the party is stopped the first time it waits at or after
    ``at_s`` (a rank steps its programs one at a time, so a running program finishes its
    step first).
``link_down``, ``delay``
    Consulted by the sending rank when the message leaves (a message has one link here: the
    route's hops are not simulated): a message sent while the link is down is lost (its
    ledger row stays, delivered when sent, as under SimPy); a delayed one leaves
    ``extra_ms`` later, the sending rank keeping it meanwhile.
``tamper``, ``replay``
    Applied by the sending rank to the sealed bytes: one bit flipped in the middle (the
    receiver's AES-GCM refuses it), or the message sent twice (the receiver's channel numbers
    the copy one more, and refuses it when it opens it — unread, at the end of the run).

``RecvWithin``: the party waits until every sender's message came or the timeout passed on
the wall clock (:meth:`FaultInjection._timer`); while any party so waits, a message is held
back, or a timed crash is due, the rank is not passive and joins no termination wave.

What differs from a SimPy run of the same plan: every time (the ledger's ``sent_s`` and
``delivered_s``, the views' clocks, the fault events' ``time_s``), and with them which
messages a ``RecvWithin`` or a timed fault catches when the times are close. A plan whose
faults are keyed to messages (``call``/``step``) and whose timeouts are far from the
messages' real times gives the SimPy run's outputs, and its ledger but for the times.
"""

from __future__ import annotations

import heapq
import os
import time
from collections.abc import Callable, Generator, Mapping
from typing import Any

from sim.faults import Fault, FaultLog

_TIMER_SLEEP_MAX_S = 1e-3


class CrashNow(Exception):
    """Thrown into a waiting party's loop to crash it at its fault's ``at_s``."""

    def __init__(self, cause: Fault) -> None:
        super().__init__(cause.describe())
        self.cause = cause


class FaultInjection:
    """The MPI run's fault plan and timers (see the module docstring).

    The run provides ``faults`` (a :class:`~sim.faults.FaultLog` or None), ``contexts``,
    ``waiting``, ``ready``, ``last_call``, ``gens`` and ``_clock``.
    """

    interrupt = CrashNow
    faults: FaultLog | None
    waiting: dict[int, tuple[tuple[Any, ...], Any]]
    ready: Any
    last_call: dict[int, Any]
    contexts: Mapping[int, Any]
    gens: dict[int, Any]

    def _init_faults(self, faults: Any) -> None:
        self.faults = FaultLog(faults) if faults else None
        self.deadlines: dict[int, float] = {}
        self.held: list[tuple[float, int, Callable[[], None]]] = []  # delayed messages
        self._held_count = 0

    def _clock(self) -> float:
        raise NotImplementedError

    # -- RecvWithin on the wall clock ------------------------------------------------------

    def _timer(self, seconds: float) -> float:
        return self._clock() + seconds

    def _expired(self, timer: float) -> bool:
        return self._clock() >= timer

    def _wait_within(self, pid: int, keys: tuple[Any, ...], timer: float
                     ) -> Generator[Any, Any, Any]:
        self.deadlines[pid] = timer
        try:
            return (yield self._wait(pid, keys))  # type: ignore[attr-defined]
        finally:
            self.deadlines.pop(pid, None)

    # -- what the loop asks --------------------------------------------------------------

    def _timers_pending(self) -> bool:
        """Whether something on this rank will happen by the clock alone."""
        return bool(self.deadlines or self.held or self._crashes_due())

    def _fire_timers(self) -> bool:
        """Resume timed-out waits, send held messages that are due, crash parties whose
        time came; True if anything happened."""
        if self.faults is None and not self.deadlines:
            return False
        now = self._clock()
        fired = False
        for pid, deadline in sorted(self.deadlines.items()):
            if now >= deadline and pid in self.waiting:
                del self.waiting[pid]
                self.ready.append((pid, None, None))  # resumed with None: the time is up
                fired = True
        while self.held and self.held[0][0] <= now:
            heapq.heappop(self.held)[2]()
            fired = True
        for fault in self._crashes_due():
            if fault.at_s is not None and now >= fault.at_s and fault.party in self.waiting:
                del self.waiting[fault.party]
                self.ready.append((fault.party, None, CrashNow(fault)))
                fired = True
        return fired

    def _idle_for_timers(self) -> None:
        """Wait a little for the next timer (never past it)."""
        due = [*self.deadlines.values(), *(h[0] for h in self.held[:1])]
        due += [f.at_s for f in self._crashes_due() if f.at_s is not None]
        left = min(due, default=0.0) - self._clock()
        if left > 0:
            time.sleep(min(left, _TIMER_SLEEP_MAX_S))
        else:
            os.sched_yield()

    def _crashes_due(self) -> list[Fault]:
        """Timed crashes of this rank's parties that have not happened yet."""
        if self.faults is None:
            return []
        return [f for f in self.faults.plan.of_kind("crash")
                if f.at_s is not None and f.party in self.gens
                and f.index not in self.faults.fired]

    # -- crash -----------------------------------------------------------------------------

    def _crash(self, pid: int, fault: Fault, gen: Generator[Any, Any, Any]) -> None:
        """Party ``pid`` stops for good: its program is closed unfinished."""
        if self.faults is None:
            return
        call = self.last_call.get(pid)
        now = self._clock()
        self.faults.record(fault, now, "crashed", party=pid,
                           call=f"{call.protocol}#{call.index}" if call else "")
        self.faults.crashed[pid] = now
        self.waiting.pop(pid, None)
        self.deadlines.pop(pid, None)
        gen.close()

    # -- messages on their way -------------------------------------------------------------

    def _inject(self, pid: int, to: int, call: Any, step: str, now: float, data: bytes,
                row_index: int, deliver: Callable[[bytes], None]) -> None:
        """Deliver ``data`` (``pid`` → ``to``) through the plan: lost, held, tampered or
        replayed as its faults say, else at once (``deliver(data, held)``)."""
        faults = self.faults
        if faults is None:
            deliver(data, False)
            return
        lost, extra = faults.on_link((pid, to), now)
        if lost is not None:
            faults.record(lost, now, "lost", message=row_index, sender=pid, receiver=to)
            return
        copies = [data]
        fault = faults.on_delivery(pid, to, call, step, now)
        if fault is not None:
            faults.record(fault, now, "tampered" if fault.kind == "tamper" else "replayed",
                          message=row_index, sender=pid, receiver=to)
            if fault.kind == "tamper":
                flipped = bytearray(data)
                flipped[len(flipped) // 2] ^= 0x01  # a bit inside the ciphertext
                copies = [bytes(flipped)]
            else:
                copies = [data, data]
        for copy in copies:
            if extra > 0:
                self._held_count += 1
                heapq.heappush(self.held, (now + extra, self._held_count,
                                           lambda c=copy: deliver(c, True)))
            else:
                deliver(copy, False)


def merged_faults(logs: list[FaultLog | None]) -> FaultLog | None:
    """The run's fault log from every rank's: events in time order, fired and crashed
    united."""
    present = [log for log in logs if log is not None]
    if not present:
        return None
    merged = FaultLog(present[0].plan)
    for log in present:
        merged.events.extend(log.events)
        merged.fired |= log.fired
        merged.crashed.update(log.crashed)
    merged.events.sort(key=lambda e: (e["time_s"], e["fault"]))
    return merged
