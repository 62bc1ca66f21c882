"""CAPE (seed 003 §3): calibration, noise plans, zero-sum noise, the discrete Gaussian, and the
protocol on the simulator — result, ledger against the declared cost, replay, and the scheme's
claims (6a: aggregate variance = pooled, conventional S times larger; 6b: each release carries
at least τ_s²), also with unequal sizes."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from parties.party import Party
from protocols.cape_noise_plans import (
    InfeasibleNoiseError,
    cape_plan,
    constraint_residuals,
    conventional_plan,
    feasibility_lp,
    generalized_plan,
    performance_gain,
)
from protocols.correlated_noise import (
    AGGREGATOR,
    NOISE_GENERATOR,
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    check_privacy,
    declared_cost,
    discrete_gaussian,
    gaussian_noise_scale,
    zero_sum_noise,
)
from protocols.errors import InputError
from protocols.field import FixedPoint, prime_field
from sim.network import Network
from sim.simulation import Simulation

FIXED = FixedPoint(prime_field("2^61-1"), 24)


def test_gaussian_calibration_is_the_papers_formula() -> None:
    assert gaussian_noise_scale(0.5, 2.0, 1e-3) == pytest.approx(
        0.5 * math.sqrt(2 * math.log(1250.0)) / 2.0, rel=1e-15)


@pytest.mark.parametrize("eps, delta", [(0.0, 0.1), (-1.0, 0.1), (1.0, 0.0), (1.0, 1.0),
                                        (1.0, -0.2), (float("nan"), 0.1), (True, 0.1)])
def test_bad_privacy_budgets_are_refused(eps: float, delta: float) -> None:
    with pytest.raises(InputError, match=r"epsilon|delta"):
        check_privacy(eps, delta)


def test_equal_plan_is_eq_2_and_meets_every_constraint() -> None:
    S, tau = 5, 0.3
    plan = cape_plan(tau, S)
    np.testing.assert_allclose(plan.tau_e**2, (1 - 1 / S) * tau**2)
    np.testing.assert_allclose(plan.tau_f**2, tau**2 / S)
    np.testing.assert_allclose(plan.tau_g**2, tau**2 / S)
    assert plan.aggregate_variance() == pytest.approx((tau / S) ** 2)
    np.testing.assert_allclose(plan.release_variance(), (1 + 1 / S) * tau**2)
    r = constraint_residuals(plan)
    assert r["privacy"] <= 1e-15 and r["zero_sum"] < 1e-15 and abs(r["pooled"]) < 1e-15
    cov = plan.generator_covariance()
    np.testing.assert_allclose(np.diag(cov), (1 - 1 / S) * tau**2)
    np.testing.assert_allclose(cov[0, 1], -(tau**2) / S)


# feasibility_lp solves in units of max τ_s² and asks HiGHS for primal feasibility 1e-10 there;
# HiGHS's dual feasibility tolerance is its default 1e-7. That is all an LP solver promises
# about an equality row or the objective (that HiGHS's simplex vertices meet them to rounding
# is its last digits, not its contract), so the LP's plan is held to 10× these, in those units.
LP_PRIMAL_TOL, LP_DUAL_TOL = 1e-10, 1e-7


def real_release_variance(plan) -> np.ndarray:
    """Var of each release's noise with the generator's real covariance: the reference
    construction sets e_S = −(1/μ_S) Σ μ_s e_s, of variance Σ μ_s² τ_es² / μ_S² whatever τ_eS
    the plan declares (``constraint_residuals`` reads the declared one)."""
    return np.diag(plan.generator_covariance()) + plan.tau_f**2 + plan.tau_g**2


def plan_errors(plan, tau: np.ndarray) -> dict[str, float]:
    """Each constraint's violation in units of max τ_s² (the units the LP is solved in)."""
    unit = float(np.max(tau**2))
    r = constraint_residuals(plan)
    real = float(np.max(tau**2 - real_release_variance(plan)))
    return {"privacy": max(r["privacy"], real) / unit, "zero_sum": r["zero_sum"] / unit,
            "pooled": abs(r["pooled"]) / unit,
            "excess": float(np.sum(plan.release_variance() - tau**2)) / unit}


