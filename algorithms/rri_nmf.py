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

The shared per-topic steps (the contract with PD-NMF-Iter)
----------------------------------------------------------
PD-NMF-Iter (thesis Algorithm 7, module ``algorithms.pd_nmf``) runs the same sweep with the rows
of X split among parties; T is public, each party keeps its rows of W. Theorem 2 (PD-NMF-Iter
equals centralized RRI-NMF from the same T0) holds *by construction* because :func:`rri_sweep`
is nothing but the following public pure functions called on the full X, and the party program
calls the very same functions on its row block::

    block = as_row_block(X_rows, loss)                       # once (validates the data)
    for each sweep:
        residual = initial_residual(block, W_rows, T)        # None for the full loss
        for t in range(k):
            ws = w_side_statistics(block, W_rows, T, t, residual)     # 1. local
            W_rows[:, t] = update_w_column(ws, params)                # 2. local
            stat = t_side_statistics(block, W_rows, T, t, ws)         # 3. local
            summed = SecureSum(stat)            # centralized: the block is all of X
            T[t], s_t = update_t_row(summed, params, block.loss)     # 4. public
            W_rows[:, t] *= s_t                                       #    local rescale
            residual = next_residual(block, ws, W_rows[:, t], T[t])  #    local
        W_rows = end_of_sweep(W_rows, params)                         # 5. local

Step 1 needs only the party's rows of X and W and the public T: R_t T_t:ᵀ is evaluated by the
expansion X T_t:ᵀ − W (T T_t:ᵀ) + W_:t ‖T_t:‖², never by forming R_t (this works for dense
arrays and for ``scipy.sparse`` X). Step 3 is a sum over rows, evaluated with the *updated*
W_:t (R_t does not depend on W_:t). Step 4 reads nothing but the summed statistic and public
parameters; its curvature test uses the summed ‖W_:t‖² (digest item 9).

Statistic layout (step 3, one SecureSum call per topic):

* ``loss="full"``: length d + 1, ``[W_:tᵀ R_t (d entries), ‖W_:t‖² (1 entry)]`` — SumWR and
  SumWW of Algorithm 7 merged into one vector (digest item 12).
* ``loss="observed"``: length 2d, ``[Σ_i Ψ_ij W_it (R_t)_ij (d), Σ_i Ψ_ij W_it² (d)]`` with Ψ
  the 0/1 mask of observed entries: a numerator and a per-column denominator.

:func:`t_statistic_length` gives the length and :func:`split_t_statistics` splits a summed
vector into its numerator and denominator.

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
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from protocols.errors import DataError, InputError

__all__ = [
    "FullRows",
    "ObservedRows",
    "RRIParams",
    "RRIResult",
    "RowBlock",
    "WSideStatistics",
    "as_row_block",
    "corollary1",
    "end_of_sweep",
    "fit_weights",
    "initial_residual",
    "lemma1",
    "next_residual",
    "objective",
    "project_to_simplex",
    "random_init",
    "regularizer",
    "rri_nmf",
    "rri_sweep",
    "split_t_statistics",
    "t_side_statistics",
    "t_statistic_length",
    "update_t_row",
    "update_w_column",
    "w_side_statistics",
]

logger = logging.getLogger(__name__)

Form = Literal["plain", "topic"]
Loss = Literal["full", "observed"]
FloatArray = NDArray[np.float64]

_FORMS = ("plain", "topic")
_LOSSES = ("full", "observed")
_DENSE_CHUNK = 1 << 22  # elements per chunk when the dense objective is evaluated


