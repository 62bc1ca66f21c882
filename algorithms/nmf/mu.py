"""Distributed multiplicative updates (Lee & Seung 2001), a baseline of seed 004 (§5.2).

Lee and Seung's rule for min ‖M − UVᵀ‖²_F keeps U and V non-negative by rescaling every entry
with the ratio of the negative to the positive part of the gradient:

    U ← U ∘ (MV) ⊘ (U VᵀV),        V ← V ∘ (MᵀU) ⊘ (V UᵀU),

the objective never increasing (Lee & Seung 2001, Theorem 1). Qian et al. cite MU as monotone
but slow (§2.1, §5.2). A denominator is floored at :data:`EPS` so that a zero row of the factor
never divides by zero (the usual guard; it changes nothing where the denominator is positive).

Both updates act row by row given MV (resp. MᵀU) and VᵀV (resp. UᵀU), so the distributed run
(:func:`algorithms.nmf.gathered_bcd.gathered_bcd`: V all-gathered before the U update, U before
the V update) computes exactly the centralized iterates from the same start.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.nmf.gathered_bcd import GatheredConfig, GatheredNode, gathered_bcd
from protocols.context import PartyContext

EPS = 1e-16
"""Floor of the denominators U VᵀV and V UᵀU."""


def mu_update(X: np.ndarray, A: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, int]:
    """One multiplicative update of X ≥ 0 on min ‖A − XFᵀ‖²_F: X ∘ (AF) ⊘ max(X FᵀF, ε).

    Parameters
    ----------
    X : ndarray of shape (r, k)
    A : ndarray of shape (r, n)
    F : ndarray of shape (n, k)

    Returns
    -------
    X_new : ndarray of shape (r, k)
    flops : int
        2rnk for AF, 2nk² for FᵀF, 2rk² for X FᵀF, 2rk for the ratio.
    """
    r, n = A.shape
    k = F.shape[1]
    numerator = A @ F
    denominator = np.maximum(X @ (F.T @ F), EPS)
    return X * numerator / denominator, 2 * r * n * k + 2 * n * k * k + 2 * r * k * k + 2 * r * k


def mu(
    ctx: PartyContext,
    X: Any,
    X_features: Any,
    U0: np.ndarray,
    V0: np.ndarray,
    config: GatheredConfig,
) -> Generator[Any, Any, GatheredNode]:
    """Node r's program: distributed MU (arguments as :func:`~algorithms.nmf.gathered_bcd.
    gathered_bcd`)."""
    return (yield from gathered_bcd(ctx, X, X_features, U0, V0, config, mu_update))
