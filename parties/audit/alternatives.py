"""Alternative honest inputs: what the audits run a program on besides the given inputs.

The message pattern of a coalition's view (:mod:`parties.audit.pattern`) must not depend on
the honest inputs beyond what the coalition's outputs say (thesis seed 001, §2.2: a simulator
knows only the coalition's inputs and outputs). The simulation method therefore runs the
program again on honest inputs redrawn here: :func:`alternative_parties` changes each honest
party's numeric arrays (:data:`ALTERNATIVE_KINDS`: every parity, high bit, residue and range),
and :func:`resplit_parties` re-splits the honest total among the honest parties
(:data:`RESPLIT_KINDS`), which keeps a sum's output. Inputs marked public, or that cannot be
redrawn, are named (:func:`unredrawn_inputs`) so that no verdict rests on them silently.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from parties.audit.result import INCONCLUSIVE, PRIVATE, AuditResult
from parties.party import SITE, Party

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
