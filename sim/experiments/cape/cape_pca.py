"""Catalogue entries ``cape_pca`` and ``cape_pca_sweep``: capePCA against its baselines
(seed 003, Algorithm 1, §6.1, Figure 2).

Each trial (the paper averages 10) takes the sites' samples — the scenario's shards, or, with
``samples_per_site = N_s``, S·N_s rows drawn at random from the data as the paper does — then
(``preprocess = "center_scale"``, the paper's non-private preprocessing) centres them and divides
them by the largest norm; with ``preprocess = "none"`` every row must already lie in the unit
ball. It then runs:

* capePCA on the simulator (sites, aggregator, noise generator; :mod:`algorithms.cape.pca`),
* the conventional scheme on the simulator (each site adds AG noise for its own N_s),
* DPdisPCA on the simulator (each site sends the rank-R partial square root of its AG-noised
  A_s, R = 2K; :mod:`algorithms.cape.dpdispca`),
* pooled AG and local AG (site 0 alone) centrally, and non-private PCA of the pooled samples,

and scores each V by the captured energy q(V) = tr(Vᵀ A_true V): A_true is the generating
covariance of synthetic ``spiked`` data, else the second-moment matrix of the whole
preprocessed data set (§6.1). Metrics ``q_cape``, ``q_pooled_ag``, ``q_conventional``,
``q_dpdispca``, ``q_local``, ``q_nonprivate`` are means over trials (``*_sd``: their standard
deviations; ``*_ratio``: divided by ``q_nonprivate``). Output ``V`` is the first trial's
capePCA subspace. ``elements_per_site_by_scheme`` is each simulated scheme's communication
from the first trial's ledger — every element sent in its run divided by S (capePCA: the
site's release and the noise generator's and aggregator's noise to it, 3·D(D + 1)/2; the
conventional scheme: D(D + 1)/2; DPdisPCA: D·R).

``cape_pca_sweep`` repeats this over one swept key (``sweep`` = "epsilon" | "delta" |
"samples_per_site", ``values``), the panels of Figure 2, and plots q against it. The paper's
orderings (capePCA ≈ pooled AG ≥ conventional ≥ local; capePCA → non-private as ε or N_s grow)
are asserted by the tests.

``[[audit]] method = "simulation"`` audits the first trial's capePCA run, judged by CAPE's
declaration with its noise plan and the sites' (ε, δ, Δ_s) (:func:`_audit_target`). A site
releases only the D(D + 1)/2 free entries of A_s, so no noise value is repeated in a view and
the Gaussian residual tests' independence assumption holds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.cape.dpdispca import dpdispca_aggregator, dpdispca_site
from algorithms.cape.moments import check_unit_ball
from algorithms.cape.pca import (
    analyze_gauss,
    cape_pca_aggregator,
    cape_pca_noise_generator,
    cape_pca_site,
    captured_energy,
    check_rank,
    pca_plan,
    second_moment,
    sensitivity,
    top_eigenvectors,
)
from algorithms.cape.symmetric import matrix_size
from protocols.accounting import Release
from protocols.correlated_noise import gaussian_noise_scale
from sim.audited_runs import RevealingRun
from sim.catalog.cape import (
    PCA_METHODS,
    PCA_PARAMS,
)
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
    cape_audit_target,
    cape_parties,
    cape_workload,
    sweep_run,
    trial_rows,
    trials,
)
from sim.simulation import Result


def _center_scale(X: np.ndarray) -> np.ndarray:
    """The paper's non-private preprocessing (§6.1): centre, then divide by the largest norm."""

    X = X - X.mean(axis=0)
    return X / max(float(np.linalg.norm(X, axis=1).max()), 1e-300)


def _trial_data(inp: RunInput, p: dict[str, Any], rng: np.random.Generator) -> list[np.ndarray]:
    """The sites' samples for one trial, preprocessed; every row must lie in the unit ball."""

    shards = trial_rows(inp, p["samples_per_site"], rng,
                        _center_scale if p["preprocess"] == "center_scale" else None)
    return [check_unit_ball(s, f"party {m}'s rows", 1.0) for m, s in enumerate(shards)]


def _a_true(inp: RunInput, p: dict[str, Any]) -> np.ndarray:
    truth = inp.extras.get("covariance")
    if truth is not None:
        return np.asarray(truth)
    pool = inp.data.toarray() if sp.issparse(inp.data) else np.asarray(inp.data, dtype=float)
    if p["preprocess"] == "center_scale":
        pool = _center_scale(pool)
    return second_moment(pool)


