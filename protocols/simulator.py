"""Simulators: the view a coalition must be able to produce on its own, call by call.

The papers define security by simulation: SecureSum is secure when "any coalition of parties can
simulate their entire joint protocol view given only their inputs and the output" (thesis seed
001, §2.2); a protocol is t-private when every coalition of at most t parties learns nothing
beyond its own inputs and outputs (Qian et al., seed 004, Def. 1). So every protocol module
declares a *simulator*: given what a coalition holds about one call of the protocol — its
members' inputs to the call, the randomness they drew in it, the messages they sent and the
call's declared outputs (a :class:`CallView`) — it draws the messages the coalition receives in
that call from their real distribution, without looking at any honest party's input.
:mod:`parties.audit.simulation` records real runs of an algorithm and compares the coalition's
real messages, call by call, with simulated ones; a protocol whose real view differs from its
simulator's is not secure as declared.

Writing a simulator for a new protocol
--------------------------------------
A simulator is any object with a ``name`` and a method
``simulate(view, rng, n) -> {(receiver, sender, step): array of shape (n, size)}``: ``n``
independent draws of every message the coalition's members receive in the call, keyed by the
receiving member, the sender and the message's step name (as the program's ``Send`` names it).
It must

* draw fresh randomness only from ``rng`` (never from the real run);
* use the coalition's own randomness through :meth:`CallView.private_stream` and
  :meth:`CallView.pair_stream`, its inputs through :meth:`CallView.input`, what it sent through
  :meth:`CallView.sent_by` and the declared outputs through :meth:`CallView.output`: each raises
  :class:`SimulatorMismatch` when the program did not produce what the declared protocol would
  (the audit then answers "not applicable" — the program does not implement the protocol);
* produce messages between two members exactly as the real protocol computes them (the audit
  requires them to agree), and messages from honest parties with their real joint law given
  everything above.

It also says, through ``determined(view) -> bool``, whether the coalition's inputs and the
call's declared outputs determine every honest party's input to the call (SecureSum with one
honest party: its input is the sum minus the coalition's). Such a call is still simulated: the
audit computes those honest inputs from the outputs and the coalition's inputs alone
(:attr:`CallView.honest_inputs`, through the protocol's declaration in
:mod:`protocols.registry`) and compares the call's messages as for any other, so a message
that carries more than this call's inputs — another input, a later call's — is caught.

It may also declare the size of each message of a call through an optional
``sizes(view) -> {(receiver, sender, step): element count}`` (SecureSum: every message has the
call's vector length). The simulation method compares the coalition's real message pattern
with it before simulating anything: a message whose element count differs from the declared
one carries something the protocol does not send (a raw input riding along) and is a
``leak`` naming the message and the property ``size`` (:func:`declared_sizes`).

A protocol that reveals more than its declared outputs *by construction* (an All-Reduce that
sends the inputs in the clear) has no simulator from the outputs alone; it says so through an
optional ``reveals(view) -> str | None``, the reason when the call's messages cannot be
simulated for this coalition, and the audit answers "leak" at that call without sampling.

Declare it with :func:`protocols.registry.declare_protocol` (with the protocol's ideal
functionality, and optionally its cost) under the protocol name the program passes to
``ctx.new_call``, and hand the :class:`~protocols.registry.Declaration` to the audit
(``protocol=``) or name it in an ``mpcsim.protocols`` entry point of an installed package;
there is no registry to write to. The audit target, not the program, names the protocol
under audit.
Set ``uniform_on_hull = False`` when the simulated messages are not
uniform on their affine hull over GF(p) (e.g. Gaussian noise): the audit's linear tests bound
their false-alarm rate by that uniformity and are skipped otherwise.

Re-running the coalition's programs
-----------------------------------
The call-by-call form above fits protocols whose members' sent messages are functions of their
inputs and randomness alone (SecureSum). In an MPC engine they are not: NormedSecureSum's
openings depend on earlier openings through the coalition's own shares, so the members' sent
messages vary with the honest parties' messages, and no simulator fed the real ``sent`` can
reproduce the joint law. The general form is the ideal-world simulator of the papers: it gets
the coalition's inputs, its randomness tape, the functionality's output and the coalition's own
party programs, and *plays the honest parties* while those programs run unmodified. A
:class:`ProgramSimulator` gives, per call and per simulated run, a :class:`StandIn`; the audit
(:mod:`parties.audit.rerun`) runs the members' real programs on their real tapes against
honest stand-in programs that, at each message an honest party sends to a member, ask the
call's stand-in for the payload given everything the members have sent to honest parties so
far in the call (``heard``). A per-call :class:`Simulator` is the simple case
(:class:`PerCallStandIn`): it draws all of a call's honest messages at once from the call's
view, as above.

A protocol for which no simulator is written declares a :class:`NoSimulator` with the reason;
the audit of a run that makes such a call answers "not applicable" and names the call — never
"private". No built-in protocol does: SecureSum and All-Reduce (per call), NormedSecureSum and
its dealer (program rerun, :mod:`protocols.mpc.simulator`), SecAgg/SecAgg+
(:class:`protocols.secagg_simulator.SecAggSimulator`) and CAPE (:mod:`protocols.cape_simulator`,
with the audit target's noise plan) each declare a simulator in :mod:`protocols.registry`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from protocols.effects import Call
from protocols.errors import MpcsimError
from protocols.field import PrimeField

MessageKey = tuple[int, int, str]
"""(receiving member, sender, step) of one message of a call."""

StreamKey = tuple[Any, ...]
"""How a recorded mask draw is named in a view: see :func:`stream_key`."""


class SimulatorMismatch(MpcsimError):
    """The program's call does not have what the declared protocol's simulator needs."""


def stream_key(kind: str, party: int, peer: int | None, call: Call, sub: int = 0) -> StreamKey:
    """The name of a mask stream in a view's draws.

    ``("private", party, protocol, index, sub)`` for a stream known to ``party`` alone, and
    ``("pair", lo, hi, protocol, index, sub)`` for one shared by the pair {party, peer}
    (whichever end drew it).
    """
    if kind == "private":
        return ("private", party, call.protocol, call.index, sub)
    if peer is None:
        raise ValueError("a pair stream needs a peer")
    lo, hi = sorted((party, peer))
    return ("pair", lo, hi, call.protocol, call.index, sub)


def stream_owners(key: StreamKey) -> set[int]:
    """The parties that know a stream: its owner, or both ends of a pair."""
    return {key[1]} if key[0] == "private" else {key[1], key[2]}


@dataclass(frozen=True)
class CallView:
    """What a coalition holds about one call of a protocol (the simulator's input).

    Attributes
    ----------
    call : Call
        The call (protocol name and call number).
    field : PrimeField
        The field of the call's messages.
    parties : tuple of int
        Every data-holding party of the run (the call's participants).
    members : tuple of int
        The coalition, sorted.
    inputs : mapping of int to tuple of (label, value)
        Each member's ``Input`` records of the call.
    outputs : mapping of int to tuple of (label, value)
        Each member's ``Output`` records of the call (its declared outputs).
    draws : mapping of stream key to ndarray
        Every mask stream a member drew in the call (:func:`stream_key`).
    sent : mapping of (receiver, sender, step) to ndarray
        Every message a member sent in the call (a function of its inputs and randomness).
    honest_inputs : mapping of int to ndarray
        The honest parties' inputs to the call when its outputs and the coalition's inputs
        determine them (one honest party of a sum: S − Σ_{m∈C} x_m), computed by the audit
        from those alone (:attr:`protocols.registry.Declaration.honest_inputs`); else empty.
    senders : mapping of str to tuple of int
        Per step, every party whose message of that step in the call reached its receiver:
        the network's schedule (who was still there), which the ideal-world simulator of a
        dropout-tolerant protocol is given (SecAgg's U1, U2, U3: Bonawitz et al., Thm 6.3).
        The audit's pattern check holds it independent of the honest inputs.
    """

    call: Call
    field: PrimeField
    parties: tuple[int, ...]
    members: tuple[int, ...]
    inputs: Mapping[int, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    outputs: Mapping[int, tuple[tuple[str, Any], ...]] = field(default_factory=dict)
    draws: Mapping[StreamKey, np.ndarray] = field(default_factory=dict)
    sent: Mapping[MessageKey, np.ndarray] = field(default_factory=dict)
    honest_inputs: Mapping[int, np.ndarray] = field(default_factory=dict)
    senders: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    @property
    def honest(self) -> tuple[int, ...]:
        """The data-holding parties outside the coalition."""
        members = set(self.members)
        return tuple(p for p in self.parties if p not in members)

    def _where(self) -> str:
        return self.call.tag("").rstrip(".")

    def input(self, member: int) -> np.ndarray:
        """The member's one input to the call."""
        records = self.inputs.get(member, ())
        if len(records) != 1:
            raise SimulatorMismatch(
                f"party {member} recorded {len(records)} inputs to {self._where()}, not one"
            )
        return np.asarray(records[0][1])

    def output(self, label: str) -> np.ndarray:
        """The declared output ``label`` of the call, as every member recorded it."""
        values = [np.asarray(v) for m in self.members for lab, v in self.outputs.get(m, ())
                  if lab == label]
        if len(values) != len(self.members):
            raise SimulatorMismatch(
                f"not every member of {list(self.members)} declared the output {label!r} of "
                f"{self._where()} (an Output yielded without call= belongs to no call: give it "
                "call=, the Call that ctx.new_call returned)"
            )
        if any(not np.array_equal(v, values[0]) for v in values[1:]):
            raise SimulatorMismatch(
                f"the members of {list(self.members)} declared different outputs {label!r} of "
                f"{self._where()}"
            )
        return values[0]

    def private_stream(self, party: int, sub: int = 0) -> np.ndarray:
        """A member's private mask stream drawn in the call."""
        return self._stream(stream_key("private", party, None, self.call, sub))

    def pair_stream(self, a: int, b: int, sub: int = 0) -> np.ndarray:
        """The mask stream shared by parties ``a`` and ``b`` (one of them a member)."""
        return self._stream(stream_key("pair", a, b, self.call, sub))

    def _stream(self, key: StreamKey) -> np.ndarray:
        values = self.draws.get(key)
        if values is None:
            raise SimulatorMismatch(
                f"the coalition drew no mask stream {key} in {self._where()}, which the "
                "declared protocol draws"
            )
        return np.asarray(values)

    def sent_by(self, sender: int, receiver: int, step: str) -> np.ndarray:
        """The payload member ``sender`` sent to ``receiver`` in ``step`` of the call."""
        value = self.sent.get((receiver, sender, step))
        if value is None:
            raise SimulatorMismatch(
                f"party {sender} sent no '{step}' to party {receiver} in {self._where()}, "
                "which the declared protocol sends"
            )
        return np.asarray(value)


class Simulator(Protocol):
    """Draws the messages a coalition receives in one call, from the coalition's side alone."""

    name: str
    uniform_on_hull: bool

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` independent draws of every message the members receive: key → (n, size)."""
        ...

    def determined(self, view: CallView) -> bool:
        """Whether the coalition's inputs and the outputs determine the honest inputs."""
        ...


@dataclass(frozen=True)
class NoSimulator:
    """A protocol's declaration that it has no simulator here, and why.

    The audit answers "not applicable" for a run with a call of ``name``, giving ``reason``.

    Parameters
    ----------
    name : str
        The protocol name (as the program passes it to ``ctx.new_call``).
    reason : str
        Why no simulator is given, and what to use instead.
    """

    name: str
    reason: str
    uniform_on_hull: bool = False

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """Always raises :class:`SimulatorMismatch` with the declared reason."""
        raise SimulatorMismatch(f"{self.name} has no simulator: {self.reason}")

    def determined(self, view: CallView) -> bool:
        """Never: nothing is simulated."""
        return False


class StandIn(Protocol):
    """The honest side of one call in one simulated run (a :class:`ProgramSimulator` makes it).
    """

    def reply(
        self, sender: int, step: str, heard: Mapping[MessageKey, np.ndarray],
        sizes: Mapping[int, int],
    ) -> dict[int, np.ndarray]:
        """The payloads honest ``sender`` sends to members in ``step``: receiver → array.

        ``heard`` holds every message a member has sent to an honest party in the call so
        far in this simulated run, keyed (honest receiver, member, step); ``sizes`` the
        element count of each message ``sender`` sends in ``step`` (the public pattern). A
        receiver left out gets a one-time pad (a message the protocol does not declare).
        """
        ...


class ProgramSimulator(Protocol):
    """A simulator that plays the honest parties against the coalition's own programs."""

    name: str
    uniform_on_hull: bool

    def stand_in(self, view: CallView, rng: np.random.Generator) -> StandIn:
        """A fresh honest side of the call for one simulated run (draws only from ``rng``)."""
        ...

    def determined(self, view: CallView) -> bool:
        """Whether the coalition's inputs and the outputs determine the honest inputs."""
        ...


def is_program_simulator(simulator: Any) -> bool:
    """Whether ``simulator`` has the program-rerun form (a ``stand_in`` method)."""
    return callable(getattr(simulator, "stand_in", None))


@dataclass
class PerCallStandIn:
    """The per-call form as a stand-in: one draw of every honest message of the call at once.

    The first reply draws ``simulator.simulate(view, rng, 1)`` from the call's view of the real
    trial (the members' sent messages there are functions of their inputs and tape, so they are
    what the members send in the simulated run too); every reply then hands out its part.
    """

    simulator: Simulator
    view: CallView
    rng: np.random.Generator
    _drawn: dict[MessageKey, np.ndarray] | None = None

    def reply(
        self, sender: int, step: str, heard: Mapping[MessageKey, np.ndarray],
        sizes: Mapping[int, int],
    ) -> dict[int, np.ndarray]:
        if self._drawn is None:
            self._drawn = self.simulator.simulate(self.view, self.rng, 1)
        out = {}
        for receiver in sizes:
            value = self._drawn.get((receiver, sender, step))
            if value is not None:
                out[receiver] = np.asarray(value)[0]
        return out


@dataclass(frozen=True)
class ProgramForm:
    """A per-call :class:`Simulator` in the program-rerun form (its simple case).

    ``stand_in`` wraps the simulator in a :class:`PerCallStandIn`; the audit then re-runs the
    coalition's programs against it. For a protocol whose members' messages depend only on
    their inputs and tape, both forms give the same law, hence the same verdicts.
    """

    simulator: Simulator

    @property
    def name(self) -> str:
        return self.simulator.name

    @property
    def uniform_on_hull(self) -> bool:
        return self.simulator.uniform_on_hull

    def stand_in(self, view: CallView, rng: np.random.Generator) -> StandIn:
        return PerCallStandIn(self.simulator, view, rng)

    def determined(self, view: CallView) -> bool:
        return self.simulator.determined(view)

    def sizes(self, view: CallView) -> Mapping[MessageKey, int] | None:
        return declared_sizes(self.simulator, view)

    def reveals(self, view: CallView) -> str | None:
        reveals = getattr(self.simulator, "reveals", None)
        return None if reveals is None else reveals(view)


def uniform_with_sum(
    field_: PrimeField,
    rng: np.random.Generator,
    n: int,
    offsets: np.ndarray,
    total: np.ndarray,
) -> np.ndarray:
    """n draws of vectors v_1..v_K = offsets_k + u_k, u uniform subject to Σ_k v_k = total.

    The law of the honest parties' column sums in SecureSum: each is a part the coalition
    knows plus a uniform part, and together they add up to what the output leaves for them.

    Parameters
    ----------
    n : int
        Number of independent draws.
    offsets : ndarray of shape (K, d)
        The known part of each vector (K ≥ 1).
    total : ndarray of shape (d,) or (n, d)
        What the K vectors must add up to (the same for every draw, or one per draw).

    Returns
    -------
    ndarray of shape (n, K, d)
    """
    k, d = np.shape(offsets)
    total = np.broadcast_to(np.asarray(total), (n, d))
    out = np.empty((n, k, d), dtype=field_.dtype)
    if k > 1:
        free = field_.random(rng, (n, k - 1, d))
        out[:, : k - 1, :] = field_.add(free, np.broadcast_to(offsets[: k - 1], free.shape))
        out[:, k - 1, :] = field_.sub(total, field_.sum(out[:, : k - 1, :], axis=1))
    else:
        out[:, 0, :] = total
    return out


def members_input_length(view: CallView) -> int:
    """d, the length of every member's input to the call (a message size a simulator declares).

    Raises
    ------
    SimulatorMismatch
        When the members' inputs differ in length (the program does not run the protocol).
    """
    lengths = {int(np.ravel(view.input(m)).size) for m in view.members}
    if len(lengths) != 1:
        raise SimulatorMismatch(
            f"the members' inputs to {view.call.tag('').rstrip('.')} have different "
            f"lengths {sorted(lengths)}")
    return lengths.pop()


def declared_sizes(simulator: Any, view: CallView) -> Mapping[MessageKey, int] | None:
    """The element count the simulator declares for each message of the call, or None.

    None when the simulator declares no sizes (the optional ``sizes(view)``, module docstring).

    Raises
    ------
    SimulatorMismatch
        When the call lacks what the declaration needs (e.g. a member's input).
    """
    sizes = getattr(simulator, "sizes", None)
    return None if sizes is None else sizes(view)
