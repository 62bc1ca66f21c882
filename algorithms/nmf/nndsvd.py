"""NNDSVD: non-negative double SVD initialisation for NMF (Boutsidis & Gallopoulos, 2008).

The thesis (seed 001) initialises RRI-NMF with NNDSVD in Ch. 1 (its ref. [11]) and compares it
with the private initialisations in Ch. 2 §2.4 (digest §1.5): *nndsvd* centrally, and
*PD-SVD-based nndsvd*, where PD-SVD (Algorithm 10) gives every party V_k and Σ_k and each party
forms its rows U_k^(m) = X^(m) V_k Σ_k⁻¹.

Orientation as in the thesis: X is n×d, rows are samples, X ≈ W0 @ T0 with W0 n×k and T0 k×d.
This is also scikit-learn's orientation (X (n_samples, n_features) ≈ W H), so T0 plays the role
of scikit-learn's H and no transposition is needed at the boundary.

Method (per component j of the rank-k truncated SVD X ≈ U_k Σ_k V_kᵀ):

* j = 0 (the Perron pair of a non-negative X): W0_:0 = √σ_0 |u_0|, T0_0: = √σ_0 |v_0|.
* j ≥ 1: split u_j and v_j into positive and negative parts; with
  m₊ = ‖u₊‖‖v₊‖ and m₋ = ‖u₋‖‖v₋‖ keep the pair with the larger product (the negative pair
  on a tie, as scikit-learn does); λ = √(σ_j m); W0_:j = λ u_±/‖u_±‖, T0_j: = λ v_±/‖v_±‖.
* entries below ``eps`` are set to 0; *nndsvda* fills the zeros with mean(X), *nndsvdar* with
  |mean(X)·N(0, 1)/100| drawn from ``rng``.

So T0 depends on U only through the 2k norms ‖u₊‖, ‖u₋‖, which a row-distributed run can get
from one SecureSum of the parties' squared norms without anybody holding U:
:func:`nndsvd_topics` computes T0 from (V_k, σ_k, ‖u₊‖, ‖u₋‖), and :func:`nndsvd` calls it.

Departures, and why:

* The truncated SVD is computed exactly (LAPACK for small dense X; ARPACK ``svds`` with a fixed
  start vector for sparse or large X), where scikit-learn uses a randomized SVD. The result is a
  deterministic function of X; it equals scikit-learn's when the randomized SVD is exact.
* A part with zero norm gives a zero direction instead of 0/0 (can only happen for σ_j = 0).
* *nndsvdar* draws its fill values from a ``numpy.random.Generator`` (T0's zeros first, then
  W0's), not from scikit-learn's RandomState stream, so its random entries differ from
  scikit-learn's for any seed.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from protocols import seeds
from protocols.errors import DataError, InputError

__all__ = ["nndsvd", "nndsvd_topics", "signed_part_norms"]

Variant = Literal["nndsvd", "nndsvda", "nndsvdar"]
FloatArray = NDArray[np.float64]

_VARIANTS = ("nndsvd", "nndsvda", "nndsvdar")
_DENSE_SVD_MAX = 1000  # dense X with min(n, d) up to this uses LAPACK's full thin SVD
_START_VECTOR_SEED = 0x5EED  # fixed ARPACK start vector: nndsvd is a function of X alone


def signed_part_norms(A: ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Norms of the positive and negative parts of every column.

    Parameters
    ----------
    A : array_like of shape (m, k)
        E.g. U_k (rows: samples) or V_k.

    Returns
    -------
    pos : ndarray of shape (k,)
        ‖max(A_:j, 0)‖₂.
    neg : ndarray of shape (k,)
        ‖max(−A_:j, 0)‖₂.

    Notes
    -----
    In a row-distributed run each party computes the *squared* norms of its rows' parts; their
    sum over parties (one SecureSum of 2k numbers) gives the squares of these norms.
    """
    arr = np.asarray(A, dtype=np.float64)
    if arr.ndim != 2:
        raise InputError(f"A has {arr.ndim} dimensions; allowed: 2")
    pos = np.linalg.norm(np.maximum(arr, 0.0), axis=0)
    neg = np.linalg.norm(np.maximum(-arr, 0.0), axis=0)
    return pos, neg


