"""Tests of algorithms.nmf.rri (thesis Algorithm 2, Eq. 2.31, Lemma 1, Corollary 1).

Expected values come from closed forms, explicit dense residuals, optimality (KKT) conditions,
scipy's active-set NNLS (exact in finitely many steps, so no stopping tolerance enters),
brute-force enumeration and an independent bisection for the simplex projection. No expected
value comes from an iterative optimiser whose last digits depend on its version's stopping rule.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment, nnls
from sklearn.decomposition._nmf import _initialize_nmf

from algorithms.nmf.objective import objective
from algorithms.nmf.row_blocks import as_row_block
from algorithms.nmf.rri import fit_weights, random_init, rri_nmf, rri_sweep
from algorithms.nmf.rri_steps import (
    RRIParams,
    WSideStatistics,
    end_of_sweep,
    initial_residual,
    next_residual,
    split_t_statistics,
    t_side_statistics,
    t_statistic_length,
    update_t_row,
    update_w_column,
    w_side_statistics,
)
from algorithms.nmf.simplex import corollary1, lemma1, project_to_simplex
from protocols.errors import DataError, InputError

# ------------------------------------------------------------------------------------------
# independent references
# ------------------------------------------------------------------------------------------


def simplex_projection_bisection(u: np.ndarray) -> np.ndarray:
    """argmin_{x in simplex} ||x - u|| via x = max(u - theta, 0), theta found by bisection."""
    lo, hi = u.min() - 1.0, u.max()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if np.maximum(u - mid, 0.0).sum() > 1.0:
            lo = mid
        else:
            hi = mid
    return np.maximum(u - 0.5 * (lo + hi), 0.0)


def reference_objective(X, W, T, p: RRIParams) -> float:
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    diff = X - W @ T
    loss = 0.5 * np.nansum(diff**2)
    reg = (p.l1_t * T.sum() + 0.5 * p.l2_t * (T**2).sum()
           + p.l1_w * W.sum() + 0.5 * p.l2_w * (W**2).sum())
    return float(loss + reg)


def explicit_residual(X, W, T, t):
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    return X - W @ T + np.outer(W[:, t], T[t])


def planted(rng, n=120, d=30, k=3, alpha=0.3):
    """Planted factorisation with a unique solution: topics with disjoint supports and sparse
    Dirichlet weights (entries below 0.1 zeroed, rows renormalised), so that some documents
    are pure and no other non-negative factorisation fits exactly."""
    T = np.zeros((k, d))
    width = d // k
    for t in range(k):
        T[t, t * width:(t + 1) * width] = rng.dirichlet(np.ones(width))
    W = rng.dirichlet(np.full(k, alpha), size=n)
    W[W < 0.1] = 0.0
    W /= W.sum(axis=1, keepdims=True)
    return W, T


def match_rows(A, B):
    """Max L1 distance between rows of A and B after the best row matching."""
    cost = np.abs(A[:, None, :] - B[None, :, :]).sum(axis=2)
    r, c = linear_sum_assignment(cost)
    return cost[r, c].max()


def sweep_by_blocks(blocks, W_blocks, T, params):
    """The distributed evaluation: steps 1-3 per block, float sum of step 3, step 4, rescale."""
    W_blocks = [w.copy() for w in W_blocks]
    T = T.copy()
    residuals = [initial_residual(b, w, T) for b, w in zip(blocks, W_blocks, strict=True)]
    loss = blocks[0].loss
    for t in range(T.shape[0]):
        w_stats = []
        summed = np.zeros(t_statistic_length(T.shape[1], loss))
        for i, b in enumerate(blocks):
            ws = w_side_statistics(b, W_blocks[i], T, t, residuals[i])
            W_blocks[i][:, t] = update_w_column(ws, params)
            summed = summed + t_side_statistics(b, W_blocks[i], T, t, ws)
            w_stats.append(ws)
        T[t], s_t = update_t_row(summed, params, loss)
        for i, b in enumerate(blocks):
            W_blocks[i][:, t] *= s_t
            residuals[i] = next_residual(b, w_stats[i], W_blocks[i][:, t], T[t])
    return [end_of_sweep(w, params) for w in W_blocks], T


# ------------------------------------------------------------------------------------------
# simplex projection, Lemma 1, Corollary 1
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("u", "expected"),
    [
        ([0.5, 0.5], [0.5, 0.5]),
        ([2.0, 0.0], [1.0, 0.0]),
        ([0.0, 0.0, 0.0], [1 / 3, 1 / 3, 1 / 3]),
        ([1.0, 0.5], [0.75, 0.25]),
        ([-1.0, 2.0], [0.0, 1.0]),
        ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5]),
    ],
)
def test_project_to_simplex_known_examples(u, expected):
    np.testing.assert_allclose(project_to_simplex(u), expected, atol=1e-15)


def simplex_kkt_violation(p: np.ndarray, u: np.ndarray) -> float:
    """How far p is from argmin_{x ≥ 0, Σx = 1} ‖x − u‖², by the KKT conditions.

    The minimiser is the unique feasible p with one multiplier τ such that u_i − p_i = τ where
    p_i > 0 and u_i ≤ τ where p_i = 0. τ is read off the positive entries; the violation is
    the largest failure of any condition, in absolute terms (u is O(1) here).
    """
    positive = p > 0
    tau = float(np.mean((u - p)[positive]))
    return max(float(-p.min()), abs(float(p.sum()) - 1.0),
               float(np.abs((u - p)[positive] - tau).max()),
               float(np.max(u[~positive] - tau, initial=0.0)))


def test_project_to_simplex_matches_bisection_and_the_kkt_conditions():
    rng = np.random.default_rng(1)
    U = rng.normal(scale=2.0, size=(40, 7))
    P = project_to_simplex(U)
    for u, p in zip(U, P, strict=True):
        np.testing.assert_allclose(p, simplex_projection_bisection(u), atol=1e-12)
        # the rounding of a sort, a cumulative sum of 7 terms and one subtraction: ~10 ε·‖u‖∞
        assert simplex_kkt_violation(p, u) <= 64 * np.finfo(float).eps * np.abs(u).max()
    # the check is not vacuous: mass moved between two positive entries breaks it
    u, p = U[0], P[0].copy()
    i, j = np.flatnonzero(p > 0)[:2]
    p[i] += 1e-9
    p[j] -= 1e-9
    assert simplex_kkt_violation(p, u) > 1e-10


def test_project_to_simplex_rejects_nan():
    with pytest.raises(InputError, match="U"):
        project_to_simplex([0.1, np.nan])


@pytest.mark.parametrize("c", [0.0, -0.3, -2.0])
def test_lemma1_is_the_simplex_minimiser(c):
    rng = np.random.default_rng(2)
    d = 5
    for _ in range(20):
        w = rng.normal(size=d)

        def f(x, w=w):
            return w @ x + c * x @ x

        x = lemma1(w, c)
        vertices = [f(e) for e in np.eye(d)]
        assert f(x) == pytest.approx(min(vertices), abs=1e-14)
        samples = rng.dirichlet(np.ones(d), size=500)
        assert f(x) <= (samples @ w + c * np.sum(samples**2, axis=1)).min() + 1e-14


def test_lemma1_rejects_positive_curvature():
    with pytest.raises(InputError, match=r"c 0\.5"):
        lemma1([1.0, 2.0], 0.5)


@pytest.mark.parametrize("c", [0.0, -0.1, -1.0])
def test_corollary1_is_the_box_minimiser(c):
    rng = np.random.default_rng(3)
    d = 8
    corners = np.array(list(itertools.product([0.0, 1.0], repeat=d)))
    for _ in range(10):
        w = rng.normal(size=d)

        def f(x, w=w):
            return x @ w + c * np.sum(x * x, axis=-1)

        x = corollary1(w, c)
        assert set(np.unique(x)) <= {0.0, 1.0}
        assert f(x) == pytest.approx(f(corners).min(), abs=1e-14)
        assert f(x) <= f(rng.uniform(size=(500, d))).min() + 1e-14


def test_corollary1_tie_goes_to_zero_and_is_optimal():
    # w_i + c = 0: value 0 at both bounds; the module takes 0 (documented departure 5).
    x = corollary1([0.5, -1.0, 2.0], -0.5)
    np.testing.assert_array_equal(x, [0.0, 1.0, 0.0])


def test_corollary1_rejects_positive_curvature():
    with pytest.raises(InputError, match="Corollary 1"):
        corollary1([1.0, 2.0], [0.0, 0.1])


# ------------------------------------------------------------------------------------------
# the per-topic steps
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("sparse", [False, True])
def test_step_statistics_equal_explicit_residual_products(sparse):
    rng = np.random.default_rng(4)
    X = rng.uniform(size=(25, 9)) * (rng.uniform(size=(25, 9)) < 0.4)
    Xin = sp.csr_matrix(X) if sparse else X
    W, T = rng.uniform(size=(25, 4)), rng.uniform(size=(4, 9))
    block = as_row_block(Xin)
    for t in range(4):
        R = explicit_residual(X, W, T, t)
        ws = w_side_statistics(block, W, T, t)
        np.testing.assert_allclose(ws.numerator, R @ T[t], atol=1e-12)
        assert ws.denominator == pytest.approx(T[t] @ T[t])
        W2 = W.copy()
        W2[:, t] = rng.uniform(size=25)  # step 3 uses the updated column; R_t is unchanged
        stat = t_side_statistics(block, W2, T, t, ws)
        assert stat.shape == (10,)
        np.testing.assert_allclose(stat[:9], W2[:, t] @ R, atol=1e-12)
        assert stat[9] == pytest.approx(W2[:, t] @ W2[:, t])


@pytest.mark.parametrize(("l1", "l2"), [(0.0, 0.0), (0.3, 0.5), (0.0, 2.0)])
def test_plain_w_update_solves_the_column_subproblem(l1, l2):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(15, 6))
    W, T = rng.uniform(size=(15, 3)), rng.uniform(size=(3, 6))
    params = RRIParams(l1_w=l1, l2_w=l2)
    t = 1
    R = explicit_residual(X, W, T, t)
    new = update_w_column(w_side_statistics(as_row_block(X), W, T, t), params)
    # ½‖R − w T_t‖² + l1·Σw + ½ l2‖w‖² over w ≥ 0 separates by row into one-variable
    # quadratics: w_i = max(0, (R_i · T_t − l1) / (T_t · T_t + l2)) — a closed form
    expected = np.maximum(0.0, (R @ T[t] - l1) / (T[t] @ T[t] + l2))
    if l1 == 0 and l2 == 0:  # and, unregularised, scipy's active-set NNLS row by row
        np.testing.assert_allclose(
            expected, [nnls(T[t][:, None], R[i])[0][0] for i in range(15)], atol=1e-12)
    np.testing.assert_allclose(new, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize(("l1", "l2"), [(0.0, 0.0), (0.2, 0.7)])
def test_plain_t_update_solves_the_row_subproblem(l1, l2):
    rng = np.random.default_rng(6)
    X = rng.uniform(size=(15, 6))
    W, T = rng.uniform(size=(15, 3)), rng.uniform(size=(3, 6))
    params = RRIParams(l1_t=l1, l2_t=l2)
    t = 2
    R = explicit_residual(X, W, T, t)
    block = as_row_block(X)
    ws = w_side_statistics(block, W, T, t)
    row, s_t = update_t_row(t_side_statistics(block, W, T, t, ws), params, "full")
    w = W[:, t]

    # ½‖R − w x‖² + l1·Σx + ½ l2‖x‖² over x ≥ 0 separates by column: a closed form
    expected = np.maximum(0.0, (w @ R - l1) / (w @ w + l2))
    # Unregularised, the plain form returns the minimiser rescaled by 1/s_t and balances the
    # topic: ‖s_t·W_:t‖ = ‖T_t:‖ (departure 9); regularised, s_t = 1.
    np.testing.assert_allclose(row * s_t, expected, rtol=1e-12, atol=1e-14)
    if params.unregularized:
        assert s_t * np.linalg.norm(w) == pytest.approx(np.linalg.norm(row), rel=1e-12)
    else:
        assert s_t == 1.0


def test_topic_unregularised_row_is_divided_by_its_l1_norm():
    rng = np.random.default_rng(7)
    num = rng.normal(size=8)
    den = 2.5
    row, s_t = update_t_row(np.append(num, den), RRIParams(form="topic"), "full")
    raw = np.maximum(num, 0) / den
    assert s_t == pytest.approx(raw.sum())
    np.testing.assert_allclose(row * s_t, raw, atol=1e-15)
    assert row.sum() == pytest.approx(1.0)


def test_topic_regularised_row_is_projected():
    rng = np.random.default_rng(8)
    num = rng.normal(size=8) + 0.5
    params = RRIParams(form="topic", l1_t=0.1, l2_t=0.4)
    row, s_t = update_t_row(np.append(num, 1.5), params, "full")
    expected = simplex_projection_bisection(np.maximum(num - 0.1, 0) / (1.5 + 0.4))
    np.testing.assert_allclose(row, expected, atol=1e-12)
    assert s_t == 1.0


def test_zero_t_row_stays_zero_with_unit_scale():
    row, s_t = update_t_row(np.array([-1.0, -2.0, 0.0, 3.0]), RRIParams(form="topic"), "full")
    np.testing.assert_array_equal(row, np.zeros(3))
    assert s_t == 1.0


def test_negative_curvature_branches_minimise_the_exact_subproblems():
    """Topic form, l2 < 0 with curvature <= 0: W_:t is the best box corner per row of the exact
    column problem and T_t: the best simplex vertex of the exact row problem."""
    rng = np.random.default_rng(9)
    X = rng.dirichlet(np.ones(6), size=12)
    W, T = rng.dirichlet(np.ones(3), size=12), rng.dirichlet(np.ones(6), size=3)
    t = 0
    l2_w = -(T[t] @ T[t]) - 0.05  # curvature < 0 for the W column
    R = explicit_residual(X, W, T, t)
    l1_w = float(np.median(R @ T[t])) - 0.025  # puts the corner switch amid the rows
    params = RRIParams(form="topic", l2_w=l2_w, l2_t=-50.0, l1_w=l1_w)
    block = as_row_block(X)
    ws = w_side_statistics(block, W, T, t)
    w_new = update_w_column(ws, params)

    def row_value(i, x):  # the exact column sub-problem, row i's term, at W_it = x
        r = R[i] - x * T[t]
        return 0.5 * r @ r + l1_w * x + 0.5 * l2_w * x * x

    for i in range(12):
        best = min(row_value(i, 0.0), row_value(i, 1.0))
        assert row_value(i, w_new[i]) == pytest.approx(best, abs=1e-14)
    assert len(set(w_new)) == 2  # both corners occur in this instance
    W2 = W.copy()
    W2[:, t] = w_new
    row, s_t = update_t_row(t_side_statistics(block, W2, T, t, ws), params, "full")

    def t_value(x):
        r = R - np.outer(w_new, x)
        return 0.5 * np.sum(r * r) + 0.5 * (-50.0) * x @ x

    assert t_value(row) == pytest.approx(min(t_value(e) for e in np.eye(6)), abs=1e-12)
    assert s_t == 1.0


def test_thesis_literal_c_moves_the_corollary1_threshold():
    # numerator 0.3, curvature -0.4: exact c = -0.2 -> w + c = -0.3 - 0.2 < 0 -> 1 either way;
    # numerator -0.3: exact w + c = 0.3 - 0.2 > 0 -> 0, literal w + c = 0.3 - 0.4 < 0 -> 1.
    stats = WSideStatistics(np.array([0.3, -0.3]), 0.1, None, "full")
    exact = update_w_column(stats, RRIParams(form="topic", l2_w=-0.5))
    literal = update_w_column(stats, RRIParams(form="topic", l2_w=-0.5, thesis_literal_c=True))
    np.testing.assert_array_equal(exact, [1.0, 0.0])
    np.testing.assert_array_equal(literal, [1.0, 1.0])
    # the exact per-row value of the sub-problem at x: -num*x + 0.5*(den + l2)*x^2
    for num, x in zip([0.3, -0.3], exact, strict=True):
        values = {v: -num * v + 0.5 * (0.1 - 0.5) * v * v for v in (0.0, 1.0)}
        assert values[x] == min(values.values())


def test_statistic_layout():
    assert t_statistic_length(7, "full") == 8
    assert t_statistic_length(7, "observed") == 14
    num, den = split_t_statistics(np.arange(8.0), "full")
    np.testing.assert_array_equal(num, np.arange(7.0))
    assert den == 7.0
    num, den = split_t_statistics(np.arange(6.0), "observed")
    np.testing.assert_array_equal(num, [0, 1, 2])
    np.testing.assert_array_equal(den, [3, 4, 5])
    with pytest.raises(InputError, match="layout"):
        split_t_statistics(np.arange(5.0), "observed")
    with pytest.raises(InputError, match="loss"):
        t_statistic_length(3, "huber")


# ------------------------------------------------------------------------------------------
# sweeps and the driver
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params", [RRIParams(), RRIParams(l1_w=0.05, l2_w=0.1, l1_t=0.02, l2_t=0.3)]
)
def test_plain_objective_never_increases(params):
    rng = np.random.default_rng(10)
    X = rng.uniform(size=(40, 15))
    _, T0 = random_init(40, 15, 5, rng=rng)
    seen = []
    res = rri_nmf(X, 5, T0=T0, max_iter=40, tol=0.0, params=params,
                  callback=lambda s, W, T, f: seen.append((W.copy(), T.copy(), f)))
    independent = [reference_objective(X, W, T, params) for W, T, _ in seen]
    np.testing.assert_allclose(res.objective, independent, rtol=1e-12)
    start = reference_objective(X, np.zeros((40, 5)), T0, params)
    values = np.array([start, *independent])
    assert np.all(np.diff(values) <= 1e-12 * values[:-1])
    assert values[-1] < 0.5 * values[0]


def test_exact_recovery_of_a_planted_factorisation():
    rng = np.random.default_rng(11)
    W_star, T_star = planted(rng)
    X = W_star @ T_star
    res = rri_nmf(X, 3, max_iter=200, tol=0.0)  # NNDSVD start
    assert np.linalg.norm(X - res.W @ res.T) <= 1e-12 * np.linalg.norm(X)
    T_hat = res.T / res.T.sum(axis=1, keepdims=True)
    assert match_rows(T_hat, T_star) < 1e-10


def test_topic_form_recovers_planted_topics_on_the_simplex():
    rng = np.random.default_rng(12)
    W_star, T_star = planted(rng)
    X = W_star @ T_star
    _, T0 = random_init(*X.shape, 3, rng=rng)
    res = rri_nmf(X, 3, T0=T0, max_iter=200, tol=0.0, params=RRIParams(form="topic"))
    np.testing.assert_allclose(res.T.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(res.W.sum(axis=1), 1.0, atol=1e-12)
    assert res.T.min() >= 0 and res.W.min() >= 0
    assert match_rows(res.T, T_star) < 1e-10
    assert match_rows(res.W.T, W_star.T) < 1e-10
    assert np.abs(X - res.W @ res.T).max() < 1e-12


@pytest.mark.parametrize(
    "params",
    [RRIParams(form="topic", l2_w=0.05, l2_t=0.01), RRIParams(form="topic", l2_w=-0.02,
                                                               l2_t=-0.01)],
)
def test_topic_form_constraints_with_regularisers(params):
    rng = np.random.default_rng(13)
    X = rng.dirichlet(np.ones(20), size=50)
    _, T0 = random_init(50, 20, 4, rng=rng)
    res = rri_nmf(X, 4, T0=T0, max_iter=15, tol=0.0, params=params)
    for M in (res.T, res.W):
        assert M.min() >= 0
        assert np.all((np.abs(M.sum(axis=1) - 1) < 1e-12) | (M.sum(axis=1) == 0))
    np.testing.assert_allclose(res.W.sum(axis=1), 1.0, atol=1e-12)


def test_dense_and_csr_inputs_give_the_same_run():
    rng = np.random.default_rng(14)
    X = rng.uniform(size=(60, 25)) * (rng.uniform(size=(60, 25)) < 0.3)
    _, T0 = random_init(60, 25, 4, rng=rng)
    for params in (RRIParams(), RRIParams(form="topic", l2_t=0.1)):
        a = rri_nmf(X, 4, T0=T0, max_iter=8, tol=0.0, params=params)
        b = rri_nmf(sp.csr_matrix(X), 4, T0=T0, max_iter=8, tol=0.0, params=params)
        np.testing.assert_allclose(a.W, b.W, atol=1e-11)
        np.testing.assert_allclose(a.T, b.T, atol=1e-11)
        np.testing.assert_allclose(a.objective, b.objective, rtol=1e-9)


_BLOCK_CASES = {
    "plain": RRIParams(),
    "plain-regularised": RRIParams(l1_w=0.01, l2_t=0.2),
    "topic": RRIParams(form="topic"),
    "topic-regularised": RRIParams(form="topic", l2_w=0.1, l1_t=0.01),
    "topic-corollary1": RRIParams(form="topic", l2_w=-0.3, l2_t=-0.02),
    "topic-lemma1": RRIParams(form="topic", l2_w=-0.01, l2_t=-2.5),
}


@pytest.mark.parametrize(
    ("kind", "case"),
    [(kind, case) for kind in ("dense", "csr", "observed") for case in _BLOCK_CASES
     if kind != "observed" or _BLOCK_CASES[case].l2_w >= 0 <= _BLOCK_CASES[case].l2_t],
)
def test_row_blocks_summed_in_float_reproduce_the_centralized_sweep(kind, case):
    """The structure Theorem 2 relies on: 3 row blocks, step-3 statistics summed."""
    params = _BLOCK_CASES[case]
    rng = np.random.default_rng(15)
    X = rng.dirichlet(np.ones(12), size=30) * (rng.uniform(size=(30, 12)) < 0.6)
    if kind == "observed":
        X[rng.uniform(size=X.shape) < 0.25] = np.nan
    Xin = sp.csr_matrix(X) if kind == "csr" else X
    W, T = rng.dirichlet(np.ones(4), size=30), rng.dirichlet(np.ones(12), size=4)
    cuts = [0, 7, 19, 30]
    blocks = [as_row_block(Xin[a:b]) for a, b in itertools.pairwise(cuts)]
    W_blocks = [W[a:b] for a, b in itertools.pairwise(cuts)]
    Wc, Tc = W, T
    for _ in range(3):
        Wc, Tc = rri_sweep(Xin, Wc, Tc, params)
        W_blocks, T = sweep_by_blocks(blocks, W_blocks, T, params)
        np.testing.assert_allclose(np.vstack(W_blocks), Wc, rtol=0, atol=1e-12)
        np.testing.assert_allclose(T, Tc, rtol=0, atol=1e-12)
    assert np.abs(Tc).max() > 0
    if case == "topic-lemma1":  # the Lemma 1 branch ran: some topic is a simplex vertex
        assert np.any(np.all(np.sort(Tc, axis=1)[:, -2:] == [0.0, 1.0], axis=1))


def test_rri_sweep_does_not_modify_its_inputs():
    rng = np.random.default_rng(16)
    X = rng.uniform(size=(10, 5))
    W, T = rng.uniform(size=(10, 2)), rng.uniform(size=(2, 5))
    W_copy, T_copy = W.copy(), T.copy()
    rri_sweep(X, W, T, RRIParams(form="topic"))
    np.testing.assert_array_equal(W, W_copy)
    np.testing.assert_array_equal(T, T_copy)


def test_only_t0_starts_w_at_zero():
    """k = 1, plain: from W = 0 the first sweep is W = [X T0ᵀ]₊/‖T0‖², T = [WᵀX]₊/‖W‖²."""
    rng = np.random.default_rng(17)
    X = rng.uniform(size=(9, 4))
    T0 = rng.uniform(size=(1, 4))
    res = rri_nmf(X, 1, T0=T0, max_iter=1, tol=0.0)
    w = np.maximum(X @ T0[0], 0) / (T0[0] @ T0[0])
    t = np.maximum(w @ X, 0) / (w @ w)
    # the rank-one product is Ho's; the plain form balances its factors (departure 9)
    np.testing.assert_allclose(np.outer(res.W[:, 0], res.T[0]), np.outer(w, t), rtol=1e-13)
    assert np.linalg.norm(res.W[:, 0]) == pytest.approx(np.linalg.norm(res.T[0]), rel=1e-12)
    assert res.initial_objective == pytest.approx(0.5 * np.sum(X**2))


def test_default_start_is_nndsvd():
    rng = np.random.default_rng(18)
    X = rng.uniform(size=(20, 10))
    res = rri_nmf(X, 3, max_iter=1)
    W_sk, H_sk = _initialize_nmf(X, 3, init="nndsvd")
    assert res.initial_objective == pytest.approx(0.5 * np.sum((X - W_sk @ H_sk) ** 2),
                                                  rel=1e-10)


def test_convergence_and_callback():
    rng = np.random.default_rng(19)
    X = rng.uniform(size=(30, 10))
    _, T0 = random_init(30, 10, 3, rng=rng)
    calls = []
    res = rri_nmf(X, 3, T0=T0, max_iter=500, tol=1e-3,
                  callback=lambda s, W, T, f: calls.append((s, f)))
    assert res.converged and res.n_iter < 500
    assert [s for s, _ in calls] == list(range(1, res.n_iter + 1))
    np.testing.assert_array_equal([f for _, f in calls], res.objective)
    prev = res.objective[-2] if res.n_iter > 1 else res.initial_objective
    assert abs(prev - res.objective[-1]) <= 1e-3 * prev
    long = rri_nmf(X, 3, T0=T0, max_iter=7, tol=0.0)
    assert long.n_iter == 7 and not long.converged


def test_random_init_draws_from_the_given_generator():
    W0, T0 = random_init(5, 7, 3, rng=np.random.default_rng(20))
    ref = np.random.default_rng(20)
    np.testing.assert_array_equal(W0, ref.uniform(size=(5, 3)))
    np.testing.assert_array_equal(T0, ref.uniform(size=(3, 7)))
    assert W0.min() >= 0 and T0.max() < 1
    with pytest.raises(InputError, match="rng"):
        random_init(5, 7, 3, rng=np.random.RandomState(0))  # type: ignore[arg-type]


def test_fit_weights_matches_nnls():
    rng = np.random.default_rng(21)
    X = rng.uniform(size=(12, 8))
    T = rng.uniform(size=(3, 8))
    W = fit_weights(X, T, max_iter=3000, tol=0.0)
    for i in range(12):
        np.testing.assert_allclose(W[i], nnls(T.T, X[i])[0], atol=1e-8)


# ------------------------------------------------------------------------------------------
# observed-entries loss
# ------------------------------------------------------------------------------------------


def test_observed_loss_without_missing_entries_equals_full_loss():
    rng = np.random.default_rng(22)
    X = rng.uniform(size=(25, 10))
    _, T0 = random_init(25, 10, 3, rng=rng)
    for params in (RRIParams(), RRIParams(form="topic", l2_w=0.1)):
        a = rri_nmf(X, 3, T0=T0, max_iter=6, tol=0.0, params=params, loss="full")
        b = rri_nmf(X, 3, T0=T0, max_iter=6, tol=0.0, params=params, loss="observed")
        np.testing.assert_allclose(a.W, b.W, atol=1e-12)
        np.testing.assert_allclose(a.T, b.T, atol=1e-12)
        np.testing.assert_allclose(a.objective, b.objective, rtol=1e-11)


def test_observed_updates_solve_the_masked_subproblems():
    rng = np.random.default_rng(23)
    X = rng.uniform(size=(14, 9))
    X[rng.uniform(size=X.shape) < 0.35] = np.nan
    mask = ~np.isnan(X)
    W, T = rng.uniform(size=(14, 3)), rng.uniform(size=(3, 9))
    block = as_row_block(X)
    assert block.loss == "observed"
    t = 1
    R = np.where(mask, np.nan_to_num(X) - W @ T + np.outer(W[:, t], T[t]), 0.0)
    ws = w_side_statistics(block, W, T, t, initial_residual(block, W, T))
    w_new = update_w_column(ws, RRIParams())
    for i in range(14):
        obs = mask[i]
        expected = nnls(T[t, obs][:, None], R[i, obs])[0][0] if obs.any() else 0.0
        assert w_new[i] == pytest.approx(expected, abs=1e-12)
    W2 = W.copy()
    W2[:, t] = w_new
    stat = t_side_statistics(block, W2, T, t, ws)
    assert stat.shape == (18,)
    row, s_t = update_t_row(stat, RRIParams(), "observed")
    for j in range(9):
        obs = mask[:, j]
        expected = nnls(w_new[obs][:, None], R[obs, j])[0][0] if obs.any() else 0.0
        assert row[j] * s_t == pytest.approx(expected, abs=1e-12)  # balanced (departure 9)


def test_observed_objective_ignores_missing_entries_and_never_increases():
    rng = np.random.default_rng(24)
    W_star, T_star = rng.uniform(size=(40, 3)), rng.uniform(size=(3, 15))
    X = W_star @ T_star
    X[rng.uniform(size=X.shape) < 0.3] = np.nan
    _, T0 = random_init(40, 15, 3, rng=rng)
    params = RRIParams(l2_w=0.01)
    seen = []
    res = rri_nmf(X, 3, T0=T0, max_iter=60, tol=0.0, params=params,
                  callback=lambda s, W, T, f: seen.append((W.copy(), T.copy())))
    independent = [reference_objective(X, W, T, params) for W, T in seen]
    np.testing.assert_allclose(res.objective, independent, rtol=1e-10)
    assert np.all(np.diff(independent) <= 1e-12 * np.array(independent[:-1]))
    assert objective(X, *seen[-1], params) == pytest.approx(independent[-1], rel=1e-12)


def test_csr_observed_loss_uses_the_stored_entries():
    rng = np.random.default_rng(25)
    X = rng.uniform(size=(20, 8))
    X[rng.uniform(size=X.shape) < 0.4] = np.nan
    stored = sp.csr_matrix((X[~np.isnan(X)], np.nonzero(~np.isnan(X))), shape=X.shape)
    _, T0 = random_init(20, 8, 2, rng=rng)
    a = rri_nmf(X, 2, T0=T0, max_iter=4, tol=0.0)
    b = rri_nmf(stored, 2, T0=T0, max_iter=4, tol=0.0, loss="observed")
    np.testing.assert_allclose(a.T, b.T, atol=1e-12)
    np.testing.assert_allclose(a.W, b.W, atol=1e-12)


# ------------------------------------------------------------------------------------------
# validation
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"form": "lda"}, "form"),
        ({"l1_w": -0.1}, "l1_w"),
        ({"l1_t": -1.0, "form": "topic"}, "l1_t"),
        ({"l2_w": -0.1}, "l2_w"),
        ({"l2_t": -0.1}, "l2_t"),
        ({"l2_t": float("nan"), "form": "topic"}, "l2_t"),
        ({"thesis_literal_c": "yes"}, "thesis_literal_c"),
    ],
)
def test_params_validation(kwargs, name):
    with pytest.raises(InputError, match=name):
        RRIParams(**kwargs)


def test_negative_l2_is_allowed_in_topic_form():
    assert RRIParams(form="topic", l2_w=-0.1, l2_t=-0.2).l2_t == -0.2


def test_data_and_argument_validation():
    X = np.ones((4, 3))
    with pytest.raises(DataError, match="negative"):
        rri_nmf(-X, 1, T0=np.ones((1, 3)))
    with pytest.raises(DataError, match="NaN"):
        rri_nmf(np.where(np.eye(4, 3) > 0, np.nan, X), 1, T0=np.ones((1, 3)), loss="full")
    with pytest.raises(InputError, match="W0"):
        rri_nmf(X, 1, W0=np.ones((4, 1)))
    with pytest.raises(InputError, match="T0"):
        rri_nmf(X, 2, T0=np.ones((1, 3)))
    with pytest.raises(InputError, match="k"):
        rri_nmf(X, 0, T0=np.ones((1, 3)))
    with pytest.raises(InputError, match="max_iter"):
        rri_nmf(X, 1, T0=np.ones((1, 3)), max_iter=0)
    with pytest.raises(InputError, match="loss"):
        rri_nmf(X, 1, T0=np.ones((1, 3)), loss="huber")
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(InputError, match="l2_w"):
        rri_nmf(Xn, 1, T0=np.ones((1, 3)), params=RRIParams(form="topic", l2_w=-0.1))


@pytest.mark.parametrize("l1", [0.0, 0.3])
@pytest.mark.parametrize("form", ["plain", "topic"])
def test_full_loss_closed_forms_equal_numpy_bit_for_bit(l1: float, form: str) -> None:
    """Steps 2 and 4 of the full loss (one positive curvature) are the closed forms
    [num − ℓ1]₊ / (den + ℓ2), then the form's rescaling — computed here in plain numpy, in the
    order Eq. 2.31 writes them — bit for bit, whether ℓ1 is 0 (the subtraction left out) or
    not, and the summed statistic is left as it was given."""
    rng = np.random.default_rng(11)
    num = rng.normal(size=50)
    params = RRIParams(form=form, l1_w=l1, l1_t=l1, l2_w=0.2, l2_t=0.1)
    ws = WSideStatistics(num.copy(), 1.7, None, "full")
    expected_w = np.maximum(num - l1, 0.0) / (1.7 + 0.2)
    assert np.array_equal(update_w_column(ws, params), expected_w)
    assert np.array_equal(ws.numerator, num)
    summed = np.r_[rng.normal(size=40), 2.5]
    given = summed.copy()
    row, s_t = update_t_row(summed, params, "full")
    closed = np.maximum(given[:-1] - l1, 0.0) / (2.5 + 0.1)
    if form == "plain":  # regularised: no balancing
        assert (np.array_equal(row, closed), s_t) == (True, 1.0)
    else:  # regularised topic form: the projection onto the simplex
        assert np.array_equal(row, project_to_simplex(closed)) and s_t == 1.0
    assert np.array_equal(summed, given)
    unregularised = RRIParams(form=form)
    row, s_t = update_t_row(summed, unregularised, "full")
    closed = np.maximum(given[:-1], 0.0) / 2.5
    if form == "plain":  # ‖W_:t‖ = ‖T_t:‖ after dividing T_t: by s_t = (‖T_t:‖² / ‖W_:t‖²)^¼
        expected_s = (float(closed @ closed) / 2.5) ** 0.25
        assert s_t == expected_s and np.array_equal(row, closed / expected_s)
    else:  # ℓ1 normalisation: T_t: on the simplex, W_:t times the row's mass
        assert s_t == float(closed.sum()) and np.array_equal(row, closed / closed.sum())
    assert np.array_equal(summed, given)
