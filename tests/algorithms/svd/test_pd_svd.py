"""PD-SVD (thesis Algorithms 9, 10) against numpy's SVD and the centralized block power iteration.

Expected values come from numpy (``np.linalg.svd``, ``np.linalg.qr``), scipy's principal
angles, the Eckart–Young theorem (a party's own top-k basis minimises its own rank-k error) and
the closed form of the initial variance (digest claim C6: Σ_m N(0, 1/(Md)) has variance 1/d).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy import stats

from algorithms.svd.pd_svd import pd_svd
from algorithms.svd.power_iteration import (
    block_power_iteration,
    gram_product,
    left_factor,
    lra_error,
    max_principal_angle,
    orthonormalize,
)
from parties.party import Party
from protocols.errors import InputError, ProtocolAbort
from protocols.normed_secure_sum import nss_dealer
from sim.simulation import Simulation


def separated(rng: np.random.Generator, n: int, d: int, top: list[float]) -> np.ndarray:
    """n×d data with singular values ``top`` followed by a tail in [0.05, 0.5]."""
    u, _ = np.linalg.qr(rng.normal(size=(n, d)))
    v, _ = np.linalg.qr(rng.normal(size=(d, d)))
    s = np.array(top + list(np.linspace(0.5, 0.05, d - len(top))))
    return (u * s) @ v.T


def run_pd_svd(shards: list, k: int, iterations: int, variant: str, seed: int = 1,
               scale: float = 1.0):
    m, d = len(shards), shards[0].shape[1]
    parties = [Party(i, pd_svd, {"X": x, "k": k, "iterations": iterations,
                                 "variant": variant, "scale": scale})
               for i, x in enumerate(shards)]
    if variant == "normed":
        parties.append(Party(m, nss_dealer, {"calls": [(k, d)] * iterations}, role="dealer"))
    sim = Simulation(prime="2^127-1", seed=seed, keys="preshared", sealing=False)
    return sim.run(parties)


def test_modified_gram_schmidt_is_orthonormal_with_the_same_nested_spans() -> None:
    rng = np.random.default_rng(0)
    V = rng.normal(size=(12, 4))
    Q = orthonormalize(V)
    np.testing.assert_allclose(Q.T @ Q, np.eye(4), atol=1e-12)
    q_ref, r_ref = np.linalg.qr(V)
    np.testing.assert_allclose(Q, q_ref * np.sign(np.diag(r_ref)), atol=1e-12)
    # scaling the columns does not change the result (why NormedSecureSum may drop Σ)
    np.testing.assert_allclose(orthonormalize(V * [3.0, 0.1, 7.0, 2.0]), Q, atol=1e-12)
    dependent = np.column_stack([V[:, 0], 2 * V[:, 0]])
    assert np.all(orthonormalize(dependent)[:, 1] == 0)


def test_block_power_iteration_converges_to_numpys_right_singular_vectors() -> None:
    rng = np.random.default_rng(1)
    X = separated(rng, 80, 20, [9.0, 5.0, 2.5])
    V, history = block_power_iteration(X, rng.normal(size=(20, 3)), 60)
    vt = np.linalg.svd(X)[2]
    assert max_principal_angle(V, vt[:3].T) < 1e-10
    assert len(history) == 60
    np.testing.assert_allclose(gram_product(sp.csr_matrix(X), V), X.T @ X @ V, atol=1e-10)


@pytest.mark.parametrize("variant", ["normed", "secure_sum", "sigma_revealing"])
def test_pd_svd_equals_centralized_power_iteration_and_numpy(variant: str) -> None:
    rng = np.random.default_rng(2)
    X = separated(rng, 90, 24, [10.0, 6.0, 3.5])
    shards = [X[:20], X[20:55], X[55:]]
    k, iterations = 3, 15
    result = run_pd_svd(shards, k, iterations, variant)
    models = [result.outputs[m] for m in range(3)]
    V = models[0].V
    assert all(np.array_equal(mod.V, V) for mod in models)  # bit-identical at every party
    V_central, _ = block_power_iteration(X, models[0].V_start, iterations)
    tol = 1e-5 if variant == "normed" else 1e-7  # fixed-point error of the sums
    assert np.abs(V - V_central).max() < tol
    _, s, vt = np.linalg.svd(X)
    assert max_principal_angle(V, vt[:k].T) < 1e-4
    np.testing.assert_allclose(models[0].sigma, s[:k], rtol=1e-5)
    for m, shard in enumerate(shards):  # U^(m) = X^(m) V Σ⁻¹ are the party's rows of U_k
        U_m = models[m].U
        assert U_m.shape == (len(shard), k)
        np.testing.assert_allclose(np.abs(U_m), np.abs(left_factor(shard, vt[:k].T, s[:k])),
                                   atol=1e-4)
    if variant == "secure_sum":  # the revealed σ̂ estimate the eigenvalues σ_i² of XᵀX
        np.testing.assert_allclose(models[0].eigenvalue_estimates[-1], s[:k] ** 2, rtol=1e-4)
    else:
        assert models[0].eigenvalue_estimates == []


def test_normed_iterations_reveal_directions_only_and_cost_one_batched_call_each() -> None:
    rng = np.random.default_rng(3)
    X = separated(rng, 40, 10, [5.0, 3.0])
    shards = [X[:20], X[20:]]
    result = run_pd_svd(shards, 2, 4, "normed")
    view = result.views[0]
    declared = [label for _, label, _ in view.outputs]
    assert set(declared) == {"direction", "sum", "V", "sigma"}
    assert declared.count("sum") == 2  # the initial block and the final Σ (declared leak)
    for _, label, value in view.outputs:
        if label == "direction":
            np.testing.assert_allclose(np.linalg.norm(value, axis=1), 1.0, atol=1e-5)
    calls = {(r.protocol, r.call) for r in result.ledger if r.protocol == "normed_secure_sum"}
    assert len(calls) == 4  # one NormedSecureSum call of k columns per iteration
    assert {r.phase for r in result.ledger if r.protocol == "dealer"} == {"offline"}


def test_lra_error_with_the_global_basis_is_never_below_the_local_optimum() -> None:
    """Eckart–Young: a party's own top-k basis minimises ‖X^(m) − X^(m) V Vᵀ‖ over rank k."""
    rng = np.random.default_rng(4)
    X = separated(rng, 60, 15, [6.0, 4.0, 2.0])
    for shard in (X[:20], X[20:]):
        local = np.linalg.svd(shard)[2][:3].T
        V = np.linalg.svd(X)[2][:3].T
        assert lra_error(shard, local) <= lra_error(shard, V) + 1e-12
        assert math.isclose(lra_error(shard, local),
                            float(np.sqrt(np.sum(np.linalg.svd(shard)[1][3:] ** 2))),
                            rel_tol=1e-9)
        assert math.isclose(lra_error(sp.csr_matrix(shard), V), lra_error(shard, V),
                            rel_tol=1e-6)


