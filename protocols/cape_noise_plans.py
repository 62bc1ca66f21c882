"""CAPE's noise plans: how much noise each site, the aggregator and the noise generator add.

Imtiaz & Sarwate (seed 003), §3, §3.1, App. A; ``../shared/spec/cape.md`` §2–§3 reconstructs
the formulas the extraction lost. A :class:`NoisePlan` holds the standard deviations of the
three noise terms at each of S sites (τ_e of the zero-sum noise e_s, τ_f of the aggregator's
f_s, τ_g of the site's own g_s) and the weights μ_s:

* :func:`cape_plan` — equal sample sizes, eq. (2): τ_e² = (1 − 1/S)τ², τ_f² = τ_g² = τ²/S,
  μ_s = 1/S; the aggregate noise variance is τ²/S² = τ_pool².
* :func:`generalized_plan` — unequal sample sizes, privacy levels and weights (§3.1, App. A.2):
  the closed-form solution of the feasibility problem; :func:`feasibility_lp` solves the same
  problem as a linear program (scipy's HiGHS), and :func:`constraint_residuals` measures how
  well any plan meets its three constraint families.
* :func:`conventional_plan` — the baseline: each site adds its full local noise τ_s, no
  correlated noise. :func:`performance_gain` is the paper's gain of CAPE over it.

The protocol that draws and exchanges the noise is :mod:`protocols.correlated_noise`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.errors import InputError

CONSTRUCTIONS: tuple[str, ...] = ("centred", "reference")


class InfeasibleNoiseError(InputError):
    """No noise plan meets the generalized CAPE constraints for the given sites."""



@dataclass(frozen=True)
class NoisePlan:
    """Standard deviations of the three noise terms at each of S sites.

    Attributes
    ----------
    scheme : {"cape", "conventional"}
    tau : ndarray, shape (S,)
        τ_s, the std site s would add on its own for its (ε_s, δ_s) guarantee.
    tau_e, tau_f, tau_g : ndarray, shape (S,)
        Stds of the NG's e_s, the aggregator's f_s and the site's own g_s.
    weights : ndarray, shape (S,)
        μ_s ≥ 0 with Σ μ_s = 1: the aggregate is Σ_s μ_s f(x_s).
    tau_pool : float
        Std of the aggregate's noise Σ_s μ_s g_s.
    construction : {"centred", "reference"}
        How the NG makes Σ μ_s e_s = 0 (module docstring).
    generator_std : ndarray, shape (S,)
        σ_s of the NG's independent draws ẽ_s.
    """

    scheme: str
    tau: np.ndarray
    tau_e: np.ndarray
    tau_f: np.ndarray
    tau_g: np.ndarray
    weights: np.ndarray
    tau_pool: float
    construction: str = "centred"
    generator_std: np.ndarray | None = None

    @property
    def n_sites(self) -> int:
        return len(self.tau)

    @property
    def uses_generator(self) -> bool:
        return self.scheme == "cape"

    @property
    def uses_aggregator_noise(self) -> bool:
        return bool(np.any(self.tau_f > 0))

    @property
    def equal_weights(self) -> bool:
        return bool(np.all(self.weights == self.weights[0]))

    def release_variance(self) -> np.ndarray:
        """Var of the noise on each site's release â_s: τ_e² + τ_f² + τ_g², shape (S,)."""
        return self.tau_e**2 + self.tau_f**2 + self.tau_g**2

    def aggregate_variance(self) -> float:
        """Var of the noise on the aggregate, Σ_s μ_s² τ_gs²."""
        return float(np.sum(self.weights**2 * self.tau_g**2))

    def generator_matrix(self) -> np.ndarray:
        """B with e = B ẽ, ẽ ~ N(0, diag(generator_std²)): shape (S, S); zero without an NG."""
        S = self.n_sites
        if not self.uses_generator:
            return np.zeros((S, S))
        mu = self.weights
        if self.construction == "centred":
            return np.eye(S) - np.outer(np.ones(S), mu)
        B = np.eye(S)
        B[-1, :-1] = -mu[:-1] / mu[-1]
        B[-1, -1] = 0.0
        return B

    def generator_covariance(self) -> np.ndarray:
        """Cov(e_1..e_S), shape (S, S) (rank S − 1: the weighted sum is zero)."""
        B = self.generator_matrix()
        sigma = self.generator_std if self.generator_std is not None else np.zeros(self.n_sites)
        return B @ np.diag(sigma**2) @ B.T


