"""The NMF objective E(W, T) of the thesis's Eqs. 2.28–2.29 (Tsikhanovich, seed 001, §2.2).

    E(W, T) = ½‖X − WT‖²_F + ℓ^T_1‖T‖_1 + ½ℓ^T_2‖T‖²_F + ℓ^W_1‖W‖_1 + ½ℓ^W_2‖W‖²_F

With the observed-entries loss the squared error runs over the observed entries only
(:mod:`algorithms.nmf.row_blocks`). A sparse X is never densified: ‖X − WT‖² is expanded as
‖X‖² − 2⟨X, WT⟩ + ⟨WᵀW, TTᵀ⟩; a dense X is evaluated in row chunks.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from algorithms.nmf.row_blocks import FullRows, ObservedRows, RowBlock, as_row_block, check_factors
from algorithms.nmf.rri_steps import RRIParams, observed_residual

__all__ = ["data_sq_norm", "loss_value", "objective", "regularizer"]

FloatArray = NDArray[np.float64]

_DENSE_CHUNK = 1 << 22  # elements per chunk when the dense objective is evaluated


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


def loss_value(
    block: RowBlock,
    W: FloatArray,
    T: FloatArray,
    x_sq: float | None = None,
) -> float:
    if isinstance(block, ObservedRows):
        resid = observed_residual(block, W, T)
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
    Wa, Ta = check_factors(block.shape, W, T)
    return loss_value(block, Wa, Ta) + regularizer(Wa, Ta, params)


def data_sq_norm(block: RowBlock) -> float | None:
    if isinstance(block, FullRows) and sp.issparse(block.X):
        return float(block.X.data @ block.X.data)
    return None
