"""WR-NMF: weighted-representative NMF for offline row-distributed NMF (thesis Algorithm 6).

Source: Tsikhanovich PhD thesis (seed 001), Ch. 2 §2.1 — the bound of Eq. 2.2, Theorem 1,
Claim 1, Corollaries 2–4 and Algorithm 6. Orientation as in the thesis: party m holds X^(m)
(n_m×d, rows = samples) and has fitted a local model X^(m) ≈ W^(m) T^(m) with k_m topics.

Each party publishes T^(m) (k_m×d) and the k_m-vector (v^(m))² (a :class:`LocalModel`). Then
(Algorithm 6, with digest item 15's reading of step 1)::

    T̂^(m) = diag( sqrt((v^(m))² + ℓ^T_2) ) T^(m)       # weighted representatives
    T_in  = vstack_m T̂^(m)                              # (Σ_m k_m) × d
    T     = RRI-NMF(T_in, k)                            # Eq. 2.4; see departure 6

Weights:

* Theorem 1: v_j² = ‖W^(m)_:j‖² + ‖S^(m)‖, S the symmetric part of the regulariser's Hessian in
  T. :func:`squared_column_norms` gives Algorithm 6's input (v^(m))² = Σ_i (W^(m)_i:)²
  (element-wise squares summed over the party's rows); :func:`theorem1_weights` adds ‖S‖.
* Corollary 3: for reg = ℓ^T_1‖T‖_1 + ℓ^W_1‖W‖_1 + ½ℓ^W_2‖W‖²_F + ½ℓ^T_2‖T‖²_F with all
  parameters ≥ 0, ‖S‖ = ℓ^T_2 (:func:`corollary3_s_norm`). This is the ℓ^T_2 of Algorithm 6's
  step 1, i.e. the regulariser of the *local* fits.
* Corollary 4 (element-wise weighted NMF, weights Ψ^(m) ≥ 0, e.g. the mask of observed
  ratings): the Hessian of topic t's sub-problem is diagonal, ((W_:t)²)ᵀΨ; its norm is read as
  the ∞-norm (digest §7.1 item 18), v_t² = max_j Σ_i W_it² Ψ_ij + ‖S‖
  (:func:`corollary4_squared_weights`, :func:`corollary4_weights`).

Departures from the printed text, and why:

1. Algorithm 6 step 1 prints diag(√v^(m) + ℓ^T_2); it is read as diag(sqrt((v^(m))² + ℓ^T_2)),
   which is what Theorem 1 with Corollary 3 gives (digest item 15).
2. Theorem 1's weight follows its statement, v² = ‖W_:t‖² + ‖S‖₂ (the proof's Eq. 2.11 has
   ‖S‖², Eq. 2.10 lacks a ½; digest item 16).
3. Corollary 4 leaves the norm unspecified: the ∞-norm of the diagonal Hessian is used, the
   tightest bound of ΔᵀHΔ by a multiple of ‖Δ‖² (digest item 18).
4. The weights are a heuristic: the per-topic Taylor argument drops cross-topic terms and
   assumes a zero gradient at a constrained optimum, so Corollary 2's "equality" holds only in
   special cases (orthogonal W columns, one topic; digest item 17). Nothing here relies on it.
5. The initial topics of the global RRI-NMF are not specified ("an agreed random seed"): a given
   ``T0``; else, with ``rng``, U[0, 1] entries with rows normalised to sum to 1 (as
   Algorithm 8 steps 6–8); else NNDSVD of T_in (deterministic, so every party still obtains the
   same T).
6. Step 3 says "RRI-NMF(T_in, k) using Algorithm 2", but Algorithm 2 projects every row of the
   weight matrix Y onto Δ_k, so each row of YT has mass 1 while row t of T_in has mass v_t:
   the projection would undo the very weights Theorem 1 introduces (with Claim 1's model it
   returns y = 1 instead of √3). The default therefore solves Eq. 2.4 as stated,
   min_{Y, T ≥ 0} ½‖T_in − YT‖²_F, i.e. ``RRIParams()`` (plain form), and then divides every
   non-zero row of T by its sum and multiplies the matching column of Y by it (YT unchanged), so
   T is a topic matrix. ``params=RRIParams(form="topic")`` runs Algorithm 2 literally;
   ``normalize_topics=False`` skips the division.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from algorithms.nmf.nndsvd import nndsvd
from algorithms.nmf.rri import RRIResult, fit_weights, rri_nmf
from algorithms.nmf.rri_steps import RRIParams
from protocols.errors import InputError

__all__ = [
    "LocalModel",
    "corollary3_s_norm",
    "corollary4_squared_weights",
    "corollary4_weights",
    "squared_column_norms",
    "summarize_local_model",
    "theorem1_weights",
    "weighted_representatives",
    "wr_nmf",
]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class LocalModel:
    """What party m publishes for WR-NMF.

    Attributes
    ----------
    topics : ndarray of shape (k_m, d)
        T^(m), non-negative.
    squared_weights : ndarray of shape (k_m,)
        (v^(m))² without the ‖S‖ term: squared column norms of W^(m) (Theorem 1), or
        max_j Σ_i W_it² Ψ_ij (Corollary 4).

    Raises
    ------
    InputError
        On shapes that do not match, negative or non-finite entries.
    """

    topics: FloatArray
    squared_weights: FloatArray

    def __post_init__(self) -> None:
        topics = np.array(self.topics, dtype=np.float64)
        weights = np.array(self.squared_weights, dtype=np.float64)
        if topics.ndim != 2 or topics.shape[0] < 1 or topics.shape[1] < 1:
            raise InputError(f"topics has shape {topics.shape}; allowed: (k_m, d), k_m, d >= 1")
        if weights.shape != (topics.shape[0],):
            raise InputError(
                f"squared_weights has shape {weights.shape}; allowed: ({topics.shape[0]},)"
            )
        for name, arr in (("topics", topics), ("squared_weights", weights)):
            if not np.all(np.isfinite(arr)) or np.any(arr < 0):
                raise InputError(
                    f"{name} holds a negative or non-finite entry; allowed: finite values >= 0"
                )
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "squared_weights", weights)


def _as_weights(W: ArrayLike) -> FloatArray:
    arr = np.asarray(W, dtype=np.float64)
    if arr.ndim != 2:
        raise InputError(f"W has shape {arr.shape}; allowed: (n_m, k_m)")
    if not np.all(np.isfinite(arr)):
        raise InputError("W holds NaN or infinite entries; allowed: finite values")
    return arr


def _check_s_norm(s_norm: float) -> float:
    if not np.isfinite(s_norm) or s_norm < 0:
        raise InputError(
            f"s_norm {s_norm!r} is outside the allowed range: a finite float >= 0 "
            "(Theorem 1 needs a PSD regulariser Hessian)"
        )
    return float(s_norm)


def squared_column_norms(W: ArrayLike) -> FloatArray:
    """Algorithm 6's input (v^(m))² = Σ_i (W^(m)_i:)²: the squared column norms of W^(m).

    Parameters
    ----------
    W : array_like of shape (n_m, k_m)

    Returns
    -------
    ndarray of shape (k_m,)
    """
    arr = _as_weights(W)
    return np.einsum("ij,ij->j", arr, arr)


def theorem1_weights(W: ArrayLike, *, s_norm: float = 0.0) -> FloatArray:
    """Theorem 1: v_j = sqrt(‖W_:j‖² + ‖S‖).

    Parameters
    ----------
    W : array_like of shape (n_m, k_m)
        The party's converged weights.
    s_norm : float
        ‖S‖₂ of the regulariser's symmetrised Hessian in T (ℓ^T_2 by Corollary 3), ≥ 0.

    Returns
    -------
    ndarray of shape (k_m,)
    """
    return np.sqrt(squared_column_norms(W) + _check_s_norm(s_norm))


def corollary3_s_norm(params: RRIParams) -> float:
    """Corollary 3: ‖S‖ = ℓ^T_2 for the Eq. 2.29 regulariser with all parameters ≥ 0.

    Raises
    ------
    InputError
        If some regulariser is negative (then the corollary, and Theorem 1's PSD assumption
        when ℓ^T_2 < 0, do not apply).
    """
    for name in ("l1_w", "l2_w", "l1_t", "l2_t"):
        if getattr(params, name) < 0:
            raise InputError(
                f"{name} {getattr(params, name)!r} is negative; Corollary 3 needs "
                "every regulariser >= 0"
            )
    return float(params.l2_t)


def corollary4_squared_weights(W: ArrayLike, psi: ArrayLike) -> FloatArray:
    """Corollary 4 (∞-norm reading): max_j Σ_i W_it² Ψ_ij for every topic t.

    Parameters
    ----------
    W : array_like of shape (n_m, k_m)
    psi : array_like of shape (n_m, d)
        Non-negative element weights Ψ^(m) (e.g. the 0/1 mask of observed entries).

    Returns
    -------
    ndarray of shape (k_m,)
    """
    arr = _as_weights(W)
    weights = np.asarray(psi, dtype=np.float64)
    if weights.ndim != 2 or weights.shape[0] != arr.shape[0]:
        raise InputError(f"psi has shape {weights.shape}; allowed: ({arr.shape[0]}, d)")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InputError("psi holds a negative or non-finite entry; allowed: finite values >= 0")
    hessian_diagonals = (arr * arr).T @ weights  # (k_m, d): row t = ((W_:t)²)ᵀ Ψ
    return hessian_diagonals.max(axis=1)


def corollary4_weights(W: ArrayLike, psi: ArrayLike, *, s_norm: float = 0.0) -> FloatArray:
    """Corollary 4: v_t = sqrt(max_j Σ_i W_it² Ψ_ij + ‖S‖) (∞-norm reading).

    Parameters
    ----------
    W : array_like of shape (n_m, k_m)
    psi : array_like of shape (n_m, d)
    s_norm : float
        ‖S‖ (ℓ^T_2 by Corollary 3), ≥ 0.

    Returns
    -------
    ndarray of shape (k_m,)
    """
    return np.sqrt(corollary4_squared_weights(W, psi) + _check_s_norm(s_norm))


def summarize_local_model(
    W: ArrayLike,
    T: ArrayLike,
    *,
    psi: ArrayLike | None = None,
) -> LocalModel:
    """The published summary of a fitted local model.

    Parameters
    ----------
    W : array_like of shape (n_m, k_m)
    T : array_like of shape (k_m, d)
    psi : array_like of shape (n_m, d), optional
        Element weights; with them the Corollary 4 quantity replaces the squared column norms.

    Returns
    -------
    LocalModel
    """
    sq = squared_column_norms(W) if psi is None else corollary4_squared_weights(W, psi)
    return LocalModel(np.asarray(T, dtype=np.float64), sq)


def weighted_representatives(
    local_models: Sequence[LocalModel],
    *,
    l2_t: float = 0.0,
) -> FloatArray:
    """Algorithm 6 steps 1–2: T_in = vstack_m diag(sqrt((v^(m))² + ℓ^T_2)) T^(m).

    Parameters
    ----------
    local_models : sequence of LocalModel
        One per party, all with the same d.
    l2_t : float
        ℓ^T_2 of the local fits (= ‖S‖ by Corollary 3), ≥ 0.

    Returns
    -------
    ndarray of shape (Σ_m k_m, d)
    """
    if len(local_models) == 0:
        raise InputError("local_models is empty; allowed: at least one LocalModel")
    for i, model in enumerate(local_models):
        if not isinstance(model, LocalModel):
            raise InputError(f"local_models[{i}] is {type(model).__name__}, not a LocalModel")
    d = local_models[0].topics.shape[1]
    for i, model in enumerate(local_models):
        if model.topics.shape[1] != d:
            raise InputError(
                f"local_models[{i}] has d = {model.topics.shape[1]}; allowed: "
                f"{d} (the d of local_models[0])"
            )
    s_norm = _check_s_norm(l2_t)
    return np.vstack(
        [np.sqrt(m.squared_weights + s_norm)[:, None] * m.topics for m in local_models]
    )


def wr_nmf(
    local_models: Sequence[LocalModel],
    k: int,
    *,
    l2_t: float = 0.0,
    params: RRIParams | None = None,
    T0: ArrayLike | None = None,
    rng: np.random.Generator | None = None,
    max_iter: int = 200,
    tol: float = 1e-4,
    normalize_topics: bool = True,
    w_start: str = "zero",
) -> RRIResult:
    """WR-NMF (Algorithm 6): global topics from the parties' weighted local topics.

    Parameters
    ----------
    local_models : sequence of LocalModel
        (T^(m), (v^(m))²) of every party.
    k : int
        Number of global topics.
    l2_t : float
        ℓ^T_2 of the local objectives, added to (v^(m))² (Corollary 3), ≥ 0.
    params : RRIParams, optional
        Parameters of the global RRI-NMF; defaults to ``RRIParams()`` (Eq. 2.4, plain form;
        see departure 6). ``RRIParams(form="topic")`` is Algorithm 2 as printed.
    T0 : array_like of shape (k, d), optional
        Initial global topics.
    rng : numpy.random.Generator, optional
        Without T0: draw T0 ~ U[0, 1] and normalise its rows (the agreed seed). Without both:
        NNDSVD of T_in.
    max_iter, tol : int, float
        As in :func:`algorithms.nmf.rri.rri_nmf`.
    normalize_topics : bool
        Divide every non-zero row of T by its sum and scale Y's columns to match (YT and, when
        unregularised, the objective are unchanged). ``objective`` stays that of the RRI run.
    w_start : {"zero", "nnls"}
        Start Y at 0 (digest §7.1 item 11) or at its NNLS fit to the start T
        (:func:`algorithms.nmf.rri.fit_weights`, one fit per local model's rows), as
        PD-NMF-Init's step 9 does at each party.

    Returns
    -------
    RRIResult
        ``T`` is the global topic matrix (k×d); ``W`` is Y of Eq. 2.4 (Σ_m k_m × k).
    """
    T_in = weighted_representatives(local_models, l2_t=l2_t)
    params = RRIParams() if params is None else params
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k {k!r} is not an integer >= 1")
    if T0 is None:
        if rng is not None:
            if not isinstance(rng, np.random.Generator):
                raise InputError(f"rng {rng!r} is not a numpy.random.Generator")
            start = rng.uniform(0.0, 1.0, size=(int(k), T_in.shape[1]))
            start /= start.sum(axis=1, keepdims=True)
        else:
            if k > min(T_in.shape):
                raise InputError(
                    f"k {k!r} exceeds min(Σ_m k_m, d) = {min(T_in.shape)}, the "
                    "largest NNDSVD rank; pass T0 or rng"
                )
            _, start = nndsvd(T_in, int(k))
    else:
        start = np.asarray(T0, dtype=np.float64)
    if w_start not in ("zero", "nnls"):
        raise InputError(f"w_start {w_start!r} must be 'zero' or 'nnls'")
    W0 = None
    if w_start == "nnls":
        # One fit per party's block of rows, as each party fits its own rows in PD-NMF-Init:
        # the rows are independent, but fit_weights' stopping rule reads the objective of the
        # rows it is given, so a fit of the whole stack stops after a different number of
        # sweeps than the parties' fits and this reference would differ from PD-NMF-Init.
        W0 = np.vstack([
            fit_weights(weighted_representatives([m], l2_t=l2_t), start, params=params)
            for m in local_models
        ])
    result = rri_nmf(T_in, int(k), T0=start, W0=W0, max_iter=max_iter, tol=tol, params=params)
    if not normalize_topics:
        return result
    mass = result.T.sum(axis=1)
    scale = np.where(mass > 0, mass, 1.0)
    return replace(result, W=result.W * scale[None, :], T=result.T / scale[:, None])
