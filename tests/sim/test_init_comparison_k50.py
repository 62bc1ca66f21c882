"""Claim C12 at k = 50 (thesis §2.4, Fig. 2.5: "Recommender Systems, k = 50 nndsvd and PD-SVD
are clear favorites. However both WR-NMF performs better than random_2x") on ML-1M-shaped
ratings (``scenarios/pd_nmf_init_comparison_ratings_k50.toml``: 815 users × 500 items, 165
ratings per user, M = 9, τ = 15 sweeps, 3 trials)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.rri import rri_nmf
from sim.runner import plan_scenario, run_scenario

SCENARIO = (Path(__file__).resolve().parents[2] / "scenarios"
            / "pd_nmf_init_comparison_ratings_k50.toml")


@pytest.mark.slow
def test_svd_starts_lead_at_equal_sweeps_and_random_2x_leads_overall_at_k50():
    """Measured (final objective, mean ± standard error of 3 trials): PD-SVD 13,434 ± 12,
    nndsvd 13,507, random 13,610 ± 69, WR-NMF 13,700 ± 140 after τ = 15 sweeps; random_2x
    12,092 ± 96 after 2τ.

    Asserted (what holds): of the starts run for τ sweeps, the two SVD starts end lowest,
    PD-SVD below ``random`` by more than two of random's standard errors (nndsvd by 1.5);
    each reported mean is the mean of the trials' curves' last values. Not reproduced, and
    asserted as measured: ``random_2x`` ends below every start (no start is near
    convergence after 15 sweeps at k = 50, so 15 more sweeps outweigh any start), and WR-NMF
    does not beat it (measured apart: not because its local k = 50 models overfit — see
    ``test_local_k50_models_overfit_and_more_users_a_party_narrow_it``)."""
    run = run_scenario(SCENARIO)
    m = run.report["metrics"]
    final = {i: m[f"final_objective_{i}"] for i in
             ("random", "random_2x", "nndsvd", "pd_nmf_init", "pd_svd")}
    sem = {i: m[f"final_objective_sem_{i}"] for i in final}
    for init, value in final.items():  # the metric is the trials' mean final objective
        curves = run.outputs[f"objective_{init}"]
        assert curves.shape[0] == 3
        assert value == pytest.approx(float(np.mean(curves[:, -1])), rel=1e-12)
    at_tau = [i for i in m["ranking_at_iterations"] if i != "random_2x"]
    assert set(at_tau[:2]) == {"pd_svd", "nndsvd"}, at_tau
    assert final["pd_svd"] + 2 * sem["random"] < final["random"]
    assert min(final, key=final.get) == "random_2x"
    assert final["pd_nmf_init"] > final["random_2x"]


TOPICS = SCENARIO.parent / "pd_nmf_init_comparison_topics_k50.toml"


@pytest.mark.slow
def test_wr_nmf_leads_topic_modelling_at_k50():
    """Claim C12 for topics at k = 50 (thesis §2.4, Fig. 2.4: for topic modelling WR-NMF is
    the best start) on a NIPS-shaped corpus (``scenarios/pd_nmf_init_comparison_topics_k50
    .toml``: 1,500 documents × 1,000 words, 50 planted topics, M = 9, τ = 15 sweeps, 5
    trials). Measured (final objective, mean ± standard error of 5 trials): WR-NMF 7.0183 ±
    0.0068, random_2x 7.0509 ± 0.0111 (after 2τ), PD-SVD 7.148 ± 0.026, nndsvd 7.1575
    (deterministic), random 7.2195 ± 0.0062; at τ sweeps WR-NMF < PD-SVD < nndsvd < random.

    Asserted: each reported mean is the trials' mean final value; WR-NMF ends lowest, below
    random_2x by more than two standard errors of the difference (√(se² + se²)), and below
    every other start by more than two of the larger standard error."""
    run = run_scenario(TOPICS)
    m = run.report["metrics"]
    inits = ("random", "random_2x", "nndsvd", "pd_nmf_init", "pd_svd")
    final = {i: m[f"final_objective_{i}"] for i in inits}
    sem = {i: m[f"final_objective_sem_{i}"] for i in inits}
    for init in inits:
        curves = run.outputs[f"objective_{init}"]
        assert curves.shape[0] == 5
        assert final[init] == pytest.approx(float(np.mean(curves[:, -1])), rel=1e-12)
        assert sem[init] == pytest.approx(float(np.std(curves[:, -1], ddof=1) / np.sqrt(5)),
                                          rel=1e-9, abs=1e-12)
    wr = final["pd_nmf_init"]
    assert min(final, key=final.get) == "pd_nmf_init"
    assert wr + 2 * np.hypot(sem["pd_nmf_init"], sem["random_2x"]) < final["random_2x"]
    for other in ("random", "nndsvd", "pd_svd"):
        assert wr + 2 * max(sem["pd_nmf_init"], sem[other]) < final[other], other
    assert m["ranking_at_iterations"][0] == "pd_nmf_init"


def _train_heldout_rmse(X: np.ndarray, k: int, rng: np.random.Generator) -> tuple[float, float]:
    """RMSE of a local RRI-NMF model (Algorithm 8 step 1: NNDSVD start, 200 iterations) on
    80 % of one party's ratings (train) and on the other 20 % of the same users (held-out),
    computed here with numpy from the fitted factors."""
    held = np.argwhere(~np.isnan(X))
    held = held[rng.random(len(held)) < 0.2]
    train = X.copy()
    train[held[:, 0], held[:, 1]] = np.nan
    W0, T0 = nndsvd(np.nan_to_num(train), k)
    fit = rri_nmf(train, k, T0=T0, W0=W0, max_iter=200, tol=1e-4, loss="observed")
    P = fit.W @ fit.T
    seen = ~np.isnan(train)
    return (float(np.sqrt(np.mean((P[seen] - train[seen]) ** 2))),
            float(np.sqrt(np.mean((P[held[:, 0], held[:, 1]] - X[held[:, 0], held[:, 1]]) ** 2))))


@pytest.mark.slow
def test_local_k50_models_overfit_and_more_users_a_party_narrow_it():
    """Half of the probe behind C12's ratings-k = 50 note (``benchmarks/wr_nmf_ratings_k50.py``,
    docs/reproduction.md): a party's local k = 50 model of ~90 users (≈ 13,000 training
    ratings for 50 · (90 + 500) = 29,500 parameters) interpolates its training ratings and
    predicts its held-out ones worse than a local k = 5 model. Measured, mean of the 9
    parties: k = 50 train / held-out RMSE 0.00 / 1.95, k = 5 0.50 / 0.67; with M = 3 (≈ 270
    users a party) k = 50 gives 0.16 / 1.15. The other half (not asserted here: five τ-sweep
    curves cost minutes) shows this overfit is NOT why WR-NMF ends above random_2x: its start
    is the best of all, the M = 3 start ends only 36 lower, and τ more sweeps decide.

    Asserted for every party: the k = 50 held-out RMSE is above its train RMSE by more than 1
    and above the k = 5 held-out RMSE by more than 0.5; and the first M = 3 party's k = 50
    gap is narrower than any M = 9 party's."""
    plan = plan_scenario(SCENARIO)
    shards = [np.asarray(x, dtype=np.float64) for x in plan.shards]
    assert len(shards) == 9 and plan.params["k"] == 50
    rng = np.random.default_rng(0)
    gaps = []
    for x in shards:
        tr50, ho50 = _train_heldout_rmse(x, 50, rng)
        _, ho5 = _train_heldout_rmse(x, 5, rng)
        assert ho50 - tr50 > 1.0 and ho50 - ho5 > 0.5, (tr50, ho50, ho5)
        gaps.append(ho50 - tr50)
    tr3, ho3 = _train_heldout_rmse(np.vstack(shards[:3]), 50, rng)
    assert ho3 - tr3 < min(gaps), (tr3, ho3, gaps)
