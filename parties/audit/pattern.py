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
method alternatives drawn here (:func:`alternative_parties`). Any difference is a ``leak``
naming the message and the property (:data:`PROPERTIES`); an abort under some inputs and not
others is one too, never an exception. Times are compared in simulated time, where the model is
deterministic; a view whose clock is the wall clock (MPI) has its times left out.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.audit.result import INCONCLUSIVE, LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.party import SITE, Party
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


# -- alternative inputs for the simulation method ---------------------------------------------

ALTERNATIVE_KINDS = ("shift", "double", "range", "high", "swap", "wide")
"""How :func:`alternative_parties` redraws an honest party's numeric arrays, in turn:
``shift`` adds 1 to every element (integers: every parity and small residue changes; real
values: a unit step), ``double`` doubles them (crosses a threshold just above the values),
``range`` draws uniformly within the range that the parties' values span, ``high`` above it
(integers with a field: the upper half of the field, "negative" in fixed point; otherwise up
to five times the span), ``wide`` anywhere up to there (the whole field; the sign of
non-negative data kept), ``swap`` hands each honest party another honest
party's arrays (of the same shape)."""


def _redrawn(value: Any, kind: str, rng: np.random.Generator, span: tuple[float, float],
             limit: int | None) -> Any:
    """``value`` redrawn by ``kind`` (same shape and dtype), or ``value`` when not numeric."""
    if not isinstance(value, np.ndarray) or value.size == 0 or value.dtype.kind not in "uif":
        return value
    integer = value.dtype.kind in "ui"
    if kind == "shift":
        out = value.astype(np.float64) + 1.0
    elif kind == "double":
        out = value.astype(np.float64) * 2.0 + (1.0 if integer else 0.0)
    elif kind in ("wide", "high"):
        lo, hi = span
        width = max(hi - lo, abs(hi), abs(lo), 1.0)
        low = 0.0 if lo >= 0 else lo - 4 * width
        high = hi + 4 * width
        if integer and limit is not None:
            low, high = 0.0, float(limit - 1)
        if kind == "high":
            low = (limit // 2 + 1.0) if integer and limit is not None else hi
        out = (np.floor(rng.uniform(low, high + 1.0, value.shape)) if integer
               else rng.uniform(low, high, value.shape))
    else:  # range
        lo, hi = span
        out = (rng.integers(int(lo), int(hi) + 2, value.shape).astype(np.float64) if integer
               else rng.uniform(lo, hi if hi > lo else lo + 1.0, value.shape))
    if integer:
        top = float(np.iinfo(value.dtype).max if limit is None else limit - 1)
        lowest = 0.0 if value.dtype.kind == "u" else float(np.iinfo(value.dtype).min)
        out = np.where((out > top) | (out < lowest), value, np.rint(out))
    else:  # a missing entry (NaN) stays missing, as under shift and double
        out = np.where(np.isnan(value), value, out)
    return out.astype(value.dtype)


def _redrawn_input(value: Any, kind: str, rng: np.random.Generator,
                   span: tuple[float, float], limit: int | None) -> Any:
    """Any input redrawn by ``kind``: arrays (:func:`_redrawn`), Python and numpy numbers
    (as 0-d arrays, back in their own type), and lists, tuples and dicts of them, element by
    element; booleans and everything else as they are."""
    if isinstance(value, np.ndarray):
        return _redrawn(value, kind, rng, span, limit)
    if isinstance(value, bool | np.bool_):
        return value
    if isinstance(value, int | float | np.integer | np.floating):
        dtype = np.float64 if isinstance(value, float | np.floating) else np.int64
        out = _redrawn(np.asarray(value, dtype=dtype), kind, rng, span, limit)
        return type(value)(out.item())
    if type(value) in (list, tuple):
        return type(value)(_redrawn_input(v, kind, rng, span, limit) for v in value)
    if type(value) is dict:
        return {k: _redrawn_input(v, kind, rng, span, limit) for k, v in value.items()}
    return value


def _leaves(value: Any) -> list[Any]:
    """The leaves of an input: arrays, numbers and anything else, through lists, tuples and
    dicts."""
    if type(value) in (list, tuple):
        return [leaf for v in value for leaf in _leaves(v)]
    if type(value) is dict:
        return [leaf for v in value.values() for leaf in _leaves(v)]
    return [value]


def _numeric(leaf: Any) -> bool:
    if isinstance(leaf, np.ndarray):
        return leaf.dtype.kind in "uif" or leaf.size == 0
    return isinstance(leaf, int | float | np.integer | np.floating) and not isinstance(
        leaf, bool | np.bool_)


def _same(a: Any, b: Any) -> bool:
    la, lb = _leaves(a), _leaves(b)
    if len(la) != len(lb):
        return False
    for x, y in zip(la, lb, strict=True):
        if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
            if not (isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
                    and x.shape == y.shape and np.array_equal(x, y)):
                return False
        else:
            try:
                if not bool(x == y):
                    return False
            except Exception:  # objects without a truth value are not equal
                return False
    return True


def public_inputs(parties: Sequence[Party]) -> set[str]:
    """Input names whose value is not an array and is the same at every data holder (two or
    more): public parameters (an iteration count, a variant, a shared config), kept by the
    alternatives. An array is data, redrawn even where every site holds the same."""
    sites = [p for p in parties if p.role == SITE]
    if len(sites) < 2:
        return set()
    names = set.intersection(*(set(p.inputs) for p in sites))
    return {k for k in names
            if not isinstance(sites[0].inputs[k], np.ndarray)
            and all(_same(sites[0].inputs[k], p.inputs[k]) for p in sites[1:])}


def unredrawn_inputs(parties: Sequence[Party], coalition: Sequence[int]) -> list[str]:
    """Honest inputs the alternatives cannot redraw: private (not :func:`public_inputs`) and
    holding something other than numbers (a string, an object), as ``"party m: name"``.

    A pattern that follows them goes unseen by :func:`check_alternatives`, so a method that
    relies on it must not answer ``private`` while this is not empty."""
    members = set(coalition)
    public = public_inputs(parties)
    return [f"party {p.id}: {k}" for p in parties
            if p.role == SITE and p.id not in members
            for k, v in sorted(p.inputs.items()) if k not in public
            and not all(_numeric(leaf) for leaf in _leaves(v))]


def redrawn_inputs_required(method: Callable[..., AuditResult]) -> Callable[..., AuditResult]:
    """For a method on the parties of a run (``method(runner, parties, coalition, ...)``):
    ``private`` becomes ``inconclusive`` when some honest input could not be redrawn for the
    pattern check (:func:`unredrawn_inputs`, named in ``details["not_redrawn"]``)."""

    @functools.wraps(method)
    def checked(runner: Any, parties: Sequence[Party], coalition: Sequence[int], *args: Any,
                **kwargs: Any) -> AuditResult:
        result = method(runner, parties, coalition, *args, **kwargs)
        missing = unredrawn_inputs(parties, coalition)
        if result.verdict != PRIVATE or not missing:
            return result
        return dataclasses.replace(result, verdict=INCONCLUSIVE, details={
            **result.details, "not_redrawn": missing,
            "reason": "the pattern check redraws honest inputs of numbers; these hold "
                      f"something else and were kept ({', '.join(missing)}), so a pattern "
                      "that follows them would go unseen"})

    return checked


def _spans(parties: Sequence[Party], public: set[str]) -> dict[str, tuple[float, float]]:
    """Per private input name: the range of the numbers the data holders hold in it."""
    spans: dict[str, tuple[float, float]] = {}
    for p in parties:
        if p.role != SITE:
            continue
        for key, value in p.inputs.items():
            numbers = [np.asarray(leaf, dtype=np.float64).ravel() for leaf in _leaves(value)
                       if _numeric(leaf) and np.size(leaf)]
            if key in public or not numbers:
                continue
            flat = np.concatenate(numbers)
            flat = flat[np.isfinite(flat)]  # missing entries (NaN) span nothing
            if not flat.size:
                continue
            lo, hi = float(np.min(flat)), float(np.max(flat))
            old = spans.get(key, (lo, hi))
            spans[key] = (min(lo, old[0]), max(hi, old[1]))
    return spans


def alternative_parties(
    parties: Sequence[Party], coalition: Sequence[int], rng: np.random.Generator, n: int,
    limit: int | None = None,
) -> list[tuple[str, list[Party]]]:
    """``n`` variants of ``parties`` with the honest data holders' private inputs redrawn.

    Each variant is of a kind of :data:`ALTERNATIVE_KINDS` (in turn); the programs, the
    coalition's inputs, the public parameters (:func:`public_inputs`) and every other role are
    kept. Arrays, numbers, and lists, tuples and dicts of them are redrawn element by element
    (:func:`_redrawn_input`); what holds no numbers is kept (:func:`unredrawn_inputs` names
    it). Integers stay in [0, ``limit``) when ``limit`` (the field's prime) is given. Returns
    ``(kind, parties)`` pairs; a kind that changes nothing (``swap`` with one honest party)
    is skipped.
    """
    members = set(coalition)
    public = public_inputs(parties)
    honest = [p for p in parties if p.role == SITE and p.id not in members]
    spans = _spans(parties, public)
    out: list[tuple[str, list[Party]]] = []
    for i in range(n):
        kind = ALTERNATIVE_KINDS[i % len(ALTERNATIVE_KINDS)]
        replaced: dict[int, dict[str, Any]] = {}
        if kind == "swap":
            if len(honest) < 2:
                continue
            for j, p in enumerate(honest):
                donor = honest[(j + 1 + i // len(ALTERNATIVE_KINDS)) % len(honest)]
                replaced[p.id] = {
                    k: (donor.inputs.get(k) if k not in public
                        and _same_form(v, donor.inputs.get(k)) else v)
                    for k, v in p.inputs.items()}
        else:
            for p in honest:
                replaced[p.id] = {k: v if k in public else
                                  _redrawn_input(v, kind, rng, spans.get(k, (0.0, 1.0)), limit)
                                  for k, v in p.inputs.items()}
        variant = [Party(p.id, p.program, replaced[p.id], p.role) if p.id in replaced else p
                   for p in parties]
        out.append((kind, variant))
    return out


def _same_form(a: Any, b: Any) -> bool:
    """Whether ``b`` can stand in for ``a``: leaves of the same kinds, shapes and dtypes."""
    la, lb = _leaves(a), _leaves(b)
    return len(la) == len(lb) and all(
        (x.shape == y.shape and x.dtype == y.dtype) if isinstance(x, np.ndarray)
        and isinstance(y, np.ndarray) else type(x) is type(y) and _numeric(x)
        for x, y in zip(la, lb, strict=True))


RESPLIT_KINDS = ("resplit_one", "resplit_half", "resplit_uniform")
"""Alternatives that keep every sum: honest arrays shifted by vectors that add up to zero
across the honest parties (:func:`resplit_parties`) — by ±1 (parities and small residues
change), by ±(p − 1)/2 or half the span (high bits, thresholds), and by uniform offsets."""


def resplit_parties(
    parties: Sequence[Party], coalition: Sequence[int], rng: np.random.Generator,
    limit: int | None = None,
) -> list[tuple[str, list[Party]]]:
    """Variants of ``parties`` whose honest arrays are re-split with their sums kept.

    For every private array input (same shape at every honest party) offsets δ_h with
    Σ_h δ_h = 0 (mod ``limit`` for integers with a field) are added, one variant per kind of
    :data:`RESPLIT_KINDS`; every other private input (a number, a container of them) is
    redrawn as :func:`alternative_parties` does (by ``shift``, ``high``, ``wide``), so that a
    pattern following it shows under kept outputs too (if it enters the outputs, they change
    and the variant keeps nothing). A functionality of the sum (SecureSum's) gives the coalition the
    same outputs under them, so a pattern difference they show is not explained by an output.
    An array whose shifted values would leave its dtype's range is kept. Needs two or more
    honest data holders; otherwise returns no variant.
    """
    members = set(coalition)
    public = public_inputs(parties)
    honest = [p for p in parties if p.role == SITE and p.id not in members]
    if len(honest) < 2:
        return []
    spans = _spans(parties, public)
    out: list[tuple[str, list[Party]]] = []
    for kind, other in zip(RESPLIT_KINDS, ("shift", "high", "wide"), strict=True):
        replaced = {p.id: dict(p.inputs) for p in honest}
        changed = False
        for key, first in honest[0].inputs.items():
            values = [p.inputs.get(key) for p in honest]
            if key in public:
                continue
            if not all(isinstance(v, np.ndarray) and v.shape == first.shape and v.size
                       and v.dtype.kind in "uif" for v in values):
                for p in honest:  # not summed: redrawn as by the other alternatives
                    replaced[p.id][key] = _redrawn_input(p.inputs.get(key), other, rng,
                                                         spans.get(key, (0.0, 1.0)), limit)
                continue
            shifted = _resplit(values, kind, rng, limit)
            if shifted is not None:
                changed = True
                for p, v in zip(honest, shifted, strict=True):
                    replaced[p.id][key] = v
        if not changed:
            continue
        out.append((kind, [Party(p.id, p.program, replaced[p.id], p.role)
                           if p.id in replaced else p for p in parties]))
    return out


def _resplit(values: list[np.ndarray], kind: str, rng: np.random.Generator,
             limit: int | None) -> list[np.ndarray] | None:
    """``values`` plus offsets that add up to zero (None when one would leave the range)."""
    shape, k = values[0].shape, len(values)
    integer = values[0].dtype.kind in "ui"
    flat = np.concatenate([np.ravel(v).astype(np.float64) for v in values])
    flat = flat[np.isfinite(flat)]  # missing entries (NaN) span nothing and stay missing
    span = max(float(flat.max() - flat.min()), 1.0) if flat.size else 1.0
    if integer and limit is not None:
        if kind == "resplit_one":
            step = [1] * int(np.prod(shape))
        elif kind == "resplit_half":
            step = [(limit - 1) // 2] * int(np.prod(shape))
        else:
            step = None
        deltas: list[np.ndarray] = []
        for h in range(k - 1):
            d = (np.array(step, dtype=object) if step is not None and h == 0 else
                 np.zeros(int(np.prod(shape)), dtype=object) if step is not None else
                 np.array([int(v) for v in rng.integers(0, limit, int(np.prod(shape)),
                                                        dtype=np.uint64)], dtype=object))
            deltas.append(d.reshape(shape))
        deltas.append(-sum(deltas))
        return [np.array([(int(a) + int(b)) % limit for a, b in
                          zip(np.ravel(v).tolist(), np.ravel(d).tolist(), strict=True)],
                         dtype=object).reshape(shape).astype(v.dtype)
                for v, d in zip(values, deltas, strict=True)]
    size = {"resplit_one": 1.0, "resplit_half": span / 2}.get(kind)
    steps = [np.full(shape, size) if size is not None and h == 0 else
             np.zeros(shape) if size is not None else
             (np.round(rng.uniform(-span, span, shape)) if integer
              else rng.uniform(-span, span, shape)) for h in range(k - 1)]
    steps.append(-np.sum(steps, axis=0))
    out = []
    for v, d in zip(values, steps, strict=True):
        new = v.astype(np.float64) + d
        if integer:
            info = np.iinfo(v.dtype)
            if new.min() < info.min or new.max() > info.max:
                return None
            new = np.rint(new)
        out.append(new.astype(v.dtype))
    return out


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
    zero may stop it) judges nothing: the other alternatives judge as they always did.
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
            if same:
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
