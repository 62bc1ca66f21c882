"""Catalogue entries ``cape_otd`` and ``cape_otd_sweep``: capeAGN against its baselines
(seed 003, Algorithm 2, §6.2, Figures 3–5).

The data must be synthetic ``mog`` or ``stm`` (``[data] kind``), whose planted components
score the recovery; ``model`` must name the same model. Each trial takes the sites' samples
(the shards, or S·N_s rows drawn at random with ``samples_per_site``) and runs capeAGN on the
simulator (:mod:`algorithms.cape.otd`), the conventional scheme on the simulator, local AGN
(site 0 alone), non-private OTD of the pooled moments, and K random vectors. Metrics
``error_cape``, ``error_conventional``, ``error_local``, ``error_nonprivate``, ``error_random``
are the recovery error (1/K) Σ_k min_k' ‖μ̂_k − μ_k'‖ averaged over trials. For MOG, σ² is
the planted (public) variance, as the paper treats it as known.

``cape_otd_sweep`` repeats this over ``sweep`` = "epsilon" | "delta" | "samples_per_site" and
plots the errors (Figures 3–5).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from algorithms.cape.moments import check_unit_ball, document_words
from algorithms.cape.otd import (
    WHITENING,
    TpmSettings,
    WhiteningSimulator,
    agn,
    agn_scales,
    cape_agn_aggregator,
    cape_agn_noise_generator,
    cape_agn_site,
    nonprivate,
    random_error,
    recovery_error,
    whitening_functionality,
)
from algorithms.cape.pca import check_rank
from protocols.accounting import Release
from protocols.cape_dp_check import Budget
from protocols.cape_noise_plans import cape_plan, conventional_plan, generalized_plan
from protocols.correlated_noise import PROTOCOL, NoisePlan
from protocols.errors import ScenarioError
from protocols.registry import cape_declaration, declare_protocol
from sim.audited_runs import RevealingRun
from sim.catalog.cape import OTD_METHODS, OTD_PARAMS
from sim.console import table
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.cape.cape_setup import (
    ACCOUNTING_HEADERS,
    SweepFigure,
    accounting,
    accounting_rows,
    cape_parties,
    cape_workload,
    sweep_run,
    trial_rows,
    trials,
)
from sim.privacy import AuditTarget
from sim.simulation import Result

LABELS = {"cape": "capeAGN", "conventional": "conventional", "local": "local AGN",
          "nonprivate": "non-private", "random": "random vectors"}


def _setup(inp: RunInput, p: dict[str, Any]) -> tuple[np.ndarray, float]:
    source = getattr(inp.extras.get("dataset"), "source", "")
    if "means" not in inp.extras or source != f"synthetic:{p['model']}":
        raise ScenarioError(
            f"algorithm.model = {p['model']!r} scores recovery against planted components: "
            f"use [data] source = 'synthetic' with kind = {p['model']!r} (the data is "
            f"{source or 'not synthetic'})"
        )
    truth = np.asarray(inp.extras["means"])
    check_rank(p["k"], inp.data.shape[1])
    if p["k"] != truth.shape[0]:
        raise ScenarioError(f"algorithm.k = {p['k']} but the data has {truth.shape[0]} planted "
                            "components (data.k); make them equal")
    sigma2 = float(inp.extras.get("sigma2", 0.0))
    return truth, sigma2


def _trial_data(inp: RunInput, p: dict[str, Any], rng: np.random.Generator) -> list[np.ndarray]:
    """The sites' samples for one trial: MOG rows in the unit ball, STM word counts."""

    shards = trial_rows(inp, p["samples_per_site"], rng)
    for m, s in enumerate(shards):
        if p["model"] == "mog":
            check_unit_ball(s, f"party {m}'s rows")
        else:
            document_words(s, f"party {m}'s documents")
    return shards


def otd_plans(sizes: list[int], p: dict[str, Any], dim: int, sigma2: float,
              scheme: str) -> tuple[NoisePlan, NoisePlan]:
    """The stage-1 (M2) and stage-2 (M3) plans: local scales τ_s2, τ_s3 per site."""

    n = np.asarray(sizes, dtype=np.float64)
    scales = [agn_scales(p["model"], int(m), dim, p["epsilon"], p["delta"], sigma2,
                         p["sensitivity"]) for m in n]
    weights = n / n.sum()
    plans = []
    for stage in (0, 1):
        taus = np.array([sc[stage] for sc in scales])
        if scheme == "conventional":
            plans.append(conventional_plan(taus, weights))
        elif np.all(n == n[0]):
            plans.append(cape_plan(float(taus[0]), len(n), p["aggregator_noise"]))
        else:
            pooled = agn_scales(p["model"], int(n.sum()), dim, p["epsilon"], p["delta"],
                                sigma2, p["sensitivity"])[stage]
            plans.append(generalized_plan(taus, weights, pooled, p["aggregator_noise"]))
    return plans[0], plans[1]