def closed_form_bounds(tau: np.ndarray, pool: float) -> dict[str, float]:
    """generalized_plan is arithmetic on τ, μ, τ_pool: rounding only (relative 1e-9)."""
    return {"privacy": 1e-9, "zero_sum": 1e-9, "pooled": 1e-9 * pool**2 / np.max(tau**2),
            "excess": np.inf}


def lp_bounds(mu: np.ndarray) -> dict[str, float]:
    """The LP's contract: privacy is topped up exactly on the declared variances, but site S's
    real e-variance is off by the zero-sum row's residual / μ_S²; the pooled row is met to the
    primal tolerance; the objective Σ release variance is within the dual tolerance times
    Σ x ≤ S of its optimum, which is Σ τ_s² here: with μ_s τ_s = τ_pool at every site,
    τ_e = 0, one site's τ_g² = τ_pool²/μ_s² = τ_s² and τ_f for the rest is feasible, and no
    feasible point releases less than τ_s² anywhere."""
    return {"privacy": 10 * LP_PRIMAL_TOL / mu[-1] ** 2, "zero_sum": 1e-9,
            "pooled": 10 * LP_PRIMAL_TOL, "excess": 10 * LP_DUAL_TOL * len(mu)}


def within(errors: dict[str, float], bounds: dict[str, float]) -> bool:
    return all(errors[name] <= bounds[name] for name in bounds)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(50, 5000), min_size=2, max_size=8),
       st.floats(0.1, 5.0), st.floats(1e-5, 0.1))
def test_generalized_plans_meet_the_constraints(sizes: list[int], eps: float,
                                                delta: float) -> None:
    n = np.array(sizes, dtype=float)
    c = math.sqrt(2 * math.log(1.25 / delta)) / eps
    tau, mu, pool = c / n, n / n.sum(), c / n.sum()
    try:
        plan = generalized_plan(tau, mu, pool)
    except InfeasibleNoiseError:
        pass
    else:
        errors = plan_errors(plan, tau)
        assert within(errors, closed_form_bounds(tau, pool)), errors
    plan = feasibility_lp(tau, mu, pool)  # the LP finds a point whenever one exists
    errors = plan_errors(plan, tau)
    assert within(errors, lp_bounds(mu)), errors
    assert errors["excess"] >= -1e-9  # nothing releases less than τ_s²: Σ is ≥ Σ τ_s²


def test_the_plan_checks_reject_a_slightly_wrong_plan() -> None:
    """Negative control for the bounds above, at the hypothesis range's hardest scale (one
    small site among large ones, τ_pool² ≈ 2e-6·max τ_s²): 0.1 % too little noise, or 0.01 %
    more than the LP's optimum, is rejected even by the LP's looser bounds (the closed-form
    bounds on privacy and pooled are tighter still)."""
    n = np.array([50.0] + [5000.0] * 7)
    c = math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.1
    tau, mu, pool = c / n, n / n.sum(), c / n.sum()
    closed, lp = generalized_plan(tau, mu, pool), feasibility_lp(tau, mu, pool)
    assert within(plan_errors(closed, tau), closed_form_bounds(tau, pool))
    assert within(plan_errors(lp, tau), lp_bounds(mu))
    short = 1 - 1e-3
    wrong = {
        "pooled": [replace(p, tau_g=p.tau_g * math.sqrt(short)) for p in (closed, lp)],
        "privacy": [replace(closed, generator_std=closed.generator_std * math.sqrt(short)),
                    replace(lp, tau_f=lp.tau_f * math.sqrt(short))],
        "excess": [replace(lp, tau_f=np.sqrt(lp.tau_f**2 + 1e-4 * tau**2))],  # feasible
    }
    for name, plans in wrong.items():
        for plan in plans:
            errors = plan_errors(plan, tau)
            assert errors[name] > lp_bounds(mu)[name], (name, errors)
            assert not within(errors, lp_bounds(mu))


