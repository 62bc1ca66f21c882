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
    one_bit_sum_delta_min,
    one_bit_sum_epsilon,
    one_bit_sum_epsilon_at_delta_min,
    one_bit_sum_epsilon_curve,
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


# -- the one-bit sum's (ε, δ) (§3.1, eqs. 3.2–3.3, Fig. 3.4; digest C9) -------------------------


def _hockey_stick(a: np.ndarray, b: np.ndarray, eps: float) -> float:
    """The smallest δ with P_a(S) ≤ e^ε P_b(S) + δ for every event S: Σ_k max(0, a_k − e^ε b_k)."""
    return float(np.sum(np.maximum(0.0, a - np.exp(eps) * b)))


@pytest.mark.parametrize(("n", "p"), list(itertools.product([5, 10, 20, 57], [0.5, 0.75, 0.95])))
def test_epsilon_at_delta_min_is_the_largest_mass_ratio_of_the_binomial_laws(n: int, p: float):
    k = np.arange(n + 1)
    f1, f0 = binom.pmf(k - 1, n - 1, p), binom.pmf(k, n - 1, p)  # victim's bit 1 / 0
    both = (f0 > 0) & (f1 > 0)
    ratios = np.concatenate([f1[both] / f0[both], f0[both] / f1[both]])
    eps = one_bit_sum_epsilon_at_delta_min(n, p)
    assert eps == pytest.approx(np.log(ratios.max()), rel=1e-9)
    unshared = f0[~both].sum() + f1[~both].sum()  # f(X_0) = 0 and f(X_1) = n
    q = 1 - p
    assert unshared == pytest.approx(q ** (n - 1) + p ** (n - 1), rel=1e-9)
    delta = one_bit_sum_delta_min(n, p)
    either = 1 - (1 - binom.pmf(0, n - 1, p)) * (1 - binom.pmf(n - 1, n - 1, p))
    assert delta == pytest.approx(either, rel=1e-9)
    # at this ε the only mass that escapes the ratio bound is the unshared mass (≤ δ_min);
    # any smaller ε lets shared mass escape too
    sides = (_hockey_stick(f1, f0, eps), _hockey_stick(f0, f1, eps))
    np.testing.assert_allclose(sides, (p ** (n - 1), q ** (n - 1)), rtol=1e-9)
    assert max(sides) <= delta * (1 + 1e-9) + 1e-15
    tighter = eps - 0.05
    assert _hockey_stick(f0, f1, tighter) > sides[1] * (1 + 1e-6)


def test_delta_min_and_exact_epsilon_match_the_digests_reference_values():
    assert round(one_bit_sum_delta_min(10, 0.5), 4) == 0.0039
    assert one_bit_sum_delta_min(20, 0.5) == pytest.approx(3.8e-6, rel=0.02)
    assert round(one_bit_sum_epsilon_at_delta_min(100, 0.5), 3) == 4.595  # exp ε = n − 1
    # ε ∈ O(log n) with δ_min: ε(n) − log(n − 1) is log(p/q), constant in n
    for n in (10, 100, 1000):
        assert one_bit_sum_epsilon_at_delta_min(n, 0.75) - np.log(n - 1) == pytest.approx(
            np.log(3.0), rel=1e-12)


FIG_3_4 = {  # digest §1.9.1 (DERIVED, p = 1/2): ε for δ = 10⁻³, 1/n, 1/n², 1/n³
    100: (0.684, 0.527, 0.821, 1.070),
    1000: (0.209, 0.209, 0.312, 0.391),
    10000: (0.066, 0.078, 0.115, 0.143),
}


def test_figure_3_4_vanishing_delta_matches_the_reference_values_and_rate():
    curve = one_bit_sum_epsilon_curve(sorted(FIG_3_4))
    for i, n in enumerate(sorted(FIG_3_4)):
        got = [curve[name][i] for name in ("const", "lin", "quad", "cube")]
        np.testing.assert_allclose(got, FIG_3_4[n], atol=6e-4)
    # n = 10: δ = 1/n gives k_l = 2.40, ε = 1.153; δ = 10⁻³ and 1/n³ leave k_l < 0 (undefined)
    assert one_bit_sum_epsilon(10, 0.5, 0.1) == pytest.approx(1.153, abs=6e-4)
    assert np.isnan(one_bit_sum_epsilon(10, 0.5, 1e-3))
    assert np.isnan(one_bit_sum_epsilon(10, 0.5, 1e-3))  # 1/n³ = 10⁻³ at n = 10
    # ε ∈ O(1/√n) at a constant δ: ε·√n is flat over two decades
    scaled = [one_bit_sum_epsilon(n, 0.5, 1e-3) * np.sqrt(n) for n in (100, 1000, 10000)]
    assert max(scaled) / min(scaled) < 1.05
    # larger |p − 1/2| gives a larger ε at the same n and δ
    assert one_bit_sum_epsilon(1000, 0.75, 1e-3) > one_bit_sum_epsilon(1000, 0.5, 1e-3)
    with pytest.raises(InputError, match="delta"):
        one_bit_sum_epsilon(100, 0.5, 0.0)
