"""Tests of algorithms.nmf.dp_pd_nmf: DP-PD-NMF (thesis seed 001, §3.3, Fig. 3.7c).

References computed here, independently of the code under test: the classical Gaussian
calibration σ = C·√(2 ln(1.25/δ))/ε written out; the chi-square spread of a sample variance
(scipy.stats.chi2); each row's contribution to the T statistic built row by row with numpy;
fixed-point decoding of the recorded SecureSum inputs by hand (p = 2^61 − 1, 2^−f).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as st

from algorithms.nmf.dp_pd_nmf import (
    DpSettings,
    clipped_statistic,
    noisy_statistic,
    row_contribution_norms,
)
from algorithms.nmf.pd_nmf import pd_nmf_iter
from algorithms.nmf.row_blocks import as_row_block
from algorithms.nmf.rri_steps import (
    RRIParams,
    initial_residual,
    t_side_statistics,
    w_side_statistics,
)
from parties.party import site_parties
from protocols.context import party_rng
from protocols.errors import InputError
from sim.network import Network
from sim.simulation import Simulation, party_seed

P61 = 2**61 - 1
FRAC = 24


def sigma(clip: float, epsilon: float, delta: float) -> float:
    """The classical Gaussian mechanism's σ (Dwork & Roth, Thm. A.1), written out."""
    return clip * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon


def variance_bounds(n: int, var: float, alpha: float = 1e-6) -> tuple[float, float]:
    """Two-sided 1 − alpha interval of a mean-zero sample's variance Σx²/n: n·s²/σ² ~ χ²_n."""
    return (var * st.chi2.ppf(alpha / 2, n) / n, var * st.chi2.ppf(1 - alpha / 2, n) / n)


