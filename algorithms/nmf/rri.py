"""RRI-NMF: rank-one residue iterations for NMF, centralized reference (thesis Algorithm 2).

Source: Tsikhanovich PhD thesis (seed 001), Ch. 1 §1.2.2 — Eqs. 1.2–1.4, Lemma 1,
Corollary 1 and Algorithm 2 (RRI-NMF for topic modelling, after Ho's rank-one residue
iterations) — and Ch. 2 §2.2 — the objective E(W, T) of Eqs. 2.28–2.29 and the general update
with ℓ1 terms and negative curvature, Eq. 2.31. Orientation as in the thesis: rows are samples,
``X ≈ W @ T`` with ``X`` n×d, ``W`` n×k, ``T`` k×d.

Objective (Eqs. 2.28–2.29)::

    E(W, T) = ½‖X − WT‖²_F + ℓ^T_1‖T‖_1 + ½ℓ^T_2‖T‖²_F + ℓ^W_1‖W‖_1 + ½ℓ^W_2‖W‖²_F

One sweep updates, for t = 1..k, the column W_:t and then the row T_t: against the residual
R_t = X − Σ_{t'≠t} W_:t' T_t': (the part of X that topic t must explain).

Forms (:class:`RRIParams`)
--------------------------
``form="plain"``
    General NMF: W, T ≥ 0, no other constraint. Both updates are the exact minimisers of Ho's
    column / row sub-problems, W_:t ← [R_t T_t:ᵀ − ℓ^W_1]₊ / (‖T_t:‖² + ℓ^W_2) (0 where the
    denominator vanishes), likewise for T_t:, so the objective never increases. ℓ2 < 0 is
    refused here (digest §7.1 item 6: Corollary 1's box [0, 1] does not exist for unbounded W,
    and without it the sub-problem has no minimum).
``form="topic"``
    Algorithm 2: rows of T on the simplex Δ_d, rows of W on Δ_k. Negative ℓ2 is allowed (it
    seeks sparsity); where a sub-problem's curvature ‖T_t:‖² + ℓ^W_2 (resp. ‖W_:t‖² + ℓ^T_2) is
    ≤ 0, the W column comes from Corollary 1 (box [0, 1]) and the T row from Lemma 1 (a
    simplex vertex), as in Eq. 2.31. After the T row update: without any regulariser the row is
    divided by s_t = ‖T_t:‖_1 and every W_:t multiplied by s_t (WT is unchanged); with any
    non-zero regulariser the row is projected onto Δ_d (Euclidean) and s_t = 1. At the end of
    each sweep every W row is projected onto Δ_k.

The code
--------
This module holds the driver (:func:`rri_nmf`, :func:`rri_sweep`, :func:`sweep_in_place`,
:func:`fit_weights`); the per-topic steps it loops over — the contract with PD-NMF-Iter — are
in :mod:`algorithms.nmf.rri_steps`, the projections and Lemma 1 / Corollary 1 in
:mod:`algorithms.nmf.simplex`, the objective in :mod:`algorithms.nmf.objective`, and the data
(full or observed loss) in :mod:`algorithms.nmf.row_blocks`.

Observed-entries loss (digest §7.1 item 32 — an *unverified* choice of the digest)
------------------------------------------------------------------------------------
For recommender data the thesis does not say how RRI treats missing ratings. Here unobserved
entries are excluded from the loss, ½Σ_{observed} (X_ij − W_i: T_:j)² + reg, i.e. the
element-wise weighted RRI with a 0/1 weight Ψ (the Ψ of Corollary 4). Then the W column has a
per-row denominator Σ_j Ψ_ij T_tj² + ℓ^W_2 and the T row a per-column denominator
Σ_i Ψ_ij W_it² + ℓ^T_2. The residual is kept on the observed entries only: it is recomputed
from X, W, T at the start of every sweep and updated in O(#observed) per topic. X selects this
loss by containing NaN (dense) or by ``loss="observed"`` (for ``scipy.sparse`` X the stored
entries are the observed ones, explicit zeros included). Negative ℓ2 is refused with this loss:
with per-column curvatures of mixed sign Lemma 1 (one common curvature) does not apply.

Departures from the printed text, and why
-----------------------------------------
1. The residual sums over t' = 1..k, not 1..d (digest item 1).
2. The curvature test comes first (digest item 5, as in Eq. 2.31): curvature ≤ 0 → Corollary 1
   / Lemma 1 with no zero test; curvature > 0 → closed form, whose ``[·]₊`` already yields the
   zero vector of Algorithm 2's zero fallback.
3. s_t (digest items 2 and 3): Algorithm 2 multiplies the *new* W_:t by the *previous* sweep's
   s_t (undefined on the first sweep, and it does not preserve WT). Here, right after the T row
   update and only when all four regularisers are 0, T_t: ← T_t:/s_t and W_:t ← s_t W_:t with
   s_t = ‖T_t:‖_1 (the Ch. 1 text's scaling rule). With any regulariser the row is projected
   onto Δ_d instead and s_t = 1. A T row that comes out zero stays zero with s_t = 1 (the else
   branch of Algorithm 2).
4. Lemma 1 / Corollary 1 constant (digest item 4): the exact sub-problem w·x + c·xᵀx has
   c = ½(‖T_t:‖² + ℓ^W_2) (resp. ½(‖W_:t‖² + ℓ^T_2)); the thesis passes c without the ½. The
   default uses ½; ``RRIParams(thesis_literal_c=True)`` passes the printed value. Only
   Corollary 1's threshold depends on it (Lemma 1 returns argmin w whatever c ≤ 0 is).
5. Corollary 1 ties: where w_i + c = 0 both bounds have value 0; the thesis takes x_i = 1, here
   x_i = 0. With item 2's order this keeps a dead topic dead (T_t: = 0 and c = 0 would otherwise
   give W_:t = 1 in every row), as Algorithm 2's zero test does. Lemma 1 ties go to the lowest
   index.
6. ℓ1 is kept in the topic form (Eq. 2.31 and Algorithm 7 carry it) although Ch. 1 drops it
   there as meaningless under sum-to-one constraints; any non-zero ℓ1 counts as "regularised"
   for item 3.
7. When only T0 is given, W starts at 0, so the first residual is X (digest item 11). W0
   without T0 is refused (RRI updates W first, and with T = 0 every topic would stay 0).
   Neither given: NNDSVD (the Ch. 1 choice; unobserved entries read as 0).
8. Algorithm 7's omissions (the Corollary 1 branch, the W row projection and the s_t rescale,
   the loop bound 0..k; digest items 7, 8, 10) do not arise: both programs share these steps.
9. Plain form without regularisers: after each T row update, W_:t and T_t: are rescaled so
   that ‖W_:t‖ = ‖T_t:‖ (with the observed loss, the mean of the per-column Σ_i Ψ_ij W_it²
   stands for ‖W_:t‖²). Without regularisers RRI is invariant under per-topic rescaling —
   the W update divides by ‖T_t:‖², the T update by ‖W_:t‖² — so every product W_:t T_t:,
   the objective and all later iterates of WT are those of the unbalanced algorithm; only the
   split between the factors is fixed. Left free, the split drifts with the start and the
   data (a topic ended with ‖W_:t‖² = 0.03 and a T row summing to 30), and the private run,
   which encodes the summed ‖W_:t‖² with absolute fixed-point precision, loses relative
   precision on it (7.5e−5 from the centralized run at 24 fractional bits).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.objective import data_sq_norm, loss_value, regularizer
from algorithms.nmf.row_blocks import RowBlock, as_row_block, check_factors, zero_filled
from algorithms.nmf.rri_steps import (
    RRIParams,
    check_loss_params,
    end_of_sweep,
    initial_residual,
    next_residual,
    t_side_statistics,
    update_t_row,
    update_w_column,
    w_side_statistics,
)
from protocols.errors import InputError

__all__ = ["RRIResult", "fit_weights", "random_init", "rri_nmf", "rri_sweep", "sweep_in_place"]

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class RRIResult:
    """Outcome of :func:`rri_nmf`.

    Attributes
    ----------
    W : ndarray of shape (n, k)
        Weights.
    T : ndarray of shape (k, d)
        Topics.
    objective : ndarray of shape (n_iter,)
        E(W, T) (Eq. 2.28; observed entries only for the observed loss) after every sweep.
    initial_objective : float
        E(W0, T0) before the first sweep.
    n_iter : int
        Number of sweeps run.
    converged : bool
        Whether the relative change of the objective fell to ``tol`` or below.
    """

    W: FloatArray
    T: FloatArray
    objective: FloatArray
    initial_objective: float
    n_iter: int
    converged: bool


def sweep_in_place(block: RowBlock, W: FloatArray, T: FloatArray,
                   params: RRIParams) -> FloatArray:
    """One RRI sweep on factors already checked, in place on T and W (W returned after step 5).

    The loop body of :func:`rri_nmf`; :func:`rri_sweep` checks and copies its arguments first.
    A caller that runs many sweeps checks once (:func:`as_row_block`,
    :func:`~algorithms.nmf.row_blocks.check_factors`) and calls this.
    """
    residual = initial_residual(block, W, T)
    for t in range(T.shape[0]):
        ws = w_side_statistics(block, W, T, t, residual)
        W[:, t] = update_w_column(ws, params)
        stat = t_side_statistics(block, W, T, t, ws)
        T[t], s_t = update_t_row(stat, params, block.loss)
        W[:, t] *= s_t
        residual = next_residual(block, ws, W[:, t], T[t])
    return end_of_sweep(W, params)


def rri_sweep(
    X: ArrayLike | sp.spmatrix | sp.sparray | RowBlock,
    W: ArrayLike,
    T: ArrayLike,
    params: RRIParams,
    *,
    loss: Literal["auto", "full", "observed"] = "auto",
) -> tuple[FloatArray, FloatArray]:
    """One centralized RRI-NMF sweep (Algorithm 2's repeat body) through the shared steps.

    Parameters
    ----------
    X : array_like of shape (n, d), scipy.sparse matrix, or a RowBlock
    W : array_like of shape (n, k)
    T : array_like of shape (k, d)
    params : RRIParams
    loss : {"auto", "full", "observed"}
        See :func:`as_row_block`.

    Returns
    -------
    W : ndarray of shape (n, k)
    T : ndarray of shape (k, d)
        New arrays; the inputs are not modified.
    """
    block = as_row_block(X, loss)
    check_loss_params(block.loss, params)
    Wa, Ta = check_factors(block.shape, W, T)
    Wa = sweep_in_place(block, Wa, Ta, params)
    return Wa, Ta


def random_init(
    n_samples: int, n_features: int, n_components: int, *, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """The *random* baseline initialisation: W0, T0 with independent U[0, 1) entries.

    Parameters
    ----------
    n_samples, n_features, n_components : int
        n, d and k.
    rng : numpy.random.Generator
        Source of the entries (W0 is drawn first, then T0).

    Returns
    -------
    W0 : ndarray of shape (n_samples, n_components)
    T0 : ndarray of shape (n_components, n_features)
    """
    for name, value, low in (
        ("n_samples", n_samples, 0),
        ("n_features", n_features, 1),
        ("n_components", n_components, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise InputError(f"{name} {value!r} is not an integer >= {low}")
    if not isinstance(rng, np.random.Generator):
        raise InputError(f"rng {rng!r} is not a numpy.random.Generator")
    W0 = rng.uniform(0.0, 1.0, size=(int(n_samples), int(n_components)))
    T0 = rng.uniform(0.0, 1.0, size=(int(n_components), int(n_features)))
    return W0, T0


def _check_iteration(max_iter: int, tol: float) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InputError(f"max_iter {max_iter!r} is not an integer >= 1")
    if not isinstance(tol, (int, float, np.floating)) or not np.isfinite(tol) or tol < 0:
        raise InputError(f"tol {tol!r} is outside the allowed range: a finite float >= 0")


def _converged(previous: float, current: float, tol: float) -> bool:
    return abs(previous - current) <= tol * max(abs(previous), np.finfo(float).tiny)


def rri_nmf(
    X: ArrayLike | sp.spmatrix | sp.sparray,
    k: int,
    *,
    T0: ArrayLike | None = None,
    W0: ArrayLike | None = None,
    max_iter: int = 200,
    tol: float = 1e-4,
    params: RRIParams | None = None,
    loss: Literal["auto", "full", "observed"] = "auto",
    callback: Callable[[int, FloatArray, FloatArray, float], None] | None = None,
) -> RRIResult:
    """RRI-NMF (thesis Algorithm 2 with the Eq. 2.31 updates), centralized.

    Parameters
    ----------
    X : array_like of shape (n, d) or scipy.sparse matrix
        Non-negative data; NaN marks unobserved entries (observed loss).
    k : int
        Number of topics, ≥ 1.
    T0 : array_like of shape (k, d), optional
        Initial topics. Without W0, W starts at 0 (digest item 11). If neither T0 nor W0 is
        given, both come from :func:`algorithms.nmf.nndsvd.nndsvd` (unobserved entries read as 0).
    W0 : array_like of shape (n, k), optional
        Initial weights; only together with T0.
    max_iter : int
        Maximum number of sweeps.
    tol : float
        Stop when |E_prev − E| ≤ tol·|E_prev| (E of the previous sweep, or of the start).
    params : RRIParams, optional
        Defaults to ``RRIParams()`` (plain, unregularised).
    loss : {"auto", "full", "observed"}
        See :func:`as_row_block`.
    callback : callable, optional
        Called after every sweep as ``callback(sweep, W, T, objective)`` (sweep counts from 1);
        it must not modify W or T.

    Returns
    -------
    RRIResult

    Raises
    ------
    InputError
        On invalid k, shapes, factors, iteration settings or parameter/loss combinations.
    DataError
        On invalid data.
    """
    params = RRIParams() if params is None else params
    if not isinstance(params, RRIParams):
        raise InputError(f"params {params!r} is not an RRIParams")
    _check_iteration(max_iter, tol)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k {k!r} is not an integer >= 1")
    block = as_row_block(X, loss)
    check_loss_params(block.loss, params)
    n, d = block.shape
    if T0 is None:
        if W0 is not None:
            raise InputError(
                "W0 was given without T0; RRI updates W first, so give T0 "
                "(W0 alone is not supported)"
            )
        W_init, T_init = nndsvd(zero_filled(X), int(k))
    else:
        T_init = np.asarray(T0, dtype=np.float64)
        if T_init.shape != (k, d):
            raise InputError(f"T0 has shape {T_init.shape}; allowed: ({k}, {d})")
        W_init = np.zeros((n, int(k))) if W0 is None else np.asarray(W0, dtype=np.float64)
    W, T = check_factors((n, d), W_init, T_init)
    x_sq = data_sq_norm(block)
    previous = loss_value(block, W, T, x_sq) + regularizer(W, T, params)
    initial = previous
    history: list[float] = []
    converged = False
    for sweep in range(1, int(max_iter) + 1):
        W = sweep_in_place(block, W, T, params)
        current = loss_value(block, W, T, x_sq) + regularizer(W, T, params)
        history.append(current)
        if callback is not None:
            callback(sweep, W, T, current)
        if _converged(previous, current, tol):
            converged = True
            break
        previous = current
    logger.debug(
        "rri_nmf: %d sweeps, objective %.6g, converged=%s", len(history), history[-1], converged
    )
    return RRIResult(W, T, np.asarray(history), float(initial), len(history), converged)


def fit_weights(
    X: ArrayLike | sp.spmatrix | sp.sparray,
    T: ArrayLike,
    *,
    params: RRIParams | None = None,
    W0: ArrayLike | None = None,
    max_iter: int = 200,
    tol: float = 1e-8,
    loss: Literal["auto", "full", "observed"] = "auto",
) -> FloatArray:
    """Fit W to fixed topics T with the W half of the RRI sweep (steps 1, 2 and 5).

    This is the refit "W^(m) minimising E(X^(m), T)" that follows WR-NMF (§2.1) and the
    out-of-sample refit of Ch. 1 ("RRI with T frozen"). In the plain form it is coordinate
    descent on the convex NNLS problem.

    Parameters
    ----------
    X : array_like of shape (n, d) or scipy.sparse matrix
    T : array_like of shape (k, d)
        Fixed topics.
    params : RRIParams, optional
        Defaults to ``RRIParams()``.
    W0 : array_like of shape (n, k), optional
        Start; zeros by default.
    max_iter : int
        Maximum number of W sweeps.
    tol : float
        Stop on a relative objective change ≤ tol.
    loss : {"auto", "full", "observed"}

    Returns
    -------
    ndarray of shape (n, k)
    """
    params = RRIParams() if params is None else params
    _check_iteration(max_iter, tol)
    block = as_row_block(X, loss)
    check_loss_params(block.loss, params)
    n, _ = block.shape
    Ta = np.asarray(T, dtype=np.float64)
    k = Ta.shape[0] if Ta.ndim == 2 else 0
    W, Ta = check_factors(block.shape, np.zeros((n, k)) if W0 is None else W0, Ta)
    x_sq = data_sq_norm(block)
    previous = loss_value(block, W, Ta, x_sq) + regularizer(W, Ta, params)
    for _ in range(int(max_iter)):
        residual = initial_residual(block, W, Ta)
        for t in range(k):
            ws = w_side_statistics(block, W, Ta, t, residual)
            W[:, t] = update_w_column(ws, params)
            residual = next_residual(block, ws, W[:, t], Ta[t])
        W = end_of_sweep(W, params)
        current = loss_value(block, W, Ta, x_sq) + regularizer(W, Ta, params)
        if _converged(previous, current, tol):
            break
        previous = current
    return W