# --------------------------------------------------------------------------------------------
# Parameters and results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RRIParams:
    """Form and regularisers of RRI-NMF, validated on construction.

    Parameters
    ----------
    form : {"plain", "topic"}
        ``"plain"``: general NMF (W, T ≥ 0). ``"topic"``: Algorithm 2, rows of T on Δ_d and rows
        of W on Δ_k, negative ℓ2 allowed.
    l1_w, l2_w, l1_t, l2_t : float
        ℓ^W_1, ℓ^W_2, ℓ^T_1, ℓ^T_2 of Eq. 2.29. ℓ1 must be ≥ 0; ℓ2 must be ≥ 0 in the plain form
        and may be any finite number in the topic form.
    thesis_literal_c : bool
        Pass c = ‖T_t:‖² + ℓ^W_2 (resp. ‖W_:t‖² + ℓ^T_2) to Corollary 1 / Lemma 1 as printed,
        instead of the exact ½ of that (digest §7.1 item 4).

    Raises
    ------
    InputError
        On an unknown form, a non-finite value, a negative ℓ1, or a negative ℓ2 in the plain
        form.
    """

    form: Form = "plain"
    l1_w: float = 0.0
    l2_w: float = 0.0
    l1_t: float = 0.0
    l2_t: float = 0.0
    thesis_literal_c: bool = False

    def __post_init__(self) -> None:
        if self.form not in _FORMS:
            raise InputError(f"form {self.form!r} is not one of {_FORMS}")
        for name in ("l1_w", "l2_w", "l1_t", "l2_t"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                raise InputError(f"{name} {value!r} is not a real number")
            if not np.isfinite(value):
                raise InputError(f"{name} {value!r} is not finite; allowed: a finite real")
            object.__setattr__(self, name, float(value))
        for name in ("l1_w", "l1_t"):
            if getattr(self, name) < 0:
                raise InputError(f"{name} {getattr(self, name)!r} is negative; allowed: >= 0")
        if self.form == "plain":
            for name in ("l2_w", "l2_t"):
                if getattr(self, name) < 0:
                    raise InputError(
                        f"{name} {getattr(self, name)!r} is negative; form='plain' allows "
                        "l2 >= 0 (negative l2 needs the [0, 1] box of form='topic')"
                    )
        if not isinstance(self.thesis_literal_c, (bool, np.bool_)):
            raise InputError(f"thesis_literal_c {self.thesis_literal_c!r} is not a bool")

    @property
    def unregularized(self) -> bool:
        """True when all four regularisers are 0 (then the objective is scale invariant)."""
        return self.l1_w == 0 and self.l2_w == 0 and self.l1_t == 0 and self.l2_t == 0


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


# --------------------------------------------------------------------------------------------
# Row blocks: the data of one party (or, centrally, all of X)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FullRows:
    """Rows of X under the plain squared loss.

    Attributes
    ----------
    X : ndarray or scipy.sparse CSR matrix of shape (n_rows, d)
        Non-negative, finite, float64.
    """

    X: FloatArray | sp.csr_matrix | sp.csr_array
    loss: Loss = field(default="full", init=False)

    @property
    def shape(self) -> tuple[int, int]:
        """(n_rows, d)."""
        return (int(self.X.shape[0]), int(self.X.shape[1]))


@dataclass(frozen=True, eq=False)
class ObservedRows:
    """Rows of X under the observed-entries loss: the observed entries in coordinate form.

    Attributes
    ----------
    rows, cols : ndarray of int64, shape (n_obs,)
        Row and column index of every observed entry (row-major order).
    values : ndarray of float64, shape (n_obs,)
        The observed values (finite, non-negative).
    n_rows, n_cols : int
        Shape of the block.
    """

    rows: NDArray[np.int64]
    cols: NDArray[np.int64]
    values: FloatArray
    n_rows: int
    n_cols: int
    loss: Loss = field(default="observed", init=False)

    @property
    def shape(self) -> tuple[int, int]:
        """(n_rows, d)."""
        return (self.n_rows, self.n_cols)


RowBlock = FullRows | ObservedRows


def as_row_block(
    X: ArrayLike | sp.spmatrix | sp.sparray | RowBlock,
    loss: Literal["auto", "full", "observed"] = "auto",
) -> RowBlock:
    """Validate rows of X and wrap them for the per-topic steps.

    Parameters
    ----------
    X : array_like of shape (n_rows, d), scipy.sparse matrix, or a RowBlock
        Non-negative data. A dense array may hold NaN for unobserved entries (observed loss).
    loss : {"auto", "full", "observed"}
        ``"auto"``: observed if X is dense and holds a NaN, full otherwise. ``"observed"`` with
        a sparse X takes the stored entries as the observed ones.

    Returns
    -------
    FullRows or ObservedRows

    Raises
    ------
    InputError
        On an unknown ``loss`` or a non-2-D X.
    DataError
        On infinite or negative entries, or NaN under ``loss="full"``.
    """
    if loss not in ("auto", *_LOSSES):
        raise InputError(f"loss {loss!r} is not one of ('auto', 'full', 'observed')")
    if isinstance(X, (FullRows, ObservedRows)):
        if loss != "auto" and loss != X.loss:
            raise InputError(f"loss {loss!r} does not match the given {X.loss!r} row block")
        return X
    if sp.issparse(X):
        if X.ndim != 2:
            raise InputError(f"X has {X.ndim} dimensions; allowed: 2")
        csr = sp.csr_matrix(X, dtype=np.float64)
        if not csr.has_canonical_format:  # canonicalise a copy, never the caller's arrays
            csr = csr.copy()
            csr.sum_duplicates()
        data = csr.data
        if not np.all(np.isfinite(data)):
            raise DataError("X holds NaN or infinite stored entries; allowed: finite values")
        if data.size and data.min() < 0:
            raise DataError(f"X holds a negative entry {data.min()!r}; allowed: >= 0")
        if loss == "observed":
            coo = csr.tocoo()
            return ObservedRows(
                coo.row.astype(np.int64),
                coo.col.astype(np.int64),
                coo.data.astype(np.float64),
                int(csr.shape[0]),
                int(csr.shape[1]),
            )
        return FullRows(csr)
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2:
        raise InputError(f"X has {arr.ndim} dimensions (shape {arr.shape}); allowed: 2")
    nan = np.isnan(arr)
    has_nan = bool(nan.any())
    if np.isinf(arr).any():
        raise DataError("X holds an infinite entry; allowed: finite values (NaN = unobserved)")
    finite_min = np.nanmin(arr) if arr.size and not nan.all() else 0.0
    if finite_min < 0:
        raise DataError(f"X holds a negative entry {finite_min!r}; allowed: >= 0")
    if loss == "full" and has_nan:
        raise DataError(
            "X holds NaN entries under loss='full'; use loss='observed' (or 'auto')"
            " to exclude unobserved entries from the loss"
        )
    if loss == "observed" or (loss == "auto" and has_nan):
        rows, cols = np.nonzero(~nan)
        return ObservedRows(
            rows.astype(np.int64),
            cols.astype(np.int64),
            arr[rows, cols],
            int(arr.shape[0]),
            int(arr.shape[1]),
        )
    return FullRows(arr)


# --------------------------------------------------------------------------------------------
# Simplex projection, Lemma 1, Corollary 1
# --------------------------------------------------------------------------------------------


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
    takes 0 — see the module docstring, departure 5.)

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


