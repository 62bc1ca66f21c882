"""Symmetric noise objects and multilinear maps (seed 003 §1.4–§1.5; spec checklist 2, 7)."""

from __future__ import annotations

from math import comb

import numpy as np

from algorithms.cape.symmetric import (
    matrix_size,
    multilinear,
    pack_tensor,
    sym_matrix_noise,
    sym_tensor_noise,
    tensor_indices,
    tensor_size,
    unpack_tensor,
)


def test_free_entry_counts() -> None:
    for d in (1, 2, 5, 13):
        assert matrix_size(d) == comb(d + 1, 2)
        assert tensor_size(d) == comb(d + 2, 3) == len(tensor_indices(d)[0])


def test_noise_objects_are_symmetric_with_the_requested_variance() -> None:
    rng = np.random.default_rng(0)
    M = sym_matrix_noise(rng, 30, 0.7)
    np.testing.assert_array_equal(M, M.T)
    assert abs(np.var(M[np.triu_indices(30)]) / 0.49 - 1) < 0.2  # 465 free draws
    T = sym_tensor_noise(rng, 12, 0.7)
    for axes in ((1, 0, 2), (0, 2, 1), (2, 1, 0), (1, 2, 0)):
        np.testing.assert_array_equal(T, T.transpose(axes))
    free = pack_tensor(T)
    assert abs(free.var() / 0.49 - 1) < 0.1  # 364 free draws
    np.testing.assert_array_equal(unpack_tensor(free, 12), T)
    # not an outer product: rank-one tensors have rank-one unfoldings
    assert np.linalg.matrix_rank(T.reshape(12, 144)) == 12


def test_multilinear_matches_einsum_and_composes() -> None:
    rng = np.random.default_rng(1)
    T = sym_tensor_noise(rng, 6, 1.0)
    V, U = rng.normal(size=(6, 4)), rng.normal(size=(4, 2))
    expected = np.einsum("ijk,ia,jb,kc->abc", T, V, V, V)
    np.testing.assert_allclose(multilinear(T, V), expected, atol=1e-12)
    np.testing.assert_allclose(multilinear(multilinear(T, V), U), multilinear(T, V @ U),
                               atol=1e-12)
    T2 = sym_tensor_noise(rng, 6, 1.0)
    np.testing.assert_allclose(multilinear(T + T2, V), multilinear(T, V) + multilinear(T2, V),
                               atol=1e-12)


def test_projected_noise_cov_is_the_law_of_the_projected_stage2_noise() -> None:
    """capeAGN's stage-2 site noise is z ↦ pack(unpack(z)(W, W, W)), z ~ N(0, I) over the
    C(D+2, 3) free entries: its covariance is P Pᵀ, P built here column by column from the
    map itself (numpy einsum on the full D×D×D tensor), and matched by a Monte Carlo estimate."""
    from algorithms.cape.symmetric import projected_noise_cov, tensor_indices

    rng = np.random.default_rng(3)
    D, K = 5, 3
    W = rng.normal(size=(D, K))
    n = tensor_size(D)
    i, j, k = tensor_indices(D)
    a, b, c = tensor_indices(K)
    columns = []
    for m in range(n):
        T = np.zeros((D, D, D))
        for p, q, r in {(i[m], j[m], k[m]), (i[m], k[m], j[m]), (j[m], i[m], k[m]),
                        (j[m], k[m], i[m]), (k[m], i[m], j[m]), (k[m], j[m], i[m])}:
            T[p, q, r] = 1.0
        Y = np.einsum("pqr,pa,qb,rc->abc", T, W, W, W)
        columns.append(Y[a, b, c])
    P = np.stack(columns, axis=1)
    C = projected_noise_cov(W, chunk=7)  # several chunks
    np.testing.assert_allclose(C, P @ P.T, rtol=1e-12, atol=1e-12)
    z = rng.normal(size=(20000, n))
    np.testing.assert_allclose(np.cov((z @ P.T).T), C, rtol=0, atol=0.05 * np.abs(C).max())
