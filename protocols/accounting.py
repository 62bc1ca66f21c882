"""Privacy accounting of Gaussian releases, composed over an algorithm's stages.

An algorithm built on CAPE (:mod:`protocols.correlated_noise`) makes a few Gaussian releases
of statistics with known L2 sensitivity: capePCA one, capeAGN two (the whitening matrix and
the projected tensor), a repeated mean one per repetition. Each release is a
:class:`Release` — noise std σ, sensitivity Δ and the (ε, δ) it was calibrated for with the
paper's formula τ = Δ·√(2 ln(1.25/δ))/ε. :func:`account` reports three answers side by side:

``paper``
    The papers' own accounting (seed 003, Theorems 1 and 2): each release is (ε_i, δ_i)-DP by
    the classic calibration and the composition is basic, (Σ ε_i, Σ δ_i).
``exact``
    The composition of Gaussian mechanisms is itself a Gaussian mechanism with
    μ = √(Σ (Δ_i/σ_i)²) (Dong, Roth & Su, Gaussian DP, 2019); its exact privacy profile is
    δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) (Balle & Wang, ICML 2018, Thm. 8). We report the
    ε at the paper's total δ. This is a closed form, computed here with scipy only.
``dp_accounting``
    Google's ``dp-accounting`` library: the privacy-loss-distribution accountant (``pld``) and
    the Rényi accountant (``rdp``), each given one ``GaussianDpEvent(σ_i/Δ_i)`` per release,
    asked for ε at the same δ. The library is told ADD_OR_REMOVE_ONE so that it takes each
    noise multiplier as σ/Δ with our Δ, which already reflects the neighbouring relation the
    sensitivity was computed for.

The exact value and the PLD value agree to the PLD's discretisation (a test checks it); RDP
is an upper bound. The classic calibration is conservative for ε < 1 and can *under*-noise
for large ε (its proof assumes ε < 1): the reports show where the paper's ε is not met.

Calibration — the one place a noise std is computed from (Δ, ε, δ), for both families that
add Gaussian noise:

:func:`classical_gaussian_std`
    σ = Δ·√(2 ln(1.25/δ))/ε, the classical Gaussian mechanism (Dwork & Roth 2014, Thm. A.1),
    whose proof holds for ε < 1. CAPE (seed 003, §2; :mod:`protocols.correlated_noise`)
    applies it for every ε > 0; DP robust NMF (seed 000, Def. 3;
    :mod:`algorithms.nmf.dp_robust`) states it only for ε < 1, as (Δ/ε)·√(2 log(1.25/δ)), and
    refuses larger ε (:func:`classical_gaussian_std_def3`). Same formula, each paper's own
    domain and order of operations.
:func:`analytic_gaussian_std`
    The analytic Gaussian mechanism (Balle & Wang, ICML 2018, Thm. 8 and Alg. 1): the
    smallest σ whose exact privacy profile meets δ at ε — valid for every ε, and smaller
    than the classical σ. Neither paper uses it; it is here to show what the classical
    calibration spends (and to calibrate one's own protocol).
:func:`check_budget`
    The one validation of (ε, δ) both use.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.errors import InputError


@dataclass(frozen=True)
class Release:
    """One Gaussian release.

    Attributes
    ----------
    label : str
        What is released (e.g. ``"stage 1: M2"``).
    noise_std : float
        σ, the std of the noise on every coordinate.
    sensitivity : float
        Δ, the L2 sensitivity of the released statistic.
    epsilon, delta : float
        The budget the paper's calibration assigned to it.
    """

    label: str
    noise_std: float
    sensitivity: float
    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.noise_std) and self.noise_std > 0):
            raise InputError(f"{self.label}: noise std {self.noise_std!r} must be > 0")
        if not (math.isfinite(self.sensitivity) and self.sensitivity > 0):
            raise InputError(f"{self.label}: sensitivity {self.sensitivity!r} must be > 0")

    @property
    def noise_multiplier(self) -> float:
        """σ/Δ."""
        return self.noise_std / self.sensitivity


def check_budget(epsilon: Any, delta: Any, what: str = "", *,
                 classical_range: bool = False) -> tuple[float, float]:
    """Validate a privacy budget: ε finite and > 0 (and < 1 with ``classical_range``, the
    classical calibration's hypothesis), 0 < δ < 1. Returns them as floats.

    Raises
    ------
    InputError
        Naming ``what`` (when given), the value and the allowed range.
    """
    prefix = f"{what} " if what else ""
    number = (int, float, np.floating, np.integer)
    if isinstance(epsilon, bool) or not isinstance(epsilon, number) or not (
            math.isfinite(float(epsilon)) and epsilon > 0):
        raise InputError(f"{prefix}epsilon = {epsilon!r} must be a finite number > 0")
    if classical_range and not epsilon < 1:
        raise InputError(
            f"{prefix}epsilon = {epsilon!r} must lie in (0, 1): the classical Gaussian-mechanism "
            "calibration (Dwork & Roth, Thm. A.1; seed 000, Def. 3) holds only there; use a "
            "per-iteration ε below 1")
    if isinstance(delta, bool) or not isinstance(delta, number) or not 0.0 < float(delta) < 1.0:
        raise InputError(f"{prefix}delta = {delta!r} must lie in the open interval (0, 1)")
    return float(epsilon), float(delta)


def _check_sensitivity(sensitivity: Any) -> float:
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, int | float | np.floating
                                                       | np.integer) or not (
            math.isfinite(float(sensitivity)) and sensitivity > 0):
        raise InputError(f"sensitivity = {sensitivity!r} must be a finite number > 0")
    return float(sensitivity)


def classical_noise_multiplier(epsilon: float, delta: float, *,
                               classical_range: bool = False) -> float:
    """σ/Δ = √(2 ln(1.25/δ))/ε of the classical Gaussian mechanism (Dwork & Roth, Thm. A.1)."""
    epsilon, delta = check_budget(epsilon, delta, classical_range=classical_range)
    return _classical_factor(delta) / epsilon


def _classical_factor(delta: float) -> float:
    """√(2 ln(1.25/δ)), the classical calibration's factor."""
    return math.sqrt(2.0 * math.log(1.25 / delta))


def classical_gaussian_std(sensitivity: float, epsilon: float, delta: float, *,
                           classical_range: bool = False) -> float:
    """σ = Δ·√(2 ln(1.25/δ))/ε: the classical Gaussian mechanism (Dwork & Roth 2014, Thm. A.1),
    as CAPE (seed 003, §2) writes it.

    Parameters
    ----------
    sensitivity : float
        Δ, the L2 sensitivity of the released statistic (> 0).
    epsilon, delta : float
        The budget: ε > 0, 0 < δ < 1.
    classical_range : bool
        Refuse ε ≥ 1, where the theorem's proof does not hold. CAPE uses the formula for
        every ε and leaves it False.

    Returns
    -------
    float
        The noise std σ on every coordinate.
    """
    epsilon, delta = check_budget(epsilon, delta, classical_range=classical_range)
    return _check_sensitivity(sensitivity) * _classical_factor(delta) / epsilon


def classical_gaussian_std_def3(sensitivity: float, epsilon: float, delta: float) -> float:
    """τ = (Δ/ε)·√(2 log(1.25/δ)) for 0 < ε < 1: the same classical calibration as DP robust
    NMF (seed 000, Def. 3) writes it, with its range.

    The value is :func:`classical_gaussian_std`'s up to the order of the floating-point
    operations (the two differ in the last bit for about a third of the (Δ, ε) a run uses);
    the paper's order is kept so that DP robust NMF's runs stay byte-identical.
    """
    epsilon, delta = check_budget(epsilon, delta, classical_range=True)
    return _check_sensitivity(sensitivity) / epsilon * _classical_factor(delta)


def analytic_gaussian_std(sensitivity: float, epsilon: float, delta: float) -> float:
    """The analytic Gaussian mechanism's σ (Balle & Wang, ICML 2018, Alg. 1): the smallest σ
    with δ(ε) ≤ ``delta`` for μ = Δ/σ (:func:`gaussian_delta`, Thm. 8), for any ε > 0.

    Found by root finding on μ (δ(ε) increases with μ); σ = Δ/μ.
    """
    epsilon, delta = check_budget(epsilon, delta)
    sensitivity = _check_sensitivity(sensitivity)
    target = math.log(delta)
    hi = 1.0
    while _log_delta(hi, epsilon) < target:
        hi *= 2.0
    lo = hi / 2.0
    while lo > 1e-12 and _log_delta(lo, epsilon) > target:
        lo /= 2.0
    from scipy import optimize  # here, not at the top: every import of the registry pays it

    mu = float(optimize.brentq(lambda m: _log_delta(m, epsilon) - target, lo, hi,
                               xtol=1e-14, rtol=1e-12))
    return sensitivity / mu


def _log_delta(mu: float, epsilon: float) -> float:
    """log δ(ε) of the μ-Gaussian mechanism (Balle & Wang, Thm. 8), stable in log space."""
    from scipy import special

    a = special.log_ndtr(mu / 2.0 - epsilon / mu)
    b = epsilon + special.log_ndtr(-mu / 2.0 - epsilon / mu)
    if b >= a:
        return -math.inf
    return a + math.log1p(-math.exp(b - a))


def gaussian_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of a Gaussian mechanism with μ = Δ/σ (exact)."""
    return math.exp(_log_delta(mu, epsilon))


def gaussian_epsilon(mu: float, delta: float) -> float:
    """The smallest ε with δ(ε) ≤ ``delta`` for the μ-Gaussian mechanism (exact, by root
    finding on the monotone profile)."""
    if not 0 < delta < 1:
        raise InputError(f"delta = {delta!r} must lie in (0, 1)")
    if gaussian_delta(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while _log_delta(mu, hi) > math.log(delta):
        hi *= 2.0
    from scipy import optimize

    return float(optimize.brentq(lambda e: _log_delta(mu, e) - math.log(delta), 0.0, hi,
                                 xtol=1e-12, rtol=1e-10))


def composed_mu(releases: Sequence[Release]) -> float:
    """μ of the composition: √(Σ (Δ_i/σ_i)²)."""
    return math.sqrt(sum(1.0 / r.noise_multiplier**2 for r in releases))


def dp_accounting_epsilon(releases: Sequence[Release], delta: float, method: str = "pld") -> float:
    """ε at ``delta`` of the composed releases by ``dp-accounting`` (``pld`` or ``rdp``)."""
    import dp_accounting  # imported here: the library takes about a second to import
    from dp_accounting import pld, rdp

    relation = dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE
    if method == "pld":
        # a 1e-3 grid of privacy-loss values keeps one call near 0.1 s (the library's 1e-4
        # default takes seconds); ε is then within about 1e-3 of the exact value
        accountant: Any = pld.PLDAccountant(relation, value_discretization_interval=1e-3)
    elif method == "rdp":
        accountant = rdp.RdpAccountant(neighboring_relation=relation)
    else:
        raise InputError(f"accounting method {method!r} is unknown; use pld or rdp")
    counts: dict[float, int] = {}
    for r in releases:  # identical releases self-compose (one FFT power, not n convolutions)
        counts[r.noise_multiplier] = counts.get(r.noise_multiplier, 0) + 1
    event = dp_accounting.ComposedDpEvent([
        dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), n)
        for z, n in counts.items()
    ])
    accountant.compose(event)
    return float(accountant.get_epsilon(delta))


def account(releases: Sequence[Release], delta: float | None = None) -> dict[str, Any]:
    """The paper's, the exact and dp-accounting's (ε, δ) of the composed ``releases``.

    Parameters
    ----------
    releases : sequence of Release
        One entry per stage or repetition.
    delta : float, optional
        The δ at which ε is reported; by default the paper's Σ δ_i, or the largest single
        δ_i when the sum reaches 1 (basic composition is then vacuous: many repetitions).

    Returns
    -------
    dict
        ``releases`` (label, σ, Δ, σ/Δ, ε, δ each), ``paper`` {epsilon, delta},
        ``exact`` {epsilon, delta, mu}, ``dp_accounting_pld`` and ``dp_accounting_rdp``
        {epsilon, delta}, and ``paper_epsilon_met`` (exact ε ≤ paper ε).
    """
    if not releases:
        raise InputError("account() needs at least one release")
    eps_paper = float(sum(r.epsilon for r in releases))
    delta_paper = float(sum(r.delta for r in releases))
    if delta is None:
        target = delta_paper if delta_paper < 1 else max(r.delta for r in releases)
    else:
        target = float(delta)
    if not 0 < target < 1:
        raise InputError(f"delta = {target!r} must lie in (0, 1)")
    mu = composed_mu(releases)
    exact = gaussian_epsilon(mu, target)
    return {
        "releases": [
            {"label": r.label, "noise_std": r.noise_std, "sensitivity": r.sensitivity,
             "noise_multiplier": r.noise_multiplier, "epsilon": r.epsilon, "delta": r.delta}
            for r in releases
        ],
        "paper": {"epsilon": eps_paper, "delta": delta_paper, "vacuous": delta_paper >= 1},
        "exact": {"epsilon": exact, "delta": target, "mu": mu},
        "dp_accounting_pld": {"epsilon": dp_accounting_epsilon(releases, target, "pld"),
                              "delta": target},
        "dp_accounting_rdp": {"epsilon": dp_accounting_epsilon(releases, target, "rdp"),
                              "delta": target},
        "paper_epsilon_met": bool(exact <= eps_paper * (1 + 1e-9)),
    }


def repeated(release: Release, times: int) -> list[Release]:
    """``times`` copies of a release (a statistic released again on the same data)."""
    if times < 1:
        raise InputError(f"times = {times} must be ≥ 1")
    return [Release(f"{release.label} #{i + 1}", release.noise_std, release.sensitivity,
                    release.epsilon, release.delta) for i in range(times)]


__all__ = ["Release", "account", "analytic_gaussian_std", "check_budget",
           "classical_gaussian_std", "classical_gaussian_std_def3", "classical_noise_multiplier",
           "composed_mu", "dp_accounting_epsilon", "gaussian_delta", "gaussian_epsilon", "repeated"]