# --------------------------------------------------------------------------------------------
# The per-topic steps shared with PD-NMF-Iter
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class WSideStatistics:
    """Step-1 output for topic t on one row block.

    Attributes
    ----------
    numerator : ndarray of shape (n_rows,)
        R_t T_t:ᵀ (full loss) or Σ_j Ψ_ij (R_t)_ij T_tj (observed loss).
    denominator : float or ndarray of shape (n_rows,)
        ‖T_t:‖² (full loss; public) or Σ_j Ψ_ij T_tj² per row (observed loss). Without ℓ^W_2.
    topic_residual : ndarray of shape (n_obs,) or None
        R_t on the block's observed entries (observed loss), None for the full loss.
    loss : {"full", "observed"}
    """

    numerator: FloatArray
    denominator: float | FloatArray
    topic_residual: FloatArray | None
    loss: Loss


def initial_residual(block: RowBlock, W: FloatArray, T: FloatArray) -> FloatArray | None:
    """Residual X − WT on the observed entries, recomputed at the start of a sweep.

    Parameters
    ----------
    block : FullRows or ObservedRows
        The rows of X.
    W : ndarray of shape (n_rows, k)
        The block's rows of W.
    T : ndarray of shape (k, d)
        Topics.

    Returns
    -------
    ndarray of shape (n_obs,) or None
        None for the full loss (its steps use the expansion instead).
    """
    if isinstance(block, FullRows):
        return None
    return _observed_residual(block, W, T)


def _observed_residual(block: ObservedRows, W: FloatArray, T: FloatArray) -> FloatArray:
    resid = block.values.copy()
    for s in range(T.shape[0]):
        resid -= W[block.rows, s] * T[s, block.cols]
    return resid


