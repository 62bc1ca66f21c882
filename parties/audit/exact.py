"""The exact audit: every honest input with the same output, every random choice, in a tiny field.

In a tiny prime field (p = 5 or 7, d = 1) the whole probability space is small enough to
enumerate. The randomness is replaced by a tape (:class:`~parties.audit.randomness.
TapeRandomness`): a first run discovers the streams the program draws; streams a member knows
are *coalition randomness*, the rest the honest parties'. The audit then

1. enumerates **every** honest input vector, runs each once, and keeps those that give the
   coalition the outputs that inputs A give — every alternative B with the same output, not one
   drawn at random (a function of the honest inputs that one B shares with A, such as a parity,
   is invisible for that B);
2. for each value of the coalition's randomness (all of them, or a seeded sample when there are
   too many), enumerates every honest tape under A and under each B and compares the exact
   distributions of the coalition's received messages.

The coalition's randomness does not depend on the inputs, so equal conditional distributions
for every value mean equal joint distributions. A difference is a leak, located at the first
message whose joint distribution with the earlier ones differs. When the coalition's
randomness was sampled, the power says which fraction of its values a leak must affect to be
caught with probability 0.9. Programs whose outputs depend on the randomness are out of scope
(*not applicable*): "the same output" is then not a property of the inputs.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from parties.audit.calls import Layout, select_calls, split_run
from parties.audit.pattern import PatternCheck, aborted_verdict
from parties.audit.randomness import Progress, Runner, tape_factory
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.audit.statistical import field_vectors, honest_parties
from parties.party import SITE, Party
from protocols.errors import InputError
from protocols.field import PrimeField
from protocols.simulator import StreamKey, stream_owners

DETECT = 0.9


def exact_audit(
    runner: Runner,
    make_parties: Callable[[Sequence[np.ndarray]], list[Party]],
    inputs_a: Sequence[Any],
    coalition: Sequence[int],
    *,
    max_runs: int = 100_000,
    seed: int = 0,
    calls: Sequence[int] | None = None,
    progress: Progress | None = None,
    judge: Callable[[Any], AuditResult | None] | None = None,
) -> AuditResult:
    """Enumerate every honest input with A's output and every random choice; compare exactly.

    Parameters
    ----------
    runner : Runner
        Runs parties with injected randomness, in the tiny field.
    make_parties : callable
        ``make_parties(inputs)``: the parties of one run.
    inputs_a : sequence of arrays
        Inputs A, one vector of field elements per data-holding party.
    max_runs : int
        Budget of protocol runs.
    judge : callable, optional
        ``judge(views)``: a verdict when a run's declared outputs are not the functionality's
        (:func:`parties.audit.functionality.output_judge`), checked on every enumerated input.

    Raises
    ------
    InputError
        If one enumeration (every honest input with A's output, every honest tape) alone
        needs more than ``max_runs`` runs.
    """
    members = tuple(sorted(coalition))
    field = runner.field
    inputs = field_vectors(field, inputs_a)
    if inputs is None:
        return AuditResult(members, "exact", NOT_APPLICABLE, details={
            "reason": "the exact audit enumerates inputs that are flat vectors of field "
                      "elements; these are not"})
    parties0 = make_parties(inputs)
    sites = tuple(sorted(p.id for p in parties0 if p.role == SITE))
    p, d = field.p, inputs[0].size

    def run(inputs_: Sequence[np.ndarray], tape: dict | None,
            found: dict | None = None) -> Any:
        return runner(make_parties(inputs_), tape_factory(tape, found))

    def discover(inputs_: Sequence[np.ndarray]) -> tuple[dict[StreamKey, int], Any]:
        found: dict[StreamKey, int] = {}
        views = run(inputs_, None, found)
        return found, views

    streams, views_a = discover(inputs)
    pattern = PatternCheck(members, "exact")  # one pattern under every enumerated input
    pattern.check(views_a)
    keys = sorted(streams, key=repr)
    mine = [k for k in keys if stream_owners(k) & set(members)]
    theirs = [k for k in keys if not stream_owners(k) & set(members)]
    n_mine = sum(streams[k] for k in mine)
    n_honest = sum(streams[k] for k in theirs)
    records = split_run(views_a, members, field, sites)
    layout = Layout.of({c: r.received for c, r in records.items()},
                       select_calls(records, calls))
    outputs_a = _outputs(views_a, members)
    rng = np.random.default_rng(seed)
    if _outputs(run(inputs, _random_tape(field, streams, rng)), members) != outputs_a:
        return AuditResult(members, "exact", NOT_APPLICABLE, details={
            "reason": "the coalition's outputs depend on the randomness, so 'the same output' "
                      "does not single out inputs"})
    honest = honest_parties(len(inputs), members)
    n_inputs = p ** (len(honest) * d)
    candidates: list[list[np.ndarray]] = []
    for values in itertools.product(range(p), repeat=len(honest) * d):
        trial = [x.copy() for x in inputs]
        for i, h in enumerate(honest):
            trial[h] = field.elements(np.array(values[i * d : (i + 1) * d], dtype=np.int64))
        if all(np.array_equal(a, b) for a, b in zip(trial, inputs, strict=True)):
            continue
        found, views = discover(trial)
        leak = pattern.check(views, alternative=[int(v) for x in trial for v in x])
        if leak is not None:
            return leak
        beyond = None if judge is None else judge(views)
        if beyond is not None:
            beyond.details["alternative"] = [int(v) for x in trial for v in x]
            return beyond
        if found != streams:
            return AuditResult(members, "exact", LEAK, 0.0, details={
                "reason": "the program draws different masks for other honest inputs",
                "alternative": [int(v) for x in trial for v in x]})
        if _outputs(views, members) == outputs_a:
            candidates.append(trial)
    stopped = aborted_verdict(members, "exact", views_a)  # aborts under every input
    if stopped is not None:
        return stopped
    per_assignment = (1 + len(candidates)) * p ** n_honest
    if per_assignment + n_inputs + 1 > max_runs:
        raise InputError(
            f"an exact audit of coalition {list(members)} enumerates {1 + len(candidates)} "
            f"input sets × {p}^{n_honest} honest tapes (plus {n_inputs} runs to find the input "
            f"sets), more than max_runs = {max_runs}; raise max_runs, use a smaller field or "
            "method = 'statistical'"
        )
    total_mine = p ** n_mine
    budget = max(1, (max_runs - n_inputs - 1) // per_assignment)
    if total_mine <= budget:
        assignments: list[tuple[int, ...]] = list(itertools.product(range(p), repeat=n_mine))
    else:
        assignments = [tuple(int(v) for v in rng.integers(0, p, n_mine)) for _ in range(budget)]

    def tape_from(keys_: list[StreamKey], values: Sequence[int]) -> dict:
        tape, offset = {}, 0
        for k in keys_:
            n = streams[k]
            tape[k] = field.elements(np.array(values[offset : offset + n], dtype=np.int64))
            offset += n
        return tape

    honest_tapes = [tape_from(theirs, v) for v in itertools.product(range(p), repeat=n_honest)]
    figures: dict[str, Any] = {
        "field": p, "honest_inputs_with_same_output": len(candidates),
        "honest_tape_elements": n_honest, "coalition_tape_elements": n_mine,
        "coalition_randomness": "all" if total_mine <= budget else "sampled",
        "coalition_tapes": total_mine,
    }

    def distribution(inputs_: Sequence[np.ndarray], fixed: dict) -> Counter:
        counts: Counter[tuple[int, ...]] = Counter()
        for h in honest_tapes:
            views = run(inputs_, {**fixed, **h})
            got = split_run(views, members, field, sites)
            received = {c: r.received for c, r in got.items()}
            if not layout.matches(received):
                counts[("shape", *layout.first_difference(received))] += 1  # type: ignore[arg-type]
                continue
            counts[tuple(int(v) for v in layout.row(received, np.dtype(object)))] += 1
        return counts

    for i, assignment in enumerate(assignments):
        fixed = tape_from(mine, assignment)
        dist_a = distribution(inputs, fixed)
        for candidate in candidates:
            dist_b = distribution(candidate, fixed)
            if dist_a != dist_b:
                call, message = _first_difference(layout, dist_a, dist_b)
                total = sum(dist_a.values())
                tv = 0.5 * sum(abs(dist_a[s] - dist_b[s]) for s in set(dist_a) | set(dist_b))
                return AuditResult(members, "exact", LEAK, None, call, message, None, {
                    **figures, "assignments_checked": i + 1, "total_variation": tv / total,
                    "witness_assignment": list(assignment),
                    "alternative": [int(v) for x in candidate for v in x],
                    "inputs_a": [int(v) for x in inputs for v in x]})
        if progress is not None:
            progress("audit", i + 1, len(assignments))
    checked = len(assignments)
    if figures["coalition_randomness"] == "all":
        power: dict[str, Any] = {"exact": True, "coalition_tapes_checked": checked}
    else:
        fraction = 1.0 - (1.0 - DETECT) ** (1.0 / checked)
        power = {"exact": False, "coalition_tapes_checked": checked, "of": total_mine,
                 "detect_probability": DETECT,
                 "leak_fraction_of_coalition_tapes": round(fraction, 4)}
    return AuditResult(members, "exact", PRIVATE, None, None, None, power, {
        **figures, "assignments_checked": checked,
        "runs": checked * per_assignment + n_inputs + 1, "total_variation": 0.0,
        "inputs_a": [int(v) for x in inputs for v in x]})


def _outputs(views: Any, members: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """The members' declared call outputs (checked against the functionality by the audit).

    Outputs declared outside a call are functions of a member's view and inputs, which the
    comparison covers; selecting alternatives by them would hide what they reveal.
    """
    return [(label, tuple(int(v) for v in np.ravel(value))) for m in members
            for call, label, value in views[m].outputs if call is not None]


def _random_tape(field_: PrimeField, streams: dict[StreamKey, int],
                 rng: np.random.Generator) -> dict[StreamKey, np.ndarray]:
    return {k: field_.random(rng, n) for k, n in streams.items()}


def _first_difference(layout: Layout, a: Counter, b: Counter) -> tuple[int | None, str]:
    """The first message whose joint law with the earlier ones differs between a and b."""
    if any(key and key[0] == "shape" for key in (*a, *b)):
        shapes = [key for key in (*a, *b) if key and key[0] == "shape"]
        return shapes[0][1], f"view shape ({shapes[0][2]})"
    bounds = np.cumsum([s for sizes in layout.sizes for s in sizes])
    for end in bounds.tolist():
        pa: Counter = Counter()
        pb: Counter = Counter()
        for key, n in a.items():
            pa[key[:end]] += n
        for key, n in b.items():
            pb[key[:end]] += n
        if pa != pb:
            call, message, _ = layout.describe(end - 1)
            return call, message
    return None, "the coalition's view"