def _simulate(inp: RunInput, shards: list[Any], p: dict[str, Any], sigma2: float, scheme: str,
              seed: int) -> tuple[Result, Any, Any]:
    D, k = shards[0].shape[1], p["k"]
    plans = otd_plans([s.shape[0] for s in shards], p, D, sigma2, scheme)
    tpm = TpmSettings(mode=p["tpm"])
    parties = cape_parties(
        cape_agn_site, [{"data": s, "model": p["model"], "k": k, "plans": plans,
                         "sigma2": sigma2, "noise": p["noise"]} for s in shards],
        (cape_agn_aggregator, {"model": p["model"], "dim": D, "k": k, "plans": plans,
                               "noise": p["noise"], "tpm": tpm}),
        (cape_agn_noise_generator, {"dim": D, "k": k, "plans": plans, "noise": p["noise"]})
        if plans[0].uses_generator else None,
    )
    result = inp.simulation.run(parties, seed=seed)
    return result, result.outputs[len(shards)], _audit_target(inp, p, sigma2, result, parties,
                                                              plans)


def _audit_target(inp: RunInput, p: dict[str, Any], sigma2: float, result: Result,
                  parties: list[Any], plans: tuple[NoisePlan, NoisePlan]) -> Any:
    """What ``[[audit]]`` examines of one capeAGN run: its parties, each CAPE call judged by
    its own stage's plan and budget (ε/2, δ/2 and the stage's sensitivity Δ2 or Δ3 at the
    site's N_s; :func:`protocols.registry.cape_declaration` with a plan per call). The CAPE
    calls are numbered as the audit's runs number them: by the sites' call counter (site 0's
    ``site_noise`` inputs of this run) less the key-agreement calls before each but the first
    — the audit's runs make none, and stand for the first with one setup call
    (:func:`parties.audit.numbering.numbered_as_run`), so that with one agreement the numbers
    are the ledger's."""
    S = plans[0].n_sites
    agreed = {m.call for m in result.views[0].received if m.protocol == "key_agreement"}
    calls = [c.index - sum(a < c.index for a in agreed) + min(len(agreed), 1)
             for c, label, _ in result.views[0].protocol_inputs
             if c is not None and c.protocol == PROTOCOL and label == "site_noise"]
    D = parties[0].inputs["data"].shape[1]
    scales = [agn_scales(p["model"], int(party.inputs["data"].shape[0]), D, p["epsilon"],
                         p["delta"], sigma2, p["sensitivity"]) for party in parties[:S]]
    budgets = {call: Budget(np.full(S, p["epsilon"] / 2), np.full(S, p["delta"] / 2),
                            np.array([sc[2 + stage] for sc in scales], dtype=np.float64))
               for stage, call in enumerate(calls)}
    declaration = cape_declaration(dict(zip(calls, plans, strict=True)),
                                   inp.simulation.fixed.frac_bits, budget=budgets)
    whitening = declare_protocol(WHITENING, functionality=whitening_functionality,
                                 simulator=WhiteningSimulator())
    return AuditTarget(tuple(parties), (declaration, whitening))


OTD_REVEALING = {
    "nonprivate": RevealingRun("the pooled moments M2 and M3 of every site's rows, without "
                               "noise", "non-private OTD (the pooled baseline)"),
}
"""The arms ``[[audit]]`` reports as revealing by design (:mod:`sim.audited_runs`); local AGN
and the random vectors exchange nothing and are not runs to audit."""


def otd_point(inp: RunInput, p: dict[str, Any], stage: str = "trials") -> dict[str, Any]:
    """Every method's recovery error over ``p["trials"]`` trials at one setting."""

    truth, sigma2 = _setup(inp, p)
    tpm = TpmSettings(mode=p["tpm"])
    errors: dict[str, list[float]] = {m: [] for m in OTD_METHODS}
    first: tuple[Result, Any] | None = None
    audits: dict[str, Any] = {}
    shards: list[Any] = []
    for seed, rng in trials(inp, p["trials"], "cape_otd.trial", stage):
        shards = _trial_data(inp, p, rng)
        pooled = np.vstack(shards)
        result, cape, audit = _simulate(inp, shards, p, sigma2, "cape", seed)
        _, conv, audit_conv = _simulate(inp, shards, p, sigma2, "conventional", seed)
        if first is None:
            first = (result, cape)
            audits = {"cape": audit, "conventional": audit_conv, **OTD_REVEALING}
        recovered = {
            "cape": cape.means, "conventional": conv.means,
            "local": agn(p["model"], shards[0], p["k"], p["epsilon"], p["delta"], rng, sigma2,
                         p["sensitivity"], tpm).means,
            "nonprivate": nonprivate(p["model"], pooled, p["k"], rng, sigma2, tpm).means,
        }
        for m, means in recovered.items():
            errors[m].append(recovery_error(means, truth))
        errors["random"].append(random_error(p["model"], truth, rng))
    assert first is not None  # trials ≥ 1
    return {"error": {m: np.array(v) for m, v in errors.items()}, "result": first[0],
            "decomposition": first[1], "sizes": [s.shape[0] for s in shards],
            "sigma2": sigma2, "dim": inp.data.shape[1], "audits": audits}


