"""Catalogue entry ``cape_mean``: CAPE averaging of the sites' means (seed 003, §3, Lemma 1,
Theorem 1; spec §2–§3), with the claims of the scheme measured over repeated releases.

Each site's statistic is the mean of its rows, f(x_s) = (1/N_s) Σ_n x_n, with every row in the
ball ‖x‖₂ ≤ B (``norm_bound``; a row outside it is an error). Under replace-one adjacency the
mean's L2 sensitivity is Δ_s = 2B/N_s (the paper's scalar example, x ∈ [0, 1], is the
diameter-1 case Δ = 1/N). The aggregate targets the pooled mean Σ_s (N_s/N) f(x_s): equal
sizes use eq. (2)'s plan, unequal sizes the generalized closed form with μ_s = N_s/N and
τ_pool = 2B·c(ε, δ)/N.

One simulation makes ``trials`` releases of the same statistics (a party program loops over
CAPE calls), and another makes them with the conventional scheme. Metrics:

* ``empirical_variance`` — mean over releases and coordinates of (a − pooled mean)² for
  ``scheme``; ``conventional_empirical_variance`` — the same for the conventional scheme;
  ``pooled_variance`` — τ_pool², the pooled-data Gaussian mechanism's variance (claim 6a:
  CAPE's equals it, the conventional one is S times larger with equal sizes); the plans'
  theoretical values beside them;
* ``release_variance`` (per site, measured from the aggregator's view) against
  ``release_variance_theory`` and ``tau2`` (claim 6b: each release alone carries ≥ τ_s²);
* ``collusion`` — for a coalition of the aggregator with c = 0..S−1 sites, the noise left on
  the last site's release, from the coalition's views (:mod:`parties.cape_collusion`, 6c);
* ``accounting`` — per site and for the aggregate, composed over the ``trials`` releases.

Plot ``collusion.png``: residual variance / τ² against c, with the paper's threshold.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from typing import Any

import numpy as np

from algorithms.cape.moments import check_unit_ball
from parties.cape_collusion import analyse, paper_threshold
from parties.party import Party
from protocols import seeds
from protocols.accounting import Release, repeated
from protocols.cape_noise_plans import cape_plan, conventional_plan, generalized_plan
from protocols.context import PartyContext
from protocols.correlated_noise import (
    NoisePlan,
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    gaussian_noise_scale,
)
from sim import plots
from sim.console import table
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.cape.cape_setup import (
    ACCOUNTING_HEADERS,
    ACCOUNTING_S,
    accounting,
    accounting_rows,
    cape_audit_target,
    cape_parties,
)
from sim.simulation import Result

LABEL = "mean"


def _site(ctx: PartyContext, x: np.ndarray, plan: NoisePlan, trials: int,
          noise: str) -> Generator[Any, Any, None]:
    for _ in range(trials):
        yield from cape_site(ctx, x, plan, noise=noise, label=LABEL)


def _aggregator(ctx: PartyContext, plan: NoisePlan, length: int, trials: int,
                noise: str) -> Generator[Any, Any, np.ndarray]:
    out = []
    for _ in range(trials):
        out.append((yield from cape_aggregator(ctx, plan, length, noise=noise)))
    return np.array(out)


def _generator(ctx: PartyContext, plan: NoisePlan, length: int, trials: int,
               noise: str) -> Generator[Any, Any, None]:
    for _ in range(trials):
        yield from cape_noise_generator(ctx, plan, length, noise=noise)


def mean_plan(sizes: np.ndarray, bound: float, epsilon: float, delta: float, scheme: str,
              use_aggregator_noise: bool) -> NoisePlan:
    """The plan for site means of ``sizes`` samples in the ball of radius ``bound``."""

    taus = np.array([gaussian_noise_scale(2 * bound / n, epsilon, delta) for n in sizes])
    weights = sizes / sizes.sum()
    if scheme == "conventional":
        return conventional_plan(taus, weights)
    if np.all(sizes == sizes[0]):
        return cape_plan(float(taus[0]), len(sizes), use_aggregator_noise)
    pool = gaussian_noise_scale(2 * bound / sizes.sum(), epsilon, delta)
    return generalized_plan(taus, weights, pool, use_aggregator_noise)


def _simulate(inp: RunInput, means: list[np.ndarray], plan: NoisePlan, seed: int) -> Result:
    return inp.simulation.run(_parties(inp, means, plan), seed=seed)


def _parties(inp: RunInput, means: list[np.ndarray], plan: NoisePlan) -> list[Party]:
    p = inp.params
    d = len(means[0])
    return cape_parties(
        _site, [{"x": m, "plan": plan, "trials": p["trials"], "noise": p["noise"]} for m in means],
        (_aggregator, {"plan": plan, "length": d, "trials": p["trials"], "noise": p["noise"]}),
        (_generator, {"plan": plan, "length": d, "trials": p["trials"], "noise": p["noise"]})
        if plan.uses_generator else None,
    )


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    bound = p["norm_bound"]
    shards = [check_unit_ball(s, f"party {m}'s rows", bound) for m, s in enumerate(inp.shards)]
    sizes = np.array([len(s) for s in shards], dtype=np.float64)
    means = [s.mean(axis=0) for s in shards]
    pooled_mean = np.sum([w * m for w, m in zip(sizes / sizes.sum(), means, strict=True)], axis=0)
    S = len(shards)
    plan = mean_plan(sizes, bound, p["epsilon"], p["delta"], p["scheme"], p["aggregator_noise"])
    conv = mean_plan(sizes, bound, p["epsilon"], p["delta"], "conventional", False)
    result = _simulate(inp, means, plan, inp.seed)
    aggregates = result.outputs[S]
    conv_result = result if plan.scheme == "conventional" else _simulate(
        inp, means, conv, seeds.derive_int(inp.seed, "cape_mean.conventional"))
    conv_aggregates = conv_result.outputs[S]
    tau_pool2 = gaussian_noise_scale(2 * bound / sizes.sum(), p["epsilon"], p["delta"]) ** 2
    fixed = inp.simulation.fixed
    release_var = _release_variances(result, means, fixed)
    metrics: dict[str, Any] = {
        "empirical_variance": float(np.mean((aggregates - pooled_mean) ** 2)),
        "conventional_empirical_variance": float(np.mean((conv_aggregates - pooled_mean) ** 2)),
        "pooled_variance": tau_pool2,
        "theoretical_variance": plan.aggregate_variance(),
        "conventional_theoretical_variance": conv.aggregate_variance(),
        "conventional_over_pooled": float(np.mean((conv_aggregates - pooled_mean) ** 2))
        / tau_pool2,
        "samples": int(aggregates.size),
        "release_variance": release_var,
        "release_variance_theory": plan.release_variance().tolist(),
        "tau2": (plan.tau**2).tolist(),
        "sites": S, "dimension": len(pooled_mean), "site_sizes": sizes.astype(int).tolist(),
    }
    tables = [table(["scheme", "empirical variance", "theory", "÷ pooled τ²"],
                    [[plan.scheme, metrics["empirical_variance"], metrics["theoretical_variance"],
                      metrics["empirical_variance"] / tau_pool2],
                     ["conventional", metrics["conventional_empirical_variance"],
                      metrics["conventional_theoretical_variance"],
                      metrics["conventional_over_pooled"]]],
                    f"aggregate noise over {p['trials']} releases (pooled τ² = {tau_pool2:.4g})")]
    plot_builders = {}
    if plan.uses_generator:
        findings = _collusion(result, plan, fixed, p["epsilon"], 2 * bound / sizes[-1])
        metrics["collusion"] = findings
        metrics["collusion_paper_threshold"] = paper_threshold(S)
        tables.append(_collusion_table(findings, paper_threshold(S)))
        plot_builders["collusion"] = lambda: plots.collusion(findings, paper_threshold(S))
    site_release = Release("site release", float(np.sqrt(plan.release_variance().min())),
                           2 * bound / float(sizes.min()), p["epsilon"], p["delta"])
    aggregate_release = Release("aggregate", float(np.sqrt(plan.aggregate_variance())),
                                2 * bound / float(sizes.sum()), p["epsilon"], p["delta"])
    metrics["accounting"] = accounting(repeated(site_release, p["trials"]),
                                       repeated(aggregate_release, p["trials"]), p["delta"])
    metrics["accounting_one_release"] = accounting([site_release], [aggregate_release])
    tables.append(table(ACCOUNTING_HEADERS, accounting_rows(metrics["accounting_one_release"]),
                        "privacy of one release (composed over all releases: report.json)"))
    return AlgorithmRun(
        result=result,
        outputs={"aggregates": aggregates, "conventional_aggregates": conv_aggregates,
                 "pooled_mean": pooled_mean},
        metrics=metrics, plots=plot_builders, tables=tables,
        audit_target=cape_audit_target(_parties(inp, means, plan), plan, fixed.frac_bits,
                                       p["epsilon"], p["delta"], 2 * bound / sizes),
    )


def _release_variances(result: Result, means: list[np.ndarray], fixed: Any) -> list[float]:
    """Per site: the mean square of (decoded release − its statistic) over releases and
    coordinates — the variance of e_s + f_s + g_s, read from the aggregator's view."""

    S = len(means)
    view = result.views[S]
    out = []
    for s in range(S):
        vals = [fixed.decode(m.payload) - means[s] for m in view.received
                if m.sender == s and m.step == "release"]
        out.append(float(np.mean(np.square(vals))))
    return out