def _simulate(inp: RunInput, shards: list[np.ndarray], p: dict[str, Any], scheme: str,
              seed: int) -> tuple[Result, np.ndarray, Any]:
    D = shards[0].shape[1]
    plan = pca_plan([len(s) for s in shards], p["epsilon"], p["delta"], scheme,
                    p["sensitivity"], p["aggregator_noise"])
    parties = cape_parties(
        cape_pca_site, [{"X": s, "plan": plan, "noise": p["noise"]} for s in shards],
        (cape_pca_aggregator, {"plan": plan, "dim": D, "k": p["k"], "noise": p["noise"],
                               "order": p["order"]}),
        (cape_pca_noise_generator, {"plan": plan, "dim": D, "noise": p["noise"]})
        if plan.uses_generator else None,
    )
    result = inp.simulation.run(parties, seed=seed)
    return result, result.outputs[len(shards)], (parties, plan)


def _simulate_dpdispca(inp: RunInput, shards: list[np.ndarray], p: dict[str, Any],
                       seed: int) -> tuple[Result, np.ndarray]:
    """DPdisPCA (R = 2K, at most D) on the simulator: every site's AG noise for its own N_s."""
    D = shards[0].shape[1]
    rank = min(2 * p["k"], D)
    taus = [gaussian_noise_scale(sensitivity(len(s), p["sensitivity"]), p["epsilon"],
                                 p["delta"]) for s in shards]
    parties = cape_parties(
        dpdispca_site, [{"X": s, "tau": t, "rank": rank, "noise": p["noise"]}
                        for s, t in zip(shards, taus, strict=True)],
        (dpdispca_aggregator, {"n_sites": len(shards), "dim": D, "k": p["k"],
                               "order": p["order"]}), None)
    result = inp.simulation.run(parties, seed=seed)
    return result, result.outputs[len(shards)]


def _per_site(result: Result, n_sites: int) -> float:
    return sum(r.elements for r in result.ledger) / n_sites


def pca_point(inp: RunInput, p: dict[str, Any], stage: str = "trials") -> dict[str, Any]:
    """Every method's q over ``p["trials"]`` trials at one setting of the keys."""

    A_true = _a_true(inp, p)
    check_rank(p["k"], A_true.shape[0])
    q: dict[str, list[float]] = {m: [] for m in PCA_METHODS}
    first: tuple[Result, np.ndarray, Any] | None = None
    sent: dict[str, float] = {}
    audits: dict[str, Any] = {}
    for seed, rng in trials(inp, p["trials"], "cape_pca.trial", stage):
        shards = _trial_data(inp, p, rng)
        pooled = np.vstack(shards)
        result, V, run = _simulate(inp, shards, p, "cape", seed)
        result_conv, V_conv, run_conv = _simulate(inp, shards, p, "conventional", seed)
        result_dis, V_dis = _simulate_dpdispca(inp, shards, p, seed)
        if first is None:
            first = (result, V, run)
            sent = {"cape": _per_site(result, len(shards)),
                    "conventional": _per_site(result_conv, len(shards)),
                    "dpdispca": _per_site(result_dis, len(shards))}
            audits = {"cape": _audit_target(inp, p, run, shards),
                      "conventional": _audit_target(inp, p, run_conv, shards),
                      **PCA_REVEALING}
        subspaces = {
            "cape": V,
            "pooled_ag": analyze_gauss(pooled, p["k"], p["epsilon"], p["delta"], rng,
                                       p["sensitivity"], p["order"]),
            "conventional": V_conv,
            "dpdispca": V_dis,
            "local": analyze_gauss(shards[0], p["k"], p["epsilon"], p["delta"], rng,
                                   p["sensitivity"], p["order"]),
            "nonprivate": top_eigenvectors(second_moment(pooled), p["k"]),
        }
        for m, Vm in subspaces.items():
            q[m].append(captured_energy(Vm, A_true))
    assert first is not None  # trials ≥ 1
    return {"q": {m: np.array(v) for m, v in q.items()}, "result": first[0], "V": first[1],
            "sizes": [len(s) for s in shards], "dim": A_true.shape[0], "run": first[2],
            "audits": audits, "elements_per_site": sent}


def _accounting(p: dict[str, Any], sizes: list[int]) -> dict[str, Any]:
    plan = pca_plan(sizes, p["epsilon"], p["delta"], "cape", p["sensitivity"],
                    p["aggregator_noise"])
    s = int(np.argmin(sizes))
    site = Release("site release: A_s", float(np.sqrt(plan.release_variance()[s])),
                   sensitivity(sizes[s], p["sensitivity"]), p["epsilon"], p["delta"])
    n = int(sum(sizes))
    pooled = Release("aggregate: Â", float(np.sqrt(plan.aggregate_variance())),
                     sensitivity(n, p["sensitivity"]), p["epsilon"], p["delta"])
    return accounting([site], [pooled])


