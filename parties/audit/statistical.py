"""The A/B audit: does the coalition's view change when the honest inputs change but not the output?

t-privacy in its indistinguishability form: for a coalition C, the view has one distribution
for any two input vectors that agree on C's inputs and give the same outputs. The audit runs
the program ``trials`` times on inputs A and on each of several alternatives B_1..B_K
(:func:`alternative_inputs`: C's inputs kept, the honest inputs re-split with the same sum),
holding C's own randomness fixed so that what varies is its residual view
(:mod:`parties.audit.randomness`), and compares A with every B (:mod:`parties.audit.compare`;
one Holm correction over all of them).

One pair is not enough: a leak of a function that A and B happen to share — a parity, a sign,
a high bit — is invisible for that pair. So the pairs are of three kinds, in turn
(:data:`PAIR_KINDS`): ``small`` (offsets of ±1: the parity and every small residue of an input
change, its high bits stay), ``half`` (offsets of ±(p − 1)/2: the high bit — a fixed-point sign —
flips), ``uniform`` (uniform nonzero offsets). In each pair one honest party, the *absorber*,
takes minus the others' offsets so that the sum is unchanged; the absorber rotates from one
round of kinds to the next, so that with ``pairs`` ≥ 6 every honest party gets each designed
offset in some pair. Every honest input changes in every coordinate in every pair.
The method needs alternatives with the same outputs, so it applies to programs whose inputs
are vectors of field elements and whose outputs depend on the honest inputs only through their
sum (SecureSum and programs built like it); the audit checks that every B gives the
coalition the outputs A gives, and answers *not applicable* otherwise. For algorithms on data
(PD-NMF) use the simulation audit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from parties.audit import keyflow
from parties.audit.calls import Layout, select_calls, split_run
from parties.audit.compare import compare, decide
from parties.audit.functionality import outputs_determine_input
from parties.audit.pattern import PatternCheck, aborted_verdict
from parties.audit.randomness import ConditionedRandomness, Progress, Runner
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.party import SITE, Party
from protocols import seeds
from protocols.field import PrimeField

PAIR_KINDS = ("small", "half", "uniform")

LINEAR_COVERS = (
    "GF(p)-affine relations among one call's received elements (per coordinate slice when "
    "the call is wider than the trials can saturate) and between any two elements of the run, "
    "holding under one input set and not the other"
)


def honest_parties(n_parties: int, coalition: Sequence[int]) -> tuple[int, ...]:
    members = set(coalition)
    return tuple(p for p in range(n_parties) if p not in members)


def _offsets(field_: PrimeField, rng: np.random.Generator, kind: str,
             shape: tuple[int, ...]) -> np.ndarray:
    """One honest party's offsets of a pair of ``kind`` (all nonzero)."""
    if kind == "uniform":
        out = field_.random(rng, shape)
        zero = np.asarray(out == 0, dtype=bool)
        while zero.any():
            out[zero] = field_.random(rng, int(zero.sum()))
            zero = np.asarray(out == 0, dtype=bool)
        return out
    step = {"small": 1, "half": (field_.p - 1) // 2}.get(kind)
    if step is None:
        raise ValueError(f"unknown kind of input pair {kind!r}; use one of {PAIR_KINDS}")
    sign = 1 if rng.random() < 0.5 else -1
    return field_.elements(np.full(shape, sign * step, dtype=object))


def alternative_inputs(
    field_: PrimeField,
    inputs: Sequence[np.ndarray],
    coalition: Sequence[int],
    rng: np.random.Generator,
    kind: str = "uniform",
    absorber: int = -1,
) -> list[np.ndarray]:
    """Inputs B: the coalition's inputs unchanged, the honest ones re-split with the same sum.

    Every honest party but the absorber (``honest[absorber]``) gets a nonzero offset of
    ``kind`` in every element, the absorber minus their sum (a uniform pair redraws the
    elements where that sum is 0), so Σ_m x^(m) is unchanged and B differs from A in every
    honest coordinate. With one honest party B equals A (its input is determined by the
    output). ``kind`` is one of :data:`PAIR_KINDS`.
    """
    honest = honest_parties(len(inputs), coalition)
    out = [np.array(x, copy=True) for x in inputs]
    if len(honest) < 2:
        return out
    shape = np.shape(inputs[0])
    taker = honest[absorber % len(honest)]
    givers = [h for h in honest if h != taker]
    offsets = [_offsets(field_, rng, kind, shape) for _ in givers]
    total = field_.sum_arrays(offsets)
    zero = np.asarray(total == 0, dtype=bool)
    while zero.any():  # only uniform offsets can cancel (±1 and ±(p−1)/2 sum to k·step ≠ 0)
        for delta in offsets:
            delta[zero] = _offsets(field_, rng, kind, (int(zero.sum()),))
        total = field_.sum_arrays(offsets)
        zero = np.asarray(total == 0, dtype=bool)
    for h, delta in zip(givers, offsets, strict=True):
        out[h] = field_.add(out[h], delta)
    out[taker] = field_.sub(out[taker], total)
    return out


def pair_plan(pairs: int) -> list[tuple[str, int]]:
    """(kind, absorber index) of each alternative: kinds in turn, absorber rotating per round."""
    return [(PAIR_KINDS[k % len(PAIR_KINDS)], -1 - k // len(PAIR_KINDS)) for k in range(pairs)]


def field_vectors(field_: PrimeField, inputs: Sequence[Any]) -> list[np.ndarray] | None:
    """The inputs as flat vectors of field elements of one length, or None if they are not."""
    out = []
    for x in inputs:
        arr = np.asarray(x)
        if arr.ndim != 1 or arr.dtype.kind not in "uiO" or arr.size == 0:
            return None
        values = [int(v) for v in arr]
        if any(not 0 <= v < field_.p for v in values):
            return None
        out.append(field_.elements(np.array(values, dtype=object)))
    if len({x.size for x in out}) != 1:
        return None
    return out


def _outputs(views: Any, members: tuple[int, ...]) -> list[tuple[str, bytes]]:
    return [(label, np.asarray(value).tobytes()) for m in members
            for _, label, value in views[m].outputs]


@keyflow.traced_inputs
def statistical_audit(
    runner: Runner,
    make_parties: Callable[[Sequence[np.ndarray]], list[Party]],
    inputs_a: Sequence[Any],
    coalition: Sequence[int],
    *,
    trials: int = 200,
    alpha: float = 1e-3,
    seed: int = 0,
    pairs: int = 6,
    calls: Sequence[int] | None = None,
    progress: Progress | None = None,
) -> AuditResult:
    """Compare the coalition's views under inputs A and under ``pairs`` alternatives B.

    Parameters
    ----------
    runner : Runner
        Runs parties with injected randomness.
    make_parties : callable
        ``make_parties(inputs)``: the parties of one run on the given inputs.
    inputs_a : sequence of arrays
        Inputs A, one flat vector of field elements per data-holding party.
    trials : int
        Runs per input set.
    pairs : int
        Alternatives B (:func:`pair_plan`: kinds in turn, the absorber rotating).
    calls : sequence of int, optional
        Call numbers to compare (default: every call).
    """
    members = tuple(sorted(coalition))
    field = runner.field
    inputs = field_vectors(field, inputs_a)
    if inputs is None:
        return AuditResult(members, "statistical", NOT_APPLICABLE, details={
            "reason": "the A/B audit re-splits inputs that are flat vectors of field elements "
                      "of one length; these are not (use method = 'simulation')"})
    honest = honest_parties(len(inputs), members)
    if len(honest) < 2 and not outputs_determine_input(runner, make_parties(inputs), members,
                                                       honest[0], seed=seed):
        return AuditResult(members, "statistical", NOT_APPLICABLE, details={
            "reason": "one honest party, and its input is not determined by the outputs of "
                      "the sums it enters: the A/B audit re-splits inputs among two or more "
                      "honest parties and has no alternative here (use method = 'simulation', "
                      "'exact' or 'linear')"})
    if len(honest) < 2:
        return AuditResult(members, "statistical", PRIVATE, power={"exact": True}, details={
            "reason": "one honest party: its input is determined by the output and the "
                      "coalition's inputs, so no two input sets with the same output differ"})
    rng = seeds.rng(seed, "audit.statistical")
    plan = pair_plan(pairs)
    sets = [inputs] + [alternative_inputs(field, inputs, members, rng, kind, absorber)
                       for kind, absorber in plan]
    parties0 = make_parties(inputs)
    ids = [p.id for p in parties0]
    sites = tuple(sorted(p.id for p in parties0 if p.role == SITE))
    samples: list[list[np.ndarray]] = []
    layout: Layout | None = None
    expected_outputs = None
    total = trials * len(sets)
    pattern = PatternCheck(members, "statistical")  # one pattern under every input set
    for s, inputs_s in enumerate(sets):  # first runs of every set: the pattern check
        views = runner(make_parties(inputs_s), ConditionedRandomness(ids, members, seed,
                                                                     s * trials))
        leak = pattern.check(views, pair=s)
        if leak is not None:
            return leak
    for s, inputs_s in enumerate(sets):
        parties = make_parties(inputs_s)
        rows = []
        for t in range(trials):
            views = runner(parties, ConditionedRandomness(ids, members, seed, s * trials + t))
            stopped = aborted_verdict(members, "statistical", views)
            if stopped is not None:
                return stopped
            records = split_run(views, members, field, sites)
            received = {call: rec.received for call, rec in records.items()}
            if layout is None:
                layout = Layout.of(received, select_calls(records, calls))
                expected_outputs = _outputs(views, members)
            elif t == 0 and _outputs(views, members) != expected_outputs:
                return AuditResult(members, "statistical", NOT_APPLICABLE, details={
                    "reason": "the re-split inputs give the coalition other outputs; the A/B "
                              "audit needs programs whose outputs depend on the honest inputs "
                              "only through their sum (use method = 'simulation')"})
            if not layout.matches(received):
                call, message = layout.first_difference(received)
                if s == 0:
                    return AuditResult(members, "statistical", NOT_APPLICABLE, call, message,
                                       details={"reason": "the coalition's view changes shape "
                                                "with the randomness, under one input set"})
                return AuditResult(members, "statistical", LEAK, 0.0, call, message, details={
                    "reason": "the coalition's view has another shape under alternative "
                              "inputs with the same output", "pair": s})
            rows.append(layout.row(received, field.dtype))
            if progress is not None:
                progress("audit", s * trials + t + 1, total)
        samples.append(rows)
    assert layout is not None
    a = np.stack(samples[0])
    comparisons = [compare(field, layout, a, np.stack(rows), alpha=alpha,
                           seed=seeds.derive_int(seed, "audit.statistical.pair", index=(k,)))
                   for k, rows in enumerate(samples[1:])]
    decision = decide(comparisons, alpha, field.p, 1.0, LINEAR_COVERS)
    details: dict[str, Any] = {
        **decision.details, "trials": trials, "pairs": pairs,
        "pair_kinds": [kind for kind, _ in plan],
        "view_elements": int(a.shape[1]), "calls": len(layout.calls),
    }
    return AuditResult(members, "statistical", decision.verdict, decision.p_value,
                       decision.call, decision.message, decision.power, details)