def _accounting(p: dict[str, Any], sizes: list[int], dim: int, sigma2: float) -> dict[str, Any]:
    plans = otd_plans(sizes, p, dim, sigma2, "cape")
    s = int(np.argmin(sizes))
    n = int(sum(sizes))
    local = agn_scales(p["model"], sizes[s], dim, p["epsilon"], p["delta"], sigma2,
                       p["sensitivity"])
    pooled = agn_scales(p["model"], n, dim, p["epsilon"], p["delta"], sigma2, p["sensitivity"])
    eps, delta = p["epsilon"] / 2, p["delta"] / 2
    site = [Release(f"site release, stage {i + 1}", float(np.sqrt(plan.release_variance()[s])),
                    local[2 + i], eps, delta) for i, plan in enumerate(plans)]
    aggregate = [Release(f"aggregate, stage {i + 1}", float(np.sqrt(plan.aggregate_variance())),
                         pooled[2 + i], eps, delta) for i, plan in enumerate(plans)]
    return accounting(site, aggregate)


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    point = otd_point(inp, p)
    errors = point["error"]
    metrics: dict[str, Any] = {f"error_{m}": float(errors[m].mean()) for m in OTD_METHODS}
    metrics.update({f"error_{m}_sd": float(errors[m].std(ddof=1)) if p["trials"] > 1 else 0.0
                    for m in OTD_METHODS})
    result: Result = point["result"]
    D, k = point["dim"], p["k"]
    site_sent = result.ledger.elements_by_sender(protocol="cape").get(0, 0)
    metrics.update({
        "elements_sent_per_site": site_sent,
        "declared_elements_sent_per_site": D * (D + 1) // 2 + k * (k + 1) * (k + 2) // 6,
        "model": p["model"], "dimension": D, "k": k, "site_sizes": point["sizes"],
        "sigma2": point["sigma2"],
        "accounting": _accounting(p, point["sizes"], D, point["sigma2"]),
    })
    decomposition = point["decomposition"]
    rows = [[LABELS[m], metrics[f"error_{m}"], metrics[f"error_{m}_sd"]] for m in OTD_METHODS]
    return AlgorithmRun(
        result=result,
        outputs={"weights": decomposition.weights, "means": decomposition.means,
                 **{f"error_{m}": v for m, v in errors.items()}},
        metrics=metrics,
        tables=[table(["method", "error (mean)", "sd"], rows,
                      f"{p['model'].upper()} recovery error over {p['trials']} trials "
                      f"(K = {k}, D = {D})"),
                table(ACCOUNTING_HEADERS, accounting_rows(metrics["accounting"]),
                      "privacy accounting (two stages, ε/2 and δ/2 each)")],
        communication_by_phase=True,
        audit_runs=point["audits"],
    )


def run_sweep(inp: RunInput) -> AlgorithmRun:
    figure = SweepFigure(
        measure="error", labels=LABELS, ylabel="recovery error (1/K) Σ min ‖μ̂ − μ‖",
        title=f"capeAGN ({inp.params['model'].upper()}): error",
        caption="recovery error (mean over trials)", plot="otd_error",
        communication_by_phase=True)
    return sweep_run(inp, OTD_PARAMS, otd_point, figure)


STM_DOCUMENT_FLOPS = 800.0
"""Work per document of a single-topic-model third moment, in flops at ``Costs.flop_s`` (its
words' K³ outer products, the einsums, the word ids; :func:`algorithms.cape.moments.
third_moment`): fitted to ``cape_otd_stm_epsilon`` and ``_samples`` (0.31 s per trial beyond the
MOG model's at S = 5, N_s = 20,000, K = 5), with about 4·S·N_s documents per trial (the sites'
moments in the two simulations, the pooled and local baselines)."""


def estimate(inp: EstimateInput) -> Workload:
    """Releases of the second moment and the whitened third moment (D² + D elements); per
    trial the moments of every site and of the pooled data (≈ 2·N·D² flops each, for the
    four methods) and the tensor decompositions."""

    S, D = inp.n_parties, inp.n_cols

    def trial(p: dict[str, Any], n: int) -> float:
        words = 4.0 * S * n * STM_DOCUMENT_FLOPS if p["model"] == "stm" else 0.0
        return 4.0 * (S + 2) * n * D * D + 1e6 * p["k"] + words

    return cape_workload(inp, lambda d: d * d + d, trial)


