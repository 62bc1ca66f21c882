"""PD-NMF: private distributed RRI-NMF (thesis seed 001, §2.2, Algorithms 7 and 8).

M parties hold row blocks X^(m) (n_m×d) of X = vstack_m X^(m). Every party ends with the same
topics T (k×d); party m's weights W^(m) (n_m×k) never leave it.

``pd_nmf_iter`` — PD-NMF-Iter (Algorithm 7), party m's program
    One sweep is the centralized RRI-NMF sweep of :mod:`algorithms.nmf.rri`, step for step:
    for t = 1..k the party computes its W-side statistics and updates its own column W^(m)_:t
    (steps 3–4 of Algorithm 7), forms its share of the two row sums the T update needs —
    W^(m)ᵀ_:t R^(m)_t and ‖W^(m)_:t‖² — and puts them through **one** SecureSum call of d + 1
    elements (steps 5–6 batched, digest §7.1 item 12), then updates T_t: from the sums alone
    (step 7, with the curvature test on SumWW + ℓ^T_2, item 9).

    Departures from the printed Algorithm 7, all local, so that Theorem 2 holds exactly
    (digest §7.1 items 7, 8, 10, 11): t runs over 1..k (not 0..k); the W update has the
    Corollary 1 branch for non-positive curvature; in the ``topic`` form the s_t rescaling of
    W_:t and the projection of W's rows onto Δ_k at the end of a sweep are added (Algorithm 2
    performs them; they need only the party's own rows and the public T); W^(m) starts at 0.
    With missing ratings (NaN) the observed-entries loss of :mod:`algorithms.nmf.rri` applies
    and the statistic is a numerator and a per-column denominator: 2d elements per call.

    **Theorem 2** (PD-NMF-Iter from T0 equals centralized RRI-NMF from T0) then holds up to
    the fixed-point encoding of the summed statistics: each of the M parties' statistics is
    rounded to a multiple of 2^−f, so a sum is within M·2^−(f+1) of the real sum, and the
    topics differ from the centralized ones by the propagation of these errors through the
    sweeps. Measured on a synthetic corpus (n = 120 documents, d = 40 words, k = 4, 20 sweeps,
    M = 3 with rows split 20/60/40 and M = 7 equal; both SecureSum variants give identical
    results), the largest difference of T relative to max|T| is:

    ======  ===========  ===========
    f       topic form   plain form
    ======  ===========  ===========
    20      1.8e−7       3.2e−7
    24      6.8e−9       1.8e−8
    32      3.4e−11      6.5e−11
    ======  ===========  ===========

    so the default f = 24 keeps T within 1e−6 of the centralized run on such data (the test
    holds it to that bound for M ∈ {2, 3, 7}, both forms and both variants). The difference
    grows with the problem: on the 20,000 × 2,000 corpus of ``benchmarks/pd_nmf.py`` (k = 20,
    30 sweeps, M = 4) it is 1.2e−7 (topic) and 6.0e−6 (plain) at f = 24, and 2.6e−10 and
    5.9e−9 at f = 32 — choose f = 32 for large plain-form runs when the data's sums allow it
    (the range shrinks to 2^28/M).

    The encoding's precision is absolute (2^−f), so what matters is the scale of the summed
    statistics. The plain form therefore balances ‖W_:t‖ = ‖T_t:‖ after each T update
    (:mod:`algorithms.nmf.rri`, departure 9; WT is unchanged) — without it the split of WT
    drifted and one topic's ‖W_:t‖² shrank to 0.03, costing 7.5e−5 at f = 24. The first T
    update still follows the start's scale: from an unnormalised U[0,1] T0 with d = 500
    columns the first ‖W_:t‖² is tiny and T ended 1.3e−4 from the centralized run after ten
    sweeps, against 1.4e−7 from the same start with rows normalised to sum 1 (the identical
    WT). The scenarios' ``random`` initialisation normalises T0's rows; otherwise raise
    ``frac_bits``.

``pd_nmf_init`` — PD-NMF-Init (Algorithm 8), party m's program
    1–2. a local model: NNDSVD of X^(m) with k_m = min(k, n_m, d) topics, then local RRI-NMF
         until the relative change of the objective is below ``local_tol`` (Theorem 1 assumes
         convergence, item 14);
    3–5. T̂^(m) = diag(v) T^(m) with v_j² = ‖W^(m)_:j‖² + ℓ^T_2 (Theorem 1 with Corollary 3,
         summed over the party's n_m rows, item 13), or Corollary 4's ∞-norm weights with
         missing ratings;
    6–8. T0 = SecureSum((1/M)·U[0,1]^{k×d}) with rows normalised to sum to 1;
    9.   T_init = PD-NMF-Iter on the "documents" T̂^(m) from T0, in the plain form (Eq. 2.4,
         as :func:`algorithms.nmf.wr.wr_nmf`: projecting Y's rows onto the simplex would
         discard the weights Theorem 1 adds), then every row of T divided by its sum.
         Each party starts step 9 with its W^(m) fitted to T0 by local NNLS — the alternative
         that digest §7.1 item 11 allows — rather than W = 0. Step 7 averages M uniform
         draws, so T0's rows are nearly alike (entries 1/2 ± 1/√(12M)); from W = 0 the first
         topic then absorbs the common mass and later topics fall to the zero fallback and
         die. On the 9-party topic corpus of ``scenarios/pd_nmf_init_comparison.toml``
         WR-NMF recovered all planted topics in 2 of 6 trials from W = 0 and in 8 of 10 from
         the NNLS start. PD-NMF-Iter on X keeps W = 0 (its T0 is the merged model).
    This is WR-NMF (Algorithm 6) computed through SecureSum: the centralized
    :func:`~algorithms.nmf.wr.wr_nmf` on the same local models from the same T0 with
    ``w_start="nnls"`` is its reference.

Other initialisations of PD-NMF (the §2.4 baselines) give every party the same public T0:
``random`` (U[0,1] entries from the shared scenario seed; ``random_2x`` runs twice the
sweeps), ``nndsvd`` (centralized on the pooled X: a non-private baseline), or a given T0.

DP-PD-NMF (thesis §3.3, Fig. 3.7c) is ``pd_nmf_iter(..., dp=DpSettings(...))``: each party clips
its rows' T statistics and adds its own N(0, σ²/M) before every SecureSum
(:mod:`algorithms.nmf.dp_pd_nmf`, where the sensitivity is derived).

Communication per party per sweep: k(M − 1)(d + 1) elements sent with the ``prg`` SecureSum
and 2k(M − 1)(d + 1) with ``explicit`` (:func:`declared_sweep_elements`), independent of n.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from algorithms.nmf.dp_pd_nmf import DpSettings, clipped_statistic, noisy_statistic
from algorithms.nmf.nndsvd import nndsvd, nndsvd_topics
from algorithms.nmf.objective import objective, regularizer
from algorithms.nmf.row_blocks import as_row_block, observed_mask, zero_filled
from algorithms.nmf.rri import fit_weights, rri_nmf
from algorithms.nmf.rri_steps import (
    RRIParams,
    end_of_sweep,
    initial_residual,
    next_residual,
    t_side_statistics,
    t_statistic_length,
    update_t_row,
    update_w_column,
    w_side_statistics,
)
from algorithms.nmf.wr import summarize_local_model, weighted_representatives
from algorithms.svd.pd_svd import check_variant as check_svd_variant
from algorithms.svd.pd_svd import pd_svd
from algorithms.vocabulary import PD_NMF_INITS
from protocols.context import PartyContext
from protocols.effects import Output
from protocols.errors import InputError
from protocols.normed_secure_sum import NssParams
from protocols.secagg import Config as SecAggConfig
from protocols.secagg import secagg, secagg_aggregator
from protocols.secure_sum import check_variant, declared_cost, secure_sum

INITS = PD_NMF_INITS


@dataclass
class PartyModel:
    """What PD-NMF leaves at party m.

    Attributes
    ----------
    W : ndarray of shape (n_m, k)
        The party's private weights.
    T : ndarray of shape (k, d)
        The global topics (identical at every party).
    local_objective : list of float
        After each sweep, the party's part of the objective, ½‖X^(m) − W^(m)T‖² plus its W
        regularisers — a local evaluation for reports (no communication).
    t_regularizer : list of float
        After each sweep, the T regulariser ℓ^T_1‖T‖_1 + ½ℓ^T_2‖T‖² (T is public).
    T_start : ndarray of shape (k, d)
        The public topics PD-NMF-Iter started from (T0, or T_init after PD-NMF-Init).
    """

    W: np.ndarray
    T: np.ndarray
    T_start: np.ndarray | None = None
    local_objective: list[float] = field(default_factory=list)
    t_regularizer: list[float] = field(default_factory=list)


def declared_sweep_elements(variant: str, n_parties: int, n_features: int, k: int,
                            loss: str = "full") -> int:
    """Elements one party sends per PD-NMF-Iter sweep: k SecureSums of the T statistic."""
    length = t_statistic_length(n_features, loss)  # type: ignore[arg-type]
    return k * declared_cost(variant, n_parties, length).elements_sent


def total_objective(models: list[PartyModel]) -> list[float]:
    """E(W, T) after each sweep, summed from the parties' local parts (an evaluation only)."""
    return [
        sum(m.local_objective[s] for m in models) + models[0].t_regularizer[s]
        for s in range(len(models[0].local_objective))
    ]


