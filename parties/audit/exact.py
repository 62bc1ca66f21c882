"""The exact audit: every honest input with the same output, every random choice, in a tiny field.

In a tiny prime field (p = 5 or 7, d = 1) the whole probability space is small enough to
enumerate. The audit runs **the program that runs**: each party's masks come from its own
AES-CTR streams (:class:`~protocols.context.AesRandomness`) under 32-byte keys — its private
key and one seed per pair, which it also finds in ``ctx.mask_seeds`` as key agreement would
leave them — so a program that expands, sends or derives from its seeds is audited as written.
Keys cannot be enumerated (2^256 of them); the draws can. A first run discovers which streams
each key expands to (n_k elements in all); the audit then **conditions on the keys**: for
every key it finds p^{n_k} keys whose expansions take every value in GF(p)^{n_k} exactly once
(a search over HKDF-derived candidates), so enumerating those keys enumerates every value of
the draws with its exact probability, through the real AES expansion. Keys the coalition
holds (its members' keys, and every pair key with a member at one end) are *coalition
randomness*, the rest the honest parties'. The audit then

1. enumerates **every** honest input vector, runs each once, and keeps those that give the
   coalition the outputs that inputs A give (their message pattern must be A's; a run with
   other outputs may follow them — a stopping rule on the sum — and a run that aborted is
   compared too, having no outputs) — every alternative B with the same output, not one
   drawn at random (a function of the honest inputs that one B shares with A, such as a parity,
   is invisible for that B);
2. for each value of the coalition's randomness (all of them, or a seeded sample of real
   random keys when there are too many), enumerates every honest key assignment under A and
   under each B and compares the exact distributions of the coalition's received messages.

The coalition's randomness does not depend on the inputs, so equal conditional distributions
for every value mean equal joint distributions. A difference is a leak, located at the first
message whose joint distribution with the earlier ones differs. When the coalition's
randomness was sampled, the power says which fraction of its values a leak must affect to be
caught with probability 0.9.

Conditioning on keys is exact only when the coalition's view depends on a key through its
draws, or by carrying the key itself (:mod:`.keyflow`). The audit checks it: for every key it
runs the program under two keys with the same draws, and if the coalition's view differs
anywhere but in messages that carry the key, the program uses its key bytes beyond its draws
(its own AES expansion of a seed, say) and the answer is *not applicable* — the method never
audits a different program instead. It is *not applicable* too when a key expands to more
elements than ``max_runs`` keys can cover (SecAgg's 256-bit seeds drawn as field elements),
and when the outputs depend on the randomness ("the same output" is then not a property of
the inputs).
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from parties.audit import key_search, keyflow, seeded
from parties.audit.calls import Layout, select_calls, split_run
from parties.audit.pattern import PatternCheck, aborted, aborted_verdict
from parties.audit.randomness import (
    KeyId,
    Progress,
    Runner,
    all_keys,
    key_of_stream,
    key_owners,
    keyed_source,
    stream_of,
)
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE, AuditResult
from parties.audit.statistical import field_vectors, honest_parties
from parties.party import SITE, Party
from protocols import seeds
from protocols.crypto.hkdf import derive_key
from protocols.crypto.keystream import field_stream
from protocols.errors import InputError
from protocols.field import PrimeField

DETECT = 0.9


@keyflow.traced_inputs
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
    judge: Callable[..., AuditResult | None] | None = None,
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
        ``judge(views, inputs)``: a verdict when a run's declared outputs are not the
        functionality's on the run's inputs
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
    ids = tuple(sorted(p.id for p in parties0))
    sites = tuple(sorted(p.id for p in parties0 if p.role == SITE))
    p, d = field.p, inputs[0].size
    material_bytes = seeds.derive(seed, "audit.exact.keys")
    names = all_keys(ids)
    base = {k: derive_key(material_bytes, f"audit/exact/base/{k}") for k in names}

    def run(inputs_: Sequence[np.ndarray], keys: Mapping[KeyId, bytes]) -> Any:
        return runner(make_parties(inputs_),
                      lambda party, f: keyed_source(keys, ids, party, f))

    views_a = run(inputs, base)
    pattern = PatternCheck(members, "exact")  # one pattern under every enumerated input
    pattern.check(views_a)
    plan = _draw_plan(views_a)
    mine = [k for k in names if key_owners(k) & set(members)]
    theirs = [k for k in names if not key_owners(k) & set(members)]
    size = {k: sum(n for _, n in plan.get(k, ())) for k in names}
    n_mine = sum(size[k] for k in mine)
    n_honest = sum(size[k] for k in theirs)
    records = split_run(views_a, members, field, sites)
    layout = Layout.of({c: r.received for c, r in records.items()},
                       select_calls(records, calls))
    outputs_a = _outputs(views_a, members)
    rng = seeds.rng(seed, "audit.exact.alternatives")
    if _outputs(run(inputs, _random_keys(names, rng)), members) != outputs_a:
        return AuditResult(members, "exact", NOT_APPLICABLE, details={
            "reason": "the coalition's outputs depend on the randomness, so 'the same output' "
                      "does not single out inputs"})
    too_big = [k for k in theirs if p ** size[k] > max_runs]
    if too_big:
        k = too_big[0]
        return AuditResult(members, "exact", NOT_APPLICABLE, details={
            "reason": f"the {key_search.key_name(k)} expands to {size[k]} field elements; "
                      f"conditioning on it takes {p}^{size[k]} keys, more than max_runs = "
                      f"{max_runs}, and replacing its AES expansion by a tape would audit a "
                      "different program; use method = 'statistical'",
            "key": key_search.key_name(k), "elements": size[k]})
    honest = honest_parties(len(inputs), members)
    n_inputs = p ** (len(honest) * d)
    if n_inputs > max_runs:  # enumerating them would not end (or fit in memory)
        return AuditResult(members, "exact", NOT_APPLICABLE, details={
            "reason": f"the exact audit enumerates every honest input: {p}^{len(honest) * d} "
                      f"of them, more than max_runs = {max_runs}; use a small audit prime "
                      "(prime = 5), fewer parties or elements, or method = 'statistical'"})
    candidates: list[list[np.ndarray]] = []
    for values in itertools.product(range(p), repeat=len(honest) * d):
        trial = [x.copy() for x in inputs]
        for i, h in enumerate(honest):
            trial[h] = field.elements(np.array(values[i * d : (i + 1) * d], dtype=np.int64))
        if all(np.array_equal(a, b) for a, b in zip(trial, inputs, strict=True)):
            continue
        views = run(trial, base)
        same = _outputs(views, members) == outputs_a
        if same or aborted(views) is not None:  # other outputs may explain another pattern
            leak = pattern.check(views, alternative=[int(v) for x in trial for v in x])
            if leak is not None:
                return leak
        beyond = None if judge is None else judge(views, trial)
        if beyond is not None:
            beyond.details["alternative"] = [int(v) for x in trial for v in x]
            return beyond
        if same and _draw_plan(views) != plan:
            return AuditResult(members, "exact", LEAK, 0.0, details={
                "reason": "the program draws different masks for other honest inputs",
                "alternative": [int(v) for x in trial for v in x]})
        if same:
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
    enumerated = theirs + (mine if total_mine <= budget else [])
    seed_sets: dict[KeyId, list[bytes]] = {}
    twins: dict[KeyId, tuple[bytes, bytes]] = {}
    for k in enumerated:
        seed_sets[k], twins[k] = _seed_set(k, plan.get(k, []), field, material_bytes)
    beyond = _beyond_draws(run, inputs, base, twins, members, field)
    if beyond is not None:
        k, where = beyond
        return AuditResult(members, "exact", NOT_APPLICABLE, details={
            "reason": "the coalition's view changes with the bytes of the "
                      f"{key_search.key_name(k)} beyond the streams its randomness draws "
                      f"({where}): the program uses its key outside its randomness, and the "
                      "exact method enumerates draws, not 2^256 keys; use method = 'statistical'",
            "key": key_search.key_name(k), "message": where})
    if total_mine <= budget:
        assignments: list[dict[KeyId, bytes]] = [
            dict(zip(mine, chosen, strict=True))
            for chosen in itertools.product(*(seed_sets[k] for k in mine))]
    else:
        assignments = [_random_keys(mine, rng) for _ in range(budget)]
    honest_keys = [dict(zip(theirs, chosen, strict=True))
                   for chosen in itertools.product(*(seed_sets[k] for k in theirs))]
    figures: dict[str, Any] = {
        "field": p, "honest_inputs_with_same_output": len(candidates),
        "honest_tape_elements": n_honest, "coalition_tape_elements": n_mine,
        "coalition_randomness": "all" if total_mine <= budget else "sampled",
        "coalition_tapes": total_mine, "randomness": "AES-CTR under enumerated keys",
        "key_check_runs": 2 * len(twins),
    }

    def distribution(inputs_: Sequence[np.ndarray], fixed: dict) -> Counter:
        counts: Counter[tuple[int, ...]] = Counter()
        for h in honest_keys:
            views = run(inputs_, {**fixed, **h})
            got = split_run(views, members, field, sites)
            received = {c: r.received for c, r in got.items()}
            if not layout.matches(received):
                counts[("shape", *layout.first_difference(received))] += 1  # type: ignore[arg-type]
                continue
            counts[tuple(int(v) for v in layout.row(received, np.dtype(object)))] += 1
        return counts

    for i, assignment in enumerate(assignments):
        dist_a = distribution(inputs, assignment)
        for candidate in candidates:
            dist_b = distribution(candidate, assignment)
            if dist_a != dist_b:
                call, message = _first_difference(layout, dist_a, dist_b)
                expanded = _seed_expansion(run, inputs, {**base, **assignment}, theirs,
                                           seed_sets, layout, members, field, sites)
                if expanded is not None:
                    return AuditResult(members, "exact", NOT_APPLICABLE, None, call, message,
                                       None, {**figures, "seeded_by": key_search.key_name(
                                           expanded), "reason": (
                        f"the coalition's view depends on the draws of the "
                        f"{key_search.key_name(expanded)} only as a seed expansion does (every "
                        "element it moves mixes several draws, non-affinely, into values "
                        f"spread like a random function's): in GF({p}) such a seed has only "
                        f"{p}^{size[expanded]} values, so its expansion is not uniform here "
                        "and the difference found is the tiny field's, not the program's; "
                        "the exact method cannot model the expansion as uniform without "
                        "auditing another program; use method = 'statistical'")})
                total = sum(dist_a.values())
                tv = 0.5 * sum(abs(dist_a[s] - dist_b[s]) for s in set(dist_a) | set(dist_b))
                return AuditResult(members, "exact", LEAK, None, call, message, None, {
                    **figures, "assignments_checked": i + 1, "total_variation": tv / total,
                    "witness_assignment": {key_search.key_name(k): v.hex()
                                           for k, v in assignment.items()},
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


def _draw_plan(views: Mapping[int, Any]) -> dict[KeyId, list[tuple[int, int]]]:
    """Key → its streams (stream number, elements) in the run, in stream order."""
    found: dict[KeyId, dict[int, int]] = {}
    for view in views.values():
        for skey, values in view.draws:
            streams = found.setdefault(key_of_stream(skey), {})
            stream = stream_of(skey)
            streams[stream] = max(streams.get(stream, 0), len(values))
    return {k: sorted(v.items()) for k, v in found.items()}


def _expand(key: bytes, plan: Sequence[tuple[int, int]], field_: PrimeField) -> tuple[int, ...]:
    return tuple(int(v) for s, n in plan for v in field_stream(key, s, n, field_).tolist())


def _seed_set(key: KeyId, plan: Sequence[tuple[int, int]], field_: PrimeField,
              material: bytes) -> tuple[list[bytes], tuple[bytes, bytes]]:
    """Keys whose draws take every value of GF(p)^n once, and two keys with equal draws.

    Candidates are HKDF-derived from the audit's material; each new value of the draws
    keeps the first key that gives it. Expected cost: p^n·ln(p^n) expansions (coupon
    collector)."""
    n = sum(c for _, c in plan)
    target = field_.p ** n
    seen: dict[tuple[int, ...], bytes] = {}
    twin: tuple[bytes, bytes] | None = None
    for i in itertools.count():
        candidate = derive_key(material, f"audit/exact/{key}/{i}")
        values = _expand(candidate, plan, field_)
        if values in seen:
            twin = twin or (seen[values], candidate)
        else:
            seen[values] = candidate
        if len(seen) == target and twin is not None:
            break
    assert twin is not None
    return [seen[v] for v in sorted(seen)], twin


def _beyond_draws(
    run: Callable[[Sequence[np.ndarray], Mapping[KeyId, bytes]], Any],
    inputs: Sequence[np.ndarray],
    base: Mapping[KeyId, bytes],
    twins: Mapping[KeyId, tuple[bytes, bytes]],
    members: Sequence[int],
    field_: PrimeField,
) -> tuple[KeyId, str] | None:
    """A key whose bytes change the coalition's view beyond its draws and its own carriers."""
    for k, (one, two) in twins.items():
        runs = []
        for key in (one, two):
            keys = {**base, k: key}
            views = run(inputs, keys)
            records = key_search.carriers(views, members)
            derivations = key_search.catalogue(keys, views, field_, {k})
            carried = {(f.receiver, f.where) for f in key_search.find(records, derivations)}
            runs.append(({(c.receiver, c.where): c.blob or c.elements for c in records},
                         carried))
        (a, carried_a), (b, carried_b) = runs
        for where in sorted(set(a) | set(b), key=repr):
            if a.get(where) != b.get(where) and where not in carried_a | carried_b:
                return k, where[1]
    return None