def w_side_statistics(
    block: RowBlock, W: FloatArray, T: FloatArray, t: int, residual: FloatArray | None = None
) -> WSideStatistics:
    """Step 1: the W-side statistics of topic t, from the block's rows and the public T.

    Full loss: R_t T_t:ᵀ = X T_t:ᵀ − W (T T_t:ᵀ) + W_:t ‖T_t:‖² (R_t is never formed).
    Observed loss: R_t on the observed entries = residual + W_:t T_t: there, then the weighted
    numerator and the per-row denominator.

    Parameters
    ----------
    block : FullRows or ObservedRows
        The rows of X.
    W : ndarray of shape (n_rows, k)
        The block's rows of W (column t may hold any value: R_t does not depend on it).
    T : ndarray of shape (k, d)
        Current topics (row t not yet updated in this sweep).
    t : int
        Topic index, 0 ≤ t < k.
    residual : ndarray of shape (n_obs,), optional
        Observed loss only: X − WT on the observed entries (:func:`initial_residual`,
        then :func:`next_residual`).

    Returns
    -------
    WSideStatistics
    """
    trow = T[t]
    if isinstance(block, FullRows):
        xt = np.asarray(block.X @ trow, dtype=np.float64).ravel()
        tt = float(trow @ trow)
        num = xt - W @ (T @ trow) + W[:, t] * tt
        return WSideStatistics(num, tt, None, "full")
    if residual is None:
        raise InputError(
            "residual is required for the observed loss; start each sweep with "
            "initial_residual(block, W, T)"
        )
    tc = trow[block.cols]
    rt = residual + W[block.rows, t] * tc
    num = np.bincount(block.rows, weights=rt * tc, minlength=block.n_rows)
    den = np.bincount(block.rows, weights=tc * tc, minlength=block.n_rows)
    return WSideStatistics(num, den, rt, "observed")


def _corollary_c(curvature: float | FloatArray, params: RRIParams) -> float | FloatArray:
    return curvature if params.thesis_literal_c else 0.5 * curvature


def _check_loss_params(loss: str, params: RRIParams) -> None:
    if loss == "observed" and (params.l2_w < 0 or params.l2_t < 0):
        raise InputError(
            f"l2_w {params.l2_w!r} / l2_t {params.l2_t!r}: negative l2 is not supported with "
            "loss='observed' (per-column curvatures of mixed sign); allowed: >= 0"
        )


def update_w_column(stats: WSideStatistics, params: RRIParams) -> FloatArray:
    """Step 2: the new W_:t of the block from its step-1 statistics (Eq. 2.31, W part).

    Curvature c = denominator + ℓ^W_2 (per row for the observed loss). Where c > 0:
    [numerator − ℓ^W_1]₊ / c. Where c ≤ 0: 0 in the plain form; Corollary 1 with
    w = −numerator + ℓ^W_1 and ½c (or c with ``thesis_literal_c``) in the topic form.

    Parameters
    ----------
    stats : WSideStatistics
        From :func:`w_side_statistics`.
    params : RRIParams

    Returns
    -------
    ndarray of shape (n_rows,)
    """
    _check_loss_params(stats.loss, params)
    num = stats.numerator - params.l1_w
    curv = np.broadcast_to(np.asarray(stats.denominator + params.l2_w, dtype=np.float64), num.shape)
    pos = curv > 0
    out = np.zeros_like(num)
    out[pos] = np.maximum(num[pos], 0.0) / curv[pos]
    if params.form == "topic" and not pos.all():
        neg = ~pos
        out[neg] = corollary1(-num[neg], _corollary_c(curv[neg], params))
    return out


def t_statistic_length(n_features: int, loss: Loss) -> int:
    """Length of the step-3 statistic: d + 1 (full loss) or 2d (observed loss)."""
    if loss not in _LOSSES:
        raise InputError(f"loss {loss!r} is not one of {_LOSSES}")
    return n_features + 1 if loss == "full" else 2 * n_features


