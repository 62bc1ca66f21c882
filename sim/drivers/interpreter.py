"""The effect interpreter: what a party program's effects mean, written once for every driver.

DESIGN.md, "Drivers interpret effects": a program does not know what runs it. This module is
the one place where its effects (:mod:`protocols.effects`) are interpreted — dispatch, the
view records, abort notices, the messages a party never asked for — over a *transport* that
only moves bytes and keeps a clock: :mod:`sim.drivers.simpy` (simulated links, faults) and
:mod:`sim.drivers.mpi` (real ranks, framing, termination, liveness).

* ``Send``/``SendEach`` — handed to the transport (:meth:`Interpreter._send`): encoding,
  sealing, the ledger row and the route are the transport's.
* ``Recv``/``RecvEach``/``RecvAny``/``RecvWithin`` — take the message with that (sender,
  call, step) from the party's mailbox (:meth:`Interpreter._take`), or wait for it
  (:meth:`Interpreter._wait`: the transport's event to yield, resumed with the message);
  open it and record it in the receiver's view (:meth:`Interpreter._consume`). ``RecvAny``
  records which message it chose and the clock; ``RecvWithin`` the senders whose messages
  came within the timeout (a transport without a timer waits for every sender).
* ``Compute`` — the transport lets the declared seconds pass (:meth:`Interpreter._elapse`;
  nothing under MPI, where the work was real) and the view records the clock after it.
* ``Input``/``Output`` — an immutable copy of the value is recorded in the party's view.

Failure never hangs a run: when a program raises, the transport's :meth:`Interpreter._fail`
sets the run's abort and throws :meth:`~protocols.errors.ProtocolAbort.notice` — party and
call, nothing else — into every waiting peer; a peer that waits later gets one at once. An
exception thrown into a program is made for that program alone (:func:`detached`), and an
exception leaving one loses the interpreter's frame (:func:`from_program`), so no program
reaches the run's state. A crash fault (SimPy only) closes a program where it stands.

The loop's shape is SimPy's: :meth:`Interpreter._party` is a generator that yields the
transport's wait tokens, which SimPy runs as a process and the MPI transport steps itself.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from parties.view import Message, View, frozen
from protocols.context import PartyContext
from protocols.effects import (
    Call,
    Compute,
    Input,
    Output,
    Recv,
    RecvAny,
    RecvEach,
    RecvWithin,
    Send,
    SendEach,
)
from protocols.errors import MpcsimError, ProtocolAbort
from sim.drivers.envelopes import ReceivedRecords, detached
from sim.faults import Fault, FaultLog

Key = tuple[int, str, int, str]
"""A mailbox key: sender, protocol, call index, step."""


class NeverRaised(Exception):
    """The interrupt of a transport that never interrupts a waiting party."""


class _Stopped(Exception):
    """A crash fault closed the party's program (its loop ends)."""


def from_program(exc: BaseException) -> BaseException:
    """``exc`` as the program raised it: without the interpreter's frame its traceback gained.

    An exception leaving a program passes through :meth:`Interpreter._party`, which Python
    adds to its traceback — and the program may still hold the exception object. Dropping
    that frame keeps the run's state (every party's context) out of the program's reach.
    """
    tb = exc.__traceback__
    if tb is not None and tb.tb_frame.f_globals.get("__name__") == __name__:
        exc.__traceback__ = tb.tb_next
    return exc