def _check_variant(
    variant: str,
    fill_value: float | None,
    rng: np.random.Generator | None,
) -> None:
    if variant not in _VARIANTS:
        raise InputError(f"variant {variant!r} is not one of {_VARIANTS}")
    if variant != "nndsvd":
        if fill_value is None or not np.isfinite(fill_value) or fill_value < 0:
            raise InputError(
                f"fill_value {fill_value!r} is required by variant {variant!r}; "
                "allowed: mean(X), a finite float >= 0"
            )
    if variant == "nndsvdar" and not isinstance(rng, np.random.Generator):
        raise InputError(f"rng {rng!r}: variant 'nndsvdar' needs a numpy.random.Generator")


def _fill(
    M: FloatArray, variant: str, fill_value: float | None, rng: np.random.Generator | None
) -> None:
    if variant == "nndsvd" or fill_value is None:
        return
    zeros = M == 0
    if variant == "nndsvda" or rng is None:
        M[zeros] = fill_value
    else:
        M[zeros] = np.abs(fill_value * rng.standard_normal(int(zeros.sum())) / 100.0)


def _scales(
    sigma: FloatArray, u_pos: FloatArray, u_neg: FloatArray, v_pos: FloatArray, v_neg: FloatArray
) -> tuple[NDArray[np.bool_], FloatArray]:
    """Per component: whether the positive pair is kept, and λ_j (λ_0 = √σ_0)."""
    m_pos = u_pos * v_pos
    m_neg = u_neg * v_neg
    use_pos = m_pos > m_neg
    lam = np.sqrt(sigma * np.where(use_pos, m_pos, m_neg))
    use_pos[0] = True
    lam[0] = np.sqrt(sigma[0])
    return use_pos, lam


def _directions(A: FloatArray, use_pos: NDArray[np.bool_]) -> FloatArray:
    """Unit-norm chosen parts of the columns of A (column 0: |A_:0|)."""
    part = np.where(use_pos[None, :], np.maximum(A, 0.0), np.maximum(-A, 0.0))
    part[:, 0] = np.abs(A[:, 0])
    norms = np.linalg.norm(part, axis=0)
    safe = np.where(norms > 0, norms, 1.0)
    return np.where(norms > 0, part / safe, 0.0)


def nndsvd_topics(
    V: ArrayLike,
    sigma: ArrayLike,
    u_pos_norm: ArrayLike,
    u_neg_norm: ArrayLike,
    *,
    variant: Variant = "nndsvd",
    fill_value: float | None = None,
    rng: np.random.Generator | None = None,
    eps: float = 1e-6,
) -> FloatArray:
    """T0 of NNDSVD from the right singular vectors and the norms of U's signed parts.

    Parameters
    ----------
    V : array_like of shape (d, k)
        Right singular vectors V_k (columns), in the order of ``sigma``.
    sigma : array_like of shape (k,)
        Singular values σ_k, ≥ 0.
    u_pos_norm, u_neg_norm : array_like of shape (k,)
        ‖max(u_j, 0)‖ and ‖max(−u_j, 0)‖ for the left singular vectors u_j (entry 0 unused).
        Their signs must match V's columns (u_j = X v_j / σ_j).
    variant : {"nndsvd", "nndsvda", "nndsvdar"}
    fill_value : float, optional
        mean(X), required by *nndsvda* and *nndsvdar*.
    rng : numpy.random.Generator, optional
        Required by *nndsvdar*.
    eps : float
        Entries below eps are set to 0 (scikit-learn's default 1e-6).

    Returns
    -------
    ndarray of shape (k, d)
    """
    Va = np.asarray(V, dtype=np.float64)
    if Va.ndim != 2 or Va.shape[1] < 1:
        raise InputError(f"V has shape {Va.shape}; allowed: (d, k) with k >= 1")
    k = Va.shape[1]
    vecs = {}
    for name, value in (("sigma", sigma), ("u_pos_norm", u_pos_norm), ("u_neg_norm", u_neg_norm)):
        arr = np.asarray(value, dtype=np.float64)
        if arr.shape != (k,):
            raise InputError(f"{name} has shape {arr.shape}; allowed: ({k},)")
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise InputError(f"{name} holds a negative or non-finite entry; allowed: >= 0")
        vecs[name] = arr
    if not np.all(np.isfinite(Va)):
        raise InputError("V holds NaN or infinite entries; allowed: finite values")
    if not np.isfinite(eps) or eps < 0:
        raise InputError(f"eps {eps!r} is outside the allowed range: a finite float >= 0")
    _check_variant(variant, fill_value, rng)
    v_pos, v_neg = signed_part_norms(Va)
    use_pos, lam = _scales(vecs["sigma"], vecs["u_pos_norm"], vecs["u_neg_norm"], v_pos, v_neg)
    T0 = (_directions(Va, use_pos) * lam[None, :]).T.copy()
    T0[T0 < eps] = 0.0
    _fill(T0, variant, fill_value, rng)
    return T0