def t_side_statistics(
    block: RowBlock, W: FloatArray, T: FloatArray, t: int, stats: WSideStatistics
) -> FloatArray:
    """Step 3: the block's contribution to the T-side statistic of topic t (a sum over rows).

    Full loss: ``[W_:tᵀ R_t, ‖W_:t‖²]`` (length d + 1), with W_:tᵀ R_t evaluated as
    Xᵀw − Tᵀ(Wᵀw) + T_t:ᵀ (wᵀw), w = W_:t. Observed loss: ``[Σ_i Ψ_ij W_it (R_t)_ij,
    Σ_i Ψ_ij W_it²]`` (length 2d). Summing these vectors over blocks gives the statistic of the
    stacked rows.

    Parameters
    ----------
    block : FullRows or ObservedRows
    W : ndarray of shape (n_rows, k)
        The block's rows of W, column t already updated by step 2.
    T : ndarray of shape (k, d)
        Topics (row t not yet updated).
    t : int
        Topic index.
    stats : WSideStatistics
        This topic's step-1 output for the same block.

    Returns
    -------
    ndarray of shape (d + 1,) or (2d,)
    """
    w = W[:, t]
    if isinstance(block, FullRows):
        xw = np.asarray(block.X.T @ w, dtype=np.float64).ravel()
        ww = W.T @ w
        wr = xw - T.T @ ww + T[t] * ww[t]
        return np.concatenate([wr, [float(w @ w)]])
    if stats.topic_residual is None:
        raise InputError("stats lacks the topic residual the observed loss needs")
    wo = w[block.rows]
    num = np.bincount(block.cols, weights=wo * stats.topic_residual, minlength=block.n_cols)
    den = np.bincount(block.cols, weights=wo * wo, minlength=block.n_cols)
    return np.concatenate([num, den])


def split_t_statistics(summed: ArrayLike, loss: Loss) -> tuple[FloatArray, float | FloatArray]:
    """Split a (summed) step-3 statistic into numerator (d,) and denominator.

    Returns
    -------
    numerator : ndarray of shape (d,)
        W_:tᵀ R_t (SumWR).
    denominator : float or ndarray of shape (d,)
        ‖W_:t‖² (SumWW; full loss) or the per-column Σ_i Ψ_ij W_it² (observed loss).

    Raises
    ------
    InputError
        On an unknown loss or a length that does not fit the layout.
    """
    vec = np.asarray(summed, dtype=np.float64)
    if loss not in _LOSSES:
        raise InputError(f"loss {loss!r} is not one of {_LOSSES}")
    if vec.ndim != 1 or vec.size < 2 or (loss == "observed" and vec.size % 2):
        raise InputError(
            f"statistic of shape {vec.shape} does not fit the {loss!r} layout "
            "(d + 1 entries for 'full', 2d for 'observed', d >= 1)"
        )
    if loss == "full":
        return vec[:-1], float(vec[-1])
    d = vec.size // 2
    return vec[:d], vec[d:]


def update_t_row(summed: ArrayLike, params: RRIParams, loss: Loss) -> tuple[FloatArray, float]:
    """Step 4: the new T_t: from the summed step-3 statistic, and the W rescale factor s_t.

    Curvature c = denominator + ℓ^T_2 (per column for the observed loss). Plain form:
    [numerator − ℓ^T_1]₊ / c where c > 0, else 0; s_t balances ‖W_:t‖ = ‖T_t:‖ when
    unregularised (departure 9), else s_t = 1. Topic form: if the (scalar) c ≤ 0,
    Lemma 1 with w = −numerator + ℓ^T_1 (s_t = 1); otherwise the closed form, then — unless
    the row is zero (kept, s_t = 1) — division by s_t = ‖T_t:‖_1 when unregularised, or the
    Euclidean projection onto Δ_d (s_t = 1) when regularised.

    Parameters
    ----------
    summed : array_like of shape (d + 1,) or (2d,)
        Σ over row blocks of :func:`t_side_statistics`.
    params : RRIParams
    loss : {"full", "observed"}

    Returns
    -------
    T_row : ndarray of shape (d,)
    s_t : float
        Every row block multiplies its W_:t by s_t.
    """
    _check_loss_params(loss, params)
    num, den = split_t_statistics(summed, loss)
    num = num - params.l1_t
    if params.form == "topic" and loss == "full" and den + params.l2_t <= 0:
        return lemma1(-num, _corollary_c(den + params.l2_t, params)), 1.0
    curv = np.broadcast_to(np.asarray(den + params.l2_t, dtype=np.float64), num.shape)
    pos = curv > 0
    row = np.zeros_like(num)
    row[pos] = np.maximum(num[pos], 0.0) / curv[pos]
    if params.form == "plain":
        return _balanced(row, den, params)
    total = float(row.sum())
    if total <= 0:
        return row, 1.0
    if params.unregularized:
        return row / total, total
    return project_to_simplex(row), 1.0