def test_initial_block_has_variance_one_over_d() -> None:
    """Digest claim C6: Σ over M parties of N(0, 1/(Md)) draws has variance 1/d."""
    rng = np.random.default_rng(5)
    d, k, m = 200, 5, 4
    shards = [rng.normal(size=(5, d)) for _ in range(m)]
    start = run_pd_svd(shards, k, 1, "secure_sum").outputs[0].V_start.ravel()
    n = start.size
    ratio = np.var(start, ddof=1) * d  # (n − 1)s²/σ² ~ χ²(n − 1)
    low, high = stats.chi2.ppf([0.0005, 0.9995], n - 1) / (n - 1)
    assert low < ratio < high


def test_bad_rank_and_iterations_are_refused() -> None:
    X = np.ones((4, 3))
    with pytest.raises(ProtocolAbort) as info:
        run_pd_svd([X, X], 4, 2, "secure_sum")
    assert isinstance(info.value.__cause__, InputError)
    assert "1 ≤ k ≤ d = 3" in str(info.value)
    with pytest.raises(ProtocolAbort, match="iterations"):
        run_pd_svd([X, X], 2, 0, "secure_sum")


@pytest.mark.parametrize("svd_variant", ["secure_sum", "normed"])
def test_pd_svd_based_nndsvd_start_equals_centralized_nndsvd(svd_variant: str) -> None:
    """Thesis §2.4's PD-SVD-based nndsvd: the start of PD-NMF equals NNDSVD of the pooled X."""
    from algorithms.nmf.nndsvd import nndsvd
    from algorithms.nmf.pd_nmf import SvdInitSettings, pd_nmf
    from algorithms.nmf.rri_steps import RRIParams

    rng = np.random.default_rng(6)
    X = np.abs(separated(rng, 60, 12, [8.0, 4.0, 2.0]))
    shards = [X[:25], X[25:]]
    k = 3
    settings = SvdInitSettings(iterations=40, variant=svd_variant)
    parties = [Party(i, pd_nmf, {"X": x, "k": k, "sweeps": 1, "params": RRIParams(form="plain"),
                                 "svd_init": settings}) for i, x in enumerate(shards)]
    if svd_variant == "normed":
        parties.append(Party(2, nss_dealer, {"calls": [(k, 12)] * 40}, role="dealer"))
    result = Simulation(prime="2^127-1", seed=2, keys="preshared", sealing=False).run(parties)
    start = result.outputs[0].T_start
    np.testing.assert_allclose(start, nndsvd(X, k)[1], atol=1e-4)
    assert {r.phase for r in result.ledger if r.protocol == "secure_sum"} >= {"init/init",
                                                                              "init/sigma"}
