"""Tests of :mod:`parties.audit`: both t-privacy methods, held to planted leaks they must catch.

The planted leaks (:mod:`planted_leaks`, next to this file) are SecureSum party programs with
realistic bugs; the coalitions each one leaks to are derived by hand in that module's
docstring, and the tests assert that each audit method flags *exactly* those coalitions —
no fewer (a missed leak) and no more (a false alarm) — for M = 3 (exact, GF(5) and GF(7),
d = 1) and M = 3, 4 (statistical, GF(2^61 − 1), d = 4). The honest protocol must pass both
methods for every coalition of 1..M−1 parties. Independent evidence that each leak is real
comes from plain Python integers: the coalition's view, read from a real run, reconstructs an
honest input.

Cost: an exact audit runs the protocol 2·p^(honest tape elements) times per value of the
coalition's own randomness; the helpers size ``max_runs`` so that every honest tape is
enumerated and the coalition's randomness is sampled (a handful of values) — except in the
one full enumeration per variant. The statistical runs on inputs A are shared across the
coalitions of one test (same inputs, same seeds: a memoised runner).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import planted_leaks as pl
import pytest

from parties.audit import (
    LINEAR_MARGIN,
    AuditResult,
    TapeRandomness,
    alternative_inputs,
    exact_audit,
    honest_parties,
    statistical_audit,
    stream_key,
    stream_owners,
    view_layout,
    view_vector,
)
from parties.view import Coalition, View
from protocols.effects import Call, Recv, SendEach
from protocols.errors import InputError
from protocols.field import MERSENNE61, PrimeField, prime_field
from protocols.secure_sum import VARIANTS, secure_sum_field
from sim.privacy import AuditTarget, run_audit, tape_runner, trial_runner
from sim.runner import run_scenario
from sim.scenario import AuditSpec

F61 = prime_field(MERSENNE61)
F5 = prime_field(5)
F7 = prime_field(7)
P = MERSENNE61
D = 4  # vector length of the statistical audits (d ≥ 4)
ALPHA = 1e-3
LEAK_TRIALS = 32  # a saturated hull at M ≤ 4: slice ranks reach 21, n_hull = 31
HONEST_TRIALS = 64
RUN_BUDGET = 1000  # protocol runs per sampled exact audit (at least one honest enumeration)


def honest(variant: str) -> pl.Program:
    return AuditTarget("secure_sum", variant, None).program()


def coalitions(n_parties: int) -> list[tuple[int, ...]]:
    """Every coalition of 1..M−1 parties."""
    return [c for k in range(1, n_parties)
            for c in itertools.combinations(range(n_parties), k)]


def ints(values: Any) -> list[int]:
    return [int(v) for v in np.ravel(values)]


# -- runners and audits ------------------------------------------------------------------------


def memoised(runner: Callable[[list[np.ndarray], int], dict[int, View]]):
    """The same runner, remembering runs by (inputs, seed): the A runs of one test repeat."""
    cache: dict[tuple, dict[int, View]] = {}

    def run(inputs: list[np.ndarray], seed: int) -> dict[int, View]:
        key = (seed, tuple(np.asarray(x).tobytes() for x in inputs))
        if key not in cache:
            cache[key] = runner(inputs, seed)
        return cache[key]

    return run


def statistical_verdicts(
    program: pl.Program, n_parties: int, *, trials: int = LEAK_TRIALS, seed: int = 11
) -> dict[tuple[int, ...], AuditResult]:
    """The statistical audit of every coalition of 1..M−1 parties, at full size."""
    runner = memoised(trial_runner(program, n_parties, MERSENNE61))
    rng = np.random.default_rng(seed)
    inputs_a = [F61.random(rng, D) for _ in range(n_parties)]
    out = {}
    for i, c in enumerate(coalitions(n_parties)):
        inputs_b = alternative_inputs(F61, inputs_a, c, np.random.default_rng([seed, i]))
        out[c] = statistical_audit(runner, F61, inputs_a, inputs_b, c, trials=trials,
                                   alpha=ALPHA, seed=seed, coordinate_length=D)
    return out


def tiny_inputs(
    field_: PrimeField, n_parties: int, coalition: tuple[int, ...], seed: int = 0
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Inputs A (uniform, d = 1) and B (same sum, coalition's inputs kept)."""
    rng = np.random.default_rng(seed)
    inputs_a = [field_.random(rng, 1) for _ in range(n_parties)]
    inputs_b = alternative_inputs(field_, inputs_a, coalition, rng)
    if len(honest_parties(n_parties, coalition)) >= 2:  # else nothing can differ
        assert any(not np.array_equal(a, b) for a, b in zip(inputs_a, inputs_b, strict=True))
    return inputs_a, inputs_b