def _balanced(
    row: FloatArray, den: float | FloatArray, params: RRIParams
) -> tuple[FloatArray, float]:
    """Plain form without regularisers: rescale so that ‖W_:t‖ = ‖T_t:‖ (departure 9).

    ``den`` is the summed ‖W_:t‖² (full loss) or the per-column Σ_i Ψ_ij W_it² (observed
    loss, whose positive mean scales the same way). Returns the T row and s_t.
    """
    if not params.unregularized:
        return row, 1.0
    den_arr = np.atleast_1d(np.asarray(den, dtype=np.float64))
    w_sq = float(den_arr[den_arr > 0].mean()) if np.any(den_arr > 0) else 0.0
    t_sq = float(row @ row)
    if w_sq <= 0 or t_sq <= 0:
        return row, 1.0
    s_t = (t_sq / w_sq) ** 0.25  # s_t·‖W_:t‖ = ‖T_t:‖ / s_t
    return row / s_t, s_t


def next_residual(
    block: RowBlock, stats: WSideStatistics, w_col: FloatArray, t_row: FloatArray
) -> FloatArray | None:
    """After topic t: residual on the observed entries with the new W_:t, T_t: (else None).

    Parameters
    ----------
    block : FullRows or ObservedRows
    stats : WSideStatistics
        Topic t's step-1 output (holds R_t on the observed entries).
    w_col : ndarray of shape (n_rows,)
        The final W_:t (after the s_t rescale).
    t_row : ndarray of shape (d,)
        The new T_t:.

    Returns
    -------
    ndarray of shape (n_obs,) or None
    """
    if isinstance(block, FullRows):
        return None
    if stats.topic_residual is None:
        raise InputError("stats lacks the topic residual the observed loss needs")
    return stats.topic_residual - w_col[block.rows] * t_row[block.cols]


def end_of_sweep(W: FloatArray, params: RRIParams) -> FloatArray:
    """Step 5: row-local end of a sweep — topic form: every W row onto Δ_k; plain: a copy.

    Parameters
    ----------
    W : ndarray of shape (n_rows, k)
    params : RRIParams

    Returns
    -------
    ndarray of shape (n_rows, k)
    """
    if params.form == "topic" and W.shape[0] > 0:
        return project_to_simplex(W)
    return np.array(W, dtype=np.float64, copy=True)


# --------------------------------------------------------------------------------------------
# Sweeps, objective, driver
# --------------------------------------------------------------------------------------------


def _check_factors(
    shape: tuple[int, int], W: ArrayLike, T: ArrayLike
) -> tuple[FloatArray, FloatArray]:
    n, d = shape
    Wa = np.array(W, dtype=np.float64, copy=True)
    Ta = np.array(T, dtype=np.float64, copy=True)
    if Ta.ndim != 2 or Ta.shape[1] != d or Ta.shape[0] < 1:
        raise InputError(f"T has shape {Ta.shape}; allowed: (k, {d}) with k >= 1")
    if Wa.shape != (n, Ta.shape[0]):
        raise InputError(f"W has shape {Wa.shape}; allowed: ({n}, {Ta.shape[0]})")
    for name, arr in (("W", Wa), ("T", Ta)):
        if not np.all(np.isfinite(arr)):
            raise InputError(f"{name} holds NaN or infinite entries; allowed: finite values")
        if arr.size and arr.min() < 0:
            raise InputError(f"{name} holds a negative entry {arr.min()!r}; allowed: >= 0")
    return Wa, Ta


def _sweep(block: RowBlock, W: FloatArray, T: FloatArray, params: RRIParams) -> FloatArray:
    """One RRI sweep in place on T and W (W returned after step 5)."""
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
    _check_loss_params(block.loss, params)
    Wa, Ta = _check_factors(block.shape, W, T)
    Wa = _sweep(block, Wa, Ta, params)
    return Wa, Ta


def regularizer(W: ArrayLike, T: ArrayLike, params: RRIParams) -> float:
    """reg(W, T) of Eq. 2.29: ℓ^T_1‖T‖_1 + ½ℓ^T_2‖T‖²_F + ℓ^W_1‖W‖_1 + ½ℓ^W_2‖W‖²_F."""
    Wa = np.asarray(W, dtype=np.float64)
    Ta = np.asarray(T, dtype=np.float64)
    return float(
        params.l1_t * np.abs(Ta).sum()
        + 0.5 * params.l2_t * np.sum(Ta * Ta)
        + params.l1_w * np.abs(Wa).sum()
        + 0.5 * params.l2_w * np.sum(Wa * Wa)
    )