def _positive_vector(name: str, values: Any, n: int | None = None) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if arr.ndim != 1 or (n is not None and len(arr) != n):
        raise InputError(f"{name} must be a vector of {n} values, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise InputError(f"{name} = {arr.tolist()} must hold finite values > 0")
    return arr


def _weights(weights: Any, n: int) -> np.ndarray:
    mu = np.full(n, 1.0 / n) if weights is None else np.asarray(weights, dtype=np.float64)
    if mu.shape != (n,) or not np.all(np.isfinite(mu)) or np.any(mu <= 0):
        raise InputError(f"weights = {np.asarray(weights).tolist()} must be {n} values > 0")
    if abs(float(mu.sum()) - 1.0) > 1e-9:
        raise InputError(f"weights sum to {float(mu.sum())!r}; they must sum to 1")
    return mu


def _check_sites(n_sites: int) -> int:
    if isinstance(n_sites, bool) or not isinstance(n_sites, int) or n_sites < 2:
        raise InputError(f"n_sites = {n_sites!r}: CAPE needs at least 2 sites")
    return n_sites


def cape_plan(tau: float, n_sites: int, use_aggregator_noise: bool = True) -> NoisePlan:
    """Eq. (2), equal sample sizes: τ_e² = (1 − 1/S)τ², τ_f² = τ_g² = τ²/S, μ_s = 1/S.

    Parameters
    ----------
    tau : float
        Every site's stand-alone std τ_s = Δ_s·c(ε, δ).
    n_sites : int
        S ≥ 2.
    use_aggregator_noise : bool
        Add the aggregator's f_s (the JSTSP description); off, each release carries exactly τ².
    """
    S = _check_sites(n_sites)
    t = float(_positive_vector("tau", tau, 1)[0])
    ones = np.ones(S)
    return NoisePlan(
        scheme="cape",
        tau=t * ones,
        tau_e=t * math.sqrt(1.0 - 1.0 / S) * ones,
        tau_f=(t / math.sqrt(S) if use_aggregator_noise else 0.0) * ones,
        tau_g=t / math.sqrt(S) * ones,
        weights=ones / S,
        tau_pool=t / S,
        construction="centred",
        generator_std=t * ones,
    )


def conventional_plan(tau: Sequence[float] | np.ndarray, weights: Any = None) -> NoisePlan:
    """The conventional scheme: site s adds its full τ_s; no NG, no aggregator noise."""
    t = _positive_vector("tau", tau)
    _check_sites(len(t))
    mu = _weights(weights, len(t))
    zeros = np.zeros(len(t))
    return NoisePlan(
        scheme="conventional", tau=t, tau_e=zeros, tau_f=zeros.copy(), tau_g=t.copy(),
        weights=mu, tau_pool=float(np.sqrt(np.sum(mu**2 * t**2))), construction="centred",
        generator_std=zeros.copy(),
    )


def generalized_plan(
    tau: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray,
    tau_pool: float,
    use_aggregator_noise: bool = True,
) -> NoisePlan:
    """The closed-form solution of §3.1 / App. A.2 (unequal sizes, privacy levels, weights).

    Steps (spec §3; the step order follows App. A.2, the expressions are reconstructed):
    τ_gs² = τ_pool²/(S μ_s²); at the reference site S, τ_fS² = τ_gS² and
    τ_eS² = τ_S² − τ_fS² − τ_gS²; the other sites share the weighted e-variance evenly,
    τ_es² = μ_S² τ_eS²/((S − 1) μ_s²), and τ_fs² = τ_s² − τ_es² − τ_gs². The NG draws e_s
    independently for s < S and sets e_S = −(1/μ_S) Σ_{s<S} μ_s e_s. Without aggregator noise,
    τ_fs = 0 and the e-variances take up the rest: the plan is then feasible only if
    τ_es² = τ_s² − τ_gs² meets the weighted zero-sum identity, which the closed form checks.

    Raises
    ------
    InfeasibleNoiseError
        When a variance would be negative (τ_pool too large for some site's τ_s, or the
        weighted zero sum cannot be met); the message names the site and what to change.
    """
    t = _positive_vector("tau", tau)
    S = _check_sites(len(t))
    mu = _weights(weights, S)
    pool = float(_positive_vector("tau_pool", tau_pool, 1)[0])
    tg2 = pool**2 / (S * mu**2)
    if use_aggregator_noise:
        tf2_ref = tg2[-1]
        te2_ref = t[-1] ** 2 - tf2_ref - tg2[-1]
        if te2_ref < 0:
            raise InfeasibleNoiseError(
                f"generalized CAPE is infeasible: the reference site {S - 1} needs "
                f"τ_S² = {t[-1] ** 2:.6g} ≥ 2·τ_pool²/(S·μ_S²) = {2 * tg2[-1]:.6g}; lower "
                "tau_pool or reorder the sites so that the reference has the largest τ_s·μ_s"
            )
        te2 = np.empty(S)
        te2[:-1] = mu[-1] ** 2 * te2_ref / ((S - 1) * mu[:-1] ** 2)
        te2[-1] = te2_ref
        tf2 = t**2 - te2 - tg2
        tf2[-1] = tf2_ref
    else:
        te2 = t**2 - tg2
        tf2 = np.zeros(S)
        lhs, rhs = mu[-1] ** 2 * te2[-1], float(np.sum(mu[:-1] ** 2 * te2[:-1]))
        if abs(lhs - rhs) > 1e-9 * max(lhs, rhs, 1e-300):
            raise InfeasibleNoiseError(
                "generalized CAPE without aggregator noise is infeasible for these sites: the "
                f"weighted zero sum needs μ_S²τ_eS² = {lhs:.6g} to equal Σ μ_s²τ_es² = "
                f"{rhs:.6g}; turn aggregator noise on"
            )
    bad = np.nonzero((te2 < -1e-15) | (tf2 < -1e-15))[0]
    if bad.size:
        s = int(bad[0])
        raise InfeasibleNoiseError(
            f"generalized CAPE is infeasible: site {s} would need a negative variance "
            f"(τ_e² = {te2[s]:.6g}, τ_f² = {tf2[s]:.6g}) for τ_s = {t[s]:.6g}, "
            f"μ_s = {mu[s]:.6g} and τ_pool = {pool:.6g}; lower tau_pool or raise τ_s"
        )
    te2, tf2 = np.maximum(te2, 0.0), np.maximum(tf2, 0.0)
    return NoisePlan(
        scheme="cape", tau=t, tau_e=np.sqrt(te2), tau_f=np.sqrt(tf2), tau_g=np.sqrt(tg2),
        weights=mu, tau_pool=pool, construction="reference", generator_std=np.sqrt(te2),
    )


def feasibility_lp(
    tau: Sequence[float] | np.ndarray,
    weights: Sequence[float] | np.ndarray,
    tau_pool: float,
) -> NoisePlan:
    """The feasibility problem of App. A.2 solved as a linear program in the variances.

    Unknowns v = (τ_e², τ_f², τ_g²) ≥ 0; constraints τ_es² + τ_fs² + τ_gs² ≥ τ_s² (all s),
    μ_S² τ_eS² = Σ_{s<S} μ_s² τ_es² (weighted zero sum, ``reference`` construction) and
    Σ_s μ_s² τ_gs² = τ_pool². The paper's objective is 0; to return a definite point we
    minimise the total release variance Σ_s (τ_es² + τ_fs² + τ_gs²).
    """
    from scipy.optimize import linprog

    t = _positive_vector("tau", tau)
    S = _check_sites(len(t))
    mu = _weights(weights, S)
    pool = float(_positive_vector("tau_pool", tau_pool, 1)[0])
    unit = float(t.max())  # solve in units of the largest τ_s: HiGHS's tolerances are absolute
    t, pool = t / unit, pool / unit
    n = 3 * S
    c = np.ones(n)
    a_ub = np.zeros((S, n))
    for s in range(S):
        a_ub[s, [s, S + s, 2 * S + s]] = -1.0
    b_ub = -(t**2)
    a_eq = np.zeros((2, n))
    a_eq[0, :S] = -(mu**2)
    a_eq[0, S - 1] = mu[-1] ** 2
    a_eq[1, 2 * S :] = mu**2
    b_eq = np.array([0.0, pool**2])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=(0, None),
                  method="highs", options={"primal_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise InfeasibleNoiseError(f"generalized CAPE feasibility problem: {res.message}")
    v = np.maximum(res.x, 0.0)
    # meet the privacy constraints exactly: top up τ_f² where the solver stopped short
    short = t**2 - (v[:S] + v[S : 2 * S] + v[2 * S :])
    v[S : 2 * S] += np.maximum(short, 0.0)
    v, t, pool = v * unit**2, t * unit, pool * unit
    te2, tf2, tg2 = v[:S], v[S : 2 * S], v[2 * S :]
    return NoisePlan(
        scheme="cape", tau=t, tau_e=np.sqrt(te2), tau_f=np.sqrt(tf2), tau_g=np.sqrt(tg2),
        weights=mu, tau_pool=pool, construction="reference", generator_std=np.sqrt(te2),
    )


def constraint_residuals(plan: NoisePlan) -> dict[str, float]:
    """How far a plan is from the three constraint families (≤ 0 / 0 means met).

    ``privacy``: max_s (τ_s² − release variance_s) — must be ≤ 0;
    ``zero_sum``: the largest |Cov(Σ μ_s e_s, ·)| entry, i.e. ‖μᵀ Cov(e)‖_∞ — must be 0;
    ``pooled``: Σ μ_s² τ_gs² − τ_pool² — must be 0 (for CAPE plans).
    """
    cov = plan.generator_covariance()
    return {
        "privacy": float(np.max(plan.tau**2 - plan.release_variance())),
        "zero_sum": float(np.max(np.abs(plan.weights @ cov))),
        "pooled": plan.aggregate_variance() - plan.tau_pool**2,
    }


def performance_gain(sizes: Sequence[float]) -> float:
    """Proposition 1 (spec §2.4, reconstructed): G(n) = (Σ N_s)² / Σ N_s², in [1, S].

    The ratio of the best conventional estimator's noise variance (inverse-variance weights)
    to CAPE's; S at equal sizes, 1 when one site holds every sample.
    """
    n = np.asarray(sizes, dtype=np.float64)
    if n.ndim != 1 or len(n) < 1 or np.any(n < 0) or n.sum() <= 0:
        raise InputError(f"sizes = {n.tolist()} must be non-negative with a positive sum")
    return float(n.sum() ** 2 / np.sum(n**2))