def test_generalized_infeasibility_names_the_site() -> None:
    with pytest.raises(InfeasibleNoiseError, match="reference site"):
        generalized_plan([1.0, 1.0, 0.01], [0.2, 0.2, 0.6], 0.5)


def test_performance_gain_is_between_one_and_s() -> None:
    assert performance_gain([100] * 7) == pytest.approx(7.0)
    assert performance_gain([700, 0, 0, 0]) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    for _ in range(50):
        g = performance_gain(rng.integers(1, 1000, size=6))
        assert 1.0 <= g <= 6.0


@pytest.mark.parametrize("kind", ["float", "discrete"])
def test_zero_sum_noise_sums_to_zero_with_the_plans_covariance(kind: str) -> None:
    S, tau = 4, 0.2
    plan = cape_plan(tau, S)
    rng = np.random.default_rng(1)
    e = zero_sum_noise(rng, plan, 40_000, kind, FIXED)
    np.testing.assert_array_equal(np.rint(e.sum(axis=0) * FIXED.scale), 0)  # exact, on the grid
    cov = np.cov(e)
    np.testing.assert_allclose(cov, plan.generator_covariance(), atol=4 * tau**2 / 100)


def test_discrete_gaussian_has_the_discrete_gaussian_pmf() -> None:
    sigma = 2.5
    rng = np.random.default_rng(2)
    draws = discrete_gaussian(rng, sigma, 200_000)
    support = np.arange(-12, 13)
    pmf = np.exp(-(support**2) / (2 * sigma**2))
    pmf /= pmf.sum()
    observed = np.array([(draws == k).sum() for k in support])
    assert (np.abs(draws) <= 12).mean() > 0.9999
    expected = pmf * observed.sum()
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    big = discrete_gaussian(rng, 1e5, 100_000)
    assert big.var() == pytest.approx(1e10, rel=0.02)


# -- the protocol on the simulator --------------------------------------------------------------


def run_cape(stats_: list[np.ndarray], plan, noise: str = "float", seed: int = 3,
             trials: int = 1, prime: str = "2^61-1"):
    S, d = len(stats_), len(stats_[0])

    def site(ctx, x):
        for _ in range(trials):
            yield from cape_site(ctx, x, plan, noise=noise, label="x")

    def aggregator(ctx):
        out = []
        for _ in range(trials):
            out.append((yield from cape_aggregator(ctx, plan, d, noise=noise)))
        return np.array(out)

    def generator(ctx):
        for _ in range(trials):
            yield from cape_noise_generator(ctx, plan, d, noise=noise)

    parties = [Party(s, site, {"x": x}) for s, x in enumerate(stats_)]
    parties.append(Party(S, aggregator, role=AGGREGATOR))
    if plan.uses_generator:
        parties.append(Party(S + 1, generator, role=NOISE_GENERATOR))
    sim = Simulation(Network.build(S), prime=prime, seed=seed, keys="preshared")
    return sim.run(parties)


@pytest.mark.parametrize("S", [2, 3, 5])
def test_ledger_matches_the_declared_cost_and_replays(S: int) -> None:
    plan = cape_plan(0.1, S)
    x = [np.full(6, float(s)) for s in range(S)]
    result = run_cape(x, plan)
    cost = declared_cost(plan, 6)
    rows = result.ledger.select(protocol="cape")
    for s in range(S):
        sent = [r for r in rows if r.sender == s]
        assert len(sent) == cost.site_messages_sent
        assert sum(r.elements for r in sent) == cost.site_elements_sent
        assert len([r for r in rows if r.receiver == s]) == cost.site_messages_received
    assert len([r for r in rows if r.sender == S]) == cost.aggregator_messages_sent
    assert len([r for r in rows if r.sender == S + 1]) == cost.generator_messages_sent
    again = run_cape(x, plan)
    assert again.ledger.to_csv() == result.ledger.to_csv()
    np.testing.assert_array_equal(again.outputs[S], result.outputs[S])
    for pid, view in result.views.items():  # every received message is in exactly one view
        assert len(view.received) == len([r for r in result.ledger if r.receiver == pid])