def pd_nmf_iter(
    ctx: PartyContext,
    X: Any,
    T0: np.ndarray,
    *,
    sweeps: int,
    params: RRIParams,
    variant: str = "prg",
    loss: str = "auto",
    W0: np.ndarray | None = None,
    track_objective: bool = True,
    secagg_config: SecAggConfig | None = None,
    dp: DpSettings | None = None,
) -> Generator[Any, Any, PartyModel]:
    """PD-NMF-Iter (Algorithm 7), party m's program.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_m, d)
        The party's rows (NaN marks unobserved ratings).
    T0 : ndarray of shape (k, d)
        The public initial topics, identical at every party.
    sweeps : int
        Number of sweeps over the k topics.
    params : RRIParams
        Form and regularisers (public).
    variant : {"prg", "explicit"}
        The SecureSum variant.
    loss : {"auto", "full", "observed"}
        See :func:`algorithms.nmf.row_blocks.as_row_block`.
    W0 : ndarray of shape (n_m, k), optional
        The party's starting weights (local); zeros by default (digest §7.1 item 11).
    track_objective : bool
        Evaluate the party's part of the objective after every sweep (for reports; local,
        no communication).
    secagg_config : protocols.secagg.Config, optional
        Sum through dropout-tolerant SecAgg (:mod:`protocols.secagg`, with an aggregator
        running :func:`pd_nmf_iter_aggregator`) instead of SecureSum. A site that drops stops
        contributing: from then on T is the model of the survivors' rows (a departure from the
        thesis, where every party stays).
    dp : DpSettings, optional
        DP-PD-NMF (thesis §3.3, Fig. 3.7c; :mod:`algorithms.nmf.dp_pd_nmf`): every T statistic
        is clipped row by row and takes this party's N(0, σ²/M) noise before it is summed, so
        SecureSum's declared inputs are the noisy statistics.
    """
    check_variant(variant)
    if isinstance(sweeps, bool) or not isinstance(sweeps, int) or sweeps < 0:
        raise InputError(f"sweeps = {sweeps!r} must be a non-negative integer")
    block = as_row_block(X, loss)  # type: ignore[arg-type]
    n_rows, d = block.shape
    T = np.array(T0, dtype=np.float64, copy=True)
    if T.ndim != 2 or T.shape[1] != d:
        raise InputError(f"T0 has shape {T.shape}; expected (k, {d})")
    k = T.shape[0]
    W = np.zeros((n_rows, k)) if W0 is None else np.array(W0, dtype=np.float64, copy=True)
    if W.shape != (n_rows, k):
        raise InputError(f"W0 has shape {W.shape}; expected ({n_rows}, {k})")
    local_params = replace(params, l1_t=0.0, l2_t=0.0)
    t_params = replace(params, l1_w=0.0, l2_w=0.0)
    model = PartyModel(W, T, T_start=T.copy())
    for _ in range(sweeps):
        residual = initial_residual(block, W, T)
        for t in range(k):
            ws = w_side_statistics(block, W, T, t, residual)
            W[:, t] = update_w_column(ws, params)
            stat = t_side_statistics(block, W, T, t, ws)
            if dp is not None and dp.private:
                stat = clipped_statistic(block, W, T, t, ws, stat, dp.clip)
                stat = noisy_statistic(ctx.rng, stat, dp, ctx.n_parties)
            if secagg_config is None:
                summed = yield from secure_sum(ctx, stat, variant, label="t_statistics")  # type: ignore[arg-type]
            else:
                summed, _ = yield from secagg(ctx, stat, secagg_config, label="t_statistics")
            T[t], s_t = update_t_row(summed, params, block.loss)
            W[:, t] *= s_t
            residual = next_residual(block, ws, W[:, t], T[t])
        W = end_of_sweep(W, params)
        if track_objective:
            model.local_objective.append(objective(block, W, T, local_params, loss=block.loss))
            model.t_regularizer.append(regularizer(np.zeros((0, k)), T, t_params))
    yield Output("T", T.copy())
    model.W = W
    return model


