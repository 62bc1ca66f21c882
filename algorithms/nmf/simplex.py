"""Projections onto the simplex and the thesis's Lemma 1 and Corollary 1.

Tsikhanovich PhD thesis (seed 001), Ch. 1 §1.2.2: the per-topic sub-problems of RRI-NMF in the
topic form (:mod:`algorithms.nmf.rri`) minimise wᵀx + c·xᵀx over the simplex Δ (T rows) or the
box [0, 1] (W columns). With curvature c > 0 the minimiser is a clipped closed form followed by
the Euclidean projection onto Δ (:func:`project_to_simplex`); with c ≤ 0 it lies at a vertex
(Lemma 1, :func:`lemma1`) or at a bound of the box (Corollary 1, :func:`corollary1`).
Ties: Lemma 1 takes the lowest index; Corollary 1 takes 0 where the thesis takes 1
(:mod:`algorithms.nmf.rri`, departure 5).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from protocols.errors import InputError

__all__ = ["corollary1", "lemma1", "project_to_simplex"]

FloatArray = NDArray[np.float64]


def project_to_simplex(U: ArrayLike) -> FloatArray:
    """Euclidean projection of every row onto the probability simplex.

    argmin_{x ∈ Δ} ‖x − u‖₂ by the sort-based method (the thesis's ref. [10] is not named;
    digest §1.1): sort u decreasingly, ρ = max{j : u_(j) − (Σ_{i≤j} u_(i) − 1)/j > 0},
    θ = (Σ_{i≤ρ} u_(i) − 1)/ρ, x = max(u − θ, 0).

    Parameters
    ----------
    U : array_like of shape (m,) or (n, m)
        A vector or a matrix whose rows are projected.

    Returns
    -------
    ndarray of the same shape as U
        Rows on Δ_m (non-negative, summing to 1).

    Raises
    ------
    InputError
        If U is empty along the last axis, has more than 2 dimensions, or is not finite.
    """
    arr = np.asarray(U, dtype=np.float64)
    if arr.ndim not in (1, 2):
        raise InputError(f"U has {arr.ndim} dimensions; allowed: 1 or 2")
    if arr.shape[-1] == 0:
        raise InputError("U has 0 columns; the simplex needs at least one coordinate")
    if not np.all(np.isfinite(arr)):
        raise InputError("U holds NaN or infinite entries; allowed: finite values")
    rows = np.atleast_2d(arr)
    m = rows.shape[1]
    sorted_desc = -np.sort(-rows, axis=1)
    cssv = np.cumsum(sorted_desc, axis=1) - 1.0
    ind = np.arange(1, m + 1, dtype=np.float64)
    cond = sorted_desc - cssv / ind > 0  # column 0 is always True
    rho = m - 1 - np.argmax(cond[:, ::-1], axis=1)
    theta = cssv[np.arange(rows.shape[0]), rho] / (rho + 1.0)
    out = np.maximum(rows - theta[:, None], 0.0)
    return out[0] if arr.ndim == 1 else out


def lemma1(w: ArrayLike, c: float) -> FloatArray:
    """Thesis Lemma 1: minimise wᵀx + c·xᵀx over the simplex when c ≤ 0.

    The minimiser is the vertex e_j with j = argmin_i w_i (the lowest such index on ties).

    Parameters
    ----------
    w : array_like of shape (d,)
        Linear coefficients.
    c : float
        Curvature, ≤ 0.

    Returns
    -------
    ndarray of shape (d,)
        A one-hot vector.

    Raises
    ------
    InputError
        If c > 0 (the lemma does not apply), c or w is not finite, or w is empty.
    """
    vec = np.asarray(w, dtype=np.float64)
    if vec.ndim != 1 or vec.size == 0:
        raise InputError(f"w has shape {vec.shape}; allowed: a non-empty vector")
    if not np.all(np.isfinite(vec)):
        raise InputError("w holds NaN or infinite entries; allowed: finite values")
    if not np.isfinite(c) or c > 0:
        raise InputError(f"c {c!r} is outside Lemma 1's range; allowed: finite c <= 0")
    out = np.zeros_like(vec)
    out[int(np.argmin(vec))] = 1.0
    return out


def corollary1(w: ArrayLike, c: float | ArrayLike) -> FloatArray:
    """Thesis Corollary 1: minimise wᵀx + c·xᵀx over the box [0, 1]^d when c ≤ 0.

    The problem separates by coordinate and the optimum lies at a bound: x_i = 1 where
    w_i + c_i < 0, else 0. (On w_i + c_i = 0 both bounds are optimal; the thesis takes 1, this
    takes 0 — :mod:`algorithms.nmf.rri`, departure 5.)

    Parameters
    ----------
    w : array_like of shape (d,)
        Linear coefficients.
    c : float or array_like of shape (d,)
        Curvature per coordinate (broadcast), every entry ≤ 0.

    Returns
    -------
    ndarray of shape (d,)
        Entries in {0, 1}.

    Raises
    ------
    InputError
        If some c > 0, or w or c is not finite.
    """
    vec = np.asarray(w, dtype=np.float64)
    curv = np.broadcast_to(np.asarray(c, dtype=np.float64), vec.shape)
    if not np.all(np.isfinite(vec)):
        raise InputError("w holds NaN or infinite entries; allowed: finite values")
    if not np.all(np.isfinite(curv)) or np.any(curv > 0):
        raise InputError(
            f"c (max {np.max(curv, initial=-np.inf)!r}) is outside Corollary 1's "
            "range; allowed: finite c <= 0"
        )
    return (vec + curv < 0).astype(np.float64)