def _seed_expansion(
    run: Callable[[Sequence[np.ndarray], Mapping[KeyId, bytes]], Any],
    inputs: Sequence[np.ndarray],
    keys: Mapping[KeyId, bytes],
    theirs: Sequence[KeyId],
    seed_sets: Mapping[KeyId, list[bytes]],
    layout: Layout,
    members: tuple[int, ...],
    field_: PrimeField,
    sites: tuple[int, ...],
) -> KeyId | None:
    """The first honest key the coalition's view depends on only through a seed expansion.

    ``seed_sets[k][i]`` draws the i-th vector of GF(p)^n in lexicographic order
    (:func:`_seed_set`); the view is tabulated over all of them, the other keys as in
    ``keys``, and judged by :func:`parties.audit.seeded.expansion_of`. A key that changes the
    view's shape is not an expansion (the pattern is then the finding)."""
    p = field_.p
    for k in theirs:
        table = []
        for key in seed_sets.get(k, []):
            got = split_run(run(inputs, {**keys, k: key}), members, field_, sites)
            received = {c: r.received for c, r in got.items()}
            if not layout.matches(received):
                break
            table.append([int(v) for v in layout.row(received, np.dtype(object))])
        else:
            n = round(np.log(len(table)) / np.log(p)) if len(table) > 1 else 0
            if n and seeded.expansion_of(np.array(table, dtype=np.int64), p, n).seeded:
                return k
    return None


def _random_keys(keys: Sequence[KeyId], rng: np.random.Generator) -> dict[KeyId, bytes]:
    return {k: rng.bytes(32) for k in keys}


def _outputs(views: Any, members: tuple[int, ...]) -> list[tuple[str, tuple[int, ...]]]:
    """The members' declared call outputs (checked against the functionality by the audit).

    Outputs declared outside a call are functions of a member's view and inputs, which the
    comparison covers; selecting alternatives by them would hide what they reveal.
    """
    return [(label, tuple(int(v) for v in np.ravel(value))) for m in members
            for call, label, value in views[m].outputs if call is not None]


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