def honest_tape_elements(
    runner: Callable, field_: PrimeField, inputs: list[np.ndarray], coalition: tuple[int, ...]
) -> int:
    """How many tape elements the honest parties draw (a discovery run, as the audit does)."""
    found: dict[tuple, int] = {}
    runner(list(inputs), lambda party, f: TapeRandomness(party, f, None, found))
    return sum(n for key, n in found.items() if not stream_owners(key) & set(coalition))


def exact(
    program: pl.Program,
    field_: PrimeField,
    n_parties: int,
    coalition: tuple[int, ...],
    *,
    budget: int = RUN_BUDGET,
    seed: int = 0,
) -> AuditResult:
    """An exact audit that enumerates every honest tape and samples the coalition's own.

    ``budget`` runs, and at least one value of the coalition's randomness — only one when a
    single party is honest (B = A: the verdict is private by construction, and one
    enumeration checks that the audit runs).
    """
    runner = tape_runner(program, n_parties, field_.p)
    inputs_a, inputs_b = tiny_inputs(field_, n_parties, coalition, seed)
    per_assignment = 2 * field_.p ** honest_tape_elements(runner, field_, inputs_a, coalition)
    if len(honest_parties(n_parties, coalition)) < 2:
        budget = 0
    max_runs = max(budget, per_assignment)
    return exact_audit(runner, field_, inputs_a, inputs_b, coalition, max_runs=max_runs,
                       seed=seed)


def flagged(results: dict[tuple[int, ...], AuditResult]) -> set[tuple[int, ...]]:
    return {c for c, r in results.items() if r.leaks}


# -- the planted leaks compute the right sum ---------------------------------------------------


PROGRAMS = {**{f"{leak}/{v}": prog for leak, vs in pl.LEAKS.items() for v, prog in vs.items()},
            "control/honest_explicit": pl.honest_explicit,
            "control/sent_seeds_prg": pl.sent_seeds_prg}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize(("prime", "d"), [(MERSENNE61, D), (5, 1), (7, 3)])
def test_planted_programs_output_the_correct_sum(name: str, prime: int, d: int) -> None:
    field_ = prime_field(prime)
    for n_parties in (3, 4, 5):
        runner = trial_runner(PROGRAMS[name], n_parties, prime)
        rng = np.random.default_rng(n_parties)
        inputs = [field_.random(rng, d) for _ in range(n_parties)]
        expected = [sum(col) % prime for col in zip(*map(ints, inputs), strict=True)]
        for seed in (1, 2):
            views = runner(inputs, seed)
            for m in range(n_parties):
                ((_, label, total),) = views[m].outputs
                assert label == "sum"
                assert ints(total) == expected, (name, n_parties, m)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_planted_programs_draw_their_masks_from_the_injected_randomness(name: str) -> None:
    """Discovery finds the streams, and under any tape the sum is still right (GF(5))."""
    runner = tape_runner(PROGRAMS[name], 3, 5)
    inputs = [F5.elements([1]), F5.elements([4]), F5.elements([3])]
    found: dict[tuple, int] = {}
    runner(inputs, lambda party, f: TapeRandomness(party, f, None, found))
    assert found
    rng = np.random.default_rng(1)
    for _ in range(5):
        tape = {k: F5.random(rng, n) for k, n in found.items()}
        views = runner(inputs, lambda party, f, tape=tape: TapeRandomness(party, f, tape))
        assert all(ints(views[m].outputs[0][2]) == [3] for m in range(3))


# -- independent evidence: the coalition reconstructs an honest input from its view ---------------


def message(views: dict[int, View], member: int, sender: int, step: str) -> list[int]:
    (msg,) = [m for m in views[member].received if m.sender == sender and m.step == step]
    return ints(msg.payload)


def drawn(views: dict[int, View], member: int, *head: Any) -> list[int]:
    """The member's draw whose stream key starts with ``head`` (e.g. "pair", 0, 1)."""
    (values,) = [v for key, v in views[member].draws if key[: len(head)] == head]
    return ints(values)


def combine(*terms: tuple[int, list[int]]) -> list[int]:
    """Σ coefficient·vector, mod p, with Python integers."""
    n = len(terms[0][1])
    return [sum(c * v[i] for c, v in terms) % P for i in range(n)]


def leaky_run(leak: str, variant: str, n_parties: int, seed: int = 5):
    rng = np.random.default_rng(seed)
    inputs = [F61.random(rng, D) for _ in range(n_parties)]
    views = trial_runner(pl.LEAKS[leak][variant], n_parties, MERSENNE61)(inputs, seed)
    return [ints(x) for x in inputs], views


