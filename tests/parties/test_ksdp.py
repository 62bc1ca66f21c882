"""Tests of :mod:`parties.ksdp`: the one-bit sum against scipy's binomial law and the thesis's
Fig. 3.5 numbers, Algorithm 11's minimum, and the PD-NMF / PD-SVD statistics against their
formulas written out with plain loops."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binom, ks_2samp

from parties.ksdp import (
    SVD_STATISTICS,
    estimated_sigma2,
    measure,
    one_bit_sum_ks,
    one_bit_sum_pmfs,
    svd_statistics,
    topic_coefficients,
    topic_weight_statistic,
)
from protocols.errors import InputError


@pytest.mark.parametrize(("n", "p"), list(itertools.product([2, 3, 10, 57, 100, 1000],
                                                              [0.5, 0.6, 0.75, 0.95])))
def test_one_bit_sum_ks_is_the_binomial_mode(n: int, p: float):
    expected = float(np.max(binom.pmf(np.arange(n), n - 1, p)))
    assert one_bit_sum_ks(n, p) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    pmf0, pmf1 = one_bit_sum_pmfs(n, p)
    k = np.arange(n + 1)
    np.testing.assert_allclose(pmf0, binom.pmf(k, n - 1, p), atol=1e-14)
    np.testing.assert_allclose(pmf1, binom.pmf(k - 1, n - 1, p), atol=1e-14)


def test_figure_3_5_and_the_digests_reference_values():
    # Fig. 3.5 (n = 10): 0.25, 0.30, 0.63; the digest's exact values and n = 100, 1000
    for p, printed, exact in ((0.5, 0.25, 0.2461), (0.75, 0.30, 0.3003), (0.95, 0.63, 0.6302)):
        assert round(one_bit_sum_ks(10, p), 2) == printed
        assert round(one_bit_sum_ks(10, p), 4) == exact
    assert round(one_bit_sum_ks(100, 0.5), 4) == 0.0796
    assert round(one_bit_sum_ks(100, 0.75), 4) == 0.0918
    assert round(one_bit_sum_ks(1000, 0.5), 4) == 0.0252
    # the large-n rate: KS → sqrt(2 / (π (n − 1))) at p = 1/2
    assert one_bit_sum_ks(20001, 0.5) == pytest.approx(np.sqrt(2 / (np.pi * 20000)), rel=1e-3)


def test_measure_is_the_minimum_p_value_over_statistics():
    rng = np.random.default_rng(0)
    a = {"same": rng.normal(size=200), "shifted": rng.normal(size=200) + 1.0}
    b = {"same": rng.normal(size=200), "shifted": rng.normal(size=200)}
    m = measure(a, b)
    for name in a:
        ref = ks_2samp(a[name], b[name])
        assert m.p_values[name] == ref.pvalue and m.ks_statistics[name] == ref.statistic
    assert m.pi == min(m.p_values.values()) and m.weakest == "shifted"
    assert m.pi < 1e-3 < m.p_values["same"]
    with pytest.raises(InputError, match="same statistics"):
        measure({"a": [1, 2]}, {"b": [1, 2]})
    with pytest.raises(InputError, match="2 samples"):
        measure({"a": [1]}, {"a": [1, 2]})
    with pytest.raises(InputError, match="n = 1"):
        one_bit_sum_ks(1, 0.5)
    with pytest.raises(InputError, match="p = 1"):
        one_bit_sum_ks(5, 1)


EPS = np.finfo(np.float64).eps


def box_kkt_violation(a: np.ndarray, x: np.ndarray, T: np.ndarray) -> float:
    """How far ``a`` is from the minimiser of ‖x − aT‖² over [0, 1]^k, by the KKT conditions.

    With the gradient g = T(aT − x): a free coordinate (0 < a_i < 1) needs g_i = 0, one at 0
    needs g_i ≥ 0, one at 1 needs g_i ≤ 0, and every a_i must lie in the box. The problem is
    convex, so these conditions hold at the minimiser and nowhere else (T of full row rank).
    Returns the largest violation, in units of the gradient's rounding error
    ‖T‖·(‖T‖·‖a‖ + ‖x‖)·ε, so that 1 is what exact arithmetic would leave after rounding.
    """
    g = T @ (a @ T - x)
    at_zero, at_one = a <= 0.0, a >= 1.0
    free = ~(at_zero | at_one)
    violation = max(np.abs(g[free]).max(initial=0.0), (-g[at_zero]).max(initial=0.0),
                    g[at_one].max(initial=0.0))
    norm_t = np.linalg.norm(T, 2)
    scale = norm_t * (norm_t * np.linalg.norm(a) + np.linalg.norm(x)) * EPS
    outside = max(-a.min(), a.max() - 1.0, 0.0)
    return violation / scale + (np.inf if outside > 0 else 0.0)


# What the statistic needs. σ = a · w² enters Algorithm 11 only through a KS test, whose p-value
# depends on the order of the pooled samples; an error δ in a moves σ by at most ‖w²‖·δ, so a
# must be exact to rounding for the order of runs whose σ differ by more than that to be kept.
# The tolerance below is therefore the rounding of the KKT conditions (a small multiple of
# k·ε·‖T‖², from the conditioning of T), not the last digits one solver version printed.
KKT_TOLERANCE = 64.0


def test_topic_coefficients_recover_an_exact_box_solution():
    rng = np.random.default_rng(1)
    T = rng.uniform(size=(3, 8))
    u = np.array([0.2, 0.0, 0.9])  # one coordinate on the box's face, two inside
    a = topic_coefficients(u @ T, T)
    # the consistent system x = uT: a perturbation bound cond(T)·ε per coordinate, times k
    np.testing.assert_allclose(a, u, rtol=0, atol=8 * 3 * np.linalg.cond(T) * EPS)
    assert box_kkt_violation(a, u @ T, T) <= KKT_TOLERANCE
    w2 = np.array([2.0, 5.0, 1.0])
    assert topic_weight_statistic(u @ T, T, w2) == pytest.approx(
        u @ w2, rel=0, abs=8 * 3 * np.linalg.cond(T) * EPS * np.abs(w2).sum())


def test_topic_coefficients_clip_at_the_box():
    rng = np.random.default_rng(1)
    T = rng.uniform(size=(3, 8))
    clipped = topic_coefficients(3.0 * T[0], T)  # the unconstrained answer is (3, 0, 0)
    assert clipped[0] == pytest.approx(1.0, rel=0, abs=8 * 3 * np.linalg.cond(T) * EPS)
    assert box_kkt_violation(clipped, 3.0 * T[0], T) <= KKT_TOLERANCE


@pytest.mark.parametrize("seed", range(40))
def test_topic_coefficients_meet_the_kkt_conditions(seed: int):
    # Ordinary problems, most with some coordinates free and some on either face of the box.
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 12))
    T = rng.uniform(size=(k, int(rng.integers(k + 1, 40))))
    x = rng.uniform(size=T.shape[1]) * rng.uniform(0.1, 3.0)
    a = topic_coefficients(x, T)
    assert a.shape == (k,)
    assert box_kkt_violation(a, x, T) <= KKT_TOLERANCE


@pytest.mark.parametrize("delta", [1e-7, 1e-9])
def test_the_kkt_check_fails_for_coefficients_off_by_less_than_a_loose_solver(delta: float):
    # A coordinate moved by δ (a loose stopping rule leaves errors of ~1e-5) breaks the check:
    # the gradient then moves by ~σ_min(T)²·δ, far above the rounding the tolerance allows.
    rng = np.random.default_rng(1)
    T = rng.uniform(size=(3, 8))
    u = np.array([0.2, 0.0, 0.9])
    for i, step in ((0, delta), (1, delta), (2, -delta)):  # free, at zero, free
        wrong = u.copy()
        wrong[i] += step
        assert box_kkt_violation(wrong, u @ T, T) > KKT_TOLERANCE
    assert box_kkt_violation(u + np.array([0.0, -delta, 0.0]), u @ T, T) == np.inf


def test_svd_statistics_match_their_formulas():
    rng = np.random.default_rng(2)
    V, _ = np.linalg.qr(rng.normal(size=(5, 2)))
    s2 = np.array([4.0, 1.5])
    x = rng.uniform(size=5)
    got = svd_statistics(x, V, s2)
    assert set(got) == set(SVD_STATISTICS)
    S = [[sum(V[i, c] * s2[c] * V[j, c] for c in range(2)) for j in range(5)] for i in range(5)]
    fro = np.sqrt(sum(S[i][j] ** 2 for i in range(5) for j in range(5)))
    xx = sum(v * v for v in x)
    W = [abs(S[i][j] * x[i] * x[j]) for i in range(5) for j in range(5)]
    D = [abs(S[i][j] / fro - x[i] * x[j] / xx) for i in range(5) for j in range(5)]
    for name, values in (("W", W), ("D", D)):
        assert got[f"{name}_max"] == pytest.approx(max(values))
        assert got[f"{name}_sum"] == pytest.approx(sum(values))
        assert got[f"{name}_sumsq"] == pytest.approx(sum(v * v for v in values))
    X_a = rng.uniform(size=(6, 5))
    est = estimated_sigma2(X_a, V, 3)
    np.testing.assert_allclose(est, (9 / 6) * np.linalg.norm(X_a @ V, axis=0) ** 2)
