"""Tests of algorithms.nmf.nndsvd against scikit-learn's NNDSVD and a numpy SVD.

scikit-learn's ``_initialize_nmf`` factors X (n_samples × n_features) as W H, the thesis
orientation (W ↔ W0, H ↔ T0). Its randomized SVD is exact up to rounding here: for k ≥ 2 the
sketch (k + 10 columns) spans the whole row space of the small test matrices; for k = 1 it has
11 of 12 columns, and its 7 power iterations shrink the missed direction by (σ₁₂/σ₁)¹⁵ < 3e-16.

Both sides are compared at the rounding error the SVD's conditioning allows
(:func:`svd_rounding_bound`), not at a fixed number of digits, and only where NNDSVD is
continuous (:func:`assert_well_posed`).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.decomposition._nmf import _initialize_nmf

from algorithms.nmf.nndsvd import nndsvd, nndsvd_topics, signed_part_norms
from protocols.errors import DataError, InputError

EPS = np.finfo(np.float64).eps


def data(seed=0, n=30, d=12, density=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if density < 1:
        X *= rng.uniform(size=(n, d)) < density
    return X


def svd_rounding_bound(X, k, gram=False):
    """How far rounding in a truncated SVD can move an entry of NNDSVD(X, k).

    A backward-stable SVD (LAPACK, or scikit-learn's randomized SVD when it is exact) gives
    singular vectors within ~eps·‖X‖₂/gap_j of the exact ones (Wedin), gap_j being σ_j's
    distance to the rest of the spectrum. ARPACK (``gram=True``) iterates on the Gram operator
    XᵀX to machine precision, where the same holds with σ² for σ. NNDSVD's entries are
    √(σ_j m_j)·part/‖part‖, so they move by √σ₁ times that; 100·√min(n, d) covers the
    constants of the backward error.
    """
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    s = np.linalg.svd(dense, compute_uv=False)
    lam = np.append(s, 0.0) ** (2 if gram else 1)
    others = np.abs(lam[:k, None] - lam[None, :])
    others[np.arange(k), np.arange(k)] = np.inf
    gap = others.min()
    return 100 * EPS * np.sqrt(min(dense.shape)) * lam[0] / gap * np.sqrt(s[0])


def assert_well_posed(X, k, tol):
    """NNDSVD jumps where m₊ = m₋ (which signed part is kept) and where an entry crosses the
    1e-6 threshold; a comparison at ``tol`` means something only ≥ 10·tol away from both."""
    dense = X.toarray() if sp.issparse(X) else np.asarray(X)
    U, _, Vt = np.linalg.svd(dense, full_matrices=False)
    u, v = U[:, 1:k], Vt[1:k].T
    m_pos = np.linalg.norm(np.maximum(u, 0), axis=0) * np.linalg.norm(np.maximum(v, 0), axis=0)
    m_neg = np.linalg.norm(np.maximum(-u, 0), axis=0) * np.linalg.norm(np.maximum(-v, 0), axis=0)
    assert np.all(np.abs(m_pos - m_neg) > 10 * tol)
    W_raw, H_raw = _initialize_nmf(dense, k, init="nndsvd", eps=0.0, random_state=0)
    raw = np.concatenate([W_raw.ravel(), H_raw.ravel()])
    assert np.all(np.abs(raw - 1e-6) > 10 * tol)


@pytest.mark.parametrize("variant", ["nndsvd", "nndsvda"])
@pytest.mark.parametrize("k", [1, 4, 7])
def test_matches_scikit_learn(variant, k):
    X = data(k)
    W0, T0 = nndsvd(X, k, variant=variant)
    W_sk, H_sk = _initialize_nmf(X, k, init=variant, random_state=0)
    assert W0.shape == (30, k) and T0.shape == (k, 12)
    tol = svd_rounding_bound(X, k)  # 3e-13 … 8e-11 for these k
    assert_well_posed(X, k, tol)
    np.testing.assert_allclose(W0, W_sk, rtol=0, atol=tol)
    np.testing.assert_allclose(T0, H_sk, rtol=0, atol=tol)


def test_matches_scikit_learn_on_sparse_input():
    # rank 8 <= k + 10, so scikit-learn's randomized SVD is exact
    rng = np.random.default_rng(3)
    A = rng.uniform(size=(60, 8)) * (rng.uniform(size=(60, 8)) < 0.3)
    B = rng.uniform(size=(8, 40)) * (rng.uniform(size=(8, 40)) < 0.3)
    X = A @ B
    assert 0.1 < np.count_nonzero(X) / X.size < 0.7
    W0, T0 = nndsvd(sp.csr_matrix(X), 5)  # ARPACK path
    W_sk, H_sk = _initialize_nmf(X, 5, init="nndsvd", random_state=0)
    # ARPACK (tol = 0: machine precision) on XᵀX: the Gram bound (1.5e-10 here) covers all three
    tol = svd_rounding_bound(X, 5, gram=True)
    assert_well_posed(X, 5, tol)
    np.testing.assert_allclose(W0, W_sk, rtol=0, atol=tol)
    np.testing.assert_allclose(T0, H_sk, rtol=0, atol=tol)
    W1, T1 = nndsvd(X, 5)  # LAPACK path
    np.testing.assert_allclose(W0, W1, rtol=0, atol=tol)
    np.testing.assert_allclose(T0, T1, rtol=0, atol=tol)


def test_the_rounding_bound_rejects_an_svd_stopped_short():
    """Negative control: right singular vectors off by 1e-8 rad (an SVD stopped at tol 1e-8)
    move T0 by more than the derived tolerance, so the comparisons above would fail."""
    X = data(4)
    k = 4
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    tol = svd_rounding_bound(X, k)
    pos, neg = signed_part_norms(U[:, :k])
    _, H_sk = _initialize_nmf(X, k, init="nndsvd", random_state=0)
    np.testing.assert_allclose(nndsvd_topics(Vt[:k].T, s[:k], pos, neg), H_sk, rtol=0,
                               atol=tol)
    theta = 1e-8  # turn v_1 towards v_k, a direction outside the rank-k subspace
    V = Vt[:k].T.copy()
    V[:, 1] = np.cos(theta) * Vt[1] + np.sin(theta) * Vt[k]
    off = nndsvd_topics(V, s[:k], pos, neg)
    assert np.abs(off - H_sk).max() > 10 * tol
    with pytest.raises(AssertionError):
        np.testing.assert_allclose(off, H_sk, rtol=0, atol=tol)


def test_nndsvdar_fills_only_the_zeros_with_small_values():
    X = data(4, density=0.5)
    W_plain, T_plain = nndsvd(X, 4)
    W_a, T_a = nndsvd(X, 4, variant="nndsvdar", rng=np.random.default_rng(1))
    _, T_b = nndsvd(X, 4, variant="nndsvdar", rng=np.random.default_rng(1))
    np.testing.assert_array_equal(T_a, T_b)
    for plain, filled in ((W_plain, W_a), (T_plain, T_a)):
        nz = plain > 0
        np.testing.assert_array_equal(filled[nz], plain[nz])
        assert (plain == 0).any()
        assert np.all(filled[~nz] >= 0) and np.all(filled[~nz] < X.mean() * 0.1)
        assert np.count_nonzero(filled[~nz]) == np.count_nonzero(~nz)


def test_topics_from_norms_equal_the_full_nndsvd():
    X = data(5, n=40, d=15, density=0.6)
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    k = 5
    pos = np.linalg.norm(np.maximum(U[:, :k], 0), axis=0)
    neg = np.linalg.norm(np.maximum(-U[:, :k], 0), axis=0)
    T0 = nndsvd_topics(Vt[:k].T, s[:k], pos, neg)
    _, H_sk = _initialize_nmf(X, k, init="nndsvd", random_state=0)
    tol = svd_rounding_bound(X, k)
    assert_well_posed(X, k, tol)
    np.testing.assert_allclose(T0, H_sk, rtol=0, atol=tol)
    np.testing.assert_allclose(T0, nndsvd(X, k)[1], rtol=0, atol=tol)


def test_topics_from_securely_summed_norms_of_row_blocks():
    """PD-SVD-based nndsvd: each party forms U^(m) = X^(m) V Σ⁻¹ and contributes squared norms."""
    X = data(6, n=45, d=14, density=0.7)
    k = 4
    _, s, Vt = np.linalg.svd(X, full_matrices=False)
    V, sigma = Vt[:k].T, s[:k]
    sq_pos, sq_neg = np.zeros(k), np.zeros(k)
    for rows in (slice(0, 10), slice(10, 31), slice(31, 45)):
        U_m = X[rows] @ V / sigma
        sq_pos += np.sum(np.maximum(U_m, 0) ** 2, axis=0)
        sq_neg += np.sum(np.maximum(-U_m, 0) ** 2, axis=0)
    T0 = nndsvd_topics(V, sigma, np.sqrt(sq_pos), np.sqrt(sq_neg), variant="nndsvda",
                       fill_value=float(X.mean()))
    _, H_sk = _initialize_nmf(X, k, init="nndsvda", random_state=0)
    tol = svd_rounding_bound(X, k)
    assert_well_posed(X, k, tol)
    np.testing.assert_allclose(T0, H_sk, rtol=0, atol=tol)


def test_topics_do_not_depend_on_the_joint_sign_of_a_singular_pair():
    X = data(7)
    U, s, Vt = np.linalg.svd(X, full_matrices=False)
    k = 4
    flip = np.array([1.0, -1.0, 1.0, -1.0])
    pos, neg = signed_part_norms(U[:, :k])
    pos_f, neg_f = signed_part_norms(U[:, :k] * flip)
    a = nndsvd_topics(Vt[:k].T, s[:k], pos, neg)
    b = nndsvd_topics(Vt[:k].T * flip, s[:k], pos_f, neg_f)
    np.testing.assert_allclose(a, b, atol=1e-14)


def test_signed_part_norms():
    pos, neg = signed_part_norms(np.array([[3.0, -1.0], [-4.0, 0.0], [0.0, 2.0]]))
    np.testing.assert_allclose(pos, [3.0, 2.0])
    np.testing.assert_allclose(neg, [4.0, 1.0])


def test_validation():
    X = data(8)
    with pytest.raises(InputError, match="n_components"):
        nndsvd(X, 13)
    with pytest.raises(InputError, match="n_components"):
        nndsvd(X, 0)
    with pytest.raises(InputError, match="variant"):
        nndsvd(X, 2, variant="svd")
    with pytest.raises(InputError, match="rng"):
        nndsvd(X, 2, variant="nndsvdar")
    with pytest.raises(DataError, match="negative"):
        nndsvd(-X, 2)
    with pytest.raises(DataError, match="NaN"):
        nndsvd(np.where(X > 0.9, np.nan, X), 2)
    with pytest.raises(InputError, match="sigma"):
        nndsvd_topics(np.ones((5, 2)), np.ones(3), np.ones(2), np.ones(2))
    with pytest.raises(InputError, match="fill_value"):
        nndsvd_topics(np.ones((5, 2)), np.ones(2), np.ones(2), np.ones(2), variant="nndsvda")