def pd_nmf_iter_aggregator(
    ctx: PartyContext, *, n_features: int, k: int, sweeps: int, loss: str,
    secagg_config: SecAggConfig,
) -> Generator[Any, Any, list[tuple[int, ...]]]:
    """The SecAgg aggregator's program for PD-NMF-Iter: one aggregation per topic and sweep.

    ``loss`` is the sites' resolved loss ("full" or "observed"), which fixes the length of the
    T statistic. Returns the survivors of every aggregation, in order.
    """
    length = t_statistic_length(n_features, loss)  # type: ignore[arg-type]
    survivors = []
    for _ in range(sweeps * k):
        _, alive = yield from secagg_aggregator(ctx, length, secagg_config)
        survivors.append(alive)
    return survivors


@dataclass(frozen=True)
class InitSettings:
    """Settings of PD-NMF-Init (Algorithm 8)."""

    sweeps: int
    local_max_iter: int = 200
    local_tol: float = 1e-4


def local_weighted_topics(X: Any, k: int, params: RRIParams, settings: InitSettings,
                          loss: str = "auto") -> np.ndarray:
    """Algorithm 8 steps 1–5 at one party: T̂^(m) = diag(v) T^(m) from a local model."""
    block = as_row_block(X, loss)  # type: ignore[arg-type]
    n_rows, d = block.shape
    k_local = int(min(k, n_rows, d))
    dense = zero_filled(X)
    W_start, T_start = nndsvd(dense, k_local)
    local = rri_nmf(X, k_local, T0=T_start, W0=W_start, max_iter=settings.local_max_iter,
                    tol=settings.local_tol, params=params, loss=block.loss)
    psi = None
    if block.loss == "observed":
        psi = observed_mask(X)
    model = summarize_local_model(local.W, local.T, psi=psi)
    return weighted_representatives([model], l2_t=params.l2_t)


