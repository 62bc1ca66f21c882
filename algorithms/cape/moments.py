"""Moments of the single topic model and of the spherical Gaussian mixture (seed 003, App. D–E).

Both models have the form M2 = Σ_k w_k μ_k μ_kᵀ and M3 = Σ_k w_k μ_k⊗μ_k⊗μ_k
(Anandkumar et al. 2014; Hsu & Kakade 2013), which is what orthogonal tensor decomposition
recovers (spec §5.1–§5.2). Rows are samples (DESIGN.md); the paper's X_s ∈ R^{D×N_s} is our
``X`` of shape (N_s, D).

**Single topic model (STM).** A document of L ≥ 3 words, all from one topic h with
P(h = k) = w_k, each word drawn from μ_k. Documents are given as word-count rows (n, D) with
the same length L in every row. The paper's estimators use the first two / three words of
each document, E[x1 x2ᵀ] and E[x1⊗x2⊗x3]; departure: we average over every ordered pair /
triple of distinct word positions (the estimators of Anandkumar et al. §3.1), which has the
same expectation, is symmetric by construction (so Sym_D / SymT_D noise fits it; spec §10 T5
allows symmetrising) and uses all the words. Each document's contribution is a non-negative
tensor of Frobenius norm ≤ 1, so replacing one document moves either moment by at most
√2/N in Frobenius norm — the paper's sensitivity Δ2 = Δ3 = √2/N.

**Spherical mixture of Gaussians (MOG).** x = μ_h + z, z ~ N(0, σ² I), rows scaled so that
‖x‖₂ ≤ 1. With m = E[x]: M2 = E[xxᵀ] − σ² I and
M3 = E[x⊗x⊗x] − σ² Σ_d (m⊗e_d⊗e_d + e_d⊗m⊗e_d + e_d⊗e_d⊗m). σ² is public, as in the paper
(which treats it as known in the sensitivity). Sensitivities (:func:`sensitivities`):
``"paper"`` — Δ2 = 1/N (a spectral-norm argument) and Δ3 = (2 + 6Dσ²)/N; ``"replace_one"`` —
the Frobenius bounds the Gaussian mechanism needs under replace-one adjacency, Δ2 = √2/N and
Δ3 = (2 + 6√D σ²)/N (spec §10 S2).

Third moments are only ever formed projected, M3(W, W, W) for a D×K whitening matrix W
(:func:`third_moment`; ``W=None`` gives the full D×D×D moment for small D), from the samples
directly: N·K³ work instead of N·D³.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.vocabulary import CAPE_MODELS
from protocols.errors import DataError, InputError

MODELS: tuple[str, ...] = CAPE_MODELS
CONVENTIONS: tuple[str, ...] = ("paper", "replace_one")
BLOCK = 1 << 16  # samples per block when summing outer products


def check_model(model: str) -> str:
    if model not in MODELS:
        raise InputError(f"model = {model!r} is unknown; use one of {', '.join(MODELS)}")
    return model


def document_words(counts: Any, what: str = "documents") -> np.ndarray:
    """Word ids of each document, shape (n, L), from word-count rows of shape (n, D).

    Raises
    ------
    DataError
        When a count is negative or not whole, or the documents do not all have the same
        length L ≥ 3.
    """
    if sp.issparse(counts):
        C = sp.csr_array(counts)
        data, indices = C.data, C.indices
        lengths = np.diff(C.indptr)
        row_sums = np.add.reduceat(data, C.indptr[:-1]) if C.nnz else np.zeros(C.shape[0])
        row_sums = np.where(lengths > 0, row_sums, 0.0)
    else:
        C = np.asarray(counts, dtype=np.float64)
        if C.ndim != 2:
            raise DataError(f"{what} must be a matrix of word counts, got shape {C.shape}")
        rows, indices = np.nonzero(C)
        data = C[rows, indices]
        row_sums = C.sum(axis=1)
        if np.any(C < 0):
            raise DataError(f"{what} hold negative counts; rows must be word counts")
    if data.size and (np.any(data < 0) or np.any(data != np.rint(data))):
        raise DataError(f"{what} hold non-integer or negative counts; rows must be word counts")
    n = C.shape[0]
    if n == 0:
        raise DataError(f"{what} hold no documents")
    L = row_sums[0]
    if np.any(row_sums != L) or L < 3:
        bad = int(np.argmax(row_sums != L)) if np.any(row_sums != L) else 0
        raise DataError(
            f"{what}: every document must have the same number L ≥ 3 of words (the single "
            f"topic model's third moment needs three); row {bad} has {row_sums[bad]:g} and "
            f"row 0 has {L:g}"
        )
    words = np.repeat(indices, data.astype(np.int64))
    return words.reshape(n, int(L))


def check_unit_ball(X: Any, what: str = "samples", bound: float = 1.0) -> np.ndarray:
    """X as a dense float array whose rows satisfy ‖x‖₂ ≤ bound, or a DataError naming the row."""
    X = np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)
    if X.ndim != 2:
        raise DataError(f"{what} must be a matrix with one sample per row, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise DataError(f"{what} hold NaN or infinite values")
    norms = np.linalg.norm(X, axis=1)
    if norms.size and norms.max() > bound * (1 + 1e-9):
        row = int(np.argmax(norms))
        raise DataError(
            f"{what}: row {row} has norm {norms[row]:.6g}, above the assumed bound "
            f"‖x‖₂ ≤ {bound:g} that the sensitivity relies on; scale the samples (e.g. divide "
            "by the largest norm) before the run"
        )
    return X


def sensitivities(model: str, n: int, dim: int, sigma2: float = 0.0,
                  convention: str = "paper") -> tuple[float, float]:
    """(Δ2, Δ3): L2 sensitivities of the second and third moments from n samples."""
    check_model(model)
    if convention not in CONVENTIONS:
        raise InputError(f"sensitivity = {convention!r} is unknown; use one of {CONVENTIONS}")
    if model == "stm":
        return math.sqrt(2.0) / n, math.sqrt(2.0) / n
    if convention == "paper":
        return 1.0 / n, (2.0 + 6.0 * dim * sigma2) / n
    return math.sqrt(2.0) / n, (2.0 + 6.0 * math.sqrt(dim) * sigma2) / n


def _cubes(Y: np.ndarray) -> np.ndarray:
    """Σ_n y_n⊗y_n⊗y_n for Y of shape (n, K), by blocks; shape (K, K, K)."""
    K = Y.shape[1]
    out = np.zeros((K, K, K))
    for start in range(0, len(Y), BLOCK):
        y = Y[start : start + BLOCK]
        out += ((y[:, :, None] * y[:, None, :]).reshape(len(y), K * K).T @ y).reshape(K, K, K)
    return out


def _outer_with(P: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Σ_n P_n ⊗ a_n for P of shape (n, K, K) and a of shape (n, K); shape (K, K, K)."""
    K = a.shape[1]
    return (P.reshape(len(P), K * K).T @ a).reshape(K, K, K)


