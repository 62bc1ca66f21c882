"""DPdisPCA: distributed DP PCA from noisy partial square roots (Imtiaz & Sarwate, ICASSP 2018),
the "existing" distributed baseline of seed 003 (§6.1, Figure 2; spec ``cape.md`` §4.3).

Site s holds N_s unit-ball rows and A_s = X_sᵀX_s/N_s. It releases Analyze Gauss's
Â_s = A_s + Sym_D(τ_s) — τ_s = Δ_s·c(ε, δ), Δ_s = 1/N_s, the same noise as the conventional
scheme's site — but only through its rank-R *partial square root*

    Â_s ≈ U_{s,R} Σ_{s,R} U_{s,R}ᵀ,    P_s = U_{s,R} Σ_{s,R}^{1/2} ∈ R^{D×R},

which it sends to the aggregator (D·R numbers against the D(D + 1)/2 free entries of the
conventional scheme's Â_s). The aggregator forms Â = (1/S) Σ_s P_s P_sᵀ and releases its top-K
eigenvectors. The experiments use R = 2K (spec §4.3 [C]).

Where it departs from the text: Â_s is symmetric but indefinite (the noise has negative
eigenvalues), so "its rank-R SVD" is taken as the authors' code takes it — the R largest
singular values, i.e. the eigenpairs of largest |λ|, with Σ^{1/2} = |λ|^{1/2}
(:func:`partial_square_root`). Privacy: P_s is a function of the DP release Â_s alone, so
each site is (ε, δ)-DP by post-processing, as in the conventional scheme.

The site's noise is drawn as CAPE's is (:func:`protocols.correlated_noise.noise_rng`): from
the party's private stream of its ``dpdispca`` call.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from algorithms.cape.pca import second_moment, top_eigenvectors
from algorithms.cape.symmetric import matrix_size, unpack_matrix
from protocols.context import PartyContext
from protocols.correlated_noise import AGGREGATOR, draw_noise, noise_rng, role_id
from protocols.effects import Input, Output, Recv, Send
from protocols.errors import InputError

PROTOCOL = "dpdispca"
STEP = "partial_root"


def check_partial_rank(rank: int, dim: int) -> int:
    """1 ≤ R ≤ D, or an InputError."""
    if isinstance(rank, bool) or not isinstance(rank, int | np.integer) or not 1 <= rank <= dim:
        raise InputError(f"DPdisPCA's rank R = {rank!r} must be an integer in [1, D = {dim}]")
    return int(rank)


def partial_square_root(A: np.ndarray, rank: int) -> np.ndarray:
    """P = U_R |Λ_R|^{1/2}, shape (D, R): the R eigenpairs of symmetric ``A`` of largest |λ|."""
    values, vectors = np.linalg.eigh(np.asarray(A, dtype=np.float64))
    top = np.argsort(-np.abs(values), kind="stable")[:rank]
    return vectors[:, top] * np.sqrt(np.abs(values[top]))


def combine(roots: list[np.ndarray]) -> np.ndarray:
    """Â = (1/S) Σ_s P_s P_sᵀ, shape (D, D)."""
    return sum(P @ P.T for P in roots) / len(roots)


def dpdispca_site(ctx: PartyContext, X: Any, tau: float, rank: int,
                  noise: str = "float") -> Generator[Any, Any, None]:
    """Site s: send P_s, the rank-R partial square root of A_s + Sym_D(τ), to the aggregator."""
    A = second_moment(X)
    D = A.shape[0]
    check_partial_rank(rank, D)
    call = ctx.new_call(PROTOCOL)
    yield Input("A_s", A, call)
    noise_values = draw_noise(noise_rng(ctx, call), float(tau), matrix_size(D), noise, ctx.fixed)
    P = partial_square_root(A + unpack_matrix(noise_values, D), rank)
    yield Send(role_id(ctx, AGGREGATOR), P, call, STEP)


def dpdispca_aggregator(ctx: PartyContext, n_sites: int, dim: int, k: int,
                        order: str = "eigenvalue") -> Generator[Any, Any, np.ndarray]:
    """The aggregator: V_K, the top-K eigenvectors of (1/S) Σ_s P_s P_sᵀ, shape (D, k)."""
    call = ctx.new_call(PROTOCOL)
    roots = []
    for s in range(n_sites):
        P = np.asarray((yield Recv(s, call, STEP)), dtype=np.float64)
        if P.ndim != 2 or P.shape[0] != dim:
            raise InputError(f"DPdisPCA: site {s} sent a partial root of shape {P.shape}; "
                             f"expected ({dim}, R)")
        roots.append(P)
    V = top_eigenvectors(combine(roots), k, order)
    yield Output("V", V)
    return V
