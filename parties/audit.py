"""t-privacy audits: does a coalition's joint view reveal more than its inputs and the outputs?

A protocol is t-private (Qian et al., seed 004, Def. 1; thesis seed 001, §2.2: "any coalition
of parties can simulate their entire joint protocol view given only their inputs and the
output") when, for every coalition C of at most t parties, C's view has the same distribution
for any two input vectors that agree on C's inputs and give the same declared outputs.
Both methods here test exactly that: they run the protocol on inputs A and on inputs B — B
keeps C's inputs and re-splits the honest parties' inputs so the sum is unchanged
(:func:`alternative_inputs`) — and compare C's views.

``exact``
    In a tiny prime field (p = 5 or 7, d = 1), every random choice is enumerated. The
    randomness is replaced by a tape (:class:`TapeRandomness`): a first run discovers the
    streams the protocol draws; streams known to a coalition member (its private streams and
    pairwise streams it shares) are *coalition randomness*, the rest are the honest parties'.
    For each value of the coalition's randomness (all of them, or a seeded sample when there
    are too many; each comparison is exact), every honest tape is enumerated for A and for B
    and the two distributions of the coalition's received messages are compared exactly.
    Since the coalition's randomness does not depend on the inputs, equal conditional
    distributions for every value mean equal joint distributions.

``statistical``
    At full size, ``trials`` runs on A and on B with fresh seeds. The coalition's view is
    flattened to a vector of field elements: every received payload and every mask the members
    drew. Two tests:

    * per element, a two-sample test of A against B (Kolmogorov–Smirnov on elements / p for
      large fields, chi-square on counts for fields of at most 64 elements), with a Holm
      correction over all elements;
    * a linear-consistency test over GF(p): the protocols under audit are linear in their
      inputs and masks, so a linear leak shows up as a combination of view elements that is
      constant under A and takes another value under B (a mask reused for two peers is
      invisible element by element, but not in r^(h) + 2r_h − …). The test checks whether
      B's views leave the affine hull of A's views (and vice versa), by ranks over GF(p). The
      hull of n samples is saturated once n exceeds its dimension by a margin; a slice with
      fewer excess samples is reported as inconclusive rather than guessed at. For protocols
      that act coordinate by coordinate (SecureSum), the test runs per coordinate slice — the
      elements whose index is ≡ c modulo the input length — which keeps the dimension far
      below the number of trials.

    The verdict is ``leak`` when the Holm-adjusted p-value is below ``alpha`` or the linear
    test finds a separating combination (p ≤ n_B·p_field^−excess under the null).

Both methods are tested with planted leaks (``tests/parties``) that they must catch.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special, stats

from parties.view import Coalition, View
from protocols.context import Randomness, pairwise_mask_from_streams
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import PrimeField

TrialRunner = Callable[[list[np.ndarray], int], dict[int, View]]
"""``runner(inputs, seed) -> views``: one run with mask draws recorded in the views."""

RandomnessFactory = Callable[[int, PrimeField], Randomness]
TapeRunner = Callable[[list[np.ndarray], RandomnessFactory], dict[int, View]]
"""``runner(inputs, randomness_factory) -> views``: one run with the given randomness."""

Progress = Callable[[str, int, int], None]

LINEAR_MARGIN = 8
SMALL_FIELD = 64


@dataclass(frozen=True)
class AuditResult:
    """The verdict of one audit of one coalition."""

    coalition: tuple[int, ...]
    method: str
    verdict: str
    p_value: float | None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def leaks(self) -> bool:
        return self.verdict == "leak"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "coalition": list(self.coalition),
            "method": self.method,
            "verdict": self.verdict,
        }
        if self.p_value is not None:
            out["p_value"] = self.p_value
        out["details"] = self.details
        return out


def honest_parties(n_parties: int, coalition: Sequence[int]) -> tuple[int, ...]:
    members = set(coalition)
    return tuple(p for p in range(n_parties) if p not in members)


def alternative_inputs(
    field_: PrimeField,
    inputs: Sequence[np.ndarray],
    coalition: Sequence[int],
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """Inputs B: the coalition's inputs unchanged, the honest ones re-split with the same sum.

    Every honest party but the last gets a uniform *nonzero* offset in every element; the last
    absorbs minus their sum, so Σ_m x^(m) is unchanged. With one honest party, B equals A (its
    input is determined by the output). The offsets are nonzero so that B differs from A
    whenever it can: in the tiny fields of the exact audit a uniform offset would be 0 with
    probability 1/p, and an audit of A against an identical B says "private" whatever the
    protocol does.
    """
    honest = honest_parties(len(inputs), coalition)
    out = [np.array(x, copy=True) for x in inputs]
    if len(honest) < 2:
        return out
    offsets = [_nonzero_random(field_, rng, np.shape(inputs[0])) for _ in honest[:-1]]
    for h, delta in zip(honest[:-1], offsets, strict=True):
        out[h] = field_.add(out[h], delta)
    out[honest[-1]] = field_.sub(out[honest[-1]], field_.sum_arrays(offsets))
    return out


def _nonzero_random(
    field_: PrimeField, rng: np.random.Generator, shape: tuple[int, ...]
) -> np.ndarray:
    """Uniform elements of GF(p) ∖ {0}: uniform draws, zeros redrawn (rng use unchanged else)."""
    out = field_.random(rng, shape)
    zero = np.asarray(out == 0, dtype=bool)
    while zero.any():
        out[zero] = field_.random(rng, int(zero.sum()))
        zero = np.asarray(out == 0, dtype=bool)
    return out


# -- the coalition's view as a vector -------------------------------------------------------------


def view_layout(coalition: Coalition, draws: bool = True) -> list[tuple[Any, ...]]:
    """Describe the items of the coalition's view vector (one tuple per item, with its size)."""
    items: list[tuple[Any, ...]] = []
    for member, msg in coalition.received():
        items.append(("recv", member, msg.sender, msg.protocol, msg.call, msg.step,
                      int(np.size(msg.payload))))
    if draws:
        for member, key, values in coalition.draws():
            items.append(("draw", member, *key, int(np.size(values))))
    return items


