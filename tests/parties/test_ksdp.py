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


def test_topic_coefficients_solve_the_box_problem():
    rng = np.random.default_rng(1)
    T = rng.uniform(size=(3, 8))
    u = np.array([0.2, 0.0, 0.9])
    np.testing.assert_allclose(topic_coefficients(u @ T, T), u, atol=1e-8)
    clipped = topic_coefficients(3.0 * T[0], T)  # the box binds: a_0 = 1
    assert clipped[0] == pytest.approx(1.0) and np.all((clipped >= 0) & (clipped <= 1))
    w2 = np.array([2.0, 5.0, 1.0])
    assert topic_weight_statistic(u @ T, T, w2) == pytest.approx(u @ w2, abs=1e-7)


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
