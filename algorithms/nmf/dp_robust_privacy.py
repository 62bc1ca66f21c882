"""The privacy of DP robust NMF (Saha & Imtiaz, seed 000, Algorithm 2): sensitivities, the
Gaussian noise of Def. 3 and the accounting of §3.3.

Privacy accounting (§3.3): :func:`rdp_epsilon` is the paper's RDP composition with α_opt
(digest §2.6); :func:`account` also asks ``dp-accounting``'s RDP accountant for the same
mechanism (2·T_iter Gaussian releases, noise multipliers τ_A/Δ_A and τ_B/Δ_B, through
:mod:`protocols.accounting`), which converts RDP to (ε, δ) with the tighter conversion of
Canonne, Kamath and Steinke, so its ε is smaller, and reports the exact ε of the composed
Gaussian mechanisms for reference. All are replace-one (bounded) DP of the released
statistics, hence of W (digest §7.5 item 72); the NNDSVD start of the paper
(``init = "nndsvd"``) reads the pooled data and is outside that guarantee, the ``random``
start is not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from protocols.accounting import (
    Release,
    check_budget,
    classical_gaussian_std_def3,
    classical_noise_multiplier,
    composed_mu,
    dp_accounting_epsilon,
    gaussian_epsilon,
)
from protocols.errors import InputError

__all__ = ["Accounting", "account", "check_privacy", "coalition_noise_variance",
           "gaussian_sigma", "rdp_epsilon", "sensitivities"]


# -- privacy: sensitivities, calibration, accounting ---------------------------------------------


def check_privacy(epsilon: float, delta: float) -> None:
    """Refuse ε outside (0, 1) (Def. 3's calibration, item 38) and δ outside (0, 1)
    (:func:`protocols.accounting.check_budget` with the classical range)."""
    check_budget(epsilon, delta, classical_range=True)


def sensitivities(n_samples: int, outliers: bool = True) -> tuple[float, float]:
    """(Δ_A, Δ_B) = (2/N, 4/N), or (2/N, 2/N) without outlier updating (§3.2)."""
    if n_samples < 1:
        raise InputError(f"n_samples = {n_samples} must be ≥ 1")
    return 2.0 / n_samples, (4.0 if outliers else 2.0) / n_samples


def gaussian_sigma(sensitivity: float, epsilon: float, delta: float) -> float:
    """τ = (Δ/ε)·sqrt(2 log(1.25/δ)), the Gaussian mechanism's noise (Def. 3), for ε < 1
    (:func:`protocols.accounting.classical_gaussian_std_def3`)."""
    return classical_gaussian_std_def3(sensitivity, epsilon, delta)


@dataclass(frozen=True)
class Accounting:
    """Total privacy loss of T_iter releases of (Ā_t, B̄_t) at δ.

    Attributes
    ----------
    epsilon_paper : float
        The paper's RDP composition at α_opt (§3.3).
    alpha_opt : float
        The paper's optimal order.
    epsilon_accountant : float
        ``dp-accounting``'s RDP accountant (its grid of orders, tighter RDP→DP conversion).
    epsilon_exact : float
        The exact ε of the composed Gaussian mechanisms (μ-GDP, Balle & Wang), for reference.
    delta : float
    """

    epsilon_paper: float
    alpha_opt: float
    epsilon_accountant: float
    epsilon_exact: float
    delta: float


def rdp_epsilon(ratios: list[float], iterations: int, delta: float) -> tuple[float, float]:
    """The paper's RDP composition (§3.3): returns (ε_total, α_opt).

    Parameters
    ----------
    ratios : list of float
        Δ²/σ² of each Gaussian release per iteration (two for Algorithm 2: A and B).
    iterations : int
        T_iter, the number of composed stages (the paper's K, digest §7.2 item 37).
    delta : float

    Notes
    -----
    ε_total = (α K/2)·Σ Δ²/σ² + log(1/δ)/(α − 1) at α_opt = 1 + sqrt(2 log(1/δ)/(K Σ Δ²/σ²)).
    """
    if iterations < 1:
        raise InputError(f"iterations = {iterations} must be ≥ 1")
    if not 0 < delta < 1:
        raise InputError(f"delta = {delta!r} must lie in (0, 1)")
    s = float(sum(ratios))
    log_inv = math.log(1.0 / delta)
    alpha = 1.0 + math.sqrt(2.0 * log_inv / (iterations * s))
    return alpha * iterations * s / 2.0 + log_inv / (alpha - 1.0), alpha


def account(epsilon: float, delta: float, iterations: int) -> Accounting:
    """Both accountings of Algorithm 2 with per-release ε and the calibration of Def. 3.

    With τ = (Δ/ε)·sqrt(2 log(1.25/δ)), Δ/τ does not depend on N or on the outlier setting,
    so the releases are given to :mod:`protocols.accounting` with Δ = 1 and σ = τ/Δ.
    """
    z = classical_noise_multiplier(epsilon, delta, classical_range=True)  # τ/Δ, A and B
    eps_paper, alpha = rdp_epsilon([1 / z**2, 1 / z**2], iterations, delta)
    per_iteration = [Release(name, z, 1.0, epsilon, delta) for name in ("A_t", "B_t")]
    releases = [r for r in per_iteration for _ in range(iterations)]
    return Accounting(eps_paper, alpha, dp_accounting_epsilon(releases, delta, "rdp"),
                      gaussian_epsilon(composed_mu(releases), delta), delta)


def coalition_noise_variance(sigma: float, n_curators: int, coalition_size: int) -> float:
    """Variance of the noise the coalition does not know: τ²(M − t)/M (digest §6 item 6)."""
    return sigma**2 * (n_curators - coalition_size) / n_curators