def view_vector(coalition: Coalition, draws: bool = True) -> np.ndarray:
    """The coalition's received payloads (and mask draws) concatenated, in layout order."""
    parts = [np.ravel(msg.payload) for _, msg in coalition.received()]
    if draws:
        parts.extend(np.ravel(values) for _, _, values in coalition.draws())
    if not parts:
        return np.zeros(0, dtype=np.uint64)
    return np.concatenate(parts)


def _coordinate_groups(layout: list[tuple[Any, ...]], length: int) -> list[np.ndarray]:
    """Column indices of each coordinate slice (element index ≡ c mod ``length``)."""
    coords = []
    for item in layout:
        size = item[-1]
        if size % length:
            raise ValueError(f"view item {item} has {size} elements, not a multiple of {length}")
        coords.append(np.arange(size) % length)
    all_coords = np.concatenate(coords) if coords else np.zeros(0, dtype=int)
    return [np.nonzero(all_coords == c)[0] for c in range(length)]


# -- statistical -------------------------------------------------------------------------------


def statistical_audit(
    runner: TrialRunner,
    field_: PrimeField,
    inputs_a: Sequence[np.ndarray],
    inputs_b: Sequence[np.ndarray],
    coalition: Sequence[int],
    *,
    trials: int = 200,
    alpha: float = 1e-3,
    seed: int = 0,
    coordinate_length: int | None = None,
    progress: Progress | None = None,
) -> AuditResult:
    """Compare the coalition's views under inputs A and B over ``trials`` seeded runs each.

    Parameters
    ----------
    runner : callable
        ``runner(inputs, seed) -> views`` (mask draws recorded).
    coordinate_length : int, optional
        d for a coordinate-wise protocol: run the linear test per coordinate slice.
    """
    members = tuple(sorted(coalition))
    if trials < LINEAR_MARGIN + 2:
        raise InputError(f"trials = {trials} is too few; use at least {LINEAR_MARGIN + 2}")
    seq = np.random.SeedSequence(seed)
    seeds = seq.generate_state(2 * trials, np.uint32).astype(np.int64)
    layout: list[tuple[Any, ...]] | None = None
    rows: dict[str, list[np.ndarray]] = {"A": [], "B": []}
    for t in range(trials):
        for label, inputs, s in (("A", inputs_a, seeds[2 * t]), ("B", inputs_b, seeds[2 * t + 1])):
            coalition_view = Coalition.of(members, runner(list(inputs), int(s)))
            this_layout = view_layout(coalition_view)
            if layout is None:
                layout = this_layout
            elif this_layout != layout:
                return AuditResult(members, "statistical", "leak", 0.0, {
                    "reason": "the coalition's view changes shape between runs",
                    "trial": t, "inputs": label})
            rows[label].append(view_vector(coalition_view))
        if progress is not None:
            progress("audit", t + 1, trials)
    assert layout is not None  # trials ≥ 1
    a = np.stack(rows["A"])
    b = np.stack(rows["B"])
    details: dict[str, Any] = {"trials": trials, "alpha": alpha, "view_elements": int(a.shape[1])}

    p_elements, where = _elementwise_p(a, b, field_.p)
    tested = int(np.sum(~np.isnan(p_elements))) if p_elements.size else 0
    holm = 1.0
    if tested:
        i = int(np.nanargmin(p_elements))
        holm = float(min(1.0, tested * p_elements[i]))
        details["elementwise"] = {
            "elements_tested": tested,
            "holm_min_p": holm,
            "most_different": _describe_element(layout, where[i] if where.size else i),
        }
    groups = (
        _coordinate_groups(layout, coordinate_length)
        if coordinate_length
        else [np.arange(a.shape[1])]
    )
    linear = _linear_test(field_, a, b, groups)
    details["linear"] = linear
    p_linear = linear["p_value"]
    p_value = min(holm, p_linear)
    verdict = "leak" if (holm < alpha or linear["separated"]) else "private"
    return AuditResult(members, "statistical", verdict, p_value, details)


