"""DPNMF (seed 000's Table 4 baseline): ℓ1 sensitivities held on neighbouring data sets, the
ANLS halves against scipy's NNLS, and the Laplace noise at the calibrated scale."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import nnls

from algorithms.nmf.dp_robust import unit_columns
from algorithms.nmf.dpnmf import anls_w, dpnmf, l1_sensitivities, laplace_scales, nnls_h
from protocols.errors import InputError


def test_l1_sensitivities_bound_the_change_from_one_replaced_sample():
    rng = np.random.default_rng(0)
    d, k, n = 12, 4, 30
    a_bound, b_bound = l1_sensitivities(n, d, k)
    worst_a = worst_b = 0.0
    for _ in range(200):
        V = unit_columns(rng.uniform(0, 1, (d, n)))
        H = rng.uniform(0, 1, (k, n))
        H /= np.maximum(1.0, np.linalg.norm(H, axis=0))
        V2, H2 = V.copy(), H.copy()
        # the extreme neighbour: flat unit vectors maximise the ℓ1 norms
        V2[:, 0] = 1 / math.sqrt(d)
        H2[:, 0] = 1 / math.sqrt(k)
        worst_a = max(worst_a, np.abs(H @ H.T - H2 @ H2.T).sum() / n)
        worst_b = max(worst_b, np.abs(V @ H.T - V2 @ H2.T).sum() / n)
    assert worst_a <= a_bound + 1e-12 and worst_b <= b_bound + 1e-12
    # the flat vectors alone reach half the bound: K/N and √(DK)/N
    h = np.full(k, 1 / math.sqrt(k))
    v = np.full(d, 1 / math.sqrt(d))
    assert np.abs(np.outer(h, h)).sum() / n == pytest.approx(a_bound / 2)
    assert np.abs(np.outer(v, h)).sum() / n == pytest.approx(b_bound / 2)


def test_anls_halves_match_scipy_nnls():
    rng = np.random.default_rng(1)
    W = rng.uniform(0, 1, (15, 3))
    V = rng.uniform(0, 1, (15, 8))
    H = nnls_h(V, W, sweeps=2000)
    for j in range(8):
        want = nnls(W, V[:, j])[0]
        want /= max(1.0, np.linalg.norm(want))
        np.testing.assert_allclose(H[:, j], want, atol=1e-6)
    Hm = rng.uniform(0, 1, (3, 40))
    Vm = rng.uniform(0, 1, (6, 40))
    got = anls_w(Hm @ Hm.T, Vm @ Hm.T)
    for i in range(6):
        np.testing.assert_allclose(got[i], nnls(Hm.T, Vm[i])[0], atol=1e-6)


def test_releases_carry_laplace_noise_of_the_calibrated_scale():
    rng = np.random.default_rng(2)
    V = rng.uniform(0, 1, (20, 50))
    W0 = rng.uniform(0, 1, (20, 3))
    clean = dpnmf(V, W0, iterations=1, epsilon=None)
    noisy = dpnmf(V, W0, iterations=1, epsilon=0.5, rng=np.random.default_rng(3))
    sa, sb = laplace_scales(50, 20, 3, 0.5)
    noise_b = (noisy.B_released[0] - clean.B_released[0]).ravel() / sb
    # Laplace(0, 1): mean |x| = 1; 60 draws, sd of the mean |x| = 1/√60
    assert abs(np.mean(np.abs(noise_b)) - 1.0) < 4 / math.sqrt(noise_b.size)
    assert sa == pytest.approx(2 * 3 / 50 / 0.5)


def test_noise_free_anls_lowers_the_fit():
    rng = np.random.default_rng(4)
    V = rng.uniform(0, 1, (10, 5)) @ rng.uniform(0, 1, (5, 60))
    W0 = rng.uniform(0, 1, (10, 5))
    Vs = unit_columns(V)
    start = np.sum((Vs - W0 @ nnls_h(Vs, W0)) ** 2)
    fit = dpnmf(V, W0, iterations=10, epsilon=None)
    assert np.sum((Vs - fit.W @ fit.H) ** 2) < 0.5 * start


def test_bad_inputs_name_the_problem():
    with pytest.raises(InputError, match="ε"):
        laplace_scales(10, 3, 2, 0.0)
    with pytest.raises(InputError, match="rng"):
        dpnmf(np.ones((3, 4)), np.ones((3, 2)), iterations=1, epsilon=1.0)
