"""The message pattern of a coalition's view, and the check every audit method makes of it.

A party observes more than payloads (DESIGN.md, "View"): which messages reach it, from whom,
how many elements each holds, in which order and when, what ``Compute``, ``RecvAny`` and
``RecvWithin`` hand back (a clock reading, the message that came first, the senders in time),
and which peer aborted in which call. Comparing payload values says nothing about any of it,
so a program that sends an extra message only when an honest input is even, sizes a message by
an input, picks its recipient by one, or spends an input-dependent time computing before it
sends, leaks through its *pattern* while every payload is a fresh one-time pad.

The pattern of a view is everything in it but the payload values (:func:`pattern_of`). In the
simulation paradigm (thesis seed 001, §2.2) a simulator that knows only the coalition's inputs
and outputs must produce it; an audit therefore requires it to be identical across the inputs
it runs (:func:`first_difference`): A and the alternatives of the statistical method, every
enumerated input of the exact method, every probe of the linear method, and for the simulation
method alternatives drawn by :mod:`parties.audit.alternatives`. Any difference is a ``leak``
naming the message and the property (:data:`PROPERTIES`); an abort under some inputs and not
others is one too, never an exception. Times are compared in simulated time, where the model is
deterministic; a view whose clock is the wall clock (MPI) has its times left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.audit.alternatives import RESPLIT_KINDS, alternative_parties, resplit_parties
from parties.audit.result import LEAK, NOT_APPLICABLE, AuditResult
from parties.party import Party
from parties.view import SIMULATED, AbortedRun, View
from protocols.effects import Call
from protocols.errors import InputError

PROPERTIES = ("abort", "recipient", "count", "size", "recv_any", "recv_within", "order",
              "time")
"""What may differ between two patterns, in the order the check looks for it."""

MessageKey = tuple[int, int, str, int, str, int]
"""(receiver, sender, protocol, call, step, occurrence)."""


@dataclass(frozen=True)
class MemberPattern:
    """The pattern of one member's view.

    ``messages`` holds ``(key, elements, arrived_s)`` per received message in view order;
    ``observed`` what ``Compute``/``RecvAny``/``RecvWithin`` returned (:attr:`View.observed`);
    ``aborts`` the notices; ``timed`` whether its times are simulated (comparable).
    """

    member: int
    messages: tuple[tuple[MessageKey, int, float], ...]
    observed: tuple[tuple[Any, ...], ...]
    aborts: tuple[tuple[int, str], ...]
    timed: bool


Pattern = tuple[MemberPattern, ...]


@dataclass(frozen=True)
class PatternDifference:
    """Where two patterns differ: the call, the message (or event) and the property."""

    property: str
    call: int | None
    message: str
    detail: str


def aborted(views: Mapping[int, View]) -> AbortedRun | None:
    """The abort of a run a runner handed back (:class:`~parties.view.AbortedRun`), or None."""
    return views if isinstance(views, AbortedRun) else None


def refuse_bad_input(views: Mapping[int, View]) -> None:
    """Raise when a party refused its input in this run (on the audit's given inputs).

    A value too large for the field, inputs of different lengths: the user's mistake, which an
    audit must report rather than turn into a verdict.

    Raises
    ------
    InputError
        Naming the party and what was wrong with its input.
    """
    abort = aborted(views)
    if abort is not None and abort.refused:
        raise InputError(f"party {abort.party} refused its input on the audit's inputs: "
                         f"{abort.reason}")


def aborted_verdict(
    members: Sequence[int], method: str, views: Mapping[int, View]
) -> AuditResult | None:
    """``not applicable`` when the run aborted (under every input the audit ran, since the
    pattern check passed): the partial views are not the program's; else None.

    Raises
    ------
    InputError
        When a party refused its input (:func:`refuse_bad_input`).
    """
    abort = aborted(views)
    if abort is None:
        return None
    refuse_bad_input(views)
    where = f"in call {abort.call}" if abort.call else "before its first call"
    return AuditResult(tuple(sorted(members)), method, NOT_APPLICABLE, details={
        "reason": f"the program aborts on the audit's inputs (party {abort.party} {where}: "
                  f"{abort.reason}); there is no completed run to compare"})


def pattern_of(views: Mapping[int, View], members: Sequence[int]) -> Pattern:
    """The pattern of the coalition ``members``' view (everything but payload values).

    A member that itself failed in an aborted run knows it: its own abort is among its
    notices.
    """
    out = []
    abort = aborted(views)
    for m in sorted(members):
        view = views[m]
        notices = tuple(view.aborts)
        if abort is not None and abort.party == m:
            notices += ((m, abort.call),)
        seen: dict[tuple[int, str, int, str], int] = {}
        messages = []
        for msg in view.received:
            base = (msg.sender, msg.protocol, msg.call, msg.step)
            k = seen.get(base, 0)
            seen[base] = k + 1
            messages.append(((m, *base, k), int(np.size(msg.payload)), float(msg.arrived_s)))
        out.append(MemberPattern(m, tuple(messages), tuple(view.observed), notices,
                                 view.clock == SIMULATED))
    return tuple(out)


def _name(key: MessageKey) -> str:
    receiver, sender, protocol, call, step, k = key
    again = f" (#{k + 1})" if k else ""
    return f"{protocol}#{call}.{step}{again} from {sender} to {receiver}"


def _same_time(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _call_index(call: Any) -> int | None:
    return call.index if isinstance(call, Call) else None


def _after(call: Any) -> str:
    return f"in {call.tag('')[:-1]}" if isinstance(call, Call) else "before its first call"


def first_difference(a: Pattern, b: Pattern) -> PatternDifference | None:
    """The first way patterns ``a`` and ``b`` of one coalition differ (None if identical).

    Looked for in the order of :data:`PROPERTIES`: an abort notice one run has and the other
    not; a message that reaches another member (recipient) or no member (count); a message
    with another number of elements (size); another message chosen by ``RecvAny`` or other
    senders in time for ``RecvWithin``; messages read in another order; another arrival time
    or clock reading (time, simulated clocks only).
    """
    for pa, pb in zip(a, b, strict=True):
        if pa.aborts != pb.aborts:
            extra = sorted(set(pa.aborts) ^ set(pb.aborts)) or list(pa.aborts or pb.aborts)
            party, call = extra[0]
            where = f"in call {call}" if call else "before its first call"
            index = int(call.rsplit("#", 1)[1]) if "#" in call else None
            return PatternDifference("abort", index, f"party {party} aborted {where}",
                                     f"party {pa.member} is told under one input set only")
    keys_a = {k: (n, t) for p in a for k, n, t in p.messages}
    keys_b = {k: (n, t) for p in b for k, n, t in p.messages}
    only = sorted(set(keys_a) ^ set(keys_b), key=lambda k: (k[3], k[2], k[4], k[1], k[0], k[5]))
    if only:
        key = only[0]
        others = keys_b if key in keys_a else keys_a
        moved = any(k[1:] == key[1:] for k in others if k[0] != key[0])
        prop = "recipient" if moved else "count"
        return PatternDifference(prop, key[3], _name(key), (
            "the message goes to another member under other inputs" if moved else
            "the message is sent under one input set and not under another"))
    for key in sorted(keys_a, key=lambda k: (k[3], k[2], k[4], k[1], k[0], k[5])):
        if keys_a[key][0] != keys_b[key][0]:
            return PatternDifference("size", key[3], _name(key),
                                     f"{keys_a[key][0]} elements against {keys_b[key][0]}")
    for pa, pb in zip(a, b, strict=True):
        kinds_a = [o[0] for o in pa.observed]
        kinds_b = [o[0] for o in pb.observed]
        if kinds_a != kinds_b:
            return PatternDifference("count", None, f"party {pa.member}'s effects",
                                     f"{kinds_a} against {kinds_b}")
        for oa, ob in zip(pa.observed, pb.observed, strict=True):
            if oa[0] in ("recv_any", "recv_within") and oa[1:-1] != ob[1:-1]:
                what = (f"RecvAny at party {pa.member}" if oa[0] == "recv_any"
                        else f"RecvWithin at party {pa.member}")
                return PatternDifference(oa[0], _call_index(oa[1]), f"{what} {_after(oa[1])}",
                                         f"returned {oa[2:-1]} against {ob[2:-1]}")
    for pa, pb in zip(a, b, strict=True):
        order_a = [k for k, _, _ in pa.messages]
        order_b = [k for k, _, _ in pb.messages]
        if order_a != order_b:
            i = next(i for i, (x, y) in enumerate(zip(order_a, order_b, strict=True)) if x != y)
            return PatternDifference("order", order_a[i][3], _name(order_a[i]),
                                     f"party {pa.member} reads {_name(order_b[i])} there instead")
    for pa, pb in zip(a, b, strict=True):
        if not (pa.timed and pb.timed):
            continue
        for (key, _, ta), (_, _, tb) in zip(pa.messages, pb.messages, strict=True):
            if not _same_time(ta, tb):
                return PatternDifference("time", key[3], _name(key),
                                         f"arrives at {ta:.9g} s against {tb:.9g} s")
        for oa, ob in zip(pa.observed, pb.observed, strict=True):
            if not _same_time(float(oa[-1]), float(ob[-1])):
                what = {"compute": "Compute", "recv_any": "RecvAny",
                        "recv_within": "RecvWithin"}.get(oa[0], oa[0])
                return PatternDifference("time", _call_index(oa[1]),
                                         f"{what} at party {pa.member} {_after(oa[1])}",
                                         f"returns the clock {oa[-1]:.9g} s against "
                                         f"{ob[-1]:.9g} s")
    return None


def pattern_leak(
    members: Sequence[int], method: str, difference: PatternDifference, **details: Any
) -> AuditResult:
    """The ``leak`` verdict for a pattern difference, naming the message and the property."""
    return AuditResult(tuple(sorted(members)), method, LEAK, 0.0, difference.call,
                       difference.message, None, {
                           "reason": f"the coalition's message pattern depends on the honest "
                                     f"inputs ({difference.property}): {difference.detail}",
                           "property": difference.property, **details})


class PatternCheck:
    """The reference pattern of an audit, and the comparison of each further run with it.

    ``check(views, **details)`` returns a ``leak`` verdict at the first run whose pattern
    differs from the first one's, else None.
    """

    def __init__(self, members: Sequence[int], method: str) -> None:
        self.members = tuple(sorted(members))
        self.method = method
        self.reference: Pattern | None = None

    def check(self, views: Mapping[int, View], **details: Any) -> AuditResult | None:
        pattern = pattern_of(views, self.members)
        if self.reference is None:  # the run on the audit's given inputs
            refuse_bad_input(views)
            self.reference = pattern
            return None
        difference = first_difference(self.reference, pattern)
        if difference is None:
            return None
        return pattern_leak(self.members, self.method, difference, **details)


def member_outputs(views: Mapping[int, View], members: Sequence[int]) -> list[tuple[str, Any]]:
    """The coalition's declared outputs, in order: (call and label, values)."""
    return [(f"{m}:{call}:{label}", np.ravel(np.asarray(value)))
            for m in sorted(members) for call, label, value in views[m].outputs]


def _same_outputs(a: list[tuple[str, Any]], b: list[tuple[str, Any]]) -> bool:
    if [k for k, _ in a] != [k for k, _ in b]:
        return False
    for (_, x), (_, y) in zip(a, b, strict=True):
        if x.shape != y.shape:
            return False
        if x.dtype.kind == "f" or y.dtype.kind == "f":
            if not np.allclose(x.astype(np.float64), y.astype(np.float64), rtol=1e-9,
                               atol=1e-12):
                return False
        elif [int(v) for v in x.tolist()] != [int(v) for v in y.tolist()]:
            return False
    return True


def check_alternatives(
    run: Callable[[Sequence[Party]], Mapping[int, View]],
    parties: Sequence[Party],
    members: Sequence[int],
    method: str,
    rng: np.random.Generator,
    n: int,
    limit: int | None = None,
    reference: Mapping[int, View] | None = None,
) -> tuple[AuditResult | None, int]:
    """Run ``parties`` with honest inputs redrawn (:func:`alternative_parties`, then
    :func:`resplit_parties`) and compare each run's pattern with the one on the given inputs
    (``reference``, else a run of ``parties``). Returns the ``leak`` verdict at the first
    difference that the outputs do not explain (None if none) and the number of alternatives
    run.

    A difference under an alternative that gives the coalition other outputs may follow the
    outputs (a stopping rule on the sum, a message when the sum passes a threshold), which a
    simulator is given: it is a leak only when no re-split alternative kept the outputs. When
    one did — the functionality is the sum's — the pattern is held to the re-splits alone,
    which keep the outputs and still change every parity, high bit and residue of each honest
    input. A run that aborted has no outputs to compare, and its difference is a leak. A
    re-split that does not keep the outputs (an algorithm's run is no sum; data shifted below
    zero may stop it) judges nothing: the other alternatives judge as they always did — except
    a re-split on which a party *fails* (an error other than refusing its input, e.g. a
    division by a zero an honest input became): the re-split kept the sum, so nothing the
    coalition is given explains the abort, and it is a leak.
    """
    check = PatternCheck(members, method)
    reference = reference if reference is not None else run(parties)
    check.check(reference)
    expected = member_outputs(reference, members)
    ran = 0
    deferred: AuditResult | None = None
    kept_outputs = other_outputs = 0
    for kind, variant in (*alternative_parties(parties, members, rng, n, limit),
                          *resplit_parties(parties, members, rng, limit)):
        ran += 1
        views = run(variant)
        leak = check.check(views, alternative=kind)
        stopped = aborted(views) is not None
        same = not stopped and _same_outputs(member_outputs(views, members), expected)
        if kind in RESPLIT_KINDS and not stopped:
            kept_outputs += same
            other_outputs += not same
        if leak is None:
            continue
        if kind in RESPLIT_KINDS:  # they judge only where they kept the outputs
            failed = stopped and not getattr(views, "refused", False)
            if same or failed:
                return leak, ran
            continue
        if stopped or same:
            return leak, ran
        deferred = deferred or leak
    if deferred is not None and not (kept_outputs and not other_outputs):
        return deferred, ran
    return None, ran


class RecordingRunner:
    """A :class:`~parties.audit.randomness.Runner` that keeps every run's pattern, for every
    party, so that one set of runs (the linear method's probes) is checked for any coalition
    (:meth:`leak`)."""

    def __init__(self, runner: Any) -> None:
        self.runner = runner
        self.patterns: list[dict[int, MemberPattern]] = []
        self.inputs: list[dict[int, bytes]] = []

    @property
    def field(self) -> Any:
        return self.runner.field

    def __call__(self, parties: Sequence[Party], randomness: Any) -> Mapping[int, View]:
        views = self.runner(parties, randomness)
        self.patterns.append({p.member: p for p in pattern_of(views, sorted(views))})
        self.inputs.append({p.id: _digest(p.inputs) for p in parties})
        return views

    def leak(self, members: Sequence[int], method: str) -> AuditResult | None:
        """The ``leak`` verdict at the first recorded run whose pattern for ``members``
        differs from the first run's, else None. Only runs with the members' inputs of the
        first run count: a pattern may depend on the coalition's own inputs."""
        members = tuple(sorted(members))
        if not self.patterns:
            return None
        first = tuple(self.patterns[0][m] for m in members)
        own = [self.inputs[0][m] for m in members]
        for i, run in enumerate(self.patterns[1:], start=1):
            if [self.inputs[i][m] for m in members] != own:
                continue
            difference = first_difference(first, tuple(run[m] for m in members))
            if difference is not None:
                return pattern_leak(members, method, difference, run=i)
        return None


def _digest(inputs: Mapping[str, Any]) -> bytes:
    """The inputs of one party as bytes, to tell equal inputs (numeric arrays and scalars)."""
    parts = []
    for key in sorted(inputs):
        value = np.asarray(inputs[key])
        parts.append(f"{key}:{value.dtype}:{value.shape}:".encode() + (
            value.tobytes() if value.dtype.kind != "O" else repr(value.tolist()).encode()))
    return b"|".join(parts)


def declared_size_leak(
    members: Sequence[int], method: str, call: Call,
    received: Mapping[tuple[int, int, str, int], np.ndarray],
    declared: Mapping[tuple[int, int, str], int], protocol: str,
) -> AuditResult | None:
    """A ``leak`` (property ``size``) at the first received message longer or shorter than
    the protocol's simulator declares it (:func:`protocols.simulator.declared_sizes`), else None.

    ``received`` maps (receiver, sender, step, occurrence) to the payload; a message the
    declaration does not cover, or one a member sent (it holds the coalition's own values
    only), is left to the other checks. A message of another size than the
    protocol's carries what the protocol does not send (a raw input riding on a column sum), so
    it is a pattern difference between the real view and the simulator's, found before any
    simulation (which would otherwise fail on the shapes).
    """
    for key in sorted(received, key=lambda k: (k[2], k[0], k[1], k[3])):
        want = None if key[1] in members else declared.get(key[:3])
        got = int(np.asarray(received[key]).size)
        if want is None or got == want:
            continue
        receiver, sender, step, k = key
        again = f" (#{k + 1})" if k else ""
        difference = PatternDifference(
            "size", call.index, f"{call.tag(step)}{again} from {sender} to {receiver}",
            f"{got} elements where {protocol} declares {want}")
        return AuditResult(tuple(sorted(members)), method, LEAK, 0.0, difference.call,
                           difference.message, None, {
                               "reason": "the coalition's message pattern is not the "
                                         f"simulator's ({difference.property}): "
                                         f"{difference.detail}",
                               "property": difference.property})
    return None