def _collusion(result: Result, plan: NoisePlan, fixed: Any, epsilon: float,
               sensitivity: float) -> list[dict[str, Any]]:
    """Aggregator (id S) + sites 0..c−1 against the last site, for c = 0..S−1."""

    S = plan.n_sites
    findings = []
    for c in range(S):
        members = [*range(c), S]
        honest_views = {t: result.views[t] for t in range(c, S)}
        finding = analyse(result.coalition(members), plan, S, S - 1, fixed, honest_views,
                          LABEL, epsilon, sensitivity)
        findings.append(finding.to_dict())
    return findings


def _collusion_table(findings: list[dict[str, Any]], threshold: int) -> str:
    rows = [[f["colluding_sites"], f["tau2"], f["view_only"], f["view_only_analytic"],
             f["side_information"], f["side_information_analytic"],
             "yes" if f["below_tau2_view_only"] else "no",
             "yes" if f["below_tau2_side_information"] else "no",
             f["delta_view_only"], "yes" if f["within_paper_threshold"] else "no"]
            for f in findings]
    return table(["c", "τ²", "view-only", "(theory)", "side info", "(theory)", "< τ² (view)",
                  "< τ² (side)", "δ (view)", "c ≤ ⌈S/3⌉−1"], rows,
                 f"noise left on the last site's release, aggregator + c sites "
                 f"(paper's threshold c ≤ {threshold})")


def estimate(inp: EstimateInput) -> Workload:
    """Two simulations (capeAGN and the conventional scheme), each ``trials`` CAPE calls on
    the d means (:func:`protocols.correlated_noise.declared_cost`: 3S messages of d elements
    per call at most), and the accounting
    (:data:`~sim.experiments.cape.cape_setup.ACCOUNTING_S`)."""
    S, d, trials = inp.n_parties, inp.n_cols, inp.params["trials"]
    return Workload(messages=2 * trials * 3 * S, elements=2 * trials * 3 * S * d,
                    simulations=2, flops=2.0 * inp.n_rows * d, seconds=ACCOUNTING_S,
                    basis="CAPE's declared cost × trials")


def roles(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The aggregator, and the noise generator unless only the conventional scheme runs."""
    if params["scheme"] == "conventional":
        return ("aggregator",)
    return ("aggregator", "noise generator")


