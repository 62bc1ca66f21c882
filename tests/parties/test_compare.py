"""Tests of :mod:`parties.audit.compare`: the two-sample battery, its power, and the verdict.

Expected values come from scipy (``ks_2samp``, ``chi2_contingency``), from samples drawn with
numpy whose laws are known in closed form, and from hand-worked Holm examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditing import F5, F61, P
from scipy import stats

from parties.audit.affine_tests import holds, hull_tests, relations
from parties.audit.calls import Layout
from parties.audit.compare import (
    _holm,
    cells_l1_power,
    compare,
    decide,
    sup_distance_power,
    trials_for_power,
)
from parties.audit.element_tests import chi2_2samp_columns, element_families, ks_2samp_columns
from parties.audit.statistical import alternative_inputs, honest_parties, pair_plan
from protocols.effects import Call


def test_ks_columns_match_scipy() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.random((40, 5)), rng.random((70, 5)) ** 1.3
    x[:, 4] = np.round(x[:, 4], 1)  # ties
    y[:, 4] = np.round(y[:, 4], 1)
    ours = ks_2samp_columns(x, y)
    d = stats.ks_2samp(x, y, axis=0).statistic  # scipy's D, all columns at once
    expected = stats.kstwobign.sf(d * np.sqrt(40 * 70 / 110))
    assert ours == pytest.approx(expected, rel=1e-9)
    # with equal samples, as the audit draws them (trials per side), the limiting law is
    # closer to the exact two-sample p-value than scipy's method="asymp" is
    x, y = rng.random((150, 6)), rng.random((150, 6))
    ours = ks_2samp_columns(x, y)
    exact = stats.ks_2samp(x, y, axis=0, method="exact").pvalue
    asymp = stats.ks_2samp(x, y, axis=0, method="asymp").pvalue
    assert np.all(np.abs(ours - exact) <= np.abs(asymp - exact))
    assert np.max(np.abs(ours - exact)) < 0.005


def test_chi2_columns_match_scipy() -> None:
    rng = np.random.default_rng(1)
    x, y = rng.integers(0, 4, (50, 3)), rng.integers(0, 4, (80, 3))
    y[:, 1] = rng.choice(4, 80, p=[0.4, 0.3, 0.2, 0.1])
    x[:, 2] = 2  # one cell in x, ...
    y[:, 2] = np.where(rng.random(80) < 0.5, 2, 3)  # ... two cells overall
    ours = chi2_2samp_columns(x, y, 4)
    for c in range(3):
        table = np.array([np.bincount(x[:, c], minlength=4), np.bincount(y[:, c], minlength=4)])
        table = table[:, table.sum(axis=0) > 0]
        assert ours[c] == pytest.approx(stats.chi2_contingency(table, correction=False).pvalue)
    same = chi2_2samp_columns(np.full((5, 1), 1), np.full((7, 1), 1), 4)
    assert np.isnan(same[0])  # one cell in both samples: nothing to compare


def test_element_families_need_five_trials_per_residue() -> None:
    assert element_families(5, 100) == [("value", 5)]
    assert element_families(P, 9) == [("value", 0)]
    assert element_families(P, 24) == [("value", 0), ("mod 4", 4), ("mod 3", 3)]
    assert element_families(P, 1280) == [("value", 0), ("mod 256", 256), ("mod 3", 3),
                                         ("mod 5", 5), ("mod 7", 7)]


def test_holm_step_down() -> None:
    p = np.array([0.01, 0.04, 0.03, 0.005])
    # sorted 0.005 ≤ 0.05/4, 0.01 ≤ 0.05/3, 0.03 > 0.05/2: the first two are rejected
    assert sorted(_holm(p, 0.05, 4).tolist()) == [0, 3]
    assert _holm(p, 0.05, 100).size == 0  # the same p-values among 100 hypotheses
    assert _holm(np.array([0.001, 0.002]), 0.05, 2).tolist() == [0, 1]


def test_sup_distance_power_is_honest() -> None:
    """A deviation of exactly the stated sup distance is caught at least 90% of the time."""
    n, m, level = 48, 384, 1e-3 / 200
    delta = sup_distance_power(n, m, level)
    assert 0 < delta < 1
    rng = np.random.default_rng(2)
    caught = 0
    for _ in range(200):
        x = np.where(rng.random(n) < delta, 0.0, rng.random(n))  # an atom of mass Δ at 0
        y = rng.random(m)
        caught += stats.ks_2samp(x, y, method="asymp").pvalue <= level
    assert caught / 200 >= 0.9
    assert sup_distance_power(4 * n, 4 * m, level) < delta / 1.8  # ~1/sqrt(n)


def test_cells_l1_power_is_about_right() -> None:
    """A residue law at the stated L1 distance from uniform is caught about 90% of the time."""
    n, m, cells, level = 64, 512, 4, 1e-3 / 100
    l1 = cells_l1_power(n, m, cells, level)
    law = np.full(cells, 1 / cells) - l1 / (2 * (cells - 1))  # L1/2 moved onto cell 0
    law[0] = 1 / cells + l1 / 2
    assert law.min() >= 0 and abs(np.abs(law - 1 / cells).sum() - l1) < 1e-12
    rng = np.random.default_rng(3)
    caught = sum(
        stats.chi2_contingency(np.array([np.bincount(rng.choice(cells, n, p=law), minlength=4),
                                         np.bincount(rng.integers(0, cells, m), minlength=4)]),
                               correction=False).pvalue <= level
        for _ in range(200))
    assert caught / 200 >= 0.85  # asymptotic: the statement is approximate, and says so


def test_trials_for_power_is_the_threshold() -> None:
    """10 tests per family (the families grow with the trials) and 5 others."""
    n = trials_for_power(P, 10, 5, 1e-3, 8.0)

    def power(k: int) -> float:
        tests = 10 * len(element_families(P, k)) + 5
        return sup_distance_power(k, 8 * k, 1e-3 / tests)

    assert power(n) < 1.0 <= power(n - 1)


# -- linear tests -------------------------------------------------------------------------------


def test_relations_find_exactly_the_planted_affine_relations() -> None:
    rng = np.random.default_rng(4)
    z = F61.random(rng, (30, 6))
    z[:, 4] = F61.add(F61.mul(z[:, 1], F61.elements([7])), F61.elements([5]))  # x4 = 7x1 + 5
    z[:, 5] = F61.elements([9] * 30)  # a constant: no relation reported
    rel = relations(F61, z, np.arange(6), rng, 16)
    assert (rel.i.tolist(), rel.j.tolist()) == ([1], [4])
    assert (int(rel.a[0]), int(rel.b[0])) == (7, 5)
    w = z.copy()
    assert holds(F61, w, rel).tolist() == [True]
    w[3, 4] = F61.add(w[3:4, 4], F61.elements([1]))[0]
    assert holds(F61, w, rel).tolist() == [False]
    assert len(relations(F61, F61.random(rng, (30, 6)), np.arange(6), rng, 16)) == 0


def test_hull_tests_separate_a_dependent_sample_and_know_when_they_cannot() -> None:
    rng = np.random.default_rng(5)
    y = F61.random(rng, (40, 3))
    x = F61.random(rng, (40, 3))
    x[:, 2] = F61.sub(F61.add(x[:, 0], x[:, 1]), F61.elements([3]))  # a reused mask, say
    groups = [np.arange(3)]
    separated, _, _ = hull_tests(F61, x, y, groups, 2)
    assert [g for g, _ in separated] == [0] and separated[0][1] < 1e-300 ** 0.5
    assert hull_tests(F61, F61.random(rng, (40, 3)), y, groups, 2)[:2] == ([], 0)
    # four trials cannot saturate a 3-dimensional hull with 2 spare rows
    few = hull_tests(F61, F61.random(rng, (4, 3)), y, groups, 2)
    assert few[0] == [] and few[1] == 1 and few[2] >= 6


def _layout(sizes: list[list[int]]) -> Layout:
    calls = tuple(Call("secure_sum", c) for c in range(len(sizes)))
    messages = tuple(tuple((0, s + 1, "column_sum", 0) for s in range(len(row)))
                     for row in sizes)
    return Layout(calls, messages, tuple(tuple(row) for row in sizes))


def test_compare_locates_a_relation_between_two_calls() -> None:
    """A mask reused in call 1: element 2 of call 1 is element 2 of call 0 plus a constant."""
    rng = np.random.default_rng(6)
    layout = _layout([[4], [4]])
    x = F61.random(rng, (32, 8))
    x[:, 6] = F61.add(x[:, 2], F61.elements([11]))
    y = F61.random(rng, (256, 8))
    comparison = compare(F61, layout, x, y, alpha=1e-3)
    decision = decide([comparison], 1e-3, P, 8.0, "test")
    assert decision.verdict == "leak" and decision.family == "relation"
    assert (decision.call, decision.message) == (1, "secure_sum#1.column_sum from 1 to 0")
    assert decision.details["element"] == 2
    honest = decide([compare(F61, layout, F61.random(rng, (32, 8)), y, alpha=1e-3)],
                    1e-3, P, 8.0, "test")
    assert honest.verdict == "private"
    assert 0 < honest.power["sup_cdf_distance"] < 1
    assert honest.power["linear"]["undetermined"] == 0


def test_compare_with_too_few_trials_is_inconclusive_and_says_how_many_would_do() -> None:
    rng = np.random.default_rng(7)
    layout = _layout([[4]])
    x, y = F61.random(rng, (6, 4)), F61.random(rng, (48, 4))
    decision = decide([compare(F61, layout, x, y, alpha=1e-3)], 1e-3, P, 8.0, "test")
    assert decision.verdict == "inconclusive"
    assert "too few trials" in decision.details["reason"]
    needed = decision.details["trials_needed"]
    x2, y2 = F61.random(rng, (needed, 4)), F61.random(rng, (8 * needed, 4))
    again = decide([compare(F61, layout, x2, y2, alpha=1e-3)], 1e-3, P, 8.0, "test")
    assert again.verdict == "private"


def test_small_field_values_are_compared_cell_by_cell() -> None:
    rng = np.random.default_rng(8)
    layout = _layout([[2]])
    y = F5.random(rng, (400, 2))
    biased = F5.elements(rng.choice(5, (80, 2), p=[0.6, 0.1, 0.1, 0.1, 0.1]))
    decision = decide([compare(F5, layout, biased, y, alpha=1e-3)], 1e-3, 5, 5.0, "test")
    assert decision.verdict == "leak" and decision.family == "value"
    fair = decide([compare(F5, layout, F5.random(rng, (80, 2)), y, alpha=1e-3)], 1e-3, 5, 5.0,
                  "test")
    assert fair.verdict == "private" and "value" in fair.power["cells_l1"]


# -- alternative inputs ---------------------------------------------------------------------------


@pytest.mark.parametrize("field_", [F61, F5], ids=["p61", "p5"])
@pytest.mark.parametrize("kind", ["small", "half", "uniform"])
def test_alternative_inputs_keep_the_sum_and_change_every_honest_element(field_, kind) -> None:
    rng = np.random.default_rng(0)
    for n_parties, coalition in [(3, (0,)), (4, (1,)), (4, (0, 3)), (5, (2, 4)), (5, (0,))]:
        inputs = [field_.random(rng, 6) for _ in range(n_parties)]
        before = [x.copy() for x in inputs]
        honest = honest_parties(n_parties, coalition)
        for absorber in range(-len(honest), 0):
            out = alternative_inputs(field_, inputs, coalition, rng, kind, absorber)
            assert all(np.array_equal(x, b) for x, b in zip(inputs, before, strict=True))
            total = [sum(col) % field_.p for col in zip(*[list(map(int, x)) for x in inputs],
                                                        strict=True)]
            assert [sum(col) % field_.p for col in zip(*[list(map(int, x)) for x in out],
                                                       strict=True)] == total
            for m in range(n_parties):
                delta = [(int(b) - int(a)) % field_.p for a, b in zip(inputs[m], out[m],
                                                                       strict=True)]
                if m in coalition:
                    assert delta == [0] * 6
                    continue
                assert all(v != 0 for v in delta)
                if m != honest[absorber] and kind == "small":
                    assert set(delta) <= {1, field_.p - 1}
                if m != honest[absorber] and kind == "half" and field_.p > 5:
                    assert set(delta) <= {(field_.p - 1) // 2, (field_.p + 1) // 2}


def test_pair_plan_gives_every_honest_party_each_designed_offset() -> None:
    plan = pair_plan(6)
    assert [k for k, _ in plan] == ["small", "half", "uniform"] * 2
    for n_honest in (2, 3):
        for kind in ("small", "half"):
            absorbers = {a % n_honest for k, a in plan if k == kind}
            assert len(absorbers) == 2  # two rounds, two different absorbers: nobody is
            # the absorber of every pair of this kind


def test_alternative_inputs_with_one_honest_party_is_a_copy() -> None:
    inputs = [F5.elements([1, 2]), F5.elements([3, 4]), F5.elements([0, 1])]
    out = alternative_inputs(F5, inputs, (0, 2), np.random.default_rng(0))
    assert [list(map(int, x)) for x in out] == [list(map(int, x)) for x in inputs]
    assert all(o is not x for o, x in zip(out, inputs, strict=True))


def test_planted_leaks_over_gf_2_127_are_caught_by_the_fast_path_as_by_galois() -> None:
    """NormedSecureSum's field: a mask reused within a call (a 3-column affine dependence, seen
    only by the hull ranks) and a mask reused across calls (a 2-column relation) are leaks;
    uniform views stay private. The compiled ranks separate exactly the groups galois's do."""
    from protocols.field import prime_field
    from protocols.field.fast_field import fast_field

    p127 = (1 << 127) - 1
    f = prime_field(p127)
    rng = np.random.default_rng(9)
    layout = _layout([[4], [4]])
    y = f.random(rng, (256, 8))
    within = f.random(rng, (40, 8))
    within[:, 3] = f.sub(f.add(within[:, 0], within[:, 1]), f.elements([3]))  # x3 = x0 + x1 − 3
    across = f.random(rng, (40, 8))
    across[:, 6] = f.add(f.mul(across[:, 2], f.elements([5])), f.elements([11]))
    groups = [np.arange(4)]
    slow = hull_tests(f, within[:, :4], y[:, :4], groups, 2)
    fast = hull_tests(fast_field(f), within[:, :4], y[:, :4], groups, 2)
    assert [g for g, _ in slow[0]] == [g for g, _ in fast[0]] == [0]
    verdicts = {}
    for name, x in (("within", within), ("across", across), ("honest", f.random(rng, (40, 8)))):
        d = decide([compare(f, layout, x, y, alpha=1e-3)], 1e-3, p127, 6.4, "test")
        verdicts[name] = (d.verdict, d.family, d.call)
    assert verdicts["within"] == ("leak", "hull", 0)
    assert verdicts["across"] == ("leak", "relation", 1)
    assert verdicts["honest"] == ("private", None, None)
