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