class Interpreter(ReceivedRecords):
    """One run's interpretation of every hosted party's effects, over a transport.

    A transport subclasses it and provides the state and the hooks below. State:
    ``contexts``, ``programs``, ``views`` (this process's parties), ``participants`` (every
    party of the run, for checking a peer's id), ``mailbox`` (by receiver), ``waiting``
    (``pid → (keys, token)`` while a party waits), ``max_round``, ``last_call``, ``outputs``,
    ``abort``, ``faults`` (a :class:`~sim.faults.FaultLog` or None) and ``record_messages``.
    """

    contexts: Mapping[int, PartyContext]
    programs: Mapping[int, Any]
    views: Mapping[int, View]
    participants: Mapping[int, Any]
    waiting: dict[int, tuple[tuple[Key, ...], Any]]
    max_round: dict[int, int]
    last_call: dict[int, Call]
    outputs: dict[int, Any]
    abort: ProtocolAbort | None
    faults: FaultLog | None
    record_messages: bool
    interrupt: type[BaseException] = NeverRaised
    """What the transport throws into a waiting party's loop to crash it (a crash fault)."""

    # -- the transport's hooks -------------------------------------------------------------

    def _send(self, pid: int, payloads: Iterable[tuple[int, np.ndarray]], call: Call,
              step: str, sealed: bool) -> None:
        """Send each ``(to, payload)``: encode, seal, route, and write its ledger row."""
        raise NotImplementedError

    def _take(self, pid: int, key: Key) -> Any:
        """The first arrived message under ``key`` in ``pid``'s mailbox (removed), or None."""
        raise NotImplementedError

    def _wait(self, pid: int, keys: tuple[Key, ...]) -> Any:
        """Register that ``pid`` waits for any of ``keys``; the token its loop yields, which
        resumes with the message (or throws the abort notice)."""
        raise NotImplementedError

    def _wait_within(self, pid: int, keys: tuple[Key, ...], timer: Any
                     ) -> Generator[Any, Any, Any]:
        """Wait for any of ``keys`` until ``timer`` fires: the message, or None."""
        raise NotImplementedError

    def _timer(self, seconds: float) -> Any:
        """A timer for ``RecvWithin`` (None: no clock to time out on; wait for everyone)."""
        return None

    def _expired(self, timer: Any) -> bool:
        raise NotImplementedError

    def _elapse(self, seconds: float) -> Any:
        """The token that lets ``seconds`` of declared work pass (None: nothing to wait)."""
        return None

    def _clock(self) -> float:
        """The party's clock, as its view records it."""
        raise NotImplementedError

    def _unread(self, pid: int) -> Iterator[Any]:
        """Every message still in ``pid``'s mailbox, in order of arrival per key."""
        raise NotImplementedError

    def _crash(self, pid: int, fault: Fault, gen: Generator[Any, Any, Any]) -> None:
        """Party ``pid`` stops for good (a crash fault)."""

    def _open(self, envelope: Any, number: int | None) -> Message:
        raise NotImplementedError

    def _fail(self, pid: int, exc: BaseException) -> None:
        raise NotImplementedError

    def _fail_unread(self, pid: int, exc: BaseException) -> None:
        """A forged message that nobody read, found once the run is over."""
        self._fail(pid, exc)

    # -- one party's loop ------------------------------------------------------------------

    def _party(self, pid: int) -> Generator[Any, Any, None]:
        """Resume party ``pid``'s program with what its last effect returned (or the error
        thrown into it) until it ends, fails, crashes or re-raises the notice it was given."""
        try:
            gen = self.programs[pid](self.contexts[pid])
        except Exception as exc:  # a program that fails before its first effect
            self._fail(pid, from_program(exc))
            return
        effects = self._effects
        last_call = self.last_call
        interrupt = self.interrupt
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = gen.send(value) if error is None else gen.throw(error)
            except StopIteration as stop:
                self.outputs[pid] = stop.value
                return
            except Exception as exc:
                # a program that re-raises the notice it was given is done; anything else,
                # a forged ProtocolAbort included, is this party's own failure
                from_program(exc)
                if self.abort is None:
                    self._fail(pid, exc)
                return
            value, error = None, None
            try:
                call = getattr(effect, "call", None)
                if call is not None:
                    last_call[pid] = call
                handler = effects.get(type(effect))
                if handler is None:
                    raise MpcsimError(f"party {pid} yielded {effect!r}, which is not an effect")
                method, waits = handler
                if waits:
                    value = yield from method(self, pid, effect)
                else:
                    value = method(self, pid, effect, gen)
            except _Stopped:  # a crash fault closed the program
                return
            except interrupt as stop:  # a crash at a set time, while the party waits
                self._crash(pid, stop.cause, gen)  # type: ignore[attr-defined]
                return
            except ProtocolAbort:
                error = self._notice()
                self.views[pid].aborts.append((error.party, error.call))
            except Exception as exc:
                error = detached(exc)

    # -- the effects: (method, whether it may wait), by effect type (:data:`_effects`) ------

    def _on_send(self, pid: int, effect: Send | SendEach, gen: Generator[Any, Any, Any]
                 ) -> None:
        crash = None
        if self.faults is not None:
            crash = self.faults.crash_on_send(pid, effect.call, effect.step)
            if crash is not None and crash.when == "before":
                self._crash(pid, crash, gen)
                raise _Stopped
        if type(effect) is Send:
            self._send(pid, ((effect.to, effect.payload),), effect.call, effect.step,
                       effect.sealed)
        else:
            payloads = effect.payloads
            self._send(pid, [(to, payloads[to]) for to in sorted(payloads)], effect.call,
                       effect.step, effect.sealed)
        if crash is not None:  # crash after sending
            self._crash(pid, crash, gen)
            raise _Stopped

    def _on_recv(self, pid: int, effect: Recv) -> Generator[Any, Any, np.ndarray]:
        return (yield from self._receive(pid, effect.sender, effect.call, effect.step))

    def _on_recv_each(self, pid: int, effect: RecvEach
                      ) -> Generator[Any, Any, dict[int, np.ndarray]]:
        return (yield from self._receive_each(pid, effect.senders, effect.call, effect.step))

    def _on_recv_any(self, pid: int, effect: RecvAny
                     ) -> Generator[Any, Any, tuple[int, np.ndarray]]:
        value = yield from self._receive_any(pid, effect.keys)
        index = value[0]
        self.views[pid].observed.append((
            "recv_any", effect.keys[index][1], index, effect.keys[index][0], self._clock()))
        return value

    def _on_recv_within(self, pid: int, effect: RecvWithin
                        ) -> Generator[Any, Any, dict[int, np.ndarray]]:
        value = yield from self._receive_within(pid, effect)
        self.views[pid].observed.append(("recv_within", effect.call, tuple(value),
                                         self._clock()))
        return value

    def _on_compute(self, pid: int, effect: Compute) -> Generator[Any, Any, float]:
        wait = self._elapse(effect.seconds)
        if wait is not None:
            yield wait
        value = self._clock()
        self.views[pid].observed.append(("compute", self.last_call.get(pid), value))
        return value

    def _on_input(self, pid: int, effect: Input, gen: Generator[Any, Any, Any]) -> None:
        self.views[pid].protocol_inputs.append((effect.call, effect.label,
                                                frozen(effect.value)))

    def _on_output(self, pid: int, effect: Output, gen: Generator[Any, Any, Any]) -> None:
        self.views[pid].outputs.append((effect.call, effect.label, frozen(effect.value)))

    _effects: ClassVar[dict[type, tuple[Callable[..., Any], bool]]] = {
        Send: (_on_send, False),
        SendEach: (_on_send, False),
        Recv: (_on_recv, True),
        RecvEach: (_on_recv_each, True),
        RecvAny: (_on_recv_any, True),
        RecvWithin: (_on_recv_within, True),
        Compute: (_on_compute, True),
        Input: (_on_input, False),
        Output: (_on_output, False),
    }
    """Each effect type's handler: a function, or a generator that may wait (``True``)."""

    # -- receiving ---------------------------------------------------------------------------

    def _key(self, pid: int, sender: int, call: Call, step: str) -> Key:
        if sender not in self.participants or sender == pid:
            raise MpcsimError(f"party {pid} waits for a message from unknown party {sender}")
        return (sender, call.protocol, call.index, step)

    def _receive(self, pid: int, sender: int, call: Call, step: str
                 ) -> Generator[Any, Any, np.ndarray]:
        key = self._key(pid, sender, call, step)
        envelope = self._take(pid, key)
        if envelope is None:
            if self.abort is not None:
                raise self._notice()
            envelope = yield self._wait(pid, (key,))
        return self._consume(pid, envelope, envelope.number)

    def _receive_each(self, pid: int, senders: tuple[int, ...], call: Call, step: str
                      ) -> Generator[Any, Any, dict[int, np.ndarray]]:
        """``RecvEach``: one message from each sender, in the order the senders are listed;
        the party waits only for one that has not arrived yet."""
        got = {}
        take, consume = self._take, self._consume
        protocol, index = call.protocol, call.index
        for sender in senders:
            # a mailbox never holds a message from oneself or an unknown party
            envelope = take(pid, (sender, protocol, index, step))
            if envelope is not None:
                got[sender] = consume(pid, envelope, envelope.number)
            else:
                got[sender] = yield from self._receive(pid, sender, call, step)
        return got

    def _receive_any(self, pid: int, keys: tuple[tuple[int, Call, str], ...]
                     ) -> Generator[Any, Any, tuple[int, np.ndarray]]:
        """``RecvAny``: the first listed among messages already there, else the first to come."""
        if not keys:
            raise MpcsimError(f"party {pid} waits for any of no messages")
        wanted = [self._key(pid, sender, call, step) for sender, call, step in keys]
        for key in wanted:
            envelope = self._take(pid, key)
            if envelope is not None:
                break
        else:
            if self.abort is not None:
                raise self._notice()
            envelope = yield self._wait(pid, tuple(wanted))
        return wanted.index(envelope.key), self._consume(pid, envelope, envelope.number)

    def _receive_within(self, pid: int, effect: RecvWithin
                        ) -> Generator[Any, Any, dict[int, np.ndarray]]:
        """Collect ``effect.step`` from each sender until all came or the timeout passed."""
        keys = {self._key(pid, sender, effect.call, effect.step): sender
                for sender in effect.senders}
        timer = self._timer(effect.timeout_s)
        if timer is None:  # no clock to time out on: a sender that never sends is lost
            return (yield from self._receive_each(pid, effect.senders, effect.call,
                                                  effect.step))
        got: dict[int, np.ndarray] = {}
        while True:
            for key, sender in keys.items():
                if sender not in got:
                    envelope = self._take(pid, key)
                    if envelope is not None:
                        got[sender] = self._consume(pid, envelope, envelope.number)
            missing = tuple(k for k, s in keys.items() if s not in got)
            if not missing or self._expired(timer):
                return {s: got[s] for s in effect.senders if s in got}
            if self.abort is not None:
                raise self._notice()
            envelope = yield from self._wait_within(pid, missing, timer)
            if envelope is not None:
                got[keys[envelope.key]] = self._consume(pid, envelope, envelope.number)

    def _record_unread(self) -> None:
        """Put messages that arrived but were never asked for into their receivers' views.

        An honest-but-curious party sees everything delivered to it, whether or not its
        program reads it; such messages follow the ones it read, in order of arrival. They are
        opened here like the others, so a forged one aborts the run even unread.
        """
        for pid in sorted(self.mailbox):
            if self.faults is not None and pid in self.faults.crashed:
                continue  # a crashed party reads nothing more
            for envelope in self._unread(pid):
                try:
                    message = self._open(envelope, envelope.number)
                except Exception as exc:  # a forged message that nobody read
                    self._fail_unread(pid, exc)
                    return
                if self.record_messages:
                    self.views[pid].received.append(message)

    def _notice(self) -> ProtocolAbort:
        """A fresh notice of the run's abort, for one program: party and call, nothing else."""
        abort = self.abort
        if abort is None:  # every abort a program meets follows _fail, which sets it
            raise MpcsimError("a notice was requested before any party failed")
        return ProtocolAbort.notice(abort.party, abort.call)
