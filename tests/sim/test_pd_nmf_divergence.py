"""PD-NMF on ratings too sparse for its rank (claim C12's k = 50): the field's overflow is an
error naming the cause and the fix, never a silent wrap; the random start's scale is not the
cause."""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.data import synthetic_ratings
from protocols.errors import InputError
from sim.catalog.nmf import NMF_PARAMS
from sim.experiments.nmf.pd_nmf import NmfSetup, centralized_sweeps
from sim.runner import run_scenario

FIELD_BOUND_24 = (2**61 - 1) / 2 / 2**24
"""What a signed value may reach in GF(2^61 − 1) at 24 fractional bits (before the M-fold
headroom); the statistics of a diverging run pass it."""


def thin_ratings(**algorithm: object) -> dict:
    """400 users × 300 items at 5 % density (≈ 15 ratings each) and k = 40 > that."""
    return {"name": "thin", "seed": 3, "network": {"parties": 3, "sealing": False},
            "data": {"source": "synthetic", "kind": "ratings", "rows": 400, "cols": 300, "k": 5,
                     "density": 0.05},
            "algorithm": {"name": "pd_nmf", "k": 40, "iterations": 15, "form": "plain",
                          "init": "random", **algorithm}}


def defaults(**over: object) -> dict:
    return {**{name: p.default for name, p in NMF_PARAMS.items()}, **over}


def test_overflow_of_an_underdetermined_fit_names_the_regulariser():
    with pytest.raises(InputError) as err:
        run_scenario(thin_ratings())
    message = str(err.value)
    assert "exceeds the field's representable bound" in message
    assert "fewer than k = 40 ratings" in message
    assert "algorithm.l2_w" in message and "algorithm.l2_t" in message


def test_the_named_fix_runs():
    run = run_scenario(thin_ratings(l2_w=1.0, l2_t=1.0))
    assert np.all(np.isfinite(run.report["metrics"]["objective"]))


def test_the_divergence_is_the_algorithms_not_the_fields():
    """Centralized RRI-NMF in float64, with no field at all, on ratings as thin as the
    scenario's: its factors leave the field's range within a few sweeps, and an ℓ2
    regulariser keeps them in it."""
    rng = np.random.default_rng(7)
    X = synthetic_ratings(400, 300, 5, density=0.05, rng=rng).ratings
    T0 = rng.uniform(0.0, 1.0, size=(40, 300))
    T0 /= T0.sum(axis=1, keepdims=True)
    W, T = centralized_sweeps(X, T0, 15, NmfSetup.from_params(defaults(k=40), X))
    assert np.abs(W).max() * np.abs(T).max() > FIELD_BOUND_24
    setup = NmfSetup.from_params(defaults(k=40, l2_w=1.0, l2_t=1.0), X)
    W, T = centralized_sweeps(X, T0, 15, setup)
    assert np.abs(W @ T).max() < 100


def test_the_random_starts_scale_does_not_change_the_fit():
    """From W = 0 without regularisers the first sweep fits W to T0, so c·T0 gives the same
    product WT as T0 (the thesis's scaling of a random start by √α, §1.2.2, changes nothing
    here): checked for c = 10^3 and 10^−3 after 5 sweeps."""
    rng = np.random.default_rng(8)
    X = synthetic_ratings(120, 80, 4, density=0.3, rng=rng).ratings
    setup = NmfSetup.from_params(defaults(k=4), X)
    T0 = rng.uniform(0.0, 1.0, size=(4, 80))
    W, T = centralized_sweeps(X, T0, 5, setup)
    for c in (1e3, 1e-3):
        Wc, Tc = centralized_sweeps(X, c * T0, 5, setup)
        np.testing.assert_allclose(Wc @ Tc, W @ T, rtol=1e-8, atol=1e-10)