def test_raw_input_explicit_is_readable_by_a_party_that_never_receives_it() -> None:
    # M = 3, C = {2}: c_1 = x̂_0 − r_1^(2) + r_2^(1) (party 1 sent x̂_1 to party 0 and kept
    # −r_1^(2)); party 2 received r_1^(2) and drew r_2^(1).
    x, views = leaky_run("raw_input", "explicit", 3)
    c1 = message(views, 2, 1, "column_sum")
    r12 = message(views, 2, 1, "share")
    r21 = drawn(views, 2, "private", 2)  # its one draw: the share for party 1
    assert combine((1, c1), (1, r12), (-1, r21)) == x[0]
    # M = 4, C = {2, 3}: x̂_1 = c_0 + r_0^(2) + r_0^(3) − x̂_2 − x̂_3.
    x, views = leaky_run("raw_input", "explicit", 4)
    c0 = message(views, 2, 0, "column_sum")
    r02, r03 = message(views, 2, 0, "share"), message(views, 3, 0, "share")
    assert combine((1, c0), (1, r02), (1, r03), (-1, x[2]), (-1, x[3])) == x[1]


def test_raw_input_prg_arrives_in_the_clear() -> None:
    x, views = leaky_run("raw_input", "prg", 4)
    assert message(views, 1, 0, "check") == x[0]
    assert [message(views, 0, s, "check") for s in (1, 2, 3)] == x[1:]
    assert not [m for m in views[2].received + views[3].received if m.step == "check"]


def test_reused_mask_lets_every_party_unmask_the_column_sums() -> None:
    # explicit, M = 3, C = {0}: c_1 = x̂_1 − 2·r_1 + r_0 + r_2, every r known to party 0.
    x, views = leaky_run("reused_mask", "explicit", 3)
    c1 = message(views, 0, 1, "column_sum")
    r1, r2 = message(views, 0, 1, "share"), message(views, 0, 2, "share")
    r0 = drawn(views, 0, "private", 0)
    assert combine((1, c1), (2, r1), (-1, r0), (-1, r2)) == x[1]
    # prg, M = 3, C = {2}: c_0 = x̂_0 − 2·a_0 + 2·b_0, g_0 = (a_0, b_0) received from 0.
    x, views = leaky_run("reused_mask", "prg", 3)
    g0 = message(views, 2, 0, "pair_seed")
    a0, b0 = g0[:D], g0[D:]
    c0 = message(views, 2, 0, "column_sum")
    assert combine((1, c0), (2, a0), (-2, b0)) == x[0]
    # prg, M = 4, C = {1} (not a prefix): c_0 = x̂_0 − 3·a_0 + 3·b_0.
    x, views = leaky_run("reused_mask", "prg", 4)
    g0 = message(views, 1, 0, "pair_seed")
    c0 = message(views, 1, 0, "column_sum")
    assert combine((1, c0), (3, g0[:D]), (-3, g0[D:])) == x[0]


def signed(v: int) -> int:
    return v - P if v > P // 2 else v


@pytest.mark.parametrize("variant", VARIANTS)
def test_small_range_masks_pin_the_input_to_a_few_hundred_values(variant: str) -> None:
    # M = 3, C = {0}: c_1 − r_0^(1) + r_1^(0) = x̂_1 + (r_2^(1) − r_1^(2)), a difference of two
    # masks in [0, 2^8): the error is below 2^8 here, uniform over 2^61 values when honest.
    # The view records the raw draws; the masks the coalition used are those reduced.
    small = pl.small_range(F61)
    x, views = leaky_run("small_range", variant, 3)
    c1 = message(views, 0, 1, "column_sum")
    if variant == "explicit":
        r01 = [v % small for v in drawn(views, 0, "private", 0)[:D]]
        r10 = message(views, 0, 1, "share")
    else:
        stream = [v % small for v in drawn(views, 0, "pair", 0, 1)]
        r01, r10 = stream[:D], stream[D:]
    estimate = combine((1, c1), (-1, r01), (1, r10))
    errors = [signed((e - t) % P) for e, t in zip(estimate, x[1], strict=True)]
    assert all(abs(e) < small for e in errors)
    assert any(e != 0 for e in errors)  # ... but not exact: the masks still blur it a little


@pytest.mark.parametrize("variant", VARIANTS)
def test_predictable_last_share_reveals_the_last_two_inputs(variant: str) -> None:
    # M = 3, C = {0}: r_1^(2) = r_2^(1) = the public value, so c_1 − r_0^(1) + r_1^(0) = x̂_1.
    x, views = leaky_run("predictable_last", variant, 3)
    c1 = message(views, 0, 1, "column_sum")
    if variant == "explicit":
        r01 = drawn(views, 0, "private", 0)  # party 0 draws only the share for party 1
        r10 = message(views, 0, 1, "share")
    else:
        stream = drawn(views, 0, "pair", 0, 1)
        r01, r10 = stream[:D], stream[D:]
    assert combine((1, c1), (-1, r01), (1, r10)) == x[1]
    # M = 4, C = {0, 1}: x̂_2 = c_2 − r_0^(2) − r_1^(2) + r_2^(0) + r_2^(1).
    x, views = leaky_run("predictable_last", variant, 4)
    c2 = message(views, 0, 2, "column_sum")
    if variant == "explicit":
        r02 = drawn(views, 0, "private", 0)[D : 2 * D]  # shares for peers 1, 2 (3 is public)
        r12 = drawn(views, 1, "private", 1)[D : 2 * D]  # shares for peers 0, 2
        r20, r21 = message(views, 0, 2, "share"), message(views, 1, 2, "share")
    else:
        s02, s12 = drawn(views, 0, "pair", 0, 2), drawn(views, 1, "pair", 1, 2)
        r02, r20, r12, r21 = s02[:D], s02[D:], s12[:D], s12[D:]
    assert combine((1, c2), (-1, r02), (-1, r12), (1, r20), (1, r21)) == x[2]