def _sym3(X: np.ndarray) -> np.ndarray:
    """X_abc + X_acb + X_bca: the three placements of the odd index of X_abc = P_ab a_c."""
    return X + X.transpose(0, 2, 1) + X.transpose(2, 0, 1)


def second_moment(model: str, data: Any, sigma2: float = 0.0) -> np.ndarray:
    """M2 of the samples, shape (D, D) (STM: word-count rows; MOG: rows in the unit ball)."""
    check_model(model)
    if model == "stm":
        words = document_words(data)
        n, L = words.shape
        D = data.shape[1]
        counts = sp.csr_array((np.ones(words.size), words.ravel(),
                               np.arange(0, words.size + 1, L)), shape=(n, D))
        pairs = (counts.T @ counts).toarray() - np.diag(np.asarray(counts.sum(axis=0)).ravel())
        return pairs / (n * L * (L - 1))
    X = np.asarray(data, dtype=np.float64)
    return X.T @ X / len(X) - sigma2 * np.eye(X.shape[1])


def third_moment(model: str, data: Any, W: np.ndarray | None = None,
                 sigma2: float = 0.0) -> np.ndarray:
    """M3(W, W, W), shape (K, K, K); the full D×D×D moment when ``W`` is None."""
    check_model(model)
    D = data.shape[1]
    W = np.eye(D) if W is None else np.asarray(W, dtype=np.float64)
    if model == "stm":
        words = document_words(data)
        n, L = words.shape
        w = W[words]  # (n, L, K)
        K = W.shape[1]
        total = np.zeros((K, K, K))
        for start in range(0, n, BLOCK):
            wb = w[start : start + BLOCK]
            a = wb.sum(axis=1)
            P = np.einsum("npa,npb->nab", wb, wb)
            total += _cubes(a) - _sym3(_outer_with(P, a)) + 2.0 * _cubes(wb.reshape(-1, K))
        return total / (n * L * (L - 1) * (L - 2))
    X = np.asarray(data, dtype=np.float64)
    Y = X @ W
    m = Y.mean(axis=0)
    G = W.T @ W
    correction = np.einsum("ab,c->abc", G, m)
    return _cubes(Y) / len(X) - sigma2 * _sym3(correction)


def population_moments(weights: np.ndarray, means: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """M2 = Σ w_k μ_k μ_kᵀ and M3 = Σ w_k μ_k^{⊗3} for means given as rows, shape (k, D)."""
    w = np.asarray(weights, dtype=np.float64)
    mu = np.asarray(means, dtype=np.float64)
    return (mu.T * w) @ mu, np.einsum("k,ka,kb,kc->abc", w, mu, mu, mu)


def smallest_covariance_eigenvalue(X: np.ndarray) -> float:
    """σ̂², the smallest eigenvalue of the sample covariance (Hsu & Kakade's estimate)."""
    X = np.asarray(X, dtype=np.float64)
    return float(np.linalg.eigvalsh(np.cov(X, rowvar=False)).min())