def normalize_rows(T: np.ndarray) -> np.ndarray:
    """Divide every non-zero row by its sum (zero rows stay zero)."""
    mass = T.sum(axis=1, keepdims=True)
    return T / np.where(mass > 0, mass, 1.0)


def pd_nmf_init(
    ctx: PartyContext,
    X: Any,
    k: int,
    *,
    params: RRIParams,
    settings: InitSettings,
    variant: str = "prg",
    loss: str = "auto",
) -> Generator[Any, Any, np.ndarray]:
    """PD-NMF-Init (Algorithm 8), party m's program: returns T_init (k×d), public."""
    d = X.shape[1]
    t_hat = local_weighted_topics(X, k, params, settings, loss)  # steps 1–5, local
    t0_share = ctx.rng.uniform(0.0, 1.0, size=(k, d)) / ctx.n_parties  # step 6
    t0 = yield from secure_sum(ctx, t0_share, variant, label="random_topics")  # step 7
    t0 = normalize_rows(np.maximum(t0, 0.0))  # step 8
    yield Output("T0", t0.copy())
    init_params = RRIParams(form="plain")
    w0 = fit_weights(t_hat, t0, params=init_params)  # local: W^(m) fitted to T0 (item 11)
    model = yield from pd_nmf_iter(ctx, t_hat, t0, sweeps=settings.sweeps, params=init_params,
                                   variant=variant, loss="full", W0=w0)  # step 9
    return normalize_rows(model.T)