@pytest.mark.parametrize("noise", ["float", "discrete"])
def test_claim_6a_aggregate_variance_is_pooled_and_conventional_is_s_times(noise: str) -> None:
    """Lemma 1: over many releases, CAPE's aggregate noise variance is τ_pool² = τ²/S²; the
    conventional scheme's is τ²/S = S·τ_pool². 300 releases × 4 coordinates per scheme."""
    S, tau, d, trials = 5, 0.05, 4, 300
    rng = np.random.default_rng(4)
    x = [rng.random(d) for _ in range(S)]
    truth = np.mean(x, axis=0)
    pooled = (tau / S) ** 2
    cape = run_cape(x, cape_plan(tau, S), noise, trials=trials).outputs[S]
    conv = run_cape(x, conventional_plan([tau] * S), noise, trials=trials).outputs[S]
    n = cape.size
    for values, target in ((cape, pooled), (conv, S * pooled)):
        var = float(np.mean((values - truth) ** 2))
        # chi-square interval for a variance from n values with known mean, 99.9 %
        lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
        assert lo * target < var < hi * target
    ratio = np.mean((conv - truth) ** 2) / np.mean((cape - truth) ** 2)
    assert 0.7 * S < ratio < 1.4 * S


@pytest.mark.parametrize("unequal", [False, True])
def test_claim_6b_each_release_alone_carries_at_least_tau2(unequal: bool) -> None:
    """Theorem 1: every site's release, read from the aggregator's view, carries noise of
    variance τ_e² + τ_f² + τ_g² ≥ τ_s² — for the unequal case with the generalized plan."""
    S, d, trials = 4, 5, 250
    if unequal:
        n = np.array([100.0, 300.0, 250.0, 600.0])
        c = math.sqrt(2 * math.log(1.25 / 0.01)) / 1.0
        plan = generalized_plan(c / n, n / n.sum(), c / n.sum())
    else:
        plan = cape_plan(0.08, S)
    rng = np.random.default_rng(5)
    x = [rng.random(d) for _ in range(S)]
    result = run_cape(x, plan, trials=trials)
    view = result.views[S]
    n_values = trials * d
    lo = stats.chi2.ppf(0.0005, n_values) / n_values
    for s in range(S):
        noise = np.array([FIXED.decode(m.payload) - x[s] for m in view.received
                          if m.sender == s and m.step == "release"])
        measured = float(np.mean(noise**2))
        assert plan.release_variance()[s] >= plan.tau[s] ** 2 * (1 - 1e-12)
        assert measured > lo * plan.release_variance()[s]
        assert measured > 0.8 * plan.tau[s] ** 2
    # and the aggregate is the weighted statistic with the pooled noise
    agg = result.outputs[S]
    target = np.sum([w * v for w, v in zip(plan.weights, x, strict=True)], axis=0)
    var = float(np.mean((agg - target) ** 2))
    lo_a, hi_a = stats.chi2.ppf([0.0005, 0.9995], agg.size) / agg.size
    assert lo_a * plan.tau_pool**2 < var < hi_a * plan.tau_pool**2


def test_noise_that_overflows_a_small_field_is_an_error() -> None:
    from protocols.errors import FieldOverflowError, ProtocolAbort

    plan = cape_plan(50.0, 3)
    with pytest.raises((FieldOverflowError, ProtocolAbort)):
        run_cape([np.zeros(3)] * 3, plan, prime="2^31-1")