def _metrics(q: dict[str, np.ndarray]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in PCA_METHODS:
        out[f"q_{m}"] = float(q[m].mean())
    base = out["q_nonprivate"]
    for m in PCA_METHODS:
        out[f"q_{m}_sd"] = float(q[m].std(ddof=1)) if len(q[m]) > 1 else 0.0
        out[f"q_{m}_ratio"] = out[f"q_{m}"] / base if base else float("nan")
    return out


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    point = pca_point(inp, p)
    metrics = _metrics(point["q"])
    D = point["dim"]
    result: Result = point["result"]
    by_sender = result.ledger.elements_by_sender(protocol="cape")
    site_sent = [by_sender.get(s, 0) for s in range(len(point["sizes"]))]
    metrics.update({
        "elements_sent_per_site": site_sent[0],
        "declared_elements_sent_per_site": matrix_size(D),
        "elements_per_site_by_scheme": point["elements_per_site"],
        "dimension": D, "k": p["k"], "site_sizes": point["sizes"],
        "accounting": _accounting(p, point["sizes"]),
    })
    rows = [[m, metrics[f"q_{m}"], metrics[f"q_{m}_sd"], metrics[f"q_{m}_ratio"]]
            for m in PCA_METHODS]
    return AlgorithmRun(
        result=result,
        outputs={"V": point["V"], **{f"q_{m}": v for m, v in point["q"].items()}},
        metrics=metrics,
        tables=[table(["method", "q (mean)", "sd", "q / q_nonprivate"], rows,
                      f"captured energy over {p['trials']} trials (K = {p['k']}, D = {D})"),
                table(ACCOUNTING_HEADERS, accounting_rows(metrics["accounting"]),
                      "privacy accounting")],
        audit_target=point["audits"]["cape"],
    )


PCA_REVEALING = {
    "pooled_ag": RevealingRun("every site's rows to one curator, who adds the noise",
                              "pooled Analyze Gauss (the centralized DP baseline)"),
    "nonprivate": RevealingRun("the pooled second moment without noise",
                               "non-private PCA (the pooled baseline)"),
    "dpdispca": RevealingRun("its site's noisy partial square root P_s to the aggregator (a DP "
                             "release, no secure computation)",
                             "DPdisPCA (the distributed DP baseline)"),
}
"""The arms ``[[audit]]`` reports as revealing by design (:mod:`sim.audited_runs`); local AG
exchanges nothing and is not a run to audit."""


def _audit_target(inp: RunInput, p: dict[str, Any], run: Any, shards: list[Any]) -> Any:
    """The first trial's CAPE run, judged by CAPE's declaration with its noise plan and the
    sites' (ε, δ, Δ_s) (:func:`~sim.experiments.cape.cape_setup.cape_audit_target`). Each site
    releases the D(D + 1)/2 free entries of its symmetric A_s (``pack_matrix``), so every
    noise value appears once in the view: the Gaussian residual tests see independent
    coordinates, not each off-diagonal value twice."""

    parties, plan = run
    deltas = [sensitivity(len(s), p["sensitivity"]) for s in shards]
    return cape_audit_target(parties, plan, inp.simulation.fixed.frac_bits, p["epsilon"],
                             p["delta"], deltas)


FIGURE = SweepFigure(
    measure="q",
    labels={"cape": "capePCA", "pooled_ag": "pooled AG", "conventional": "conventional",
            "dpdispca": "DPdisPCA (R = 2K)", "local": "local AG", "nonprivate": "non-private"},
    ylabel="captured energy q = tr(Vᵀ A V)", title="capePCA: captured energy",
    caption="captured energy (mean over trials)", plot="captured_energy", spread=True)


def run_sweep(inp: RunInput) -> AlgorithmRun:
    return sweep_run(inp, PCA_PARAMS, pca_point, FIGURE)


def estimate(inp: EstimateInput) -> Workload:
    """Releases of the symmetric D × D second moment (about D²/2 elements per site and role,
    as the ledger shows); per trial the second moments of every site, of the pooled data and
    of the local method (N·D² multiply-adds each for the symmetric half, at BLAS-3's ≈ 10
    per ns: counted a tenth) and five eigendecompositions of D × D (≈ 2·D³ counted)."""

    S, D = inp.n_parties, inp.n_cols
    return cape_workload(inp, lambda d: d * d // 2 + d,
                         lambda p, n: 0.1 * (2 * S + 1) * n * D * D + 2.0 * D**3)


