"""Tests of algorithms.nmf.wr (thesis Algorithm 6, Theorem 1, Claim 1, Corollaries 3 and 4).

Corollary 2 is deliberately not tested as a general identity (digest §7.1 item 17).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from algorithms.nmf.objective import regularizer
from algorithms.nmf.rri import rri_nmf
from algorithms.nmf.rri_steps import RRIParams
from algorithms.nmf.wr import (
    LocalModel,
    corollary3_s_norm,
    corollary4_squared_weights,
    corollary4_weights,
    squared_column_norms,
    summarize_local_model,
    theorem1_weights,
    weighted_representatives,
    wr_nmf,
)
from protocols.errors import InputError


def numerical_hessian(f, x0, h=1e-3):
    """Central second differences; exact up to rounding for quadratics."""
    n = x0.size
    H = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei = np.zeros(n)
            ej = np.zeros(n)
            ei[i] = h
            ej[j] = h
            H[i, j] = (f(x0 + ei + ej) - f(x0 + ei - ej) - f(x0 - ei + ej)
                       + f(x0 - ei - ej)) / (4 * h * h)
    return H


def match_rows(A, B):
    cost = np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2)
    r, c = linear_sum_assignment(cost)
    return cost[r, c].max()


# ------------------------------------------------------------------------------------------
# Claim 1
# ------------------------------------------------------------------------------------------


def test_claim1_optimum_and_zero_extra_error():
    X = np.eye(3)
    W = np.ones((3, 1))
    T = np.full((1, 3), 1 / 3)
    # the stated model is a stationary point and attains the Eckart–Young rank-1 error
    np.testing.assert_allclose(-(X - W @ T) @ T.T, 0.0, atol=1e-15)
    np.testing.assert_allclose(-W.T @ (X - W @ T), 0.0, atol=1e-15)
    sv = np.linalg.svd(X, compute_uv=False)
    assert 0.5 * np.sum((X - W @ T) ** 2) == pytest.approx(0.5 * np.sum(sv[1:] ** 2))
    # the extra error of Eq. 2.21 is 0 at y = √3, T̂ = T, and y = √3 is its minimiser
    target = np.sqrt(3) * T

    def extra(y):
        return 0.5 * np.sum((target - y * T) ** 2)

    assert extra(np.sqrt(3)) == pytest.approx(0.0, abs=1e-30)
    ys = np.linspace(0, 3, 301)
    assert all(extra(y) > 0 for y in ys if abs(y - np.sqrt(3)) > 1e-3)
    # Theorem 1's weight for this model is √3, so the representative is √3·T
    np.testing.assert_allclose(theorem1_weights(W), [np.sqrt(3)], rtol=1e-15)
    model = summarize_local_model(W, T)
    np.testing.assert_allclose(weighted_representatives([model]), target, rtol=1e-15)


def test_claim1_wr_nmf_returns_the_local_topic_with_y_sqrt3():
    """WR-NMF on Claim 1's single local model gives T̂ = T and Y = y = √3 (zero extra error).

    (Every rank-1 projector is an optimum for X = I_3, so the local fit itself depends on its
    start; Claim 1 fixes W = (1,1,1)ᵀ, T = (1/3,1/3,1/3).)"""
    model = summarize_local_model(np.ones((3, 1)), np.full((1, 3), 1 / 3))
    starts = {"nndsvd": {}, "random": {"rng": np.random.default_rng(5)},
              "given": {"T0": np.array([[0.6, 0.3, 0.1]])}}
    for kwargs in starts.values():
        res = wr_nmf([model], 1, max_iter=20, **kwargs)
        np.testing.assert_allclose(res.T, np.full((1, 3), 1 / 3), atol=1e-14)
        np.testing.assert_allclose(res.W, [[np.sqrt(3)]], atol=1e-14)
        assert 0.5 * np.sum((np.sqrt(3) / 3 - res.W @ res.T) ** 2) < 1e-28
    # Algorithm 2 as printed projects Y's row onto the simplex and loses the weight (y = 1):
    # the reason for wr_nmf's departure 6
    literal = wr_nmf([model], 1, params=RRIParams(form="topic"), max_iter=20)
    np.testing.assert_allclose(literal.W, [[1.0]], atol=1e-14)


# ------------------------------------------------------------------------------------------
# Theorem 1, Corollary 3, Corollary 4
# ------------------------------------------------------------------------------------------


def test_corollary3_regulariser_hessian_norm_is_l2t():
    rng = np.random.default_rng(0)
    p = RRIParams(l1_w=0.2, l2_w=0.4, l1_t=0.3, l2_t=0.7)
    W = rng.uniform(size=(5, 2))
    T0 = rng.uniform(0.2, 1.0, size=(2, 4))  # away from the kink of |T|

    def reg_eq_2_29(t):
        T = t.reshape(2, 4)
        return (p.l1_t * np.abs(T).sum() + 0.5 * p.l2_t * np.sum(T * T)
                + p.l1_w * np.abs(W).sum() + 0.5 * p.l2_w * np.sum(W * W))

    for f in (reg_eq_2_29, lambda t: regularizer(W, t.reshape(2, 4), p)):
        H = numerical_hessian(f, T0.ravel())
        S = 0.5 * (H + H.T)
        assert np.linalg.eigvalsh(S).min() >= -1e-6  # PSD, Theorem 1's assumption
        assert np.linalg.norm(S, 2) == pytest.approx(0.7, abs=1e-6)
    assert corollary3_s_norm(p) == 0.7


def test_theorem1_weight_squared_is_the_topic_hessian_norm():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(6, 4))
    W, T = rng.uniform(size=(6, 3)), rng.uniform(0.2, 1.0, size=(3, 4))
    p = RRIParams(l2_t=0.5, l1_t=0.1)
    t = 1
    R = X - W @ T + np.outer(W[:, t], T[t])

    def d_t(x):  # per-topic objective of Eq. 2.5 as a function of T_t:
        T2 = T.copy()
        T2[t] = x
        return 0.5 * np.sum((R - np.outer(W[:, t], x)) ** 2) + regularizer(W, T2, p)

    H = numerical_hessian(d_t, T[t])
    v = theorem1_weights(W, s_norm=corollary3_s_norm(p))
    assert np.linalg.norm(0.5 * (H + H.T), 2) == pytest.approx(v[t] ** 2, rel=1e-6)
    np.testing.assert_allclose(v, np.sqrt(np.sum(W**2, axis=0) + 0.5), rtol=1e-15)
    np.testing.assert_allclose(squared_column_norms(W), np.sum(W**2, axis=0), rtol=1e-15)


def test_corollary4_weight_is_the_inf_norm_of_the_diagonal_hessian():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(7, 5))
    W, T = rng.uniform(size=(7, 3)), rng.uniform(size=(3, 5))
    psi = rng.uniform(size=(7, 5)) * (rng.uniform(size=(7, 5)) < 0.6)
    sq = corollary4_squared_weights(W, psi)
    for t in range(3):
        R = X - W @ T + np.outer(W[:, t], T[t])

        def d_t(x, R=R, t=t):
            return 0.5 * np.sum(psi * (R - np.outer(W[:, t], x)) ** 2)

        H = numerical_hessian(d_t, T[t])
        np.testing.assert_allclose(H - np.diag(np.diag(H)), 0.0, atol=1e-6)  # diagonal
        assert np.abs(H).sum(axis=1).max() == pytest.approx(sq[t], rel=1e-6)  # ∞-norm
    np.testing.assert_allclose(corollary4_weights(W, psi, s_norm=0.25), np.sqrt(sq + 0.25))
    # with Ψ = 1 the Corollary 4 quantity reduces to Theorem 1's squared column norms
    np.testing.assert_allclose(corollary4_squared_weights(W, np.ones((7, 5))),
                               np.sum(W**2, axis=0), rtol=1e-14)


def test_weighted_representatives_scale_rows_by_sqrt_v2_plus_l2t():
    rng = np.random.default_rng(3)
    models = [LocalModel(rng.uniform(size=(k, 6)), rng.uniform(size=k)) for k in (2, 3)]
    T_in = weighted_representatives(models, l2_t=0.3)
    expected = np.vstack([np.sqrt(m.squared_weights + 0.3)[:, None] * m.topics
                          for m in models])
    np.testing.assert_allclose(T_in, expected, rtol=1e-15)
    assert T_in.shape == (5, 6)


# ------------------------------------------------------------------------------------------
# recovery of planted topics
# ------------------------------------------------------------------------------------------


def test_wr_nmf_recovers_planted_topics_from_well_separated_local_models():
    rng = np.random.default_rng(4)
    k, d = 4, 40
    T_star = np.zeros((k, d))
    for t in range(k):
        T_star[t, 10 * t:10 * (t + 1)] = rng.dirichlet(np.ones(10))
    local_models = []
    for topics, n_m in (([0, 1, 2], 80), ([1, 2, 3], 60), ([0, 3], 50)):
        W_m = rng.dirichlet(np.full(len(topics), 0.3), size=n_m)
        W_m[W_m < 0.1] = 0.0
        W_m /= W_m.sum(axis=1, keepdims=True)
        X_m = W_m @ T_star[topics]
        fit = rri_nmf(X_m, len(topics), max_iter=300, tol=0.0)  # NNDSVD start, plain form
        assert np.linalg.norm(X_m - fit.W @ fit.T) < 1e-10 * np.linalg.norm(X_m)
        local_models.append(summarize_local_model(fit.W, fit.T))
    res = wr_nmf(local_models, k, max_iter=300, tol=0.0)
    assert match_rows(res.T, T_star) < 1e-8
    seeded = [wr_nmf(local_models, k, rng=np.random.default_rng(9), max_iter=300, tol=0.0)
              for _ in range(2)]
    # every party runs the same seeded RRI: identical T (recovery from a random start is not
    # guaranteed — two local topics can merge into one global topic)
    np.testing.assert_array_equal(seeded[0].T, seeded[1].T)
    np.testing.assert_array_equal(seeded[0].W, seeded[1].W)


# ------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------


def test_validation():
    with pytest.raises(InputError, match="squared_weights"):
        LocalModel(np.ones((2, 3)), np.ones(3))
    with pytest.raises(InputError, match="squared_weights"):
        LocalModel(np.ones((2, 3)), np.array([1.0, -1.0]))
    with pytest.raises(InputError, match="d = 4"):
        weighted_representatives([LocalModel(np.ones((1, 3)), np.ones(1)),
                                  LocalModel(np.ones((1, 4)), np.ones(1))])
    with pytest.raises(InputError, match="s_norm"):
        weighted_representatives([LocalModel(np.ones((1, 3)), np.ones(1))], l2_t=-0.1)
    with pytest.raises(InputError, match="l2_t"):
        corollary3_s_norm(RRIParams(form="topic", l2_t=-0.1))
    with pytest.raises(InputError, match="psi"):
        corollary4_squared_weights(np.ones((3, 2)), np.ones((4, 5)))
    with pytest.raises(InputError, match="local_models"):
        wr_nmf([], 2)
    with pytest.raises(InputError, match="k"):
        wr_nmf([LocalModel(np.ones((1, 3)), np.ones(1))], 2)