def _elementwise_p(a: np.ndarray, b: np.ndarray, p: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-column two-sample p-values (NaN where both samples are the same constant)."""
    n_cols = a.shape[1]
    out = np.full(n_cols, np.nan)
    if n_cols == 0:
        return out, np.arange(0)
    same_const = np.all(a == a[:1], axis=0) & np.all(b == b[:1], axis=0) & (a[0] == b[0])
    cols = np.nonzero(~same_const)[0]
    if cols.size == 0:
        return out, np.arange(n_cols)
    if p <= SMALL_FIELD:
        for c in cols:
            ca = np.bincount(a[:, c].astype(np.int64), minlength=p)
            cb = np.bincount(b[:, c].astype(np.int64), minlength=p)
            table = np.vstack([ca, cb])
            table = table[:, table.sum(axis=0) > 0]
            if table.shape[1] < 2:
                out[c] = 0.0 if not np.array_equal(ca, cb) else 1.0
                continue
            out[c] = stats.chi2_contingency(table, correction=False).pvalue
    else:
        out[cols] = ks_2samp_columns(_as_unit(a[:, cols], p), _as_unit(b[:, cols], p))
    return out, np.arange(n_cols)


def ks_2samp_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two-sample Kolmogorov–Smirnov p-values, column by column, vectorised.

    Parameters
    ----------
    x : ndarray of shape (n, c)
    y : ndarray of shape (m, c)

    Returns
    -------
    ndarray of shape (c,)
        The asymptotic p-value of each column: ``kolmogorov(D·sqrt(n·m/(n+m)))`` with D the
        largest distance between the two empirical CDFs (as ``scipy.stats.ks_2samp`` with
        ``method="asymp"``, which uses Stephens' small-sample correction; this omits it and
        is slightly conservative).
    """
    n, m = x.shape[0], y.shape[0]
    both = np.concatenate([x, y], axis=0)
    order = np.argsort(both, axis=0, kind="stable")
    values = np.take_along_axis(both, order, axis=0)
    steps = np.where(order < n, 1.0 / n, -1.0 / m)
    cdf_diff = np.cumsum(steps, axis=0)
    # Only the last of a run of tied values is a point where both ECDFs are evaluated.
    last_of_tie = np.ones_like(values, dtype=bool)
    last_of_tie[:-1] = values[1:] != values[:-1]
    d = np.max(np.where(last_of_tie, np.abs(cdf_diff), 0.0), axis=0)
    return special.kolmogorov(d * np.sqrt(n * m / (n + m)))


def _as_unit(x: np.ndarray, p: int) -> np.ndarray:
    if x.dtype == object:
        return np.vectorize(lambda v: int(v) / p, otypes=[np.float64])(x)
    return x.astype(np.float64) / float(p)


def _describe_element(layout: list[tuple[Any, ...]], index: int) -> dict[str, Any]:
    offset = 0
    for item in layout:
        size = item[-1]
        if index < offset + size:
            if item[0] == "recv":
                _, member, sender, protocol, call, step, _ = item
                return {"member": member, "received_from": sender,
                        "message": f"{protocol}#{call}.{step}", "element": index - offset}
            return {"member": item[1], "draw": [str(x) for x in item[2:-1]],
                    "element": index - offset}
        offset += size
    return {"element": index}


def _linear_test(
    field_: PrimeField, a: np.ndarray, b: np.ndarray, groups: list[np.ndarray]
) -> dict[str, Any]:
    """Does either sample leave the affine hull of the other, slice by slice?

    For a slice of dimension c, the hull is spanned by the differences of the first
    c + 2·LINEAR_MARGIN samples of one set; it counts as saturated when at least
    LINEAR_MARGIN of them are redundant (rank ≤ rows − LINEAR_MARGIN), and a few samples of
    the other set are checked against it — under a linear leak every one of them escapes.
    Slices of equal dimension are eliminated together (:meth:`PrimeField.ranks`).
    """
    n = a.shape[0]
    inconclusive = 0
    separated: set[int] = set()
    min_excess: int | None = None
    by_size: dict[int, list[int]] = {}
    for g, cols in enumerate(groups):
        if cols.size:
            by_size.setdefault(int(cols.size), []).append(g)
    for size, members in by_size.items():
        idx = np.stack([groups[g] for g in members])  # (S, size)
        n_hull = min(n - 1, size + 2 * LINEAR_MARGIN)
        n_check = min(n, 2 * LINEAR_MARGIN)
        for first, second in ((a, b), (b, a)):
            x = first[:, idx].transpose(1, 0, 2)  # (S, n, size)
            y = second[:n_check, idx].transpose(1, 0, 2)
            base = x[:, :1, :]
            hull = field_.sub(x[:, 1 : n_hull + 1, :], base)
            rank_hull = field_.ranks(hull)
            excess = n_hull - rank_hull
            ok = excess >= LINEAR_MARGIN
            inconclusive += int(np.sum(~ok))
            if not ok.any():
                continue
            min_here = int(excess[ok].min())
            min_excess = min_here if min_excess is None else min(min_excess, min_here)
            both = np.concatenate([hull, field_.sub(y, base)], axis=1)
            escaped = (field_.ranks(both) > rank_hull) & ok
            separated.update(int(members[i]) for i in np.nonzero(escaped)[0])
    p_value = 1.0
    if separated:
        bound = math.log10(n) - (min_excess or LINEAR_MARGIN) * math.log10(field_.p)
        p_value = float(10.0 ** max(bound, -300.0))
    return {
        "slices": len(groups),
        "separated": bool(separated),
        "separated_slices": sorted(separated)[:10],
        "inconclusive_slices": inconclusive,
        "p_value": p_value,
    }


# -- exact -------------------------------------------------------------------------------------


def stream_key(kind: str, party: int, peer: int | None, call: Call, sub: int) -> tuple[Any, ...]:
    """The key of a mask stream: private to ``party`` or shared by the pair {party, peer}."""
    if kind == "private":
        return ("private", party, call.protocol, call.index, sub)
    lo, hi = sorted((party, peer))  # type: ignore[type-var]
    return ("pair", lo, hi, call.protocol, call.index, sub)


def stream_owners(key: tuple[Any, ...]) -> set[int]:
    return {key[1]} if key[0] == "private" else {key[1], key[2]}


class TapeRandomness:
    """Randomness read from a tape ``{stream key: elements}`` shared by all parties.

    In discovery mode (``tape is None``) it returns zeros and records every stream's length.
    """

    def __init__(
        self,
        party: int,
        field_: PrimeField,
        tape: dict[tuple[Any, ...], np.ndarray] | None,
        discovered: dict[tuple[Any, ...], int] | None = None,
    ) -> None:
        self.party = party
        self.field = field_
        self.tape = tape
        self.discovered = discovered

    def _lookup(self, key: tuple[Any, ...], n: int) -> np.ndarray:
        if self.tape is None:
            if self.discovered is not None:
                self.discovered[key] = n
            return self.field.zeros(n)
        values = self.tape.get(key)
        if values is None or len(values) != n:
            raise InputError(f"the protocol drew stream {key} of {n} elements, not on the tape")
        return values

    def private(self, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self._lookup(stream_key("private", self.party, None, call, sub), n)

    def pairwise(self, peer: int, call: Call, n: int, sub: int = 0) -> np.ndarray:
        return self._lookup(stream_key("pair", self.party, peer, call, sub), n)

    def pairwise_many(
        self, peers: tuple[int, ...], call: Call, n: int, sub: int = 0
    ) -> np.ndarray:
        rows = [self.pairwise(peer, call, n, sub) for peer in peers]
        return np.stack(rows) if rows else self.field.zeros((0, n))

    def pairwise_mask(
        self, peers: tuple[int, ...], call: Call, half: int, sub: int = 0
    ) -> np.ndarray:
        streams = self.pairwise_many(peers, call, 2 * half, sub)
        return pairwise_mask_from_streams(self.field, self.party, peers, streams, half)


def _received_tuple(views: dict[int, View], members: tuple[int, ...]) -> tuple[int, ...]:
    coalition = Coalition.of(members, views)
    return tuple(int(v) for _, msg in coalition.received() for v in np.ravel(msg.payload))


def exact_audit(
    runner: TapeRunner,
    field_: PrimeField,
    inputs_a: Sequence[np.ndarray],
    inputs_b: Sequence[np.ndarray],
    coalition: Sequence[int],
    *,
    max_runs: int = 100_000,
    seed: int = 0,
    progress: Progress | None = None,
) -> AuditResult:
    """Enumerate every honest random choice and compare the coalition's view distributions.

    Raises
    ------
    InputError
        If one enumeration of the honest tapes alone would exceed ``max_runs``.
    """
    members = tuple(sorted(coalition))
    p = field_.p

    def discover(inputs: Sequence[np.ndarray]) -> dict[tuple[Any, ...], int]:
        found: dict[tuple[Any, ...], int] = {}
        runner(list(inputs), lambda party, f: TapeRandomness(party, f, None, found))
        return found

    streams = discover(inputs_a)
    if discover(inputs_b) != streams:
        return AuditResult(members, "exact", "leak", 0.0,
                           {"reason": "the protocol draws different masks for inputs A and B"})
    keys = sorted(streams, key=repr)
    mine = [k for k in keys if stream_owners(k) & set(members)]
    honest = [k for k in keys if not stream_owners(k) & set(members)]
    n_honest = sum(streams[k] for k in honest)
    n_mine = sum(streams[k] for k in mine)
    per_assignment = 2 * p**n_honest
    if per_assignment > max_runs:
        raise InputError(
            f"an exact audit of coalition {list(members)} enumerates {p}^{n_honest} honest "
            f"tapes per input set, more than max_runs = {max_runs}; use a smaller field or "
            "method = 'statistical'"
        )
    total_mine = p**n_mine
    budget = max(1, max_runs // per_assignment)
    if total_mine <= budget:
        assignments: list[tuple[int, ...]] = list(itertools.product(range(p), repeat=n_mine))
        covered = "all"
    else:
        rng = np.random.default_rng(seed)
        assignments = [tuple(int(v) for v in rng.integers(0, p, n_mine)) for _ in range(budget)]
        covered = "sampled"

    def tape_from(keys_: list[tuple[Any, ...]], values: Sequence[int]) -> dict:
        tape, offset = {}, 0
        for k in keys_:
            n = streams[k]
            tape[k] = field_.elements(np.array(values[offset : offset + n], dtype=np.int64))
            offset += n
        return tape

    honest_tapes = [tape_from(honest, v) for v in itertools.product(range(p), repeat=n_honest)]
    for i, assignment in enumerate(assignments):
        fixed = tape_from(mine, assignment)
        dists = []
        for inputs in (inputs_a, inputs_b):
            counts: Counter[tuple[int, ...]] = Counter()
            for h in honest_tapes:
                tape = {**fixed, **h}
                views = runner(list(inputs),
                               lambda party, f, tape=tape: TapeRandomness(party, f, tape))
                counts[_received_tuple(views, members)] += 1
            dists.append(counts)
        if dists[0] != dists[1]:
            total = sum(dists[0].values())
            support = set(dists[0]) | set(dists[1])
            tv = 0.5 * sum(abs(dists[0][s] - dists[1][s]) for s in support) / total
            return AuditResult(members, "exact", "leak", None, {
                "field": p, "honest_tape_elements": n_honest,
                "coalition_tape_elements": n_mine, "coalition_randomness": covered,
                "assignments_checked": i + 1, "total_variation": tv,
                "witness_assignment": list(assignment)})
        if progress is not None:
            progress("audit", i + 1, len(assignments))
    return AuditResult(members, "exact", "private", None, {
        "field": p, "honest_tape_elements": n_honest, "coalition_tape_elements": n_mine,
        "coalition_randomness": covered, "assignments_checked": len(assignments),
        "runs": len(assignments) * per_assignment, "total_variation": 0.0})
