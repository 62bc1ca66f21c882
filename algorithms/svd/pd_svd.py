"""PD-SVD: private distributed truncated SVD (thesis seed 001, §2.3, Algorithm 10).

Party m holds the row block X^(m) (n_m×d) of X = vstack_m X^(m). All parties learn V̂ ≈ V_k
(d×k, the top-k right singular vectors); U_k^(m) stays with party m. Party m's program:

    1: S^(m) ← X^(m)ᵀ X^(m)              (applied as X^(m)ᵀ(X^(m) v), never formed)
    2: V̂^(m) ← N(0, 1/(Md))^{d×k}        (standard deviation 1/√(Md), digest §7.1 item 20)
    3: V̂ ← SecureSum(V̂^(m))              (Σ_m has variance 1/d: Algorithm 9's start)
    4: for t = 1..τ:
    5:   for i = 1..k:
    6:     V̂_:i ← NormedSecureSum(S^(m) V̂_:i)
    8:   V̂ ← Orthonormalize(V̂)            (modified Gram–Schmidt, identical at every party)

Variants (``variant``):

``normed``
    Step 6 as printed. The k NormedSecureSums of one iteration run as one batched call (k
    independent instances, the rounds of one call; digest §6 item 4 "the k columns may run in
    parallel"), so an iteration costs 11 + 2L + 4t rounds. Parties see only the directions of
    S V̂_:i, so the spectrum stays hidden (FACT: the column norms σ̂_i = ‖S V̂_:i‖ are not
    needed, as orthonormalisation discards them).
``secure_sum``
    Step 6 with SecureSum: every party sees S V̂ and with it σ̂_i = ‖S V̂_:i‖, estimates of the
    eigenvalues σ_i² of S (not of σ_i; digest §7.1 item 21). They are recorded as the declared
    output ``eigenvalue_estimates``.
``sigma_revealing``
    The prior-art baseline ([112], [113]): one SecureSum of S^(m) = X^(m)ᵀX^(m) (d² elements)
    reveals S = XᵀX, hence Σ and V, and every party then runs Algorithm 9 locally.

Every variant ends with one SecureSum of the k values ‖X^(m) V̂_:i‖², whose sum is σ_i², so
that each party can form U_k^(m) = X^(m) V̂ Σ_k⁻¹ (PD-NMF's ``pd_svd`` initialisation). This
reveals Σ_k once, at the end; it is declared as the output ``sigma`` (digest §7.1 item 21
recommends declaring that leak; Σ-hiding ends there).

Equivalence (checkable claim C7): from the same V̂ after step 3, PD-SVD's iterates equal
centralized block power iteration (:func:`algorithms.svd.power_iteration.block_power_iteration`)
up to fixed-point error: NormedSecureSum returns the direction at 2^−f_out, and MGS does not
depend on the columns' scale.

NormedSecureSum encodes each party's S^(m) V̂_:i with f = 16 fractional bits and refuses
|x| ≥ 2^15 (its declared input range). ``scale`` multiplies every party's input by a public
constant before encoding; the direction does not change, so scale the data's Gram products
into range with it (e.g. 1/max row norm²).

Communication (declared): the init SecureSum of d·k elements; per iteration one batched
NormedSecureSum (``normed``: per party (M − 1)·k·(d + N) online elements, N of
:func:`protocols.normed_secure_sum.declared_cost`, plus the dealer's offline material) or one
SecureSum of d·k elements (``secure_sum``); ``sigma_revealing``: one SecureSum of d² elements.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.svd.power_iteration import gram_product, left_factor, orthonormalize
from algorithms.vocabulary import PD_SVD_VARIANTS
from protocols.context import PartyContext
from protocols.effects import Output
from protocols.errors import InputError
from protocols.normed_secure_sum import NssParams, normed_secure_sum
from protocols.secure_sum import secure_sum

VARIANTS: tuple[str, ...] = PD_SVD_VARIANTS


@dataclass
class PdSvdModel:
    """What one party ends with.

    Attributes
    ----------
    V : ndarray, shape (d, k)
        The public right singular vectors (identical at every party).
    sigma : ndarray, shape (k,)
        Σ_k from the final SecureSum of ‖X^(m) V̂_:i‖² (declared output).
    U : ndarray, shape (n_m, k)
        This party's U_k^(m) = X^(m) V̂ Σ_k⁻¹ (never sent).
    V_start : ndarray, shape (d, k)
        V̂ after step 3 (the common start of the centralized reference).
    history : list of ndarray
        V̂ after every iteration.
    eigenvalue_estimates : list of ndarray
        ``secure_sum``: σ̂_i = ‖S V̂_:i‖ of every iteration (what the variant reveals).
    """

    V: np.ndarray
    sigma: np.ndarray
    U: np.ndarray
    V_start: np.ndarray
    history: list[np.ndarray] = field(default_factory=list)
    eigenvalue_estimates: list[np.ndarray] = field(default_factory=list)


def check_variant(variant: str) -> str:
    if variant not in VARIANTS:
        raise InputError(f"PD-SVD variant {variant!r} is unknown; use one of "
                         f"{', '.join(VARIANTS)}")
    return variant


def pd_svd(
    ctx: PartyContext,
    X: np.ndarray | sp.spmatrix,
    k: int,
    iterations: int,
    *,
    variant: str = "normed",
    nss_params: NssParams | None = None,
    scale: float = 1.0,
) -> Generator[Any, Any, PdSvdModel]:
    """Party program of PD-SVD (Algorithm 10) on this party's rows ``X`` (n_m×d).

    Parameters
    ----------
    ctx : PartyContext
        The party's context; ``normed`` needs a dealer in the run
        (:func:`protocols.normed_secure_sum.nss_dealer` with ``iterations`` calls of (k, d)).
    X : ndarray or sparse matrix, shape (n_m, d)
        This party's rows.
    k : int
        Rank, 1 ≤ k ≤ d.
    iterations : int
        τ, power iterations.
    variant : {"normed", "secure_sum", "sigma_revealing"}
    nss_params : NssParams, optional
        NormedSecureSum parameters (``normed``).
    scale : float
        Public factor applied to NormedSecureSum inputs (the direction is unchanged).
    """
    check_variant(variant)
    d = X.shape[1]
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= d:
        raise InputError(f"PD-SVD k = {k!r} must be an integer with 1 ≤ k ≤ d = {d}")
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"PD-SVD iterations = {iterations!r} must be a positive integer")
    if not (math.isfinite(scale) and scale > 0):
        raise InputError(f"PD-SVD scale = {scale!r} must be a positive finite number")
    M = ctx.n_parties
    with ctx.in_phase("init"):
        local = ctx.rng.normal(0.0, 1.0 / math.sqrt(M * d), size=(d, k))
        V = yield from secure_sum(ctx, local, label="V_init")
    V_start = np.array(V)
    history: list[np.ndarray] = []
    estimates: list[np.ndarray] = []
    if variant == "sigma_revealing":
        with ctx.in_phase("share"):
            dense = X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)
            S = yield from secure_sum(ctx, dense.T @ dense, label="gram")
        for _ in range(iterations):
            V = orthonormalize(S @ V)
            history.append(V)
    else:
        with ctx.in_phase("iter"):
            for t in range(iterations):
                product = gram_product(X, V)
                if variant == "normed":
                    directions = yield from normed_secure_sum(
                        ctx, (product * scale).T, params=nss_params, instance=t,
                        label="S_m V")
                    V = orthonormalize(directions.T)
                else:
                    total = yield from secure_sum(ctx, product, label="S_m V")
                    estimates.append(np.linalg.norm(total, axis=0))
                    yield Output("eigenvalue_estimates", estimates[-1])
                    V = orthonormalize(total)
                history.append(V)
    with ctx.in_phase("sigma"):
        XV = np.asarray(X @ V)
        sq = yield from secure_sum(ctx, np.sum(XV * XV, axis=0), label="column_norms_sq")
    sigma = np.sqrt(np.maximum(sq, 0.0))
    yield Output("V", V)
    yield Output("sigma", sigma)
    return PdSvdModel(V=V, sigma=sigma, U=left_factor(X, V, sigma), V_start=V_start,
                      history=history, eigenvalue_estimates=estimates)