def _loss_value(
    block: RowBlock,
    W: FloatArray,
    T: FloatArray,
    x_sq: float | None = None,
) -> float:
    if isinstance(block, ObservedRows):
        resid = _observed_residual(block, W, T)
        return 0.5 * float(resid @ resid)
    X = block.X
    if sp.issparse(X):
        if x_sq is None:
            x_sq = float(X.data @ X.data)
        cross = float(np.sum(np.asarray(X @ T.T) * W))
        gram = float(np.sum((W.T @ W) * (T @ T.T)))
        return 0.5 * max(x_sq - 2.0 * cross + gram, 0.0)
    n = X.shape[0]
    step = max(1, _DENSE_CHUNK // max(1, X.shape[1]))
    total = 0.0
    for start in range(0, n, step):
        diff = X[start : start + step] - W[start : start + step] @ T
        total += float(np.sum(diff * diff))
    return 0.5 * total


def objective(
    X: ArrayLike | sp.spmatrix | sp.sparray | RowBlock,
    W: ArrayLike,
    T: ArrayLike,
    params: RRIParams,
    *,
    loss: Literal["auto", "full", "observed"] = "auto",
) -> float:
    """E(W, T) of Eq. 2.28: ½‖X − WT‖²_F + reg(W, T) (observed entries only, observed loss).

    Parameters
    ----------
    X : array_like of shape (n, d), scipy.sparse matrix, or a RowBlock
    W : array_like of shape (n, k)
    T : array_like of shape (k, d)
    params : RRIParams
    loss : {"auto", "full", "observed"}

    Returns
    -------
    float
    """
    block = as_row_block(X, loss)
    Wa, Ta = _check_factors(block.shape, W, T)
    return _loss_value(block, Wa, Ta) + regularizer(Wa, Ta, params)


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
        given, both come from :func:`algorithms.nndsvd.nndsvd` (unobserved entries read as 0).
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
    _check_loss_params(block.loss, params)
    n, d = block.shape
    if T0 is None:
        if W0 is not None:
            raise InputError(
                "W0 was given without T0; RRI updates W first, so give T0 "
                "(W0 alone is not supported)"
            )
        from algorithms.nndsvd import nndsvd

        W_init, T_init = nndsvd(_zero_filled(X, block), int(k))
    else:
        T_init = np.asarray(T0, dtype=np.float64)
        if T_init.shape != (k, d):
            raise InputError(f"T0 has shape {T_init.shape}; allowed: ({k}, {d})")
        W_init = np.zeros((n, int(k))) if W0 is None else np.asarray(W0, dtype=np.float64)
    W, T = _check_factors((n, d), W_init, T_init)
    x_sq = _data_sq_norm(block)
    previous = _loss_value(block, W, T, x_sq) + regularizer(W, T, params)
    initial = previous
    history: list[float] = []
    converged = False
    for sweep in range(1, int(max_iter) + 1):
        W = _sweep(block, W, T, params)
        current = _loss_value(block, W, T, x_sq) + regularizer(W, T, params)
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


def _zero_filled(
    X: ArrayLike | sp.spmatrix | sp.sparray,
    block: RowBlock,
) -> FloatArray | sp.csr_matrix:
    if isinstance(block, FullRows):
        return block.X
    if sp.issparse(X):
        return sp.csr_matrix(X, dtype=np.float64)
    return np.nan_to_num(np.asarray(X, dtype=np.float64), nan=0.0)


def _data_sq_norm(block: RowBlock) -> float | None:
    if isinstance(block, FullRows) and sp.issparse(block.X):
        return float(block.X.data @ block.X.data)
    return None


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
    _check_loss_params(block.loss, params)
    n, _ = block.shape
    Ta = np.asarray(T, dtype=np.float64)
    k = Ta.shape[0] if Ta.ndim == 2 else 0
    W, Ta = _check_factors(block.shape, np.zeros((n, k)) if W0 is None else W0, Ta)
    x_sq = _data_sq_norm(block)
    previous = _loss_value(block, W, Ta, x_sq) + regularizer(W, Ta, params)
    for _ in range(int(max_iter)):
        residual = initial_residual(block, W, Ta)
        for t in range(k):
            ws = w_side_statistics(block, W, Ta, t, residual)
            W[:, t] = update_w_column(ws, params)
            residual = next_residual(block, ws, W[:, t], Ta[t])
        W = end_of_sweep(W, params)
        current = _loss_value(block, W, Ta, x_sq) + regularizer(W, Ta, params)
        if _converged(previous, current, tol):
            break
        previous = current
    return W