# -- statistical: exactly the derived coalitions -----------------------------------------------


@pytest.mark.parametrize("n_parties", [3, 4])
@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("leak", sorted(pl.LEAKS))
def test_statistical_flags_exactly_the_coalitions_the_leak_reaches(
    leak: str, variant: str, n_parties: int
) -> None:
    results = statistical_verdicts(pl.LEAKS[leak][variant], n_parties)
    assert flagged(results) == pl.LEAKING_COALITIONS[(leak, variant, n_parties)]
    for c, r in results.items():
        linear, elementwise = r.details["linear"], r.details.get("elementwise", {})
        if not r.leaks:  # a "private" verdict must come from a saturated hull
            assert linear["inconclusive_slices"] == 0, c
            continue
        assert r.p_value is not None and r.p_value < ALPHA
        if leak == "small_range":
            # Nonlinear: over GF(p) the small masks span every direction, so the affine hulls
            # of A and B agree and the linear test cannot see it; the element-wise test does.
            assert elementwise["holm_min_p"] < ALPHA, c
            assert not linear["separated"], c
        elif leak in ("reused_mask", "predictable_last"):
            # Every view element is uniform on its own; only a combination is constant.
            assert linear["separated"], c
            assert elementwise["holm_min_p"] >= ALPHA, c
        else:
            assert linear["separated"], c


@pytest.mark.parametrize("n_parties", [3, 4])
def test_statistical_seed_set_up_without_the_bug_is_private(n_parties: int) -> None:
    """Control of leak 2 (prg): the same pair-seed messages with a stream per pair."""
    results = statistical_verdicts(pl.sent_seeds_prg, n_parties)
    assert flagged(results) == set()
    assert all(r.details["linear"]["inconclusive_slices"] == 0 for r in results.values())


# -- exact: exactly the derived coalitions -----------------------------------------------------


def _exact_leak_cases() -> list[Any]:
    """(leak, variant, field); GF(7) with small_range/explicit is slow: its honest parties
    draw 4 elements, 2·7^4 runs per coalition even when the leak shows at once."""
    cases = []
    for leak in sorted(pl.LEAKS):
        for variant in VARIANTS:
            for field_ in (F5, F7):
                slow = field_ is F7 and (leak, variant) == ("small_range", "explicit")
                cases.append(pytest.param(leak, variant, field_,
                                          marks=[pytest.mark.slow] if slow else [],
                                          id=f"{leak}-{variant}-p{field_.p}"))
    return cases


@pytest.mark.parametrize(("leak", "variant", "field_"), _exact_leak_cases())
def test_exact_flags_exactly_the_coalitions_the_leak_reaches(
    leak: str, variant: str, field_: PrimeField
) -> None:
    program = pl.LEAKS[leak][variant]
    results = {c: exact(program, field_, 3, c) for c in coalitions(3)}
    assert flagged(results) == pl.LEAKING_COALITIONS[(leak, variant, 3)]
    for c, r in results.items():
        if r.leaks:  # two different distributions of the coalition's received messages
            assert r.details["total_variation"] > 0, c
        else:
            assert r.details["total_variation"] == 0.0, c


M4_PAIRS = [c for c in coalitions(4) if len(c) == 2]


def _m4_cases() -> list[Any]:
    """(leak, variant) for exact audits of the 2-party coalitions at M = 4.

    Two honest parties; the honest tape is small except where the honest parties draw
    2(M−1) = 6 elements (small_range/explicit: 2·5^6 runs per coalition value), which is
    marked slow. Single-party coalitions at M = 4 are out of reach of enumeration (3 honest
    parties: 5^6 and more honest tapes) — the statistical audit covers them.
    """
    cases = []
    for leak in sorted(pl.LEAKS):
        for variant in VARIANTS:
            slow = (leak, variant) in {("small_range", "explicit"), ("raw_input", "explicit"),
                                       ("predictable_last", "explicit")}
            marks = [pytest.mark.slow] if slow else []
            cases.append(pytest.param(leak, variant, marks=marks, id=f"{leak}-{variant}"))
    return cases


