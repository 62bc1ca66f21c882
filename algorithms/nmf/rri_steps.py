"""The per-topic steps of RRI-NMF, shared by the centralized reference and PD-NMF-Iter.

Tsikhanovich PhD thesis (seed 001): the updates of Eq. 2.31 (Ch. 2 §2.2) inside the sweep of
Algorithm 2 (RRI-NMF) and of Algorithm 7 (PD-NMF-Iter). :mod:`algorithms.nmf.rri` documents the
algorithm, its forms and where it departs from the printed text (departures are numbered there).

The shared per-topic steps (the contract with PD-NMF-Iter)
----------------------------------------------------------
PD-NMF-Iter (thesis Algorithm 7, :mod:`algorithms.nmf.pd_nmf`) runs the same sweep with the
rows of X split among parties; T is public, each party keeps its rows of W. Theorem 2
(PD-NMF-Iter equals centralized RRI-NMF from the same T0) holds *by construction* because
:func:`algorithms.nmf.rri.rri_sweep` is nothing but the following public pure functions called
on the full X, and the party program calls the very same functions on its row block::

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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from algorithms.nmf.row_blocks import LOSSES, FullRows, Loss, ObservedRows, RowBlock
from algorithms.nmf.simplex import corollary1, lemma1, project_to_simplex
from protocols.errors import InputError

__all__ = [
    "RRIParams",
    "WSideStatistics",
    "check_loss_params",
    "end_of_sweep",
    "initial_residual",
    "next_residual",
    "observed_residual",
    "split_t_statistics",
    "t_side_statistics",
    "t_statistic_length",
    "update_t_row",
    "update_w_column",
    "w_side_statistics",
]

Form = Literal["plain", "topic"]
FloatArray = NDArray[np.float64]

FORMS = ("plain", "topic")


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
        if self.form not in FORMS:
            raise InputError(f"form {self.form!r} is not one of {FORMS}")
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
    return observed_residual(block, W, T)


def observed_residual(block: ObservedRows, W: FloatArray, T: FloatArray) -> FloatArray:
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
        num = block.times(trow)
        tt = float(trow @ trow)
        num -= W @ (T @ trow)  # the product is a new array: updating it in place is safe
        num += W[:, t] * tt
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


def check_loss_params(loss: str, params: RRIParams) -> None:
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
    check_loss_params(stats.loss, params)
    den = stats.denominator
    if type(den) is float and den + params.l2_w > 0:
        # the full loss, the usual case: one positive curvature, the closed form everywhere;
        # with ℓ^W_1 = 0 the subtraction (x − 0.0 = x, bit for bit) is left out
        if params.l1_w == 0:
            out = np.maximum(stats.numerator, 0.0)
        else:
            out = np.subtract(stats.numerator, params.l1_w)
            np.maximum(out, 0.0, out=out)
        out /= den + params.l2_w
        return out
    num = stats.numerator - params.l1_w
    if np.ndim(stats.denominator) == 0 and stats.denominator + params.l2_w > 0:
        # one positive curvature (the full loss, the usual case): the closed form everywhere
        out = np.maximum(num, 0.0, out=num)  # num is this function's own array
        out /= stats.denominator + params.l2_w
        return out
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
    if loss not in LOSSES:
        raise InputError(f"loss {loss!r} is not one of {LOSSES}")
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
        d = T.shape[1]
        out = np.empty(d + 1)
        block.transposed_times_into(w, out[:d])
        ww = W.T @ w
        out[:d] -= T.T @ ww
        out[:d] += T[t] * ww[t]
        out[d] = float(w @ w)
        return out
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
    if loss not in LOSSES:
        raise InputError(f"loss {loss!r} is not one of {LOSSES}")
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
    check_loss_params(loss, params)
    num, den = split_t_statistics(summed, loss)
    if type(den) is float and den + params.l2_t > 0 and params.l1_t == 0:
        # the full loss without ℓ^T_1 (the usual case): x − 0.0 = x bit for bit, so the
        # closed form starts from the numerator itself, into a new array (summed untouched)
        row = np.maximum(num, 0.0)
        row /= den + params.l2_t
        return _t_row_form(row, den, params)
    num = num - params.l1_t
    if params.form == "topic" and loss == "full" and den + params.l2_t <= 0:
        return lemma1(-num, _corollary_c(den + params.l2_t, params)), 1.0
    if np.ndim(den) == 0 and den + params.l2_t > 0:  # one positive curvature: no masking
        row = np.maximum(num, 0.0, out=num)  # num is this function's own array
        row /= den + params.l2_t
    else:
        curv = np.broadcast_to(np.asarray(den + params.l2_t, dtype=np.float64), num.shape)
        pos = curv > 0
        row = np.zeros_like(num)
        row[pos] = np.maximum(num[pos], 0.0) / curv[pos]
    return _t_row_form(row, den, params)


def _t_row_form(row: FloatArray, den: float | FloatArray, params: RRIParams
                ) -> tuple[FloatArray, float]:
    """The end of step 4 on the closed-form row (this function's to change): the plain
    form's balancing, or the topic form's ℓ1 normalisation or projection onto Δ_d."""
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
    if type(den) is float or np.ndim(den) == 0:  # the full loss: ‖W_:t‖² itself
        w_sq = float(den) if den > 0 else 0.0
    else:
        den_arr = np.asarray(den, dtype=np.float64)
        w_sq = float(den_arr[den_arr > 0].mean()) if np.any(den_arr > 0) else 0.0
    t_sq = float(row @ row)
    if w_sq <= 0 or t_sq <= 0:
        return row, 1.0
    s_t = (t_sq / w_sq) ** 0.25  # s_t·‖W_:t‖ = ‖T_t:‖ / s_t
    row /= s_t  # the caller's own array (update_t_row's closed form)
    return row, s_t


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
