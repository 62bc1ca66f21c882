"""Symmetric matrices and order-3 tensors: their free entries, Gaussian noise, multilinear maps.

Seed 003 adds noise to symmetric objects only (§2, §4, §5; spec §1.4–§1.5):

* **Sym_D(σ)** — a D×D symmetric Gaussian matrix: the D(D+1)/2 entries on and above the
  diagonal are i.i.d. N(0, σ²) and mirrored (Analyze Gauss, Dwork et al. 2014).
* **SymT_D(σ)** — a D×D×D symmetric tensor: one N(0, σ²) value per multiset {i ≤ j ≤ k},
  C(D+2, 3) = D(D+1)(D+2)/6 of them, written into every permutation of (i, j, k). The paper
  describes it as "a D_sym-dimensional vector b formed into a symmetric tensor"; it is not the
  outer product b⊗b⊗b.

Because the noise lives on the free entries, a CAPE release of a symmetric statistic carries
just those entries (:func:`pack_matrix`, :func:`pack_tensor`) and the protocol adds i.i.d.
noise to each; :func:`unpack_matrix` / :func:`unpack_tensor` rebuild the full object. Free
entries are listed in row-major order of (i ≤ j) and (i ≤ j ≤ k).

:func:`multilinear` is T(V, V, V)_{abc} = Σ_{ijk} T_{ijk} V_{ia} V_{jb} V_{kc}, computed as three
mode products (D³K + D²K² + DK³ operations rather than D³K³).
"""

from __future__ import annotations

import numpy as np

from protocols.errors import InputError


def matrix_size(dim: int) -> int:
    """D(D+1)/2, the number of free entries of a symmetric D×D matrix."""
    return dim * (dim + 1) // 2


def tensor_size(dim: int) -> int:
    """C(D+2, 3) = D(D+1)(D+2)/6, the number of free entries of a symmetric D×D×D tensor."""
    return dim * (dim + 1) * (dim + 2) // 6


