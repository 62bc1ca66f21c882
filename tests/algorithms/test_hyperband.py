"""Hyperband (thesis Algorithm 5; Li et al. 2017, Algorithm 1) against the paper's schedule,
its budget formula and an objective whose best configurations are known in advance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from algorithms import hyperband as hb
from protocols import seeds
from protocols.errors import InputError

# Li et al. (JMLR 2017), Table 1: R = 81, η = 3 — (n_i, r_i) per bracket s = 4 … 0
LI_TABLE_1 = {
    4: [(81, 1), (27, 3), (9, 9), (3, 27), (1, 81)],
    3: [(34, 3), (11, 9), (3, 27), (1, 81)],
    2: [(15, 9), (5, 27), (1, 81)],
    1: [(8, 27), (2, 81)],
    0: [(5, 81)],
}


def test_the_schedule_for_r81_eta3_is_li_et_al_table_1():
    got = {b.s: [(r.n, r.r) for r in b.rungs] for b in hb.bracket_schedule(81, 3)}
    assert got == LI_TABLE_1
    assert [b.s for b in hb.bracket_schedule(81, 3)] == [4, 3, 2, 1, 0]


@pytest.mark.parametrize("R, eta", [(27, 3), (9, 3), (16, 2), (100, 3), (64, 4), (1, 3)])
def test_the_schedule_follows_the_papers_formula(R, eta):
    """n = ⌈(B/R) η^s/(s+1)⌉, n_i = ⌊n η^{−i}⌋, r_i = R η^{i−s}, from floating-point math."""
    s_max = math.floor(math.log(R) / math.log(eta) + 1e-12)
    B = (s_max + 1) * R
    sched = hb.bracket_schedule(R, eta)
    assert [b.s for b in sched] == list(range(s_max, -1, -1))
    for b in sched:
        s = b.s
        n = math.ceil(B / R * eta ** s / (s + 1) - 1e-9)
        assert [r.n for r in b.rungs] == [math.floor(n * eta ** -i + 1e-9) for i in range(s + 1)]
        assert [r.r for r in b.rungs] == [max(1, round(R * eta ** (i - s)))
                                          for i in range(s + 1)]
        assert b.rungs[-1].r == R


def test_the_budget_is_the_resumed_sum_and_near_li_et_al_bound():
    """Resumed models train Σ n_i (r_i − r_{i−1}); without resuming each bracket costs
    Σ n_i r_i ≤ n r (s+1) ≈ B (Li et al. §3), so the whole search is at most (s_max+1) B."""
    for R, eta in [(81, 3), (27, 3), (16, 2)]:
        sched = hb.bracket_schedule(R, eta)
        s_max = sched[0].s
        B = (s_max + 1) * R
        resumed = 0
        for b in sched:
            prev = 0
            for rung in b.rungs:
                resumed += rung.n * (rung.r - prev)
                prev = rung.r
            fresh = sum(r.n * r.r for r in b.rungs)
            n, r = b.rungs[0].n, b.rungs[0].r
            assert fresh <= n * r * (b.s + 1) <= B + r * (b.s + 1)
        assert hb.budget(sched) == resumed
        assert resumed <= (s_max + 1) * B
    # R = 81, η = 3 by hand from Table 1
    assert hb.budget(hb.bracket_schedule(81, 3)) == (
        81 + 27 * 2 + 9 * 6 + 3 * 18 + 54 + 34 * 3 + 11 * 6 + 3 * 18 + 54
        + 15 * 9 + 5 * 18 + 54 + 8 * 27 + 2 * 54 + 5 * 81)


def _quadratic_search(R, eta, seed):
    """Configurations x ~ U(0, 1); the loss x + 1/iterations is ordered by x at every rung, so
    successive halving must keep exactly the smallest x of each bracket. The saved model is
    the list of iterations it ran, which must be 0 … R−1 for a finalist (resumed, not rerun)."""
    calls = []

    def sample(rng):
        return float(rng.random())

    def resume(x, state, done, target):
        ran = [] if state is None else list(state)
        assert len(ran) == done
        calls.append(target - done)
        return ran + list(range(done, target))

    def loss(x, state):
        return x + 1.0 / len(state)

    return hb.hyperband(sample, resume, loss, R=R, eta=eta, seed=seed), calls


@pytest.mark.parametrize("R, eta", [(81, 3), (27, 3), (16, 2)])
def test_a_known_objective_keeps_the_best_configurations(R, eta):
    res, calls = _quadratic_search(R, eta, seed=5)
    assert res.iterations == sum(calls) == hb.budget(hb.bracket_schedule(R, eta))
    for b in hb.bracket_schedule(R, eta):
        drawn = [t for t in res.trials if t.bracket == b.s]
        xs = np.array([t.config for t in drawn])
        assert len(drawn) == b.rungs[0].n
        for rung in b.rungs:
            reached = {t.index for t in drawn if t.iterations >= rung.r}
            assert reached == set(np.argsort(xs, kind="stable")[:rung.n].tolist())
        for t in drawn:
            if t.iterations == R:
                assert t.state == list(range(R))
            else:
                assert t.state is None
    all_x = np.array([t.config for t in res.trials if t.iterations == R])
    assert res.best().config == all_x.min()
    assert [t.config for t in res.finalists()] == sorted(all_x.tolist())


def test_configurations_are_drawn_from_their_own_registered_streams():
    res, _ = _quadratic_search(9, 3, seed=11)
    for t in res.trials:
        expected = seeds.rng(11, "hyperband.config", index=(t.bracket, t.index)).random()
        assert t.config == expected
    again, _ = _quadratic_search(9, 3, seed=11)
    assert [t.config for t in again.trials] == [t.config for t in res.trials]
    other, _ = _quadratic_search(9, 3, seed=12)
    assert [t.config for t in other.trials] != [t.config for t in res.trials]


def test_thesis_algorithm_5_is_one_bracket_243_to_9_models_after_81_iterations():
    """§1.4: b = 9 models after τ = 81 iterations from τb/η = 243 configurations run η = 3
    iterations, then the top third until 9, 27 and 81; the thesis's own example keeps
    27 × 1/3 × 1/3 = 3 of 27."""
    rng = np.random.default_rng(0)
    xs = rng.random(243)
    trials = [hb.Trial(0, j, float(x)) for j, x in enumerate(xs)]
    rungs = tuple(hb.Rung(243 // 3 ** i, 3 ** (i + 1)) for i in range(4))
    spent = hb.successive_halving(trials, rungs, 3, lambda c, s, d, t: t,
                                  lambda c, s: c + 1.0 / s)
    final = [t for t in trials if t.iterations == 81]
    assert len(final) == 9
    assert sorted(t.index for t in final) == sorted(np.argsort(xs)[:9].tolist())
    assert spent == 243 * 3 + 81 * 6 + 27 * 18 + 9 * 54
    small = [hb.Trial(0, j, float(x)) for j, x in enumerate(xs[:27])]
    hb.successive_halving(small, (hb.Rung(27, 3), hb.Rung(9, 9), hb.Rung(3, 27)), 3,
                          lambda c, s, d, t: t, lambda c, s: c)
    assert sum(t.iterations == 27 for t in small) == 3


@pytest.mark.parametrize("R, eta, name", [(0, 3, "R"), (81, 1, "eta"), (2.5, 3, "R"),
                                          (True, 3, "R")])
def test_bad_r_or_eta_is_refused(R, eta, name):
    with pytest.raises(InputError, match=name):
        hb.bracket_schedule(R, eta)
