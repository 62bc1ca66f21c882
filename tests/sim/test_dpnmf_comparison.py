"""Seed 000's Tables 3–4 on synthetic data: DP robust NMF (Algorithm 2, "ours") against the
DPNMF baseline (:mod:`sim.experiments.nmf.dpnmf_comparison`), at the claims table's sizes."""

from __future__ import annotations

import numpy as np
import pytest

from protocols.errors import InputError
from sim.claims.seed000 import (
    DPNMF_ITERATIONS,
    DPNMF_TRIALS,
    TABLE3_EPSILONS,
    TABLE4_EPSILONS,
)
from sim.experiments.nmf.dpnmf_comparison import compare


def test_unknown_kind_is_refused():
    with pytest.raises(InputError, match="ratings or topics"):
        compare("images", [1.0], trials=1, iterations=1)


@pytest.mark.slow
def test_topics_ours_keeps_its_coherence_where_dpnmf_loses_it():
    """Table 3 and the paper's "our method outperforms DPNMF", on topic coherence (mean UMass
    of W's columns; 600 × 500, K = 8, 2 trials). Measured at ε = 0.5 / 0.7 / 0.999: ours
    −26.22 / −26.54 / −26.31 against non-private −26.60 — Table 3's small gap —, DPNMF −85.6 /
    −94.4 / −96.8 (at ε = 0.3–0.7 the same: its W is the NNLS solution of noise-dominated A and
    B, which a common scale of the noise leaves unchanged), its ANLS without noise −19.8.
    Asserted: ours within 2 sd (at least 0.5) of non-private at every ε, and above DPNMF by
    more than 4 sd of the difference (at least 1) at every ε."""
    r = compare("topics", TABLE3_EPSILONS, trials=DPNMF_TRIALS, iterations=DPNMF_ITERATIONS)
    ours, base = np.array(r["ours"]["private"]), np.array(r["dpnmf"]["private"])
    nonpriv = np.mean(r["ours"]["nonprivate"])
    sd = ours.std(axis=0, ddof=1)
    assert np.all(np.abs(ours.mean(axis=0) - nonpriv) <= 2 * np.maximum(sd, 0.5))
    gap = ours.mean(axis=0) - base.mean(axis=0)
    spread = np.hypot(sd, base.std(axis=0, ddof=1))
    assert np.all(gap > 4 * np.maximum(spread, 1.0))


@pytest.mark.slow
def test_ratings_both_methods_sit_near_the_zero_predictor():
    """Table 4 on ML-1M-shaped ratings (3,000 × 500 at 4.5 %, RMSE as the paper defines it,
    ratings / 5, 2 trials): not reproduced. Measured at ε = 0.3 / 0.5 / 0.7: ours 0.1273 /
    0.1273 / 0.1272, DPNMF 0.1278 / 0.1271 / 0.1268 (sd ≤ 0.0008), predicting 0 everywhere
    0.1318, ANLS without noise 0.1227. Both dense fits of a 95.5 %-zero matrix sit near the
    zero predictor; ours barely leaves its NNDSVD start at the paper's η_W = η_H/10⁴ (its
    private runs equal its non-private one), so neither beats the other by more than the
    trial spread. Asserted: every method below the zero predictor, ours within 0.001 of its
    non-private run, DPNMF's noise costing it against its own noise-free ANLS, and the two
    within 0.002 of each other at every ε."""
    r = compare("ratings", TABLE4_EPSILONS, trials=DPNMF_TRIALS, iterations=DPNMF_ITERATIONS)
    zero = np.mean(r["zero_predictor"])
    ours = np.mean(r["ours"]["private"], axis=0)
    base = np.mean(r["dpnmf"]["private"], axis=0)
    assert np.all(ours < zero) and np.all(base < zero)
    assert np.all(np.abs(ours - np.mean(r["ours"]["nonprivate"])) < 0.001)
    assert np.all(base > np.mean(r["dpnmf"]["nonprivate"]))
    assert np.all(np.abs(ours - base) < 0.002)


# -- the catalogue entry `dpnmf_comparison` (scenarios/dpnmf_comparison_{ratings,topics}.toml) -

def _small(kind: str) -> dict:
    return {"name": f"small_dpnmf_{kind}", "seed": 4, "network": {"parties": 2},
            "data": {"source": "synthetic", "rows": 20, "cols": 8},
            "algorithm": {"name": "dpnmf_comparison", "kind": kind, "epsilons": [0.9, 0.5],
                          "trials": 2, "iterations": 3, "scale": 0.05}}


@pytest.mark.parametrize("kind", ["ratings", "topics"])
def test_entry_reports_what_compare_measures(kind, tmp_path):
    """The entry runs ``compare`` on the scenario's seed and scale (ε sorted), and its summary
    is numpy's mean / sd over the trials of those scores; ``ours_better_fraction`` counts the
    (trial, ε) cells where ours wins (ratings: lower RMSE; topics: higher coherence). The
    table, JSON and plot are written; both methods' audits are declared leaks."""
    from sim.runner import run_scenario

    spec = {**_small(kind), "audit": [{"coalition": [0], "method": "simulation",
                                       "trials": 10}]}
    run = run_scenario(spec)
    run.write(tmp_path / "out")
    number = "4" if kind == "ratings" else "3"
    assert {"report.json", "outputs.npz", f"table_{number}.png"} <= {
        p.name for p in (tmp_path / "out").iterdir()}
    want = compare(kind, [0.5, 0.9], trials=2, iterations=3, seed=4, scale=0.05)
    m = run.report["metrics"]
    for method in ("ours", "dpnmf"):
        private = np.asarray(want[method]["private"])
        np.testing.assert_array_equal(run.outputs[f"{method}_private"], private)
        assert m[method]["private_mean"] == pytest.approx(private.mean(axis=0).tolist())
        assert m[method]["private_sd"] == pytest.approx(private.std(axis=0, ddof=1).tolist())
        assert m[method]["nonprivate_mean"] == pytest.approx(np.mean(want[method]["nonprivate"]))
    ours, base = np.asarray(want["ours"]["private"]), np.asarray(want["dpnmf"]["private"])
    wins = ours < base if kind == "ratings" else ours > base
    assert m["ours_better_fraction"] == pytest.approx(wins.mean())
    assert ("zero_predictor" in m) == (kind == "ratings")
    assert sorted(a.details["run"] for a in run.audits) == ["dpnmf", "ours"]
    assert all(a.verdict == "leak" and a.details["declared"] for a in run.audits)


def test_entry_scale_keeps_five_samples_per_factor():
    from sim.experiments.nmf.dpnmf_comparison import shape

    assert shape("ratings", 0.01) == {"users": 50, "items": 50, "k": 10, "density": 0.045}
    assert shape("topics", 0.5) == {"docs": 300, "words": 250, "k": 8, "doc_length": 150}