@pytest.mark.parametrize(("leak", "variant"), _m4_cases())
def test_exact_at_four_parties_on_two_party_coalitions(leak: str, variant: str) -> None:
    program = pl.LEAKS[leak][variant]
    # small_range/explicit: 2·5^6 runs per coalition even when the leak shows at once;
    # two coalitions (one honest pair at each end) stand for the six.
    pairs = [(0, 1), (2, 3)] if (leak, variant) == ("small_range", "explicit") else M4_PAIRS
    results = {c: exact(program, F5, 4, c, budget=600) for c in pairs}
    expected = {c for c in pl.LEAKING_COALITIONS[(leak, variant, 4)] if c in pairs}
    assert flagged(results) == expected


def test_exact_seed_set_up_without_the_bug_is_private() -> None:
    # Not {2}: the two pair seeds party 0 draws are its *private* streams to the audit (which
    # cannot know that party 2 receives one of them), so {2} faces 6 honest tape elements,
    # 2·5^6 runs per value of its randomness; the statistical control covers it.
    results = {c: exact(pl.sent_seeds_prg, F5, 3, c) for c in coalitions(3) if c != (2,)}
    assert flagged(results) == set()
    assert all(r.details["total_variation"] == 0.0 for r in results.values())


# -- the honest protocol passes both methods ---------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_exact_honest_full_enumeration(variant: str) -> None:
    """Every random choice of every party, for the coalition {0} of M = 3 in GF(5)."""
    runner = tape_runner(honest(variant), 3, 5)
    inputs_a, inputs_b = tiny_inputs(F5, 3, (0,), seed=3)
    result = exact_audit(runner, F5, inputs_a, inputs_b, (0,))
    assert result.verdict == "private"
    assert result.details["coalition_randomness"] == "all"
    assert result.details["honest_tape_elements"] + result.details[
        "coalition_tape_elements"] == 6  # explicit: 3 parties × 2 shares; prg: 3 pairs × 2
    assert result.details["runs"] == 2 * 5**6
    assert result.details["total_variation"] == 0.0


def _exact_honest_cases() -> list[Any]:
    """(variant, field, coalition) for M = 3, but {0} in GF(5) (enumerated in full above).

    In GF(7) the explicit variant's single-party coalitions face 4 honest tape elements,
    2·7^4 = 4802 runs even for one value of their own randomness: {1} runs by default, {0}
    and {2} (the same computation up to relabelling) are slow.
    """
    cases = []
    for variant in VARIANTS:
        for field_ in (F5, F7):
            for c in coalitions(3):
                if field_ is F5 and c == (0,):
                    continue
                slow = variant == "explicit" and field_ is F7 and c in ((0,), (2,))
                cases.append(pytest.param(variant, field_, c,
                                          marks=[pytest.mark.slow] if slow else [],
                                          id=f"{variant}-p{field_.p}-{c}"))
    return cases


@pytest.mark.parametrize(("variant", "field_", "coalition"), _exact_honest_cases())
def test_exact_honest_private_for_every_coalition(
    variant: str, field_: PrimeField, coalition: tuple[int, ...]
) -> None:
    result = exact(honest(variant), field_, 3, coalition, seed=sum(coalition))
    assert result.verdict == "private"
    assert result.details["total_variation"] == 0.0


@pytest.mark.parametrize("n_parties", [2, 3, 4, pytest.param(5, marks=pytest.mark.slow)])
@pytest.mark.parametrize("variant", VARIANTS)
def test_statistical_honest_private_for_every_coalition(variant: str, n_parties: int) -> None:
    trials = HONEST_TRIALS if n_parties < 5 else 200
    results = statistical_verdicts(honest(variant), n_parties, trials=trials, seed=n_parties)
    assert flagged(results) == set()
    for c, r in results.items():
        assert r.details["linear"]["inconclusive_slices"] == 0, c
        assert r.details["linear"]["slices"] == D
        if len(honest_parties(n_parties, c)) >= 2:
            assert r.details["elementwise"]["holm_min_p"] >= ALPHA


# -- alternative inputs ------------------------------------------------------------------------


@pytest.mark.parametrize("field_", [F61, F5], ids=["p61", "p5"])
def test_alternative_inputs_keep_the_sum_and_the_coalition(field_: PrimeField) -> None:
    rng = np.random.default_rng(0)
    for n_parties, coalition in [(3, (0,)), (4, (1,)), (4, (0, 3)), (5, (2, 4)), (5, (0, 1, 2))]:
        inputs = [field_.random(rng, 6) for _ in range(n_parties)]
        before = [x.copy() for x in inputs]
        out = alternative_inputs(field_, inputs, coalition, rng)
        for x, b in zip(inputs, before, strict=True):  # A is left alone
            assert np.array_equal(x, b)
        # the sum, with Python integers and with numpy object arithmetic
        total = [sum(col) % field_.p for col in zip(*map(ints, inputs), strict=True)]
        assert [sum(col) % field_.p for col in zip(*map(ints, out), strict=True)] == total
        assert ints(np.sum(np.array([ints(x) for x in out], dtype=object), axis=0)
                    % field_.p) == total
        honest = honest_parties(n_parties, coalition)
        for m in range(n_parties):
            if m in coalition:
                assert ints(out[m]) == ints(inputs[m])
            elif m != honest[-1]:  # a nonzero offset in every element
                assert all(a != b for a, b in zip(ints(out[m]), ints(inputs[m]), strict=True))


