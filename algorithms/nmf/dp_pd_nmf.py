"""DP-PD-NMF: PD-NMF with distributed Gaussian noise on every SecureSum (thesis seed 001, §3.3,
Fig. 3.7c).

The thesis makes PD-NMF (ε, δ)-differentially private with the Gaussian mechanism: "iid noise
distributed as N(0, v_{ε,δ} Δf²) is added to every observable", and SecureSum lets "each party
add 1/Mth of the noise that would be required without it". Every SecureSum of PD-NMF-Iter
(the T statistic of one topic in one sweep) is therefore released as

    Σ_m (s^(m) + η^(m)),   η^(m) ~ N(0, σ²/M · I) drawn from party m's own coins (ctx.rng),

so the released sum carries N(0, σ² I), with σ = Δ·√(2 ln(1.25/δ))/ε — the classical
calibration of :func:`protocols.accounting.classical_gaussian_std` (Dwork & Roth, Thm. A.1).

Sensitivity (the thesis does not state Δ; derived here). Neighbouring data sets differ by one
row (a user's ratings, a document) at one party. The statistic of topic t is a sum over rows,
s = Σ_i c_i, with row i's contribution

* full loss: c_i = [W_it·(R_t)_i:, W_it²] (length d + 1), R_t = X − W T + W_:t T_t:;
* observed loss: c_i puts W_it·(R_t)_ij in the numerator and W_it² in the denominator of every
  observed column j (length 2d).

Given the public T, row i's weights W_i: depend on row i only (the W update is row-local), so
adding or removing row i changes s by c_i alone. PD-NMF does not bound ‖c_i‖ (the plain form
leaves W unbounded), so each party clips every row's contribution to L2 norm ``clip`` before
summing: c_i ← c_i·min(1, C/‖c_i‖). Then Δ = C for one release (add/remove one row). Releases
after the first depend on earlier noisy sums only through public T (post-processing); ε and δ
are **per release** (per SecureSum, as the thesis's "every observable"), and a run of k·sweeps
releases composes to more (:func:`protocols.accounting.account` gives the total).

What the noise assumes: honest-but-curious parties that do not collude; a coalition of M − 1
parties knows its own η and faces only the last party's σ²/M (the thesis's 1/M split has this
price). ε = ∞ means no noise and no clipping: the run equals PD-NMF bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.nmf.row_blocks import FullRows, ObservedRows
from algorithms.nmf.rri_steps import WSideStatistics
from protocols.accounting import check_budget, classical_gaussian_std
from protocols.errors import InputError

FloatArray = np.ndarray


@dataclass(frozen=True)
class DpSettings:
    """The per-release budget (ε, δ) and the row clipping bound C (Δ = C).

    ``epsilon = math.inf`` is the non-private limit: no clipping, no noise.
    """

    epsilon: float
    delta: float = 0.01
    clip: float = 1.0

    def __post_init__(self) -> None:
        if not (isinstance(self.clip, int | float) and not isinstance(self.clip, bool)
                and math.isfinite(self.clip) and self.clip > 0):
            raise InputError(f"dp clip = {self.clip!r} must be a finite number > 0")
        if self.epsilon != math.inf:
            check_budget(self.epsilon, self.delta, "dp")

    @property
    def private(self) -> bool:
        """False in the ε = ∞ limit."""
        return self.epsilon != math.inf

    def total_std(self) -> float:
        """σ of the noise the released sum carries (0 in the ε = ∞ limit)."""
        if not self.private:
            return 0.0
        return classical_gaussian_std(self.clip, self.epsilon, self.delta)

    def party_std(self, n_parties: int) -> float:
        """σ/√M: the std of one party's share of the noise (variance σ²/M)."""
        if isinstance(n_parties, bool) or not isinstance(n_parties, int) or n_parties < 1:
            raise InputError(f"n_parties = {n_parties!r} must be a positive integer")
        return self.total_std() / math.sqrt(n_parties)


def row_contribution_norms(block: FullRows | ObservedRows, W: FloatArray, T: FloatArray, t: int,
                           stats: WSideStatistics) -> FloatArray:
    """‖c_i‖ for every row i of the block: the L2 norm of its part of the topic-t statistic.

    Full loss: ‖c_i‖² = W_it²‖(R_t)_i:‖² + W_it⁴ with ‖(R_t)_i:‖² = ‖X_i‖² − 2 X_i·(V_i T) +
    ‖V_i T‖², V = W with column t zeroed. Observed: Σ_{j observed} W_it²(R_t)_ij² + W_it⁴.
    """
    w = W[:, t]
    if isinstance(block, FullRows):
        V = W.copy()
        V[:, t] = 0.0
        X = block.X
        x_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if hasattr(X, "multiply") \
            else np.einsum("ij,ij->i", X, X)
        xt = np.asarray(X @ T.T)
        r_sq = x_sq - 2.0 * np.einsum("ik,ik->i", xt, V) + np.einsum(
            "ik,kl,il->i", V, T @ T.T, V)
        sq = w * w * np.maximum(r_sq, 0.0) + w ** 4
    else:
        if stats.topic_residual is None:
            raise InputError("stats lacks the topic residual the observed loss needs")
        wo = w[block.rows]
        sq = np.bincount(block.rows, weights=wo * wo * (stats.topic_residual ** 2 + wo * wo),
                         minlength=block.n_rows)
    return np.sqrt(sq)


def clipped_statistic(block: FullRows | ObservedRows, W: FloatArray, T: FloatArray, t: int,
                      stats: WSideStatistics, stat: FloatArray, clip: float) -> FloatArray:
    """The topic-t statistic with every row's contribution clipped to L2 norm ``clip``.

    Returns ``stat`` itself when no row exceeds the bound (so nothing changes bit for bit).
    """
    norms = row_contribution_norms(block, W, T, t, stats)
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    if np.all(scale == 1.0):
        return stat
    w = W[:, t]
    if isinstance(block, FullRows):
        d = T.shape[1]
        sw = scale * w
        out = np.empty(d + 1)
        out[:d] = np.asarray(block.X.T @ sw).ravel() - T.T @ (W.T @ sw) + T[t] * float(w @ sw)
        out[d] = float(w @ sw)
        return out
    wo = w[block.rows]
    so = scale[block.rows] * wo
    residual = stats.topic_residual if stats.topic_residual is not None else np.zeros(0)
    num = np.bincount(block.cols, weights=so * residual, minlength=block.n_cols)
    den = np.bincount(block.cols, weights=so * wo, minlength=block.n_cols)
    return np.concatenate([num, den])


def noisy_statistic(rng: np.random.Generator, stat: FloatArray, settings: DpSettings,
                    n_parties: int) -> FloatArray:
    """``stat`` plus this party's share of the noise, N(0, σ²/M) per coordinate from ``rng``
    (the party's own coins). In the ε = ∞ limit ``stat`` is returned and nothing is drawn."""
    if not settings.private:
        return stat
    return stat + rng.normal(0.0, settings.party_std(n_parties), size=stat.shape)
