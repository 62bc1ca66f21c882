"""Corrective NMF under adversarial noise (Ballen, seed 002, Algorithm 1; digest §3 and §7.3).

Ratings V (users × items, NaN where missing, Z_ij = 1 where observed) are factorised as
V ≈ WH (W n×k per user, H k×m per item) by masked multiplicative updates:

    W ← W ∘ [(Z∘V̄)Hᵀ] / [(Z∘(WH))Hᵀ],     H ← H ∘ [Wᵀ(Z∘V̄)] / [Wᵀ(Z∘(WH))]     (step 1)

with the working mask Z and filled matrix V̄ chosen per iteration t by

* the **missing** rule — ignore-missing (Mao & Saul): Z = 0 on missing entries; replace-missing
  (Zhang et al.): V̄ = WH and Z = 1 there;
* the **corrupt** rule (``mode``) — an observed entry is corrupt when (V_ij − (WH)_ij)² > λ
  (step 2); ``"ignore"`` sets Z = 0 on it, ``"replace"`` sets
  V̄_ij = 0.99^t V_ij + (1 − 0.99^t)(WH)_ij (step 3; ``interpolate = False`` uses WH);
  ``"standard"`` marks nothing (the two baselines of §3.1).

The clipped loss Σ_{observed} min[(V − WH)², λ] (:func:`clipped_loss`) does not increase from
one iteration to the next under ignore-corrupt with ignore-missing (§2.1's argument; tested).
:func:`lambda_from_noise` gives λ from the probabilistic reading of §2.3 (p and σ).

Distributed form (this project's addition; the paper is single-party)
---------------------------------------------------------------------
Users (rows) are split across parties; party m holds V^(m) and W^(m) and they never leave it.
The W update and the corrupt marking are row-local; the H update's numerator Wᵀ(Z∘V̄) and
denominator Wᵀ(Z∘(WH)) are sums over users, so every party puts its k×m parts of both through
**one** SecureSum of 2km elements per iteration (:func:`declared_iteration_elements`) and
applies the same H update. The sums are the declared output (every party learns H). From the
same start, the parties' H equals :func:`corrective_nmf`'s on the stacked rows up to the
fixed-point encoding of the sums (tested).

SecureSum cannot check what a party puts in: a malicious party that appends fake profiles to
its rows (:func:`injecting_party`, the profile-injection attack of §3.5, built by
:mod:`algorithms.data.profile_injection`) shifts H for everybody exactly as the same profiles in
a centralized data set would. Corrective NMF limits the damage: ignore-corrupt stops fitting the
ratings the model cannot explain.

Readings of the text (digest §7.3)
----------------------------------
* The replace-corrupt interpolation is recomputed from the original V every iteration and the
  marks are recomputed every iteration (entries can be un-marked; item 51). Step 3 as printed
  ("set V = 0.99^t·V + (1 − 0.99^t)·WH") can also be read as overwriting V, so that later
  interpolations start from the overwritten value and later marks compare with it;
  ``replace_base = "running"`` runs that reading (seed 002's Table 2 results for replace-corrupt
  were checked against both; :mod:`sim.experiments.nmf.corrective_nmf_tables`).
* Step 4 ("set V = WH, Z = 1" for each missing entry) can likewise be read as overwriting V
  once: after the first iteration the missing entries — the adversaries' included — hold that
  iteration's WH and are entries of V from then on, marked by step 2 and replaced by step 3
  like observed ones (``fill = "once"``; Algorithm 1's replace rows only, the baselines keep
  Zhang et al.'s refilling). It does not bring back the reported failure of replace-corrupt
  either (:mod:`sim.experiments.nmf.corrective_nmf_tables`).
* Step 1 runs with the Z and V̄ of the previous iteration's marking; the first iteration uses
  the plain missing rule (nothing is marked yet). V̄ on missing entries and on corrupt entries
  uses the WH at the time of marking.
* Denominators get ``eps`` = 1e−12 (item 55).
* λ of §2.3: the printed λ = −(log p + b)/a is negative for the printed signs (a, b and log p
  negative). The reading that makes the paper's own equivalence hold — ERR > λ ⇔ f < p, with
  log f = a·ERR + b, a = −1/(2σ²) and b = −½ log(2πσ²) (item 48) — is λ = (log p − b)/a; it is
  positive iff p < 1/sqrt(2πσ²), the largest density. :func:`lambda_from_noise` implements it.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.vocabulary import (
    CORRECTIVE_FILLS,
    CORRECTIVE_MISSING_RULES,
    CORRECTIVE_MODES,
    CORRECTIVE_REPLACE_BASES,
)
from protocols.context import PartyContext
from protocols.effects import Output
from protocols.errors import InputError
from protocols.secure_sum import declared_cost, secure_sum

MODES = CORRECTIVE_MODES
MISSING_RULES = CORRECTIVE_MISSING_RULES
REPLACE_BASES = CORRECTIVE_REPLACE_BASES
FILLS = CORRECTIVE_FILLS
DECAY = 0.99


@dataclass(frozen=True)
class CorrectiveSettings:
    """The rules of Algorithm 1 (public).

    Attributes
    ----------
    mode : {"standard", "ignore", "replace"}
        Corrupt entries: not marked, ignored (Z = 0) or replaced by interpolation.
    missing : {"ignore", "replace"}
        Missing entries: ignored (Z = 0) or replaced by WH (Z = 1).
    lam : float
        λ > 0, the squared error above which an observed entry is corrupt.
    interpolate : bool
        Replace-corrupt with 0.99^t interpolation (True) or with WH directly.
    replace_base : {"original", "running"}
        What replace-corrupt interpolates from and marks against: the original V every
        iteration (``"original"``, digest item 51), or — Algorithm 1 read literally, step 3
        *setting* V — the running V, overwritten at every corrupt entry (``"running"``).
    fill : {"every", "once"}
        Replace-missing's filling: V̄ = WH on the missing entries at every iteration
        (``"every"``, Zhang et al.'s rule), or — step 4 read literally, *setting* V = WH — once,
        after the first iteration, after which the filled entries are entries of V like the
        observed ones: step 2 marks them and step 3 replaces them (``"once"``; no effect with
        ``missing = "ignore"`` or ``mode = "standard"``).
    eps : float
        Added to the multiplicative updates' denominators.
    """

    mode: str = "ignore"
    missing: str = "ignore"
    lam: float = 1.0
    interpolate: bool = True
    replace_base: str = "original"
    fill: str = "every"
    eps: float = 1e-12

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InputError(f"mode = {self.mode!r} is unknown; use one of {', '.join(MODES)}")
        if self.missing not in MISSING_RULES:
            raise InputError(
                f"missing = {self.missing!r} is unknown; use one of {', '.join(MISSING_RULES)}")
        if self.replace_base not in REPLACE_BASES:
            raise InputError(f"replace_base = {self.replace_base!r} is unknown; use one of "
                             f"{', '.join(REPLACE_BASES)}")
        if self.fill not in FILLS:
            raise InputError(f"fill = {self.fill!r} is unknown; use one of {', '.join(FILLS)}")
        if not math.isfinite(self.lam) or self.lam <= 0:
            raise InputError(f"lam = {self.lam!r} must be a finite number > 0")
        if not self.eps > 0:
            raise InputError(f"eps = {self.eps!r} must be > 0")


def lambda_from_noise(p: float, sigma: float) -> float:
    """λ of §2.3 from the corruption probability p and the clean noise's σ.

    λ = (log p − b)/a with a = −1/(2σ²) and b = −½ log(2πσ²): marking ERR > λ is marking
    f(ERR) < p, f the N(0, σ²) density of the error (see the module docstring).
    """
    if not 0 < p < 1:
        raise InputError(f"p = {p!r} must lie in (0, 1), the probability an entry is corrupt")
    if not math.isfinite(sigma) or sigma <= 0:
        raise InputError(f"sigma = {sigma!r} must be a finite number > 0")
    a = -1.0 / (2.0 * sigma**2)
    b = -0.5 * math.log(2.0 * math.pi * sigma**2)
    if math.log(p) >= b:
        raise InputError(
            f"p = {p} is not below the largest N(0, σ²) density 1/sqrt(2πσ²) = {math.exp(b):.4g} "
            f"at sigma = {sigma}: every entry would be corrupt; lower p or sigma"
        )
    return (math.log(p) - b) / a


# -- the per-iteration steps (pure, on one block of users) --------------------------------------


def observed(V: np.ndarray) -> np.ndarray:
    """The observation mask (True where V holds a rating)."""
    return ~np.isnan(V)


def mark_corrupt(V: np.ndarray, obs: np.ndarray, WH: np.ndarray,
                 settings: CorrectiveSettings) -> np.ndarray:
    """Step 2: observed entries with (V − WH)² > λ (none in ``standard`` mode)."""
    if settings.mode == "standard":
        return np.zeros_like(obs)
    err = np.where(obs, np.nan_to_num(V) - WH, 0.0)
    return obs & (err * err > settings.lam)


def working_targets(V: np.ndarray, obs: np.ndarray, WH: np.ndarray, corrupt: np.ndarray,
                    t: int, settings: CorrectiveSettings) -> tuple[np.ndarray, np.ndarray]:
    """Steps 3–4: the mask Z and filled matrix V̄ of the next update, from the marks of
    iteration t (t = 0 before the first iteration).

    Returns
    -------
    (Z, V̄) : ndarray of float64 (0/1) and ndarray of float64, both of V's shape
    """
    if settings.missing == "replace":
        Z = np.ones(obs.shape)
        Vbar = np.where(obs, V, WH)
    else:
        Z = obs.astype(np.float64)
        Vbar = np.where(obs, V, 0.0)
    if settings.mode == "ignore":
        Z[corrupt] = 0.0
    elif settings.mode == "replace" and corrupt.any():
        w = DECAY**t if settings.interpolate else 0.0
        Vbar[corrupt] = w * V[corrupt] + (1.0 - w) * WH[corrupt]
    return Z, Vbar


def update_w(W: np.ndarray, H: np.ndarray, WH: np.ndarray, Z: np.ndarray, ZV: np.ndarray,
             eps: float) -> np.ndarray:
    """W ← W ∘ [(Z∘V̄)Hᵀ] / [(Z∘(WH))Hᵀ] (row-local); ``WH`` is W @ H, ``ZV`` is Z∘V̄."""
    return W * ((ZV @ H.T) / (((Z * WH) @ H.T) + eps))


def h_statistics(W: np.ndarray, WH: np.ndarray, Z: np.ndarray,
                 ZV: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A block's parts of the H update: Wᵀ(Z∘V̄) and Wᵀ(Z∘(WH)), each k×m (sums over users);
    ``WH`` is W @ H with the updated W, ``ZV`` is Z∘V̄."""
    return W.T @ ZV, W.T @ (Z * WH)


def update_h(H: np.ndarray, numerator: np.ndarray, denominator: np.ndarray,
             eps: float) -> np.ndarray:
    """H ← H ∘ numerator / denominator."""
    return H * (numerator / (denominator + eps))


def clipped_loss(V: np.ndarray, obs: np.ndarray, WH: np.ndarray, lam: float) -> float:
    """A block's part of Σ_{observed} min[(V − WH)², λ] (§2.1, with min: digest §7.3 item 46)."""
    err = np.where(obs, np.nan_to_num(V) - WH, 0.0)
    return float(np.minimum(err * err, lam)[obs].sum())


def masked_squared_error(V: np.ndarray, obs: np.ndarray, WH: np.ndarray) -> float:
    """Σ_{observed} (V − WH)²."""
    err = np.where(obs, np.nan_to_num(V) - WH, 0.0)
    return float((err * err).sum())


def random_start(n_rows: int, n_items: int, k: int, rng: np.random.Generator,
                 mean_rating: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """W0 (n×k) and H0 (k×m) with U[0, s] entries, s = sqrt(4·mean/k), so E[WH] = mean."""
    s = math.sqrt(4.0 * mean_rating / k)
    return rng.uniform(0.0, s, size=(n_rows, k)), rng.uniform(0.0, s, size=(k, n_items))


# -- the centralized reference ------------------------------------------------------------------


@dataclass
class CorrectiveFit:
    """What Algorithm 1 returns.

    Attributes
    ----------
    W : ndarray of shape (n, k)
    H : ndarray of shape (k, m)
    corrupt : ndarray of bool, shape (n, m)
        The final marks.
    clipped_loss : list of float
        Σ_{observed} min[(V − WH)², λ] after each iteration.
    squared_error : list of float
        Σ_{observed} (V − WH)² after each iteration.
    """

    W: np.ndarray
    H: np.ndarray
    corrupt: np.ndarray
    clipped_loss: list[float] = field(default_factory=list)
    squared_error: list[float] = field(default_factory=list)


def _check_start(V: np.ndarray, W0: np.ndarray, H0: np.ndarray) -> tuple[np.ndarray, ...]:
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2:
        raise InputError(f"V must be a users × items matrix, got shape {V.shape}")
    W = np.array(W0, dtype=np.float64, copy=True)
    H = np.array(H0, dtype=np.float64, copy=True)
    if W.ndim != 2 or W.shape[0] != V.shape[0] or H.ndim != 2 or H.shape != (W.shape[1],
                                                                             V.shape[1]):
        raise InputError(f"W0 {W.shape} and H0 {H.shape} do not fit V {V.shape}: need (n, k) "
                         "and (k, m)")
    if W.min(initial=0.0) < 0 or H.min(initial=0.0) < 0:
        raise InputError("W0 and H0 must be non-negative")
    return V, W, H


@dataclass
class _State:
    """The working state of one block of users between iterations."""

    V: np.ndarray  # the ratings
    obs: np.ndarray
    running: np.ndarray  # what marks compare with: V, or its overwritten copy ("running")
    marked: np.ndarray  # the entries step 2 looks at: obs, or every entry once filled ("once")
    Z: np.ndarray
    ZV: np.ndarray  # Z∘V̄
    WH: np.ndarray  # W @ H at the last marking
    fit: CorrectiveFit


def _start(V: np.ndarray, W0: np.ndarray, H0: np.ndarray,
           settings: CorrectiveSettings) -> _State:
    V, W, H = _check_start(V, W0, H0)
    obs = observed(V)
    corrupt = np.zeros_like(obs)
    WH = W @ H
    Z, Vbar = working_targets(V, obs, WH, corrupt, 0, settings)
    running = V.copy() if settings.replace_base == "running" else V
    return _State(V, obs, running, obs, Z, Z * Vbar, WH, CorrectiveFit(W, H, corrupt))


def _fills_once(settings: CorrectiveSettings) -> bool:
    return (settings.fill == "once" and settings.missing == "replace"
            and settings.mode != "standard")


def _mark(state: _State, W: np.ndarray, H: np.ndarray, t: int,
          settings: CorrectiveSettings) -> None:
    """Steps 2–4 after the updates of iteration t, and the losses for the record."""
    WH = W @ H
    err2 = np.square(np.where(state.obs, state.V - WH, 0.0))
    if state.running is not state.V:
        run2 = np.square(np.where(state.marked, state.running - WH, 0.0))
    else:
        run2 = err2
    if settings.mode == "standard":
        corrupt = np.zeros_like(state.obs)
    else:
        corrupt = state.marked & (run2 > settings.lam)  # step 2, as mark_corrupt
    Z, Vbar = working_targets(state.running, state.marked, WH, corrupt, t, settings)
    if settings.mode == "replace" and settings.replace_base == "running":
        state.running[corrupt] = Vbar[corrupt]  # step 3 overwrites V (the literal reading)
    if t == 1 and _fills_once(settings):
        # step 4 sets V = WH on the missing entries, which from now on are entries of V
        state.running = np.where(state.obs, state.running, WH)
        state.marked = np.ones_like(state.obs)
    state.Z, state.ZV, state.WH = Z, Z * Vbar, WH
    fit = state.fit
    fit.W, fit.H, fit.corrupt = W, H, corrupt
    fit.clipped_loss.append(float(np.minimum(err2, settings.lam).sum()))
    fit.squared_error.append(float(err2.sum()))


def _step_w(state: _State, W: np.ndarray, H: np.ndarray,
            eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Step 1's W half; returns the new W and its W @ H."""
    W = update_w(W, H, state.WH, state.Z, state.ZV, eps)
    return W, W @ H


def corrective_nmf(V: np.ndarray, W0: np.ndarray, H0: np.ndarray, *, iterations: int,
                   settings: CorrectiveSettings) -> CorrectiveFit:
    """Algorithm 1 on one party's data (the centralized reference).

    Parameters
    ----------
    V : ndarray of shape (n, m)
        Ratings, NaN where missing.
    W0 : ndarray of shape (n, k)
    H0 : ndarray of shape (k, m)
    iterations : int
    settings : CorrectiveSettings
    """
    state = _start(V, W0, H0, settings)
    W, H = state.fit.W, state.fit.H
    for t in range(1, iterations + 1):
        W, WH = _step_w(state, W, H, settings.eps)
        H = update_h(H, *h_statistics(W, WH, state.Z, state.ZV), settings.eps)
        _mark(state, W, H, t, settings)
    return state.fit


# -- the party program --------------------------------------------------------------------------


def declared_iteration_elements(variant: str, n_parties: int, k: int, n_items: int) -> int:
    """Elements one party sends per iteration: one SecureSum of 2km elements."""
    return declared_cost(variant, n_parties, 2 * k * n_items).elements_sent


def corrective_party(
    ctx: PartyContext,
    V: np.ndarray,
    W0: np.ndarray,
    H0: np.ndarray,
    *,
    iterations: int,
    settings: CorrectiveSettings,
    variant: str = "prg",
) -> Generator[Any, Any, CorrectiveFit]:
    """Party m's program: Algorithm 1 on its users, the H update through SecureSum.

    Parameters
    ----------
    V : ndarray of shape (n_m, m)
        The party's users' ratings (NaN where missing).
    W0 : ndarray of shape (n_m, k)
        The party's start of W (private).
    H0 : ndarray of shape (k, m)
        The public start of H, identical at every party.
    iterations, settings
        As :func:`corrective_nmf`.
    variant : {"prg", "explicit"}
        The SecureSum variant.

    Returns
    -------
    CorrectiveFit
        The party's W^(m) and marks, the common H, and its parts of the losses.
    """
    state = _start(V, W0, H0, settings)
    W, H = state.fit.W, state.fit.H
    k, m = H.shape
    for t in range(1, iterations + 1):
        W, WH = _step_w(state, W, H, settings.eps)
        num, den = h_statistics(W, WH, state.Z, state.ZV)
        summed = yield from secure_sum(ctx, np.concatenate([num.ravel(), den.ravel()]),
                                       variant, label="h_statistics")
        H = update_h(H, summed[: k * m].reshape(k, m), summed[k * m:].reshape(k, m),
                     settings.eps)
        _mark(state, W, H, t, settings)
    yield Output("H", H.copy())
    return state.fit


def injecting_party(
    ctx: PartyContext,
    V: np.ndarray,
    fake: np.ndarray,
    W0: np.ndarray,
    H0: np.ndarray,
    *,
    iterations: int,
    settings: CorrectiveSettings,
    variant: str = "prg",
) -> Generator[Any, Any, CorrectiveFit]:
    """A malicious party: runs :func:`corrective_party` on its users plus fake profiles.

    Parameters
    ----------
    V : ndarray of shape (n_m, m)
        The party's genuine users' ratings.
    fake : ndarray of shape (n_fake, m)
        The injected profiles (§3.5), appended after the genuine rows.
    W0 : ndarray of shape (n_m + n_fake, k)
        Starts for the genuine rows, then the fake ones.
    H0, iterations, settings, variant
        As :func:`corrective_party`.
    """
    poisoned = np.vstack([np.asarray(V, dtype=np.float64), np.asarray(fake, dtype=np.float64)])
    return (yield from corrective_party(ctx, poisoned, W0, H0, iterations=iterations,
                                        settings=settings, variant=variant))