@dataclass(frozen=True)
class SvdInitSettings:
    """The PD-SVD run behind the ``pd_svd`` initialisation (thesis §2.4, digest §1.5).

    ``variant`` is PD-SVD's ("secure_sum" by default — the digest's recommendation, §7.1
    item 21 —, "normed" with NormedSecureSum and a dealer, or "sigma_revealing").
    """

    iterations: int = 20
    variant: str = "secure_sum"
    nss_params: NssParams | None = None
    scale: float = 1.0


def pd_svd_init(
    ctx: PartyContext, X: Any, k: int, settings: SvdInitSettings, variant: str = "prg"
) -> Generator[Any, Any, np.ndarray]:
    """PD-SVD-based NNDSVD, party m's program: returns T0 (k×d), public.

    PD-SVD (Algorithm 10) gives every party V_k and Σ_k, and party m its rows
    U_k^(m) = X^(m) V_k Σ_k⁻¹; NNDSVD's topics need U only through the norms of the signed
    parts of its columns, which one SecureSum of the parties' 2k squared norms provides
    (:func:`algorithms.nmf.nndsvd.nndsvd_topics`). Unobserved entries (NaN) count as 0, as in
    the centralized ``nndsvd`` start. Declared outputs: V_k, Σ_k and the 2k norms.
    """
    check_svd_variant(settings.variant)
    model = yield from pd_svd(ctx, zero_filled(X), k, settings.iterations,
                              variant=settings.variant, nss_params=settings.nss_params,
                              scale=settings.scale)
    U = model.U
    parts = np.concatenate([np.sum(np.maximum(U, 0.0) ** 2, axis=0),
                            np.sum(np.maximum(-U, 0.0) ** 2, axis=0)])
    norms = yield from secure_sum(ctx, parts, variant, label="u_part_norms_sq")
    norms = np.sqrt(np.maximum(norms, 0.0))
    return nndsvd_topics(model.V, model.sigma, norms[:k], norms[k:])


def pd_nmf(
    ctx: PartyContext,
    X: Any,
    k: int,
    *,
    sweeps: int,
    params: RRIParams,
    variant: str = "prg",
    loss: str = "auto",
    T0: np.ndarray | None = None,
    init_settings: InitSettings | None = None,
    svd_init: SvdInitSettings | None = None,
    secagg_config: SecAggConfig | None = None,
    dp: DpSettings | None = None,
) -> Generator[Any, Any, PartyModel]:
    """PD-NMF = PD-NMF-Init then PD-NMF-Iter (or PD-NMF-Iter from a given public T0).

    With ``svd_init`` (and no T0) the start is PD-SVD-based NNDSVD (:func:`pd_svd_init`)
    instead of PD-NMF-Init. Messages of the two phases are labelled ``init`` and ``iter``.
    With ``secagg_config`` the sweeps sum through SecAgg (see :func:`pd_nmf_iter`); the start
    must then be a public T0. With ``dp`` the sweeps are DP-PD-NMF's (:func:`pd_nmf_iter`); the
    start is not noised (give a public T0 — e.g. ``random`` — for a private run end to end).
    """
    if secagg_config is not None and T0 is None:
        raise InputError("PD-NMF through SecAgg needs a public T0 (init = random, random_2x, "
                         "nndsvd or a T0 file); PD-NMF-Init and PD-SVD sum with SecureSum")
    if T0 is None and svd_init is not None:
        with ctx.in_phase("init"):
            T0 = yield from pd_svd_init(ctx, X, k, svd_init, variant)
    if T0 is None:
        if init_settings is None:
            raise InputError("pd_nmf needs either a public T0 or init_settings for PD-NMF-Init")
        with ctx.in_phase("init"):
            T0 = yield from pd_nmf_init(ctx, X, k, params=params, settings=init_settings,
                                        variant=variant, loss=loss)
    with ctx.in_phase("iter"):
        model = yield from pd_nmf_iter(ctx, X, T0, sweeps=sweeps, params=params,
                                       variant=variant, loss=loss, secagg_config=secagg_config,
                                       dp=dp)
    return model