def _truncated_svd(
    X: FloatArray | sp.csr_matrix,
    k: int,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Top-k singular triplets, σ decreasing: U (n, k), σ (k,), V (d, k)."""
    n, d = X.shape
    small = min(n, d)
    if (not sp.issparse(X) and small <= _DENSE_SVD_MAX) or k >= small - 1:
        dense = X.toarray() if sp.issparse(X) else X
        U, s, Vt = np.linalg.svd(dense, full_matrices=False)
        return U[:, :k], s[:k], Vt[:k].T
    v0 = seeds.rng(_START_VECTOR_SEED, "nndsvd.start").uniform(-1.0, 1.0, size=small)
    U, s, Vt = spla.svds(X, k=k, v0=v0)
    order = np.argsort(-s, kind="stable")
    return U[:, order], s[order], Vt[order].T


def nndsvd(
    X: ArrayLike | sp.spmatrix | sp.sparray,
    n_components: int,
    *,
    variant: Variant = "nndsvd",
    rng: np.random.Generator | None = None,
    eps: float = 1e-6,
) -> tuple[FloatArray, FloatArray]:
    """NNDSVD initialisation (Boutsidis & Gallopoulos 2008) in the thesis orientation.

    Parameters
    ----------
    X : array_like of shape (n, d) or scipy.sparse matrix
        Non-negative, finite data.
    n_components : int
        k, with 1 ≤ k ≤ min(n, d).
    variant : {"nndsvd", "nndsvda", "nndsvdar"}
        Plain NNDSVD; zeros filled with mean(X); zeros filled with small random values.
    rng : numpy.random.Generator, optional
        Required by *nndsvdar*.
    eps : float
        Entries below eps are set to 0.

    Returns
    -------
    W0 : ndarray of shape (n, k)
    T0 : ndarray of shape (k, d)

    Raises
    ------
    InputError
        On a bad k, variant, eps or missing rng.
    DataError
        If X is not 2-D, finite and non-negative.
    """
    if sp.issparse(X):
        Xa: FloatArray | sp.csr_matrix = sp.csr_matrix(X, dtype=np.float64)
        data = Xa.data
    else:
        Xa = np.asarray(X, dtype=np.float64)
        data = Xa
    if Xa.ndim != 2:
        raise DataError(f"X has {Xa.ndim} dimensions; allowed: 2")
    if not np.all(np.isfinite(data)):
        raise DataError(
            "X holds NaN or infinite entries; allowed: finite values (fill "
            "unobserved entries first)"
        )
    if data.size and data.min() < 0:
        raise DataError(f"X holds a negative entry {data.min()!r}; allowed: >= 0")
    n, d = Xa.shape
    if (
        isinstance(n_components, bool)
        or not isinstance(n_components, (int, np.integer))
        or not 1 <= n_components <= min(n, d)
    ):
        raise InputError(
            f"n_components {n_components!r} is outside the allowed range: an "
            f"integer in [1, min(n, d) = {min(n, d)}]"
        )
    if not np.isfinite(eps) or eps < 0:
        raise InputError(f"eps {eps!r} is outside the allowed range: a finite float >= 0")
    mean = float(Xa.sum()) / (n * d) if variant != "nndsvd" else None
    _check_variant(variant, mean, rng)
    k = int(n_components)
    U, s, V = _truncated_svd(Xa, k)
    u_pos, u_neg = signed_part_norms(U)
    T0 = nndsvd_topics(V, s, u_pos, u_neg, variant=variant, fill_value=mean, rng=rng, eps=eps)
    v_pos, v_neg = signed_part_norms(V)
    use_pos, lam = _scales(s, u_pos, u_neg, v_pos, v_neg)
    W0 = _directions(U, use_pos) * lam[None, :]
    W0[W0 < eps] = 0.0
    _fill(W0, variant, mean, rng)
    return W0, T0
