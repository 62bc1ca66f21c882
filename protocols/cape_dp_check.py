"""Whether CAPE's declared mechanism is (ε, δ)-DP against a coalition: the sites' budgets and
the two checks of :meth:`protocols.cape_simulator.CapeSimulator.reveals`.

CAPE (Imtiaz & Sarwate, seed 003, §3, Algorithm 1) argues in Theorem 1 that each site's
release â_s = f(x_s) + e_s + f_s + g_s carries at least the noise τ_s² the site would add on its
own. The simulator reproduces the declared noise law; these functions answer the second
question, on the noise forms (linear forms in the independent Gaussians (ẽ, f, g) with the
plan's variances) the simulator builds:

* :func:`budget_shortfall` — with a declared :class:`Budget`, the coalition's whole Gaussian
  view of an honest statistic f(x_h) is a Gaussian mechanism with μ_h = Δ_h·√(aᵀ Σ⁺ a) (spec
  §2.3's effective-δ construction with every share explicit, :func:`view_deltas`); its exact δ
  at ε_h (Balle & Wang 2018, Thm. 8, :func:`protocols.accounting.gaussian_delta`) must not
  exceed δ_h.
* :func:`release_shortfall` — without a budget, Theorem 1's per-release argument: the variance
  of e_h + f_h + g_h given the coalition's noise shares must be at least τ_h².
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from protocols.cape_noise_plans import NoisePlan
from protocols.gaussian_conditioning import conditional_variance

__all__ = ["DP_RTOL", "Budget", "budget_shortfall", "release_form", "release_shortfall",
           "view_deltas"]

DP_RTOL = 1e-9
"""Relative slack of both checks (floating-point rounding of the variances and of δ)."""


@dataclass(frozen=True)
class Budget:
    """The sites' declared privacy: per site ε_s, δ_s and the statistic's L2 sensitivity Δ_s.

    Each array has one entry per site (shape (S,)).
    """

    epsilon: np.ndarray
    delta: np.ndarray
    sensitivity: np.ndarray

    @classmethod
    def uniform(cls, n_sites: int, epsilon: float, delta: float,
                sensitivity: float | np.ndarray) -> Budget:
        """One (ε, δ) for every site; Δ one value or one per site."""
        sens = np.broadcast_to(np.asarray(sensitivity, dtype=np.float64), (n_sites,))
        return cls(np.full(n_sites, float(epsilon)), np.full(n_sites, float(delta)),
                   np.array(sens))


def release_form(plan: NoisePlan, s: int) -> np.ndarray:
    """The noise e_s + f_s + g_s of site s's release as a form in (ẽ, f, g)."""
    S = plan.n_sites
    B = plan.generator_matrix() if plan.uses_generator else np.zeros((S, S))
    eye = np.eye(S)
    return np.concatenate([B[s], eye[s], eye[s]])


def release_shortfall(plan: NoisePlan, known: np.ndarray, sd2: np.ndarray,
                      honest_sites: Sequence[int]) -> str | None:
    """Theorem 1's per-release check: why an honest release keeps less than τ_h² of noise
    given the noise forms ``known`` the coalition holds (variances ``sd2``), or None."""
    lows = []
    for h in honest_sites:
        var = conditional_variance(release_form(plan, h), known, sd2)
        tau2 = float(plan.tau[h]) ** 2
        if var < tau2 * (1.0 - DP_RTOL):
            lows.append(f"site {h}: {var:.6g} = {var / tau2:.4g}·τ_{h}²")
    if not lows:
        return None
    return ("the noise the coalition cannot remove from the honest releases is below each "
            "site's own τ² (Theorem 1's per-release guarantee): " + "; ".join(lows) +
            " — the coalition holds noise shares that the declared (ε, δ) does not allow "
            "for (the noise generator is trusted; colluding sites' e_c reveal part of the "
            "honest shares through the zero sum)")


def view_deltas(plan: NoisePlan, known: np.ndarray, sd2: np.ndarray,
                honest_sites: Sequence[int], sees_releases: bool, holds_output: bool,
                budget: Budget) -> dict[int, tuple[float, float]]:
    """Per honest site h: (exact δ at ε_h, μ_h) of the coalition's Gaussian view of f(x_h).

    The view is the noise forms ``known`` the coalition holds, the honest releases when it
    ``sees_releases`` (it holds the aggregator) and the weighted aggregate when it
    ``holds_output``; a statistic observed without noise gives (1, ∞).
    """
    from protocols.accounting import gaussian_delta  # scipy, loaded when a budget is checked

    if not sees_releases and not holds_output:
        return {}
    S = plan.n_sites
    out: dict[int, tuple[float, float]] = {}
    for h in honest_sites:
        forms, coef = [*known], [0.0] * len(known)
        if sees_releases:
            for t in honest_sites:
                forms.append(release_form(plan, t))
                coef.append(1.0 if t == h else 0.0)
        if holds_output:
            forms.append(np.concatenate([np.zeros(2 * S), plan.weights]))
            coef.append(float(plan.weights[h]))
        F = np.array(forms) * np.sqrt(sd2)
        sigma = F @ F.T
        a = np.array(coef)
        pinv = np.linalg.pinv(sigma, rcond=1e-10, hermitian=True)
        if np.linalg.norm(a - sigma @ (pinv @ a)) > 1e-8 * max(np.linalg.norm(a), 1e-300):
            out[h] = (1.0, math.inf)  # the statistic is observed without noise
            continue
        mu = float(budget.sensitivity[h]) * math.sqrt(max(float(a @ pinv @ a), 0.0))
        out[h] = (gaussian_delta(mu, float(budget.epsilon[h])) if mu > 0 else 0.0, mu)
    return out


def budget_shortfall(deltas: dict[int, tuple[float, float]], budget: Budget) -> str | None:
    """Why some honest site's view (:func:`view_deltas`) is weaker than its (ε, δ), or None."""
    lows = []
    for h, (delta, mu) in deltas.items():
        if delta > float(budget.delta[h]) * (1.0 + DP_RTOL):
            lows.append(f"site {h}: μ = {mu:.4g}, δ(ε = {float(budget.epsilon[h]):.4g}) = "
                        f"{delta:.4g} > δ = {float(budget.delta[h]):.4g}")
    if not lows:
        return None
    return ("the coalition's view of an honest site's statistic is a Gaussian mechanism "
            "weaker than the site's declared (ε, δ) (exact δ, a DP adversary who knows the "
            "other honest sites' data): " + "; ".join(lows))
