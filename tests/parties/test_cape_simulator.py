"""CAPE's simulator (:mod:`protocols.cape_simulator`) and the simulation audit of CAPE runs.

* The simulator's law, checked against closed forms computed here with numpy: the aggregator's
  view of the honest releases given its own noise and the aggregate (seed 003 §3, eq. (2):
  Cov(e) = τ²(I − 11ᵀ/S), τ_g² = τ²/S, the aggregate's noise Σ_s g_s/S).
* Honest runs are ``private`` with stated power for the coalitions the paper covers (the
  aggregator with at most ⌈S/3⌉ − 1 sites, sites alone), and a ``leak`` naming the DP shortfall
  where the honest noise is not enough (the trusted noise generator colluding, too many sites).
* Planted leaks (:mod:`planted_cape`), each caught and located at the leaky site's message
  (the noise generator's at a release), with a small attack proving two of them real.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pytest
from auditing import P
from planted_cape import LEAKY, leaky_generator, leaky_site

from parties.audit.randomness import ConditionedRandomness
from parties.cape_collusion import analytic_residual
from protocols.cape_dp_check import Budget
from protocols.cape_noise_plans import cape_plan
from protocols.cape_simulator import CapeSimulator
from protocols.correlated_noise import (
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    gaussian_noise_scale,
)
from protocols.field import FixedPoint, prime_field
from protocols.registry import cape_declaration
from sim.experiments.cape.cape_setup import cape_parties
from sim.privacy import SimPyRunner, audit

FRAC = 20
EPSILON, DELTA, SENSITIVITY = 1.0, 0.01, 0.1
TAU = gaussian_noise_scale(SENSITIVITY, EPSILON, DELTA)


def _parties(S: int, d: int, calls: int, site: Callable[..., Any] | None = None,
             generator: Callable[..., Any] | None = None, seed: int = 1) -> tuple[list, Any]:
    plan = cape_plan(TAU, S)
    rng = np.random.default_rng(seed)

    def honest_site(ctx: Any, x: np.ndarray) -> Generator[Any, Any, None]:
        for _ in range(calls):
            yield from cape_site(ctx, x, plan)

    def leaky(ctx: Any, x: np.ndarray) -> Generator[Any, Any, None]:
        carry: dict[str, np.ndarray] = {}
        for _ in range(calls):
            yield from site(ctx, x, plan, carry)  # type: ignore[misc]

    def agg(ctx: Any) -> Generator[Any, Any, None]:
        for _ in range(calls):
            yield from cape_aggregator(ctx, plan, d)

    def gen(ctx: Any) -> Generator[Any, Any, None]:
        for _ in range(calls):
            yield from (generator or cape_noise_generator)(ctx, plan, d)

    parties = cape_parties(honest_site if site is None else leaky,
                           [{"x": rng.random(d)} for _ in range(S)], (agg, {}), (gen, {}))
    return parties, plan


def _audit(parties: list, plan: Any, coalition: tuple[int, ...], trials: int = 100,
           budget: bool = True, seed: int = 0) -> Any:
    S = plan.n_sites
    protocol = cape_declaration(plan, FRAC, budget=Budget.uniform(S, EPSILON, DELTA, SENSITIVITY)
                           if budget else None)
    return audit(parties, None, coalition, prime=P, frac_bits=FRAC, trials=trials,
                 protocol=protocol, seed=seed)


# -- the law -------------------------------------------------------------------------------------


def test_simulated_releases_have_the_closed_form_conditional_law() -> None:
    """The aggregator alone: given f and the aggregate A, r_h − f_h = x_h + (A − x̄) + ξ with
    Cov(ξ) = τ²[(1 + 1/S)I − 11ᵀ/S] − (τ²/S²)·11ᵀ (eq. (2); gain Cov(n_h, A)/Var(A) = 1)."""
    S, d = 4, 3
    parties, plan = _parties(S, d, 1)
    runner = SimPyRunner(P, FRAC, 0)
    members = (S,)
    views = runner(parties, ConditionedRandomness(list(range(S + 2)), members, 0, 0))
    from parties.audit import noisy_release
    from parties.audit.calls import split_run

    records = split_run(views, members, runner.field, tuple(range(S)))
    sim = CapeSimulator(plan, FRAC)
    noisy_release.give_statistics(records, views, dict.fromkeys(records, sim))
    (record,) = records.values()
    view = record.view
    fixed = FixedPoint(prime_field(P), FRAC)
    n = 40_000
    draws = sim.simulate(view, np.random.default_rng(3), n)
    f = np.asarray(dict(view.inputs[S])["aggregator_noise"])
    A = np.asarray(dict(view.outputs[S])["aggregate"])
    x = np.stack([np.asarray(parties[s].inputs["x"]) for s in range(S)])
    released = np.stack([fixed.decode(draws[(S, h, "release")]).reshape(n, d) - f[h]
                         for h in range(S)])  # (S, n, d)
    expect_mean = x + (A - x.mean(axis=0))[None, :]
    tau2 = TAU**2
    expect_cov = tau2 * ((1 + 1 / S) * np.eye(S) - np.ones((S, S)) / S) - tau2 / S**2
    assert np.allclose(released.mean(axis=1), expect_mean, atol=5 * TAU / math.sqrt(n))
    for j in range(d):
        cov = np.cov(released[:, :, j])
        assert np.allclose(cov, expect_cov, atol=0.05 * tau2)
    # the releases add up to S·A exactly (to the grid): the last one is determined
    assert np.allclose(released.mean(axis=0), A, atol=S * 2.0**-FRAC)


def test_dp_shortfall_without_a_budget_is_the_per_release_residual_of_cape_collusion() -> None:
    """Without a budget the simulator holds the residual variance of e_h + g_h given the
    coalition's shares to τ² (Theorem 1's argument); it equals parties.cape_collusion's
    analytic value, computed separately."""
    S = 5
    parties, plan = _parties(S, 2, 1)
    result = _audit(parties, plan, (0, 1, S), trials=20, budget=False)
    assert result.verdict == "leak"
    expect = analytic_residual(plan, 2, [0, 1], side_information=False)
    assert expect < TAU**2
    assert f"site 2: {expect:.6g}" in result.details["reason"]


# -- honest runs ----------------------------------------------------------------------------------


@pytest.mark.parametrize("coalition", [
    (5,), (0, 5), (0, 1, 5),
    *(pytest.param(c, marks=pytest.mark.slow) for c in [(1,), (0, 1, 2, 3), (0, 6), (6,)]),
])
def test_honest_cape_is_private_with_power_for_covered_coalitions(
        coalition: tuple[int, ...]) -> None:
    """S = 5: the aggregator with up to 2 sites (the paper covers ⌈5/3⌉ − 1 = 1), sites alone,
    a site with the noise generator (it sees no honest release) — private, with the power."""
    parties, plan = _parties(5, 4, 3)
    result = _audit(parties, plan, coalition)
    assert result.verdict == "private", result.details
    if coalition != (6,):  # the noise generator alone receives nothing
        gaussian = result.power["gaussian"] if 5 in coalition else None
        assert result.power["sup_cdf_distance"] < 1.0
        if gaussian is not None:
            assert gaussian["variance_ratio"] < 0.5


@pytest.mark.parametrize("coalition,sites", [((0, 1, 2, 5), (3, 4)), ((5, 6), (0, 1, 2, 3, 4))])
def test_not_enough_honest_noise_is_a_leak_naming_the_shortfall(
        coalition: tuple[int, ...], sites: tuple[int, ...]) -> None:
    """The aggregator with 3 of 5 sites, or with the (trusted) noise generator: the coalition's
    view of an honest statistic is a Gaussian mechanism whose exact δ at ε exceeds δ."""
    parties, plan = _parties(5, 4, 1)
    result = _audit(parties, plan, coalition, trials=20)
    assert result.verdict == "leak" and result.call == 1
    for h in sites:
        assert f"site {h}: μ = " in result.details["reason"]


# -- planted leaks --------------------------------------------------------------------------------


def _leaky(leak: str) -> Callable[..., Any]:
    return lambda ctx, x, plan, carry: leaky_site(ctx, x, plan, leak, carry)


@pytest.mark.parametrize("leak,d,family,call", [
    ("no_cancel", 4, None, 1),
    ("drop_share", 4, None, 1),
    ("raw", 4, None, 1),
    ("wrong_variance", 4, "gauss var (all calls)", 1),
    ("reused_noise", 4, "gauss corr (across calls)", 2),
])
def test_planted_site_leaks_are_caught_at_the_leaky_release(leak: str, d: int,
                                                           family: str | None,
                                                           call: int) -> None:
    """S = 5, d = 4 (the functionality check cannot fit weights with d < S: the simulator
    alone catches these), 5 calls, the aggregator alone."""
    parties, plan = _parties(5, d, 5, site=_leaky(leak))
    result = _audit(parties, plan, (5,))
    assert result.verdict == "leak", result.details
    assert result.call == call
    assert result.message == f"cape#{call}.release from {LEAKY} to 5"
    if family is not None:
        assert result.details["family"] == family


def test_a_noise_share_sent_to_the_aggregator_is_caught_at_that_message() -> None:
    parties, plan = _parties(5, 4, 2, site=_leaky("share_to_aggregator"))
    result = _audit(parties, plan, (5,))
    assert result.verdict == "leak"
    assert result.message == f"cape#1.noise_share from {LEAKY} to 5"


def test_a_generator_without_the_zero_sum_is_caught_at_a_release() -> None:
    """The shares do not cancel: the releases no longer add up to the aggregate.

    The generator leaks in every call alike, so the call the audit names is the one whose
    joint residuals stray further in the draw, not a property: over audit seeds 0–19 it named
    the first CAPE call thirteen times and the second seven times (all 20 ``leak``, family
    ``gauss joint var``, twice pooled over the calls). One call alone, 100 trials, was caught in
    4 of 10 seeds: the power comes from the two calls together. So: a leak at a release of the
    call named, either CAPE call (1 and 2: key agreement is call 0)."""
    parties, plan = _parties(5, 4, 2, generator=leaky_generator)
    for seed in range(3):
        result = _audit(parties, plan, (5,), seed=seed)
        assert result.verdict == "leak" and result.call in (1, 2)
        assert result.message.startswith(f"cape#{result.call}.release from ")
        assert result.details["family"].startswith("gauss joint")


def test_the_leaks_are_real_the_aggregator_recovers_the_statistic() -> None:
    """``raw``: the release *is* the statistic. ``drop_share``: r − f = x + g has variance
    τ²/S, so averaging over the calls the aggregator estimates x_1 S times better than the
    declared τ² allows (checked against numpy's variance of the estimation error)."""
    S, d, calls = 5, 4, 40
    fixed = FixedPoint(prime_field(P), FRAC)
    for leak in ("raw", "drop_share"):
        parties, _ = _parties(S, d, calls, site=_leaky(leak))
        runner = SimPyRunner(P, FRAC, 0)
        views = runner(parties, ConditionedRandomness(list(range(S + 2)), (S,), 0, 0))
        agg = views[S]
        f = {c.index: np.asarray(v) for c, lab, v in agg.protocol_inputs
             if lab == "aggregator_noise"}
        got = np.stack([fixed.decode(m.payload) - (0 if leak == "raw" else f[m.call][LEAKY])
                        for m in agg.received if m.sender == LEAKY and m.step == "release"])
        truth = np.asarray(parties[LEAKY].inputs["x"])
        if leak == "raw":
            assert np.allclose(got, truth, atol=2.0**-FRAC)
        else:
            err = got - truth
            assert float(np.mean(err**2)) < 0.5 * TAU**2  # declared: τ² ... here τ²/S
            assert abs(float(np.mean(err**2)) - TAU**2 / S) < 0.35 * TAU**2 / S


def test_a_declaration_with_a_plan_per_call_judges_each_call_by_its_own() -> None:
    """capeAGN's stages: cape_declaration with a mapping call → plan (and budget) builds one
    simulator per call; a call without a plan, an empty mapping, or budgets for calls without
    a plan are named."""
    from protocols.cape_dp_check import Budget
    from protocols.cape_noise_plans import cape_plan
    from protocols.cape_staged_simulator import StagedCapeSimulator
    from protocols.effects import Call
    from protocols.errors import InputError
    from protocols.registry import cape_declaration
    from protocols.simulator import CallView, SimulatorMismatch

    first, second = cape_plan(1.0, 3), cape_plan(0.5, 3)
    budget = Budget.uniform(3, 1.0, 1e-3, 1.0)
    sim = cape_declaration({0: first, 2: second}, 24, budget={2: budget}).simulator(None)
    assert isinstance(sim, StagedCapeSimulator)
    assert sim.stages[0].plan is first and sim.stages[2].plan is second
    assert sim.stages[0].budget is None and sim.stages[2].budget is budget
    from protocols.field import prime_field

    view = CallView(Call("cape", 1), prime_field(2**61 - 1), (0, 1, 2), (3,))
    with pytest.raises(SimulatorMismatch, match=r"no declared noise plan.*calls \[0, 2\]"):
        sim.sizes(view)
    with pytest.raises(InputError, match="declares no CAPE call"):
        cape_declaration({}, 24)
    with pytest.raises(InputError, match=r"budget names CAPE calls \[5\]"):
        cape_declaration({0: first}, 24, budget={5: budget})
    with pytest.raises(InputError, match="declare plan as one too"):
        cape_declaration(first, 24, budget={0: budget})
