"""Effects: the vocabulary every party program speaks.

A protocol or distributed algorithm is written once, from one party's point of view, as a
generator that takes a :class:`~protocols.context.PartyContext` and *yields effects*; the
driver that runs it (SimPy simulation, or MPI) interprets each effect and sends the result
back into the generator. Sub-protocols compose with ``yield from``::

    def my_protocol(ctx, x):
        call = ctx.new_call("my_protocol")
        yield SendEach({peer: x for peer in ctx.peers}, call, "value")
        received = yield RecvEach(ctx.peers, call, "value")   # {peer: ndarray}
        ...

Effects are small frozen records. A message is addressed by its :class:`Call` (protocol name
and the per-party call counter, which advances identically at every party, like MPyC's program
counter) and a step name; mailboxes match on (sender, call, step) and accept messages in any
arrival order. Payloads are numpy arrays, serialised explicitly by :mod:`protocols.wire` —
never pickled — and that encoding is what the ledger counts.

Two effects serve algorithms whose timing matters: :class:`RecvAny` waits for the first of
several messages (a server serving clients as they arrive), and :class:`Compute` spends local
computation time on the party's clock, so that simulated time counts work as well as messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocols.errors import InputError


@dataclass(frozen=True, slots=True)
class Call:
    """One invocation of a protocol: its name and the caller's call counter.

    The counter also numbers the invocation's PRG streams, so every invocation draws fresh
    masks.
    """

    protocol: str
    index: int

    def tag(self, step: str) -> str:
        """The message tag of ``step`` within this call, e.g. ``"secure_sum#3.share"``."""
        return f"{self.protocol}#{self.index}.{step}"


@dataclass(frozen=True, slots=True, eq=False)
class Send:
    """Send ``payload`` to party ``to``. The driver returns ``None``.

    ``sealed=False`` sends in the clear even when sealing is on (used only for public values
    such as key-agreement public keys).
    """

    to: int
    payload: np.ndarray
    call: Call
    step: str
    sealed: bool = True


@dataclass(frozen=True, slots=True, eq=False)
class SendEach:
    """Send one payload to each of several parties (``{party: payload}``), in key order."""

    payloads: Mapping[int, np.ndarray]
    call: Call
    step: str
    sealed: bool = True


@dataclass(frozen=True, slots=True, eq=False)
class Recv:
    """Wait for the message of ``step`` in ``call`` from party ``sender``; returns the array."""

    sender: int
    call: Call
    step: str


@dataclass(frozen=True, slots=True, eq=False)
class RecvEach:
    """Wait for the message of ``step`` in ``call`` from each sender: ``{sender: array}``."""

    senders: tuple[int, ...]
    call: Call
    step: str


@dataclass(frozen=True, slots=True, eq=False)
class RecvAny:
    """Wait for whichever of several messages arrives first; returns ``(index, array)``.

    ``keys`` lists ``(sender, call, step)`` triples; ``index`` is the position in ``keys`` of
    the message delivered. A server that serves clients in their order of arrival (the
    asynchronous algorithms of seed 004, Algorithm 6) waits this way. When several of the
    messages are already in the mailbox, the first in ``keys`` order is taken, so a run
    replays exactly.
    """

    keys: tuple[tuple[int, Call, str], ...]


@dataclass(frozen=True, slots=True, eq=False)
class RecvWithin:
    """Wait up to ``timeout_s`` simulated seconds for the message of ``step`` from each sender.

    Returns ``{sender: array}`` for the senders whose message arrived in time (all of them,
    as soon as they have; fewer when some dropped out). A server that tolerates dropouts
    (:mod:`protocols.secagg`, Bonawitz et al.'s server waits with a timeout) collects this way.
    """

    senders: tuple[int, ...]
    call: Call
    step: str
    timeout_s: float

    def __post_init__(self) -> None:
        s = self.timeout_s
        if isinstance(s, bool) or not isinstance(s, int | float) or not 0 < s < float("inf"):
            raise InputError(f"RecvWithin(timeout_s = {s!r}): must be a finite number > 0")


@dataclass(frozen=True, slots=True)
class Compute:
    """Spend ``seconds`` of local computation on the party's clock; returns the clock after.

    Drivers that simulate time advance the party's clock by ``seconds`` (the SimPy driver
    waits that long before the program continues); the returned float is the party's own
    clock reading, in seconds since the run started. A program declares its local work this
    way (e.g. a flop count times a per-flop cost) so that simulated time covers computation as
    well as communication.
    """

    seconds: float

    def __post_init__(self) -> None:
        s = self.seconds
        if isinstance(s, bool) or not isinstance(s, int | float) or not s >= 0 or s == float("inf"):
            raise InputError(f"Compute(seconds = {s!r}): seconds must be a finite number ≥ 0")


@dataclass(frozen=True, slots=True, eq=False)
class Input:
    """Record what the party puts into a protocol call, in its view. Returns ``None``."""

    label: str
    value: Any
    call: Call | None = field(default=None)


@dataclass(frozen=True, slots=True, eq=False)
class Output:
    """Record a declared output in the party's view. Returns ``None``.

    Declared outputs are what a protocol is *allowed* to reveal; privacy audits ask whether a
    coalition's view reveals anything beyond its inputs and these outputs.
    """

    label: str
    value: Any
    call: Call | None = field(default=None)


Effect = Send | SendEach | Recv | RecvEach | RecvAny | RecvWithin | Compute | Input | Output
