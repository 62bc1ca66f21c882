"""capePCA: distributed DP principal subspace estimation with correlated noise (seed 003,
Algorithm 1, §4; spec §4), and the Analyze Gauss baselines.

Site s holds N_s samples (rows, ‖x‖₂ ≤ 1, centred as a non-private preprocessing, as in the
paper) and their second-moment matrix A_s = X_sᵀX_s/N_s — the paper's (1/N_s) X_s X_sᵀ with
samples as columns. Analyze Gauss (AG, Dwork et al. 2014) releases A + Sym_D(τ) with
τ = Δ·c(ε, δ), Δ = 1/N, and keeps the top-K eigenvectors.

capePCA runs CAPE (:mod:`protocols.correlated_noise`) on the D(D+1)/2 free entries of A_s: the
noise is symmetric (spec §4.2 [J]) and the aggregator's Â = (1/S) Σ_s (Â_s − F_s) =
A + (1/S) Σ_s G_s has i.i.d. free-entry noise of variance τ_s²/S² = τ_pool²: AG on the pooled
data. The aggregator releases V_K, the top-K eigenvectors of Â (:func:`top_eigenvectors`).
With unequal sample sizes the generalized plan (μ_s = N_s/N, τ_pool = c(ε, δ)/N) is used.

Baselines (§6.1): pooled non-private PCA; pooled AG; the conventional scheme (each site adds
AG noise for its own N_s, the aggregator averages;
:func:`protocols.cape_noise_plans.conventional_plan`); local AG (one site alone). Utility is
the captured energy q(V) = tr(Vᵀ A_true V) (:func:`captured_energy`).

Sensitivity (spec §10 S1): ``"paper"`` takes Δ = 1/N_s (Analyze Gauss's add/remove-one
bound ‖xxᵀ‖_F ≤ 1); ``"replace_one"`` takes √2/N_s, the Frobenius bound under the paper's own
replace-one adjacency (‖xxᵀ − yyᵀ‖_F ≤ √2 for unit-ball rows).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Sequence
from typing import Any

import numpy as np

from algorithms.cape.symmetric import matrix_size, pack_matrix, sym_matrix_noise, unpack_matrix
from algorithms.vocabulary import CAPE_PCA_ORDERS
from protocols.cape_noise_plans import NoisePlan, cape_plan, conventional_plan, generalized_plan
from protocols.context import PartyContext
from protocols.correlated_noise import (
    cape_aggregator,
    cape_noise_generator,
    cape_site,
    check_privacy,
    gaussian_noise_scale,
)
from protocols.effects import Output
from protocols.errors import InputError

CONVENTIONS: tuple[str, ...] = ("paper", "replace_one")
ORDERS: tuple[str, ...] = CAPE_PCA_ORDERS


def sensitivity(n: int, convention: str = "paper") -> float:
    """Δ of A = XᵀX/n for unit-ball rows: 1/n (``paper``) or √2/n (``replace_one``)."""
    if convention not in CONVENTIONS:
        raise InputError(f"sensitivity = {convention!r} is unknown; use one of {CONVENTIONS}")
    return (1.0 if convention == "paper" else math.sqrt(2.0)) / n


def second_moment(X: np.ndarray) -> np.ndarray:
    """A = XᵀX/N for samples as rows, shape (D, D)."""
    X = np.asarray(X, dtype=np.float64)
    return X.T @ X / len(X)


def check_rank(k: int, dim: int) -> int:
    """1 ≤ k ≤ D, or an InputError."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= dim:
        raise InputError(f"k = {k!r} must be an integer in [1, D = {dim}]")
    return int(k)


def top_eigenvectors(A: np.ndarray, k: int, order: str = "eigenvalue") -> np.ndarray:
    """The k leading eigenvectors of symmetric A, shape (D, k).

    ``order="eigenvalue"`` sorts by eigenvalue (descending); ``"abs"`` by magnitude, as the
    authors' SVD-based code does (spec §4.2 [J]).
    """
    if order not in ORDERS:
        raise InputError(f"order = {order!r} is unknown; use one of {ORDERS}")
    values, vectors = np.linalg.eigh(np.asarray(A, dtype=np.float64))
    keys = -values if order == "eigenvalue" else -np.abs(values)
    return vectors[:, np.argsort(keys, kind="stable")[:k]]


def captured_energy(V: np.ndarray, A: np.ndarray) -> float:
    """q(V) = tr(Vᵀ A V) (§6.1)."""
    return float(np.trace(V.T @ A @ V))


def analyze_gauss(X: np.ndarray, k: int, epsilon: float, delta: float,
                  rng: np.random.Generator, convention: str = "paper",
                  order: str = "eigenvalue") -> np.ndarray:
    """AG on the samples ``X``: top-k eigenvectors of A + Sym_D(Δ·c(ε, δ)), shape (D, k)."""
    tau = gaussian_noise_scale(sensitivity(len(X), convention), epsilon, delta)
    A = second_moment(X)
    return top_eigenvectors(A + sym_matrix_noise(rng, A.shape[0], tau), k, order)


def pca_plan(sizes: Sequence[int], epsilon: float, delta: float, scheme: str = "cape",
             convention: str = "paper", use_aggregator_noise: bool = True) -> NoisePlan:
    """The CAPE (or conventional) noise plan of capePCA for sites with ``sizes`` samples."""
    epsilon, delta = check_privacy(epsilon, delta)
    n = np.asarray(sizes, dtype=np.int64)
    taus = np.array([gaussian_noise_scale(sensitivity(int(m), convention), epsilon, delta)
                     for m in n])
    weights = n / n.sum()
    if scheme == "conventional":
        return conventional_plan(taus, weights)
    if scheme != "cape":
        raise InputError(f"scheme = {scheme!r} is unknown; use cape or conventional")
    if np.all(n == n[0]):
        return cape_plan(float(taus[0]), len(n), use_aggregator_noise)
    pool = gaussian_noise_scale(sensitivity(int(n.sum()), convention), epsilon, delta)
    return generalized_plan(taus, weights, pool, use_aggregator_noise)


def cape_pca_site(ctx: PartyContext, X: Any, plan: NoisePlan,
                  noise: str = "float") -> Generator[Any, Any, None]:
    """Site s of capePCA: release the free entries of A_s with CAPE noise (steps 1–3)."""
    yield from cape_site(ctx, pack_matrix(second_moment(X)), plan, noise=noise, label="A_s")


def cape_pca_aggregator(ctx: PartyContext, plan: NoisePlan, dim: int, k: int,
                        noise: str = "float",
                        order: str = "eigenvalue") -> Generator[Any, Any, np.ndarray]:
    """The aggregator of capePCA: Â from the releases (step 4), V_K (step 5), shape (D, k)."""
    packed = yield from cape_aggregator(ctx, plan, matrix_size(dim), noise=noise)
    V = top_eigenvectors(unpack_matrix(packed, dim), k, order)
    yield Output("V", V)
    return V


def cape_pca_noise_generator(ctx: PartyContext, plan: NoisePlan, dim: int,
                             noise: str = "float") -> Generator[Any, Any, None]:
    """The NG of capePCA: zero-sum symmetric noise E_s for every site (step 1)."""
    yield from cape_noise_generator(ctx, plan, matrix_size(dim), noise=noise)