def test_alternative_inputs_with_one_honest_party_is_a_copy() -> None:
    inputs = [F5.elements([1, 2]), F5.elements([3, 4]), F5.elements([0, 1])]
    out = alternative_inputs(F5, inputs, (0, 2), np.random.default_rng(0))
    assert [ints(x) for x in out] == [ints(x) for x in inputs]
    assert all(o is not x for o, x in zip(out, inputs, strict=True))


def test_alternative_inputs_never_repeat_a_in_a_tiny_field() -> None:
    """Regression: a zero offset (probability 1/p) made B = A and every audit vacuous."""
    inputs = [F5.elements([1]), F5.elements([2]), F5.elements([3])]
    for seed in range(200):
        out = alternative_inputs(F5, inputs, (0,), np.random.default_rng(seed))
        assert ints(out[1]) != [2] and ints(out[2]) != [3]


# -- the view as a vector ----------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_view_layout_and_vector(variant: str) -> None:
    d, members = 3, (0, 2)
    runner = trial_runner(honest(variant), 3, MERSENNE61)
    rng = np.random.default_rng(1)
    views = runner([F61.random(rng, d) for _ in range(3)], 7)
    coalition = Coalition.of(members, views)
    layout = view_layout(coalition)
    recv = [item for item in layout if item[0] == "recv"]
    draws = [item for item in layout if item[0] == "draw"]
    steps = ["share", "column_sum"] if variant == "explicit" else ["column_sum"]
    expected_recv = sorted((m, s, step) for m in members for s in range(3) if s != m
                           for step in steps)
    assert sorted((it[1], it[2], it[5]) for it in recv) == expected_recv
    assert all(it[3] == "secure_sum" and it[4] == 0 and it[6] == d for it in recv)
    if variant == "explicit":  # one private draw of (M−1)·d per member
        assert [(it[1], it[2], it[-1]) for it in draws] == [(0, "private", 2 * d),
                                                              (2, "private", 2 * d)]
    else:  # one pair stream of 2d per (member, peer)
        assert [(it[1], it[3], it[4], it[-1]) for it in draws] == [
            (0, 0, 1, 2 * d), (0, 0, 2, 2 * d), (2, 0, 2, 2 * d), (2, 1, 2, 2 * d)]
    vector = view_vector(coalition)
    assert len(vector) == sum(it[-1] for it in layout)
    expected = [v for m in members for msg in views[m].received for v in ints(msg.payload)]
    expected += [v for m in members for _, values in views[m].draws for v in ints(values)]
    assert ints(vector) == expected
    assert ints(view_vector(coalition, draws=False)) == expected[: sum(it[-1] for it in recv)]
    assert view_layout(coalition, draws=False) == recv


def test_view_vector_of_an_empty_view() -> None:
    empty = Coalition.of([0], {0: View(party=0, role="site")})
    assert view_vector(empty).size == 0 and view_layout(empty) == []


# -- tape randomness ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_tape_randomness_discovers_the_streams(variant: str) -> None:
    d = 2
    runner = tape_runner(honest(variant), 3, 5)
    found: dict[tuple, int] = {}
    views = runner([F5.elements([1, 2])] * 3,
                   lambda party, f: TapeRandomness(party, f, None, found))
    if variant == "explicit":
        assert found == {("private", m, "secure_sum", 0, 0): 2 * d for m in range(3)}
    else:  # each pair's stream once, under one key whichever end drew it
        assert found == {("pair", lo, hi, "secure_sum", 0, 0): 2 * d
                         for lo, hi in [(0, 1), (0, 2), (1, 2)]}
    assert {stream_owners(k) == ({k[1]} if k[0] == "private" else {k[1], k[2]})
            for k in found} == {True}
    # discovery hands out zeros, so the shares are the inputs themselves (and the sum is right)
    for m in range(3):
        assert ints(views[m].outputs[0][2]) == [3, 6 % 5]


def test_tape_randomness_reads_the_tape() -> None:
    call = Call("secure_sum", 4)
    key_pair = stream_key("pair", 2, 0, call, 1)
    assert key_pair == ("pair", 0, 2, "secure_sum", 4, 1)
    tape = {key_pair: F7.elements([1, 2, 3]),
            stream_key("private", 1, None, call, 0): F7.elements([6])}
    at0, at2 = TapeRandomness(0, F7, tape), TapeRandomness(2, F7, tape)
    assert ints(at0.pairwise(2, call, 3, sub=1)) == ints(at2.pairwise(0, call, 3, sub=1)) == [
        1, 2, 3]
    assert ints(TapeRandomness(1, F7, tape).private(call, 1)) == [6]
    assert ints(at2.pairwise_many((0,), call, 3, sub=1)[0]) == [1, 2, 3]
    assert at2.pairwise_many((), call, 3).shape == (0, 3)
    with pytest.raises(InputError, match="not on the tape"):
        at0.private(call, 1)  # party 0 has no private stream on the tape
    with pytest.raises(InputError, match="not on the tape"):
        at0.pairwise(2, call, 2, sub=1)  # wrong length


