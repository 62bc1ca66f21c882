"""Distributed HALS (Cichocki & Phan 2009), the baseline seed 004 costs DSANLS against (§3.6.1).

Hierarchical alternating least squares updates one column of a factor at a time, each the
exact minimizer of ‖M − UVᵀ‖²_F in that column with the others fixed (Gauss–Seidel order,
new columns l < j, old l > j):

    U_{:j} ← max{ U_{:j} + ((MV)_{:j} − U (VᵀV)_{:j}) / (VᵀV)_{jj}, ε },

and the same for V with Mᵀ and U. The floor ε = :data:`EPS` instead of 0 keeps a column from
dying (a zero column of U would make (UᵀU)_{jj} = 0 in the next V update), as in Cichocki &
Phan's and Gillis' implementations; a column whose (FᵀF)_{jj} is 0 is left as it is.

Each column update acts row by row given MV and VᵀV, so the distributed run
(:func:`algorithms.nmf.gathered_bcd.gathered_bcd`) computes exactly the centralized iterates;
its O(kn) communication and O(kn(m/N + k)) computation per node are what §3.6.1 compares
DSANLS's O(kd) and O(kd(m/N + k)) with.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.nmf.gathered_bcd import GatheredConfig, GatheredNode, gathered_bcd
from protocols.context import PartyContext

EPS = 1e-16
"""Floor of an updated entry."""


def hals_update(X: np.ndarray, A: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, int]:
    """One HALS pass over the k columns of X ≥ 0 on min ‖A − XFᵀ‖²_F.

    Parameters
    ----------
    X : ndarray of shape (r, k)
    A : ndarray of shape (r, n)
    F : ndarray of shape (n, k)

    Returns
    -------
    X_new : ndarray of shape (r, k)
    flops : int
        2rnk for AF, 2nk² for FᵀF, 2rk² + 3rk for the pass.
    """
    r, n = A.shape
    k = F.shape[1]
    G = A @ F
    H = F.T @ F
    new = np.array(X, dtype=np.float64, copy=True)
    for j in range(k):
        if H[j, j] <= 0:
            continue
        column = new[:, j] + (G[:, j] - new @ H[:, j]) / H[j, j]
        new[:, j] = np.maximum(column, EPS)
    return new, 2 * r * n * k + 2 * n * k * k + 2 * r * k * k + 3 * r * k


def hals(
    ctx: PartyContext,
    X: Any,
    X_features: Any,
    U0: np.ndarray,
    V0: np.ndarray,
    config: GatheredConfig,
) -> Generator[Any, Any, GatheredNode]:
    """Node r's program: distributed HALS (arguments as :func:`~algorithms.nmf.gathered_bcd.
    gathered_bcd`)."""
    return (yield from gathered_bcd(ctx, X, X_features, U0, V0, config, hals_update))
