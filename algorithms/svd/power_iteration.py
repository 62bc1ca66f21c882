"""Block power iteration for the top-k right singular vectors (thesis seed 001, Algorithm 9).

The thesis computes V_k of X = U Σ Vᵀ (X n×d, rows are samples) as the top-k eigenvectors of
S = XᵀX = V Σ² Vᵀ by block power iteration:

    1: V̂ ← N(0, 1/d)^{d×k}                   (printed n×d; read d×k, digest §7.1 item 19)
    2: for t = 1..τ:
    3:     V̂ ← S V̂
    4:     V̂ ← Orthonormalize(V̂)
    6: output V̂ ≈ V_k

Orthonormalisation is the deterministic modified Gram–Schmidt of :func:`orthonormalize` —
fixed column order, no pivoting — so that every party of PD-SVD computes bit-identical V̂
(digest §7.1 item 22). S V̂ is formed as Xᵀ(X V̂), never S itself, so memory stays O((n + d)k)
(the product is the same; a d×d S at d = 10^4 would take 800 MB). The convergence rate of
column i depends on σ_{i+1}²/σ_i², so a well-separated spectrum converges in tens of sweeps.

Also here: the metrics of §3.3.2 — the largest principal angle between two subspaces and the
low-rank approximation error ‖X − X V Vᵀ‖_F — and U_k^(m) = X^(m) V_k Σ_k⁻¹ (PD-NMF's
``pd_svd`` initialisation).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from protocols.errors import InputError


def orthonormalize(V: np.ndarray) -> np.ndarray:
    """Modified Gram–Schmidt on the columns of ``V`` (d×k), in column order.

    A column that is numerically in the span of the previous ones — its norm after projection
    at most 1e−12 of its norm before — is returned as zeros rather than as amplified rounding
    noise.

    Parameters
    ----------
    V : ndarray, shape (d, k)

    Returns
    -------
    ndarray, shape (d, k)
        Orthonormal columns spanning the same nested subspaces as ``V``'s.
    """
    Q = np.array(V, dtype=np.float64, copy=True)
    for j in range(Q.shape[1]):
        before = float(np.linalg.norm(Q[:, j]))
        for i in range(j):
            Q[:, j] -= (Q[:, i] @ Q[:, j]) * Q[:, i]
        norm = float(np.linalg.norm(Q[:, j]))
        Q[:, j] = Q[:, j] / norm if norm > 1e-12 * before and norm > 0 else 0.0
    return Q


def gram_product(X: np.ndarray | sp.spmatrix, V: np.ndarray) -> np.ndarray:
    """S V = Xᵀ (X V) for a row block X (n×d, dense or sparse) and V (d×k): shape (d, k)."""
    XV = X @ V
    return np.asarray(X.T @ XV)


def initial_block(rng: np.random.Generator, d: int, k: int, std: float) -> np.ndarray:
    """A d×k block of N(0, std²) draws."""
    return rng.normal(0.0, std, size=(d, k))


def block_power_iteration(
    X: np.ndarray | sp.spmatrix, V0: np.ndarray, iterations: int,
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Algorithm 9 from the start ``V0``: returns V̂ (d×k) and the iterate after every sweep."""
    V = np.asarray(V0, dtype=np.float64)
    history = []
    for _ in range(iterations):
        V = orthonormalize(gram_product(X, V))
        history.append(V)
    return V, history


def check_rank(k: int, d: int, n: int | None = None) -> None:
    """Raise unless 1 ≤ k ≤ d (and ≤ n when n is given)."""
    top = d if n is None else min(n, d)
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= top:
        what = "d" if n is None else "min(n, d)"
        raise InputError(f"k = {k!r} must be an integer with 1 ≤ k ≤ {what} = {top}")


def max_principal_angle(A: np.ndarray, B: np.ndarray) -> float:
    """The largest principal angle (radians) between the column spaces of A and B."""
    return float(np.max(scipy.linalg.subspace_angles(A, B)))


def lra_error(X: np.ndarray | sp.spmatrix, V: np.ndarray) -> float:
    """‖X − X V Vᵀ‖_F (sparse X: sqrt(‖X‖_F² − ‖X V‖_F²), valid for orthonormal V)."""
    XV = np.asarray(X @ V)
    if sp.issparse(X):
        total = float(X.multiply(X).sum())
        return float(np.sqrt(max(total - float(np.sum(XV * XV)), 0.0)))
    return float(np.linalg.norm(np.asarray(X) - XV @ V.T))


def left_factor(X: np.ndarray | sp.spmatrix, V: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """U^(m) = X^(m) V_k Σ_k⁻¹ (columns with σ = 0 are zero)."""
    XV = np.asarray(X @ V)
    inv = np.divide(1.0, sigma, out=np.zeros_like(sigma, dtype=np.float64), where=sigma > 0)
    return XV * inv[None, :]