# -- the exact method's limits and branches ------------------------------------------------------


def test_exact_refuses_an_enumeration_beyond_max_runs() -> None:
    runner = tape_runner(honest("explicit"), 3, 5)
    inputs_a, inputs_b = tiny_inputs(F5, 3, (0,))
    # coalition {0}: the honest parties draw 2 × 2 elements, 2·5^4 = 1250 runs per value
    with pytest.raises(InputError, match=r"5\^4 honest tapes .* max_runs = 1249"):
        exact_audit(runner, F5, inputs_a, inputs_b, (0,), max_runs=1249)
    result = exact_audit(runner, F5, inputs_a, inputs_b, (0,), max_runs=3 * 1250)
    assert result.details["coalition_randomness"] == "sampled"
    assert result.details["assignments_checked"] == 3
    assert result.details["runs"] == 3 * 1250


def _draws_when_even(ctx, x):
    """A program whose mask draws depend on its input (an extra draw for even x̂)."""
    call = ctx.new_call("secure_sum")
    if int(x[0]) % 2 == 0:
        ctx.randomness.private(call, 1, sub=1)
    return (yield from secure_sum_field(ctx, x, "prg"))


def test_exact_flags_randomness_that_depends_on_the_input() -> None:
    inputs_a = [F5.elements([1]), F5.elements([1]), F5.elements([2])]
    inputs_b = [F5.elements([1]), F5.elements([2]), F5.elements([1])]
    result = exact_audit(tape_runner(_draws_when_even, 3, 5), F5, inputs_a, inputs_b, (0,))
    assert result.leaks and "different masks" in result.details["reason"]


def _shape_program(ctx, x):
    """Party 1 tells party 0 the parity of x̂_1 by how many messages it sends (1 or 2)."""
    total = yield from secure_sum_field(ctx, x, "prg")
    call = ctx.new_call("ack")
    n = 2 if int(x[0]) % 2 == 0 else 1
    if ctx.party == 1:
        yield SendEach({0: np.asarray([n], dtype=np.uint64)}, call, "count")
        for k in range(n):
            yield SendEach({0: x[:1]}, call, f"ack{k}")
    if ctx.party == 0:
        count = yield Recv(1, call, "count")
        for k in range(int(count[0])):
            yield Recv(1, call, f"ack{k}")
    return total


def test_statistical_flags_a_view_that_changes_shape() -> None:
    """An input-dependent number of messages: the layout itself differs between A and B."""
    runner = trial_runner(_shape_program, 3, MERSENNE61)
    inputs_a = [F61.elements([1, 2, 3, 4]), F61.elements([2, 2, 2, 2]), F61.elements([5] * 4)]
    inputs_b = [F61.elements([1, 2, 3, 4]), F61.elements([3, 2, 2, 2]),
                F61.elements([4, 5, 5, 5])]
    result = statistical_audit(runner, F61, inputs_a, inputs_b, (0,), trials=LINEAR_MARGIN + 2)
    assert result.leaks and "changes shape" in result.details["reason"]


# -- statistical: reproducibility and arguments ------------------------------------------------


def test_statistical_verdict_is_reproducible_from_its_seed() -> None:
    runner = trial_runner(honest("prg"), 3, MERSENNE61)
    rng = np.random.default_rng(2)
    inputs_a = [F61.random(rng, D) for _ in range(3)]
    inputs_b = alternative_inputs(F61, inputs_a, (1,), rng)

    def audit(seed: int) -> dict:
        return statistical_audit(runner, F61, inputs_a, inputs_b, (1,), trials=30, seed=seed,
                                 coordinate_length=D).to_dict()

    first, again, other = audit(4), audit(4), audit(5)
    assert first == again
    assert first["verdict"] == other["verdict"] == "private"
    # another seed, other runs (the Holm-adjusted p-value itself is often capped at 1)
    assert first["details"] != other["details"]


def test_statistical_refuses_too_few_trials() -> None:
    runner = trial_runner(honest("prg"), 3, MERSENNE61)
    inputs = [F61.elements([1])] * 3
    with pytest.raises(InputError, match="too few"):
        statistical_audit(runner, F61, inputs, inputs, (0,), trials=LINEAR_MARGIN + 1)


def test_audit_result_to_dict() -> None:
    r = AuditResult((0, 2), "exact", "leak", None, {"field": 5})
    assert r.leaks
    assert r.to_dict() == {"coalition": [0, 2], "method": "exact", "verdict": "leak",
                           "details": {"field": 5}}
    s = AuditResult((1,), "statistical", "private", 0.5)
    assert not s.leaks and s.to_dict()["p_value"] == 0.5


