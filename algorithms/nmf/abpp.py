"""Distributed ANLS by block principal pivoting (Kim & Park 2011), a baseline of seed 004.

Alternating non-negative least squares solves each subproblem of Algorithm 1 exactly:
U ← argmin_{U ≥ 0} ‖M − UVᵀ‖²_F, then V ← argmin_{V ≥ 0} ‖Mᵀ − VUᵀ‖²_F. Kim and Park's block
principal pivoting (J. Kim, H. Park, "Fast nonnegative matrix factorization: an active-set-like
method and comparisons", SIAM J. Sci. Comput. 33(6), 2011, Algorithm 2 with multiple
right-hand sides) solves min_{X ≥ 0} ‖CX − B‖²_F from CᵀC and CᵀB: it keeps a passive set F
per column, sets x_F = (CᵀC)_{FF}⁻¹(CᵀB)_F, x_G = 0 and y = CᵀCx − CᵀB, and exchanges the
infeasible variables (x_F < 0 or y_G < 0) between F and G — all of them while their number
falls, or for at most α = 3 rounds when it does not, then only the one of largest index (the
backup rule that guarantees termination). Columns that share a passive set share one Cholesky-
free solve. The optimality (KKT) conditions x ≥ 0, y ≥ 0, x∘y = 0 hold on exit, so when C has
full column rank the result is the unique NNLS solution — what :func:`scipy.optimize.nnls`
returns column by column. The previous iterate's support warm-starts F (as Kim & Park do).

Each subproblem separates by rows of the factor, so the distributed run
(:func:`algorithms.nmf.gathered_bcd.gathered_bcd`) computes exactly the centralized iterates.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.nmf.gathered_bcd import GatheredConfig, GatheredNode, gathered_bcd
from protocols.context import PartyContext
from protocols.errors import InputError

MAX_EXCHANGES = 1000
"""Rounds of exchanges after which BPP gives up (the backup rule ends far sooner)."""


def _solve(CtC: np.ndarray, CtB: np.ndarray, passive: np.ndarray, cols: np.ndarray,
           X: np.ndarray, Y: np.ndarray) -> int:
    """x_F and y for ``cols``, grouped by passive set; returns the flops spent."""
    k = CtC.shape[0]
    flops = 0
    patterns, inverse = np.unique(passive[:, cols].T, axis=0, return_inverse=True)
    inverse = np.ravel(inverse)
    for g, pattern in enumerate(patterns):
        group = cols[inverse == g]
        x = np.zeros((k, group.size))
        p = int(pattern.sum())
        if p:
            system = CtC[np.ix_(pattern, pattern)]
            rhs = CtB[np.ix_(pattern, group)]
            try:
                x[pattern] = np.linalg.solve(system, rhs)
            except np.linalg.LinAlgError:
                x[pattern] = np.linalg.lstsq(system, rhs, rcond=None)[0]
        y = CtC[:, pattern] @ x[pattern] - CtB[:, group]
        y[pattern] = 0.0
        X[:, group] = x
        Y[:, group] = y
        flops += p ** 3 // 3 + 2 * p * p * group.size + 2 * k * p * group.size
    return flops


def nnls_bpp(CtC: np.ndarray, CtB: np.ndarray,
             passive: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """min_{X ≥ 0} ‖CX − B‖²_F by block principal pivoting, given CᵀC and CᵀB.

    Parameters
    ----------
    CtC : ndarray of shape (k, k)
    CtB : ndarray of shape (k, r)
    passive : bool ndarray of shape (k, r), optional
        The starting passive sets (the support of a previous solution); empty by default.

    Returns
    -------
    X : ndarray of shape (k, r)
    flops : int
    """
    k, r = CtB.shape
    P = np.zeros((k, r), dtype=bool) if passive is None else np.array(passive, dtype=bool)
    X = np.zeros((k, r))
    Y = np.zeros((k, r))
    everything = np.arange(r)
    flops = _solve(CtC, CtB, P, everything, X, Y)
    alpha = np.full(r, 3)
    beta = np.full(r, k + 1)
    infeasible = (P & (X < 0)) | (~P & (Y < 0))
    count = infeasible.sum(axis=0)
    for _ in range(MAX_EXCHANGES):
        nonopt = count > 0
        if not nonopt.any():
            break
        fewer = nonopt & (count < beta)
        stalled = nonopt & (count >= beta) & (alpha >= 1)
        backup = nonopt & (count >= beta) & (alpha < 1)
        beta[fewer] = count[fewer]
        alpha[fewer] = 3
        alpha[stalled] -= 1
        flip = infeasible & (fewer | stalled)[None, :]
        for j in np.flatnonzero(backup):
            flip[np.flatnonzero(infeasible[:, j])[-1], j] = True
        P ^= flip
        cols = np.flatnonzero(nonopt)
        flops += _solve(CtC, CtB, P, cols, X, Y)
        infeasible[:, cols] = ((P & (X < 0)) | (~P & (Y < 0)))[:, cols]
        count = infeasible.sum(axis=0)
    else:
        raise InputError(f"block principal pivoting did not end within {MAX_EXCHANGES} "
                         "exchanges (CᵀC is not positive definite?)")
    return np.maximum(X, 0.0), flops


def abpp_update(X: np.ndarray, A: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, int]:
    """X ← argmin_{X ≥ 0} ‖A − XFᵀ‖²_F, warm-started at X's support.

    Parameters
    ----------
    X : ndarray of shape (r, k)
    A : ndarray of shape (r, n)
    F : ndarray of shape (n, k)

    Returns
    -------
    X_new : ndarray of shape (r, k)
    flops : int
        2rnk for AF, 2nk² for FᵀF, and the solves of BPP.
    """
    r, n = A.shape
    k = F.shape[1]
    solution, flops = nnls_bpp(F.T @ F, (A @ F).T, passive=np.asarray(X).T > 0)
    return solution.T.copy(), flops + 2 * r * n * k + 2 * n * k * k


def abpp(
    ctx: PartyContext,
    X: Any,
    X_features: Any,
    U0: np.ndarray,
    V0: np.ndarray,
    config: GatheredConfig,
) -> Generator[Any, Any, GatheredNode]:
    """Node r's program: distributed ANLS/BPP (arguments as :func:`~algorithms.nmf.
    gathered_bcd.gathered_bcd`)."""
    return (yield from gathered_bcd(ctx, X, X_features, U0, V0, config, abpp_update))
