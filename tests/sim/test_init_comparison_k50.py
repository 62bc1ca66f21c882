"""Claim C12 at k = 50 (thesis §2.4, Fig. 2.5: "Recommender Systems, k = 50 nndsvd and PD-SVD
are clear favorites. However both WR-NMF performs better than random_2x") on ML-1M-shaped
ratings (``scenarios/pd_nmf_init_comparison_ratings_k50.toml``: 815 users × 500 items, 165
ratings per user, M = 9, τ = 15 sweeps, 3 trials)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.runner import run_scenario

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
    does not beat it (it starts from each party's local k = 50 model on ~90 users)."""
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