# -- run_audit, from a scenario and with a planted leak ------------------------------------------


class _LeakyTarget(AuditTarget):
    """An audit target whose protocol is leak 4 (run_audit's plumbing, end to end)."""

    def program(self) -> pl.Program:
        return pl.LEAKS["predictable_last"][self.variant]


@pytest.mark.parametrize("variant", VARIANTS)
def test_run_audit_flags_a_planted_leak_for_every_seed(variant: str) -> None:
    target = _LeakyTarget("secure_sum", variant, None)
    for seed in range(8):  # the tiny inputs are drawn from the seed: no seed may be vacuous
        exact_spec = AuditSpec((0,), "exact", 200, ALPHA, 5)
        result = run_audit(exact_spec, target, 3, MERSENNE61, seed)
        assert result.leaks, seed
        assert result.details["protocol"] == f"secure_sum ({variant})"
    stat_spec = AuditSpec((0,), "statistical", 30, ALPHA, 5)
    assert run_audit(stat_spec, target, 3, MERSENNE61, 0).leaks
    honest_result = run_audit(stat_spec, AuditTarget("secure_sum", variant, None), 3,
                              MERSENNE61, 0)
    assert honest_result.verdict == "private"


def _scenario(n_parties: int, audits: list[dict]) -> dict:
    return {
        "name": "audit_test",
        "seed": 21,
        "network": {"parties": n_parties},
        "data": {"source": "synthetic", "rows": 6 * n_parties, "cols": 5},
        "algorithm": {"name": "secure_sum", "variant": "explicit"},
        "audit": audits,
    }


def test_run_scenario_reports_exact_and_statistical_verdicts() -> None:
    # An exact audit of M = 3 in GF(5) makes 31 250 runs or more; M = 2 keeps the plumbing
    # test cheap (its verdict is trivially private: one honest party).
    run = run_scenario(_scenario(2, [
        {"coalition": [0], "method": "exact", "prime": 5},
        {"coalition": [1], "method": "statistical", "trials": 20},
    ]))
    privacy = run.report["privacy"]
    assert [(p["coalition"], p["method"], p["verdict"]) for p in privacy] == [
        ([0], "exact", "private"), ([1], "statistical", "private")]
    assert privacy[0]["details"]["field"] == 5
    assert privacy[0]["details"]["coalition_randomness"] == "all"
    assert privacy[0]["details"]["protocol"] == "secure_sum (explicit)"
    assert 0.0 <= privacy[1]["p_value"] <= 1.0
    assert privacy[1]["details"]["trials"] == 20
    assert privacy[1]["details"]["view_elements"] > 0


def test_run_scenario_statistical_audit_of_three_parties() -> None:
    run = run_scenario(_scenario(3, [{"coalition": [0], "method": "statistical", "trials": 40},
                                     {"coalition": [1, 2], "method": "statistical",
                                      "trials": 40}]))
    privacy = run.report["privacy"]
    assert [p["verdict"] for p in privacy] == ["private", "private"]
    assert all(p["details"]["linear"]["inconclusive_slices"] == 0 for p in privacy)
    assert privacy[0]["details"]["linear"]["slices"] == 5  # the data's 5 column sums


# -- a message nobody reads ---------------------------------------------------------------------


def _unread_raw_input(ctx, x):
    """Leak 1 as fire-and-forget: party 0 sends x̂_0 to party 1, whose program never reads it."""
    total = yield from secure_sum_field(ctx, x, "prg")
    if ctx.party == 0:
        yield SendEach({1: x}, ctx.new_call("debug"), "debug")
    else:
        ctx.new_call("debug")
    return total


def test_a_delivered_but_unread_message_is_in_the_view_and_audited() -> None:
    """Regression: the driver once put a message in a view only when the program read it, so
    this leak was invisible to both audits (now: unread messages follow the read ones)."""
    runner = trial_runner(_unread_raw_input, 3, MERSENNE61)
    rng = np.random.default_rng(0)
    inputs_a = [F61.random(rng, D) for _ in range(3)]
    views = runner(inputs_a, 1)
    assert [m.step for m in views[1].received if m.sender == 0] == ["column_sum", "debug"]
    inputs_b = alternative_inputs(F61, inputs_a, (1,), rng)
    assert statistical_audit(runner, F61, inputs_a, inputs_b, (1,), trials=LEAK_TRIALS,
                             coordinate_length=D).leaks
    assert statistical_audit(runner, F61, inputs_a, alternative_inputs(
        F61, inputs_a, (2,), rng), (2,), trials=LEAK_TRIALS, coordinate_length=D).verdict == (
        "private")
    for c in coalitions(3):
        assert exact(_unread_raw_input, F5, 3, c).leaks == (c == (1,)), c
