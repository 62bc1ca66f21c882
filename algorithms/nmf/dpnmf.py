"""DPNMF: the differentially private NMF baseline of seed 000's Table 4 (Ran et al. 2022, [20]).

Seed 000 (Saha & Imtiaz, §4, "Comparison with existing work") describes the baseline it beats
on MovieLens 1M by three properties: the **Laplace mechanism** calibrated to the **ℓ1
sensitivity**, **alternating non-negative least squares** (ANLS, its [49]) as the base NMF, and
**no outlier handling**. Ran et al.'s paper is not among the seeds, so this module implements
exactly those three properties on the same skeleton as seed 000's Algorithm 2
(:mod:`algorithms.nmf.dp_robust`), which makes Table 4 a like-for-like comparison of the
mechanisms rather than of two code bases:

1. H_t: NNLS of every sample's coefficients against W_{t−1} (ANLS's H half; R ≡ 0; coordinate
   descent to convergence), each
   h_n then scaled into the ℓ2 unit ball (the bound the sensitivities need);
2. the statistics A_t = (1/N)H_tH_tᵀ and B_t = (1/N)VH_tᵀ released with iid Laplace noise of
   scale Δ₁/ε, where, for one sample replaced (‖v_n‖₂ ≤ 1 by :func:`unit_columns`, ‖h_n‖₂ ≤ 1,
   so ‖h_n‖₁ ≤ √K and ‖v_n‖₁ ≤ √D), Δ₁(A) = 2K/N and Δ₁(B) = 2√(DK)/N — each release ε-DP
   (δ = 0), against Algorithm 2's (ε, δ) Gaussian releases of ℓ2 sensitivity 2/N;
3. W_t: ANLS's W half on the released statistics, min_{W ≥ 0} ½tr(WĀWᵀ) − tr(WᵀB̄), solved
   exactly row by row (NNLS on the Cholesky factor of Ā, whose eigenvalues are first floored at
   a small positive value: post-processing of the release, so free under DP).

Departure: Ran et al. release perturbed factors of a recommender (their exact perturbation
point is not given in seed 000); the releases here are Algorithm 2's, so both methods reveal the
same quantities and differ only in the mechanism and the solver.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import nnls

from algorithms.nmf.dp_robust import unit_columns
from protocols.errors import InputError

__all__ = ["DPNMFFit", "anls_w", "dpnmf", "l1_sensitivities", "laplace_scales", "nnls_h"]

EIGEN_FLOOR = 1e-8
"""Relative floor on Ā's eigenvalues (× its largest) before the Cholesky factor."""


def l1_sensitivities(n: int, d: int, k: int) -> tuple[float, float]:
    """(Δ₁(A), Δ₁(B)) = (2K/N, 2√(DK)/N) for one of N samples replaced."""
    if min(n, d, k) < 1:
        raise InputError(f"N = {n}, D = {d}, K = {k} must all be ≥ 1")
    return 2.0 * k / n, 2.0 * math.sqrt(d * k) / n


def laplace_scales(n: int, d: int, k: int, epsilon: float) -> tuple[float, float]:
    """Laplace scales Δ₁/ε of A and B, each release ε-DP."""
    if not epsilon > 0:
        raise InputError(f"ε = {epsilon!r} must be > 0")
    a, b = l1_sensitivities(n, d, k)
    return a / epsilon, b / epsilon


H_SWEEPS = 100
"""Coordinate-descent sweeps of the H half (exact NNLS in the limit; K is small)."""


def nnls_h(V: np.ndarray, W: np.ndarray, sweeps: int = H_SWEEPS) -> np.ndarray:
    """Every column's NNLS coefficients against W (coordinate descent on the Gram matrix, all
    columns at once), then scaled into the ℓ2 unit ball."""
    G, C = W.T @ W, W.T @ V
    H = np.zeros((W.shape[1], V.shape[1]))
    for _ in range(sweeps):
        for t in range(W.shape[1]):
            if G[t, t] > 0:
                H[t] = np.maximum(0.0, H[t] + (C[t] - G[t] @ H) / G[t, t])
    return H / np.maximum(1.0, np.linalg.norm(H, axis=0))


def anls_w(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """argmin_{W ≥ 0} ½tr(WAWᵀ) − tr(WᵀB), row by row, A symmetrised and made positive
    definite first."""
    S = (A + A.T) / 2.0
    vals, vecs = np.linalg.eigh(S)
    top = max(float(vals.max()), 1e-300)
    vals = np.maximum(vals, EIGEN_FLOOR * top)
    L = vecs * np.sqrt(vals)  # S = L Lᵀ
    Linv_b = np.linalg.solve(L, B.T)  # columns: L⁻¹ b_i for each row i of W
    return np.vstack([nnls(L.T, Linv_b[:, i])[0] for i in range(B.shape[0])])


@dataclass
class DPNMFFit:
    """W (D×K), H (K×N), and the released statistics of every iteration."""

    W: np.ndarray
    H: np.ndarray
    A_released: list[np.ndarray] = field(default_factory=list)
    B_released: list[np.ndarray] = field(default_factory=list)


def dpnmf(V: np.ndarray, W0: np.ndarray, *, iterations: int, epsilon: float | None,
          rng: np.random.Generator | None = None) -> DPNMFFit:
    """DPNMF on V (D×N, samples in columns, scaled by :func:`unit_columns` on entry) from the
    public start W0; ``epsilon=None`` runs the same ANLS without noise."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations = {iterations!r} must be an integer ≥ 1")
    V = unit_columns(V)
    d, n = V.shape
    W = np.maximum(np.asarray(W0, dtype=np.float64), 0.0)
    if W.ndim != 2 or W.shape[0] != d:
        raise InputError(f"W0 has shape {W.shape}; it must be (D = {d}, K)")
    k = W.shape[1]
    if epsilon is not None and rng is None:
        raise InputError("dpnmf needs rng to draw the Laplace noise")
    scales = laplace_scales(n, d, k, epsilon) if epsilon is not None else (0.0, 0.0)
    fit = DPNMFFit(W, np.zeros((k, n)))
    for _ in range(iterations):
        H = nnls_h(V, W)
        A, B = H @ H.T / n, V @ H.T / n
        if epsilon is not None:
            A = A + rng.laplace(0.0, scales[0], size=A.shape)  # type: ignore[union-attr]
            B = B + rng.laplace(0.0, scales[1], size=B.shape)  # type: ignore[union-attr]
        fit.A_released.append(A)
        fit.B_released.append(B)
        W = anls_w(A, B)
    fit.W, fit.H = W, nnls_h(V, W)
    return fit
