"""The collusion analysis of CAPE (claim 6c): from the coalition's views, the noise left on an
honest site's release, against closed forms derived here; planted leaks it must catch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from parties.cape_collusion import analyse, analytic_residual, paper_threshold
from parties.party import Party
from protocols.cape_noise_plans import cape_plan
from protocols.correlated_noise import (
    AGGREGATOR,
    NOISE_GENERATOR,
    PROTOCOL,
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    zero_sum_noise,
)
from protocols.effects import Input, SendEach
from sim.network import Network
from sim.simulation import Simulation

S, D, TRIALS, TAU = 5, 8, 400, 0.05


def honest_generator(ctx, plan):
    for _ in range(TRIALS):
        yield from cape_noise_generator(ctx, plan, D)


def run(plan, x, generator=honest_generator, site_plan=None):
    def site(ctx, x):
        for _ in range(TRIALS):
            yield from cape_site(ctx, x, site_plan(ctx.party) if site_plan else plan, label="x")

    def aggregator(ctx):
        for _ in range(TRIALS):
            yield from cape_aggregator(ctx, plan, D)

    parties = [Party(s, site, {"x": v}) for s, v in enumerate(x)]
    parties += [Party(S, aggregator, role=AGGREGATOR),
                Party(S + 1, generator, {"plan": plan}, role=NOISE_GENERATOR)]
    return Simulation(Network.build(S), seed=9, keys="preshared", sealing=False).run(parties)


def findings(result, plan):
    out = []
    for c in range(S):
        members = [*range(c), S]
        honest = {t: result.views[t] for t in range(c, S)}
        out.append(analyse(result.coalition(members), plan, S, S - 1, result_fixed(), honest,
                           "x", 1.0, 2.0 / 100))
    return out


def result_fixed():
    from protocols.field import FixedPoint, prime_field

    return FixedPoint(prime_field("2^61-1"), 24)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    return [rng.random(D) for _ in range(S)]


@pytest.fixture(scope="module")
def honest_findings(data):
    plan = cape_plan(TAU, S)
    return plan, findings(run(plan, data), plan)


def test_analytic_residuals_match_closed_forms() -> None:
    """Equal plan, features e_c of c colluders: Var(e_h + g_h | ·) = τ²(1 − c/(S(S − c)));
    with the other honest sites' noise as well and c = 0, τ²(S + 1)/(2S)."""
    plan = cape_plan(1.0, S)
    for c in range(S):
        got = analytic_residual(plan, S - 1, list(range(c)), side_information=False)
        assert got == pytest.approx(1 - c / (S * (S - c)))
    assert analytic_residual(plan, S - 1, [], True) == pytest.approx((S + 1) / (2 * S))
    assert analytic_residual(plan, S - 1, list(range(S - 1)), True) == pytest.approx(1 / S)
    assert paper_threshold(5) == 1 and paper_threshold(10) == 3 and paper_threshold(3) == 0


def test_measured_residuals_match_the_plan(honest_findings) -> None:
    _, found = honest_findings
    for f in found:
        assert f.matches_theory, (f.colluding_sites, f.view_only, f.view_only_analytic)
        assert f.side_information == pytest.approx(f.side_information_analytic,
                                                   rel=f.tolerance)
    assert not found[0].below_view_only  # the aggregator alone learns nothing about e_h
    assert all(f.below_view_only for f in found[1:])  # any colluding site reduces it
    assert found[-1].view_only == pytest.approx(TAU**2 / S, rel=found[-1].tolerance)
    assert found[-1].measured_below
    assert [f.within_paper_threshold for f in found] == [True, True, False, False, False]


def test_planted_leak_site_without_its_own_noise(data) -> None:
    plan = cape_plan(TAU, S)
    leaky = dataclasses.replace(plan, tau_g=np.zeros(S))
    found = findings(run(plan, data, site_plan=lambda s: leaky if s == S - 1 else plan), plan)
    assert found[0].measured_below and not found[0].matches_theory


def tampering_generator(tamper):
    """A noise generator that draws the zero-sum noise e (S × D) as the honest one does, then
    lets ``tamper(e)`` change it in place before recording and sending it."""

    def generator(ctx, plan):
        for _ in range(TRIALS):
            call = ctx.new_call(PROTOCOL)
            e = zero_sum_noise(ctx.rng, plan, D, "float", ctx.fixed)
            tamper(e)
            yield Input("correlated_noise", e, call)
            yield SendEach({s: ctx.fixed.encode(e[s], n_summands=3 * S) for s in range(S)},
                           call, "correlated_noise")

    return generator


def test_planted_leak_generator_copies_the_honest_noise_to_a_colluder(data) -> None:
    def copy_to_site_0(e):
        e[0] = e[S - 1]

    plan = cape_plan(TAU, S)
    found = findings(run(plan, data, generator=tampering_generator(copy_to_site_0)), plan)
    assert found[1].measured_below and not found[1].matches_theory
    assert found[1].view_only < 0.3 * TAU**2


def test_planted_leak_generator_gives_the_honest_site_too_little_noise(data) -> None:
    def shrink_the_honest_noise(e):
        e[S - 1] *= 0.1

    plan = cape_plan(TAU, S)
    found = findings(run(plan, data, generator=tampering_generator(shrink_the_honest_noise)),
                     plan)
    assert found[0].measured_below and not found[0].matches_theory