def decode(values) -> np.ndarray:
    v = np.asarray(values, dtype=object)
    signed = np.array([int(x) - P61 if int(x) > P61 // 2 else int(x) for x in v], dtype=float)
    return signed / 2.0**FRAC


def ratings(n: int, d: int, k: int, seed: int, density: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    full = np.clip(np.rint(1.0 + 4.0 * rng.uniform(size=(n, k)) @ rng.uniform(size=(k, d)) / k
                           + rng.normal(0, 0.3, (n, d))), 1, 5)
    observed = rng.uniform(size=(n, d)) < density
    observed[np.arange(n), rng.integers(0, d, size=n)] = True
    return np.where(observed, full, np.nan)


def run_iter(shards, T0, *, sweeps, dp=None, seed=3, params=None):
    sim = Simulation(Network.build(len(shards)), frac_bits=FRAC, seed=seed)
    params = params or RRIParams(form="plain")

    def program(ctx, X):
        return pd_nmf_iter(ctx, X, T0, sweeps=sweeps, params=params, dp=dp)

    return sim.run(site_parties(program, [{"X": s} for s in shards]))


def first_inputs(result) -> list[np.ndarray]:
    """Each party's decoded input to the run's first SecureSum of the T statistic."""
    out = []
    for m in result.sites:
        (_, _, x_hat) = next(r for r in result.views[m].protocol_inputs
                             if r[1] == "t_statistics")
        out.append(decode(x_hat))
    return out


# ------------------------------------------------------------------------------------------
# (1) the noise: σ²/M per party, σ² in the sum
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_parties", [2, 5])
def test_party_noise_has_variance_sigma2_over_m_and_the_sum_sigma2(n_parties):
    settings = DpSettings(epsilon=0.7, delta=0.01, clip=2.0)
    s2 = sigma(2.0, 0.7, 0.01) ** 2
    assert settings.total_std() ** 2 == pytest.approx(s2, rel=1e-12)
    n = 100_000
    zero = np.zeros(n)
    noises = [noisy_statistic(party_rng(party_seed(11, m, "rng")), zero, settings, n_parties)
              for m in range(n_parties)]
    for eta in noises:
        lo, hi = variance_bounds(n, s2 / n_parties)
        assert lo < float(eta @ eta) / n < hi
    total = np.sum(noises, axis=0)
    lo, hi = variance_bounds(n, s2)
    assert lo < float(total @ total) / n < hi
    # the parties' draws are independent (their own coins, no shared stream)
    r = np.corrcoef(noises[0], noises[1])[0, 1]
    assert abs(r) < 5.0 / math.sqrt(n)


def test_the_run_adds_sigma2_over_m_to_each_partys_secure_sum_input():
    """In a run: each party's recorded SecureSum input minus its noise-free statistic (the same
    run with ε = ∞) has variance σ²/M; their sum has σ²."""
    rng = np.random.default_rng(5)
    M, d = 4, 3000
    shards = [rng.uniform(size=(6, d)) for _ in range(M)]
    T0 = rng.uniform(size=(1, d))  # W_i0 ≈ 0.75, so ‖c_i‖ ≈ 15 « C
    clip, eps, delta = 1e3, 10.0, 0.01  # a bound no row reaches: only noise differs
    clean = first_inputs(run_iter(shards, T0, sweeps=1, dp=DpSettings(math.inf, delta, clip)))
    noisy = first_inputs(run_iter(shards, T0, sweeps=1, dp=DpSettings(eps, delta, clip)))
    s2 = sigma(clip, eps, delta) ** 2
    assert max(np.abs(x).max() for x in clean) < clip / 10
    etas = [a - b for a, b in zip(noisy, clean, strict=True)]
    for eta in etas:
        lo, hi = variance_bounds(d + 1, s2 / M)
        assert lo < float(eta @ eta) / (d + 1) < hi
    total = np.sum(etas, axis=0)
    lo, hi = variance_bounds(d + 1, s2)
    assert lo < float(total @ total) / (d + 1) < hi
    # each party's own coins: no two parties' noises are alike
    for a in range(M):
        for b in range(a + 1, M):
            assert abs(np.corrcoef(etas[a], etas[b])[0, 1]) < 5.0 / math.sqrt(d + 1)
    # and the same seed replays the same noise
    again = first_inputs(run_iter(shards, T0, sweeps=1, dp=DpSettings(eps, delta, clip)))
    assert all(np.array_equal(x, y) for x, y in zip(noisy, again, strict=True))


# ------------------------------------------------------------------------------------------
# (2) ε = ∞ is PD-NMF
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", ["full", "ratings"])
def test_infinite_epsilon_equals_the_non_private_run(data):
    rng = np.random.default_rng(8)
    X = rng.uniform(size=(40, 12)) if data == "full" else ratings(40, 12, 3, seed=8)
    shards = [X[:10], X[10:25], X[25:]]
    T0 = rng.uniform(size=(3, 12))
    T0 /= T0.sum(axis=1, keepdims=True)
    plain = run_iter(shards, T0, sweeps=4)
    limit = run_iter(shards, T0, sweeps=4, dp=DpSettings(math.inf, 0.01, 1e-3))
    for m in plain.sites:
        assert np.array_equal(plain.outputs[m].T, limit.outputs[m].T)
        assert np.array_equal(plain.outputs[m].W, limit.outputs[m].W)
    assert list(plain.ledger) == list(limit.ledger)
    noisy = run_iter(shards, T0, sweeps=4, dp=DpSettings(1.0, 0.01, 1.0))
    assert not np.array_equal(plain.outputs[0].T, noisy.outputs[0].T)


# ------------------------------------------------------------------------------------------
# the sensitivity: per-row clipping of the statistic
# ------------------------------------------------------------------------------------------


def explicit_contributions(X: np.ndarray, W: np.ndarray, T: np.ndarray, t: int) -> np.ndarray:
    """c_i row by row: full loss [W_it·(R_t)_i:, W_it²]; observed loss numerator W_it·(R_t)_ij and
    denominator W_it² on the observed columns, [num, den] of length 2d."""
    n = X.shape[0]
    V = W.copy()
    V[:, t] = 0.0
    R = np.nan_to_num(X) - V @ T
    out = []
    for i in range(n):
        w = W[i, t]
        if np.isnan(X).any():
            obs = ~np.isnan(X[i])
            out.append(np.concatenate([np.where(obs, w * R[i], 0.0), np.where(obs, w * w, 0.0)]))
        else:
            out.append(np.concatenate([w * R[i], [w * w]]))
    return np.array(out)


@pytest.mark.parametrize("data", ["full", "ratings"])
def test_clipping_bounds_every_rows_contribution(data):
    rng = np.random.default_rng(2)
    n, d, k, t = 25, 9, 3, 1
    X = rng.uniform(0, 3, size=(n, d)) if data == "full" else ratings(n, d, k, seed=2)
    T = rng.uniform(size=(k, d))
    W = rng.uniform(size=(n, k))
    block = as_row_block(X, "auto")
    ws = w_side_statistics(block, W, T, t, initial_residual(block, W, T))
    W[:, t] = rng.uniform(0, 2, size=n)  # any updated column: the statistic reads W as given
    c = explicit_contributions(X, W, T, t)
    norms = np.linalg.norm(c, axis=1)
    np.testing.assert_allclose(row_contribution_norms(block, W, T, t, ws), norms, rtol=1e-9)
    clip = float(np.median(norms))
    expected = (c * np.minimum(1.0, clip / norms)[:, None]).sum(axis=0)

    stat = t_side_statistics(block, W, T, t, ws)
    np.testing.assert_allclose(stat, c.sum(axis=0), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(clipped_statistic(block, W, T, t, ws, stat, clip), expected,
                               rtol=1e-9, atol=1e-9)
    # a bound no row reaches leaves the statistic itself
    assert clipped_statistic(block, W, T, t, ws, stat, 2 * norms.max()) is stat


def test_bad_settings_name_the_problem():
    with pytest.raises(InputError, match="clip"):
        DpSettings(1.0, 0.01, clip=0.0)
    with pytest.raises(InputError, match="epsilon"):
        DpSettings(-1.0, 0.01)
    with pytest.raises(InputError, match="delta"):
        DpSettings(1.0, 1.5)