def tensor_indices(dim: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The multisets i ≤ j ≤ k in row-major order, as three index arrays of length C(D+2, 3)."""
    i, j, k = np.meshgrid(np.arange(dim), np.arange(dim), np.arange(dim), indexing="ij")
    keep = (i <= j) & (j <= k)
    return i[keep], j[keep], k[keep]


def pack_matrix(A: np.ndarray) -> np.ndarray:
    """The free entries (i ≤ j) of a symmetric matrix, shape (D(D+1)/2,)."""
    A = np.asarray(A, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise InputError(f"a symmetric matrix must be square, got shape {A.shape}")
    return A[np.triu_indices(A.shape[0])]


def unpack_matrix(values: np.ndarray, dim: int) -> np.ndarray:
    """The symmetric D×D matrix with free entries ``values`` (shape (D(D+1)/2,))."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size != matrix_size(dim):
        raise InputError(f"{values.size} values do not fill a symmetric {dim}×{dim} matrix")
    out = np.zeros((dim, dim))
    rows, cols = np.triu_indices(dim)
    out[rows, cols] = values
    out[cols, rows] = values
    return out


def pack_tensor(T: np.ndarray) -> np.ndarray:
    """The free entries (i ≤ j ≤ k) of a symmetric order-3 tensor, shape (C(D+2,3),)."""
    T = np.asarray(T, dtype=np.float64)
    if T.ndim != 3 or len(set(T.shape)) != 1:
        raise InputError(f"a symmetric tensor must be D×D×D, got shape {T.shape}")
    return T[tensor_indices(T.shape[0])]


def unpack_tensor(values: np.ndarray, dim: int) -> np.ndarray:
    """The symmetric D×D×D tensor with free entries ``values`` in every permutation."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size != tensor_size(dim):
        raise InputError(f"{values.size} values do not fill a symmetric {dim}×{dim}×{dim} tensor")
    i, j, k = tensor_indices(dim)
    out = np.zeros((dim, dim, dim))
    for a, b, c in ((i, j, k), (i, k, j), (j, i, k), (j, k, i), (k, i, j), (k, j, i)):
        out[a, b, c] = values
    return out


def symmetrize_tensor(T: np.ndarray) -> np.ndarray:
    """The average of T over the six permutations of its indices."""
    T = np.asarray(T, dtype=np.float64)
    return (T + T.transpose(0, 2, 1) + T.transpose(1, 0, 2) + T.transpose(1, 2, 0)
            + T.transpose(2, 0, 1) + T.transpose(2, 1, 0)) / 6.0


def sym_matrix_noise(rng: np.random.Generator, dim: int, sigma: float) -> np.ndarray:
    """Sym_D(σ): a symmetric Gaussian D×D matrix (Analyze Gauss noise)."""
    return unpack_matrix(rng.normal(0.0, sigma, matrix_size(dim)), dim)


def sym_tensor_noise(rng: np.random.Generator, dim: int, sigma: float) -> np.ndarray:
    """SymT_D(σ): a symmetric Gaussian D×D×D tensor (AGN noise)."""
    return unpack_tensor(rng.normal(0.0, sigma, tensor_size(dim)), dim)


def multilinear(T: np.ndarray, V: np.ndarray) -> np.ndarray:
    """T(V, V, V) for T of shape (D, D, D) and V of shape (D, K); returns shape (K, K, K)."""
    T = np.asarray(T, dtype=np.float64)
    V = np.asarray(V, dtype=np.float64)
    if V.ndim == 1:
        V = V[:, None]
    d, k = V.shape
    if T.shape != (d, d, d):
        raise InputError(f"tensor of shape {T.shape} does not match V of shape {V.shape}")
    first = (T.reshape(d * d, d) @ V).reshape(d, d, k)  # Σ_k T_ijk V_kc
    second = np.einsum("ijc,jb->ibc", first, V)
    return np.einsum("ibc,ia->abc", second, V)


def contract_vector(T: np.ndarray, u: np.ndarray) -> np.ndarray:
    """T(I, u, u)_a = Σ_{jk} T_ajk u_j u_k for T of shape (K, K, K); u of shape (K,) or (K, R).

    With R columns, returns shape (K, R): one contraction per column (restarts at once).
    """
    if u.ndim == 1:
        return np.einsum("ajk,j,k->a", T, u, u)
    return np.einsum("ajk,jr,kr->ar", T, u, u)


def projected_noise_cov(W: np.ndarray, chunk: int = 65_536) -> np.ndarray:
    """Cov of pack_tensor(multilinear(unpack_tensor(z, D), W)) for z ~ N(0, I): the law of
    capeAGN's stage-2 site noise (spec §6.2 step 3) in the K-space free entries, per unit σ².

    The map z ↦ pack(T(W, W, W)) is linear: the free entry m = (i ≤ j ≤ k) of z fills every
    distinct permutation of (i, j, k), so its column is, at the packed entry (a ≤ b ≤ c),
    Σ over those permutations (i', j', k') of W_i'a W_j'b W_k'c — the sum over all six
    permutations divided by the size of the multiset's stabiliser (1, 2 or 6). The covariance
    is P Pᵀ, accumulated over chunks of columns (C(D+2, 3) of them).

    Parameters
    ----------
    W : ndarray of shape (D, K)

    Returns
    -------
    ndarray of shape (C(K+2, 3), C(K+2, 3))
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2:
        raise InputError(f"W must be D × K, got shape {W.shape}")
    D, K = W.shape
    a, b, c = tensor_indices(K)
    i_all, j_all, k_all = tensor_indices(D)
    cov = np.zeros((a.size, a.size))
    for start in range(0, i_all.size, chunk):
        i, j, k = (x[start:start + chunk] for x in (i_all, j_all, k_all))
        stab = np.where((i == j) & (j == k), 6.0, np.where((i == j) | (j == k), 2.0, 1.0))
        cols = np.zeros((i.size, a.size))
        for p, q, r in ((i, j, k), (i, k, j), (j, i, k), (j, k, i), (k, i, j), (k, j, i)):
            cols += W[p][:, a] * W[q][:, b] * W[r][:, c]
        cols /= stab[:, None]
        cov += cols.T @ cols
    return cov
