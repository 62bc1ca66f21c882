"""CAPE: correlation-assisted private estimation (Imtiaz & Sarwate, seed 003, §3, §3.1, App. A).

S sites each hold a statistic f(x_s) (a mean, a second-moment matrix, a projected tensor)
and an untrusted **aggregator** wants Σ_s μ_s f(x_s) with differential privacy. A trusted
**noise generator** (NG) hands each site a Gaussian e_s with Σ_s μ_s e_s = 0; the aggregator
hands site s a Gaussian f_s and keeps a copy; site s adds its own g_s and releases

    â_s = f(x_s) + e_s + f_s + g_s                                  (Algorithm 1, steps 1–3)

The aggregator removes its f_s and averages: the e_s cancel, so
a_CAPE = Σ_s μ_s f(x_s) + Σ_s μ_s g_s carries only the site noise, whose variance is that of
the pooled-data Gaussian mechanism (Lemma 1), while each release alone carries at least the
noise site s would add on its own (its (ε, δ) guarantee, Theorem 1).

Noise plans (:class:`NoisePlan`; ``../shared/spec/cape.md`` §2–§3 reconstructs the formulas
the extraction lost):

* :func:`cape_plan` — equal sample sizes, eq. (2): τ_e² = (1 − 1/S)τ², τ_f² = τ_g² = τ²/S,
  μ_s = 1/S; the aggregate noise variance is τ²/S² = τ_pool². ``use_aggregator_noise=False``
  drops f_s (the CAPE journal version; the JSTSP text says f_s is unnecessary when enough sites
  are trusted).
* :func:`generalized_plan` — unequal sample sizes, privacy levels and weights (§3.1, App. A.2):
  the closed-form solution of the feasibility problem. :func:`feasibility_lp` solves the same
  problem as a linear program (scipy's HiGHS), and :func:`constraint_residuals` measures how
  well any plan meets its three constraint families (site privacy, weighted zero sum, pooled
  output variance); "multiple solutions are possible" (App. A.2), so tests check constraints,
  not numbers.
* :func:`conventional_plan` — the baseline: each site adds its full local noise τ_s, no
  correlated noise; the aggregate noise variance is Σ_s μ_s² τ_s² (S times τ_pool² with equal
  sizes). The *local-only* baseline is one site's release used alone.

The NG builds zero-sum noise in one of two ways (both exact in law): ``centred`` —
ẽ_s ~ N(0, σ_s²) i.i.d., e_s = ẽ_s − Σ_t μ_t ẽ_t (eq. (2)'s construction:
Var e_s = (1 − 1/S)τ², Cov(e_s, e_t) = −τ²/S in the equal case); ``reference`` — e_s
independent for s < S and e_S = −(1/μ_S) Σ_{s<S} μ_s e_s (the closed form of App. A.2).

Messages (explicit roles, tags from the shared call counter; every payload sealed on the
channel): NG → site s ``correlated_noise`` (e_s), aggregator → site s ``aggregator_noise``
(f_s, only when τ_f > 0), site s → aggregator ``release`` (â_s), and, when asked,
aggregator → every site ``aggregate``. Noise and releases are fixed-point field elements of
the run's field; each party records the noise it contributes as a protocol input (``Input``)
so that its view is complete (the collusion analysis of :mod:`parties.cape_collusion` reads
them there). Declared cost per call of a length-d statistic (:func:`declared_cost`): a site
sends one message of d elements and receives one (conventional) to three; the NG and the
aggregator each send S messages of d elements.

Fixed point and floating point
------------------------------
``noise = "float"`` (default) draws every Gaussian in float64 with the party's numpy
generator and rounds it to the fixed-point grid 2^−f when it is encoded. Floating-point
samplers do not realise the Gaussian exactly — their outputs have gaps and a non-uniform
spacing that a release can betray (Mironov, CCS 2012, for the Laplace mechanism; the same
holds for Gaussians) — so the DP theorems hold only approximately for the float path;
rounding to a grid much coarser than float resolution removes the gap pattern but not the
approximation in the cell probabilities. ``noise = "discrete"`` samples every noise term
directly on the grid from the discrete Gaussian N_Z(0, σ²) (Canonne, Kamath & Steinke,
NeurIPS 2020, Algorithm 3: discrete-Laplace proposals with rejection). Departure: the
acceptance test is computed in float64 (probabilities correct to ~1e−16 relative), not with
the exact rational arithmetic of the paper, which would cost a Python-level loop per sample.
With σ ≥ 1 grid unit the discrete Gaussian has variance within 1e−10 of σ² and the same zCDP
guarantee ρ = Δ²/(2σ²) as the continuous one (Δ measured in grid units; encoding the statistic
itself rounds it by at most 2^−(f+1) per coordinate, which adds at most √d·2^−f to Δ). In the
discrete mode the NG's zero-sum construction is made on the integers: with equal weights the
mean is subtracted in whole grid units and the remainder spread over randomly chosen sites, so
Σ_s e_s = 0 exactly; with unequal weights the weighted combination is rounded to the grid.

With equal weights the aggregator sums the releases in the field, so the e_s cancel exactly;
with unequal weights it decodes each release and weighs it in float64, so the weighted zero sum
holds up to the grid's rounding, Σ_s μ_s·2^−(f+1) per coordinate at most.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from protocols.accounting import check_budget, classical_gaussian_std
from protocols.context import PartyContext
from protocols.effects import Call, Input, Output, Recv, RecvEach, Send, SendEach
from protocols.errors import InputError
from protocols.field import FixedPoint, Mersenne61Field
from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal

PROTOCOL = "cape"
AGGREGATOR = "aggregator"
NOISE_GENERATOR = "noise_generator"
SCHEMES: tuple[str, ...] = ("cape", "conventional")
NOISE_KINDS: tuple[str, ...] = ("float", "discrete")

CONSTRUCTIONS: tuple[str, ...] = ("centred", "reference")

Scheme = Literal["cape", "conventional"]
NoiseKind = Literal["float", "discrete"]


class InfeasibleNoiseError(InputError):
    """No noise plan meets the generalized CAPE constraints for the given sites."""


# -- Gaussian mechanism ------------------------------------------------------------------------


def check_privacy(epsilon: float, delta: float, what: str = "") -> tuple[float, float]:
    """Validate a privacy budget: ε > 0 finite, 0 < δ < 1. Returns them as floats
    (:func:`protocols.accounting.check_budget`, the one check both DP families use)."""
    return check_budget(epsilon, delta, what)


def gaussian_noise_scale(sensitivity: float, epsilon: float, delta: float) -> float:
    """τ = Δ·√(2 ln(1.25/δ))/ε: the Gaussian mechanism's noise std (Dwork & Roth, Thm. A.1).

    The paper's only calibration (§2), computed by
    :func:`protocols.accounting.classical_gaussian_std`. Its classic proof needs ε < 1; the
    paper (and this function) use it for every ε — :mod:`protocols.accounting` reports what it
    really buys.
    """
    return classical_gaussian_std(sensitivity, epsilon, delta)


# -- noise plans -------------------------------------------------------------------------------


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


# -- noise sampling ----------------------------------------------------------------------------


def discrete_gaussian(rng: np.random.Generator, sigma: float, size: int) -> np.ndarray:
    """Draws from the discrete Gaussian N_Z(0, σ²) on the integers, shape (size,), int64.

    Canonne, Kamath & Steinke (2020), Algorithm 3: propose Y from the discrete Laplace with
    scale t = ⌊σ⌋ + 1 (a difference of two geometric variables) and accept with probability
    exp(−(|Y| − σ²/t)² / (2σ²)); the acceptance rate is above 0.3 for every σ. Acceptance is
    evaluated in float64 (module docstring).
    """
    if not (math.isfinite(sigma) and sigma >= 0):
        raise InputError(f"sigma = {sigma!r} must be a finite number ≥ 0")
    out = np.zeros(size, dtype=np.int64)
    if sigma == 0 or size == 0:
        return out
    if sigma > 2.0**50:
        raise InputError(f"sigma = {sigma:.6g} grid units is too large for int64 sampling")
    s2 = sigma * sigma
    t = math.floor(sigma) + 1
    p = -math.expm1(-1.0 / t)
    filled = 0
    while filled < size:
        m = max(2 * (size - filled), 64)
        y = rng.geometric(p, m) - rng.geometric(p, m)
        accept = rng.random(m) < np.exp(-((np.abs(y) - s2 / t) ** 2) / (2.0 * s2))
        y = y[accept][: size - filled]
        out[filled : filled + len(y)] = y
        filled += len(y)
    return out


def _grid(fixed: FixedPoint, ints: np.ndarray, n_summands: int, what: str) -> np.ndarray:
    """Field elements of integers on the fixed-point grid (|v| checked against the headroom)."""
    ints = np.asarray(ints, dtype=np.int64)
    limit = fixed.half // n_summands
    if ints.size and int(np.max(np.abs(ints))) > limit:
        from protocols.errors import FieldOverflowError

        worst = float(ints.ravel()[int(np.argmax(np.abs(ints)))]) / fixed.scale
        raise FieldOverflowError(worst, fixed.bound(n_summands), what,
                                 "lower frac_bits or use a larger prime")
    if isinstance(fixed.field, Mersenne61Field):
        return fixed.field.from_signed(ints)
    return fixed.field.elements(ints)


def draw_noise(
    rng: np.random.Generator, std: float, size: int, kind: str, fixed: FixedPoint
) -> np.ndarray:
    """One noise vector of ``size`` i.i.d. draws with std ``std``, as real values.

    ``float``: N(0, std²) in float64. ``discrete``: N_Z(0, (std·2^f)²) on the grid, divided by
    2^f (so the values are exact grid points and encode without rounding).
    """
    if kind == "float":
        return rng.normal(0.0, std, size) if std > 0 else np.zeros(size)
    return discrete_gaussian(rng, std * fixed.scale, size).astype(np.float64) / fixed.scale


def zero_sum_noise(
    rng: np.random.Generator, plan: NoisePlan, size: int, kind: str, fixed: FixedPoint
) -> np.ndarray:
    """The NG's correlated noise, shape (S, size), with Σ_s μ_s e_s = 0 (module docstring).

    Returned as real values on the grid (the float path rounds them; with equal weights the
    last row is set so that the rounded rows sum to exactly zero).
    """
    S = plan.n_sites
    sigma = plan.generator_std if plan.generator_std is not None else np.zeros(S)
    if kind == "discrete" and plan.equal_weights and plan.construction == "centred":
        raw = np.stack([discrete_gaussian(rng, float(s) * fixed.scale, size) for s in sigma])
        total = raw.sum(axis=0)
        base, remainder = np.divmod(total, S)
        e = raw - base[None, :]
        # spread the remainder: `remainder` randomly chosen sites give one more grid unit
        ranks = np.argsort(rng.random((S, size)), axis=0).argsort(axis=0)
        e -= (ranks < remainder[None, :]).astype(np.int64)
        return e.astype(np.float64) / fixed.scale
    raw = np.stack([draw_noise(rng, float(s), size, kind, fixed) for s in sigma])
    e = plan.generator_matrix() @ raw
    grid = np.rint(e * fixed.scale)
    if plan.equal_weights:
        grid[-1] = -grid[:-1].sum(axis=0)
    return grid / fixed.scale


# -- party programs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """Declared communication of one CAPE call on a length-d statistic."""

    site_messages_sent: int
    site_elements_sent: int
    site_messages_received: int
    aggregator_messages_sent: int
    generator_messages_sent: int


def declared_cost(plan: NoisePlan, length: int, broadcast: bool = False) -> Cost:
    """Messages and elements of one call (a contract test holds the ledger to these)."""
    S = plan.n_sites
    received = int(plan.uses_generator) + int(plan.uses_aggregator_noise) + int(broadcast)
    return Cost(
        site_messages_sent=1,
        site_elements_sent=length,
        site_messages_received=received,
        aggregator_messages_sent=S * (int(plan.uses_aggregator_noise) + int(broadcast)),
        generator_messages_sent=S if plan.uses_generator else 0,
    )


def role_id(ctx: PartyContext, role: str) -> int:
    """The id of the participant playing ``role`` (exactly one must)."""
    ids = [p for p, r in ctx.roles.items() if r == role]
    if len(ids) != 1:
        raise InputError(f"CAPE needs exactly one {role}; the run has {len(ids)}")
    return ids[0]


NOISE_SEED_BITS = 256
"""Bits of the party's private stream that seed one call's noise generator."""


def noise_rng(ctx: PartyContext, call: Call) -> np.random.Generator:
    """The generator of one call's Gaussian noise, seeded from the party's private stream.

    Every noise term of CAPE (g_s at a site, f_s at the aggregator, e_s at the noise
    generator) is drawn from a numpy Generator whose seed is the first 256 bits' worth of
    field elements of the party's private AES-CTR stream of the call
    (:meth:`~protocols.context.Randomness.private`), not from its local coins: the stream is
    keyed by the party's private key, so the noise is as unpredictable as the masks, replays
    exactly for a seed, and an audit that injects the randomness draws the honest parties'
    noise afresh while holding the coalition's fixed (:mod:`protocols.cape_simulator`).
    """
    count = max(1, math.ceil(NOISE_SEED_BITS / max(ctx.field.bits - 1, 1)))
    words = ctx.randomness.private(call, count)
    return np.random.default_rng(np.random.SeedSequence([int(w) for w in np.ravel(words)]))


def _n_summands(plan: NoisePlan) -> int:
    return 3 * plan.n_sites  # every encoded value is one of at most 3S terms that get added


def cape_site(
    ctx: PartyContext,
    statistic: Any,
    plan: NoisePlan,
    *,
    noise: str = "float",
    noise_length: int | None = None,
    noise_map: Callable[[np.ndarray], np.ndarray] | None = None,
    broadcast: bool = False,
    label: str = "statistic",
) -> Generator[Any, Any, np.ndarray | None]:
    """Party program of site s: release â_s = f(x_s) + e_s + f_s + g_s to the aggregator.

    Parameters
    ----------
    statistic : array_like of float, any shape
        f(x_s); it is flattened (length d).
    plan : NoisePlan
        The run's plan; site s draws g_s with std ``plan.tau_g[s]``.
    noise : {"float", "discrete"}
    noise_length, noise_map : optional
        capeAGN's stage 2 adds the site noise before a projection: g_s is drawn with
        ``noise_length`` i.i.d. entries and mapped to the statistic's d entries by the linear
        ``noise_map`` (spec §6.2 step 3). By default g_s has d i.i.d. entries.
    broadcast : bool
        Wait for the aggregate from the aggregator and return it (else return None).
    """
    values = np.asarray(statistic, dtype=np.float64).ravel()
    site = ctx.party
    if not 0 <= site < plan.n_sites:
        raise InputError(f"site {site} is outside the plan's {plan.n_sites} sites")
    aggregator = role_id(ctx, AGGREGATOR)
    call = ctx.new_call(PROTOCOL)
    yield Input(label, values, call)
    m = len(values) if noise_length is None else noise_length
    g = draw_noise(noise_rng(ctx, call), float(plan.tau_g[site]), m, noise, ctx.fixed)
    if noise_map is not None:
        g = np.asarray(noise_map(g), dtype=np.float64).ravel()
        if noise == "discrete":  # the projection leaves the grid; return to it
            g = np.rint(g * ctx.fixed.scale) / ctx.fixed.scale
    if g.shape != values.shape:
        raise InputError(f"site noise has shape {g.shape}; the statistic has {values.shape}")
    yield Input("site_noise", g, call)
    n_sum = _n_summands(plan)
    release = ctx.fixed.encode(values + g, n_summands=n_sum, what=f"CAPE {label} + site noise")
    if plan.uses_generator:
        e = yield Recv(role_id(ctx, NOISE_GENERATOR), call, "correlated_noise")
        release = ctx.field.add(release, e)
    if plan.uses_aggregator_noise:
        f = yield Recv(aggregator, call, "aggregator_noise")
        release = ctx.field.add(release, f)
    yield Send(aggregator, release, call, "release")
    if not broadcast:
        return None
    aggregate = yield Recv(aggregator, call, "aggregate")
    yield Output("aggregate", aggregate, call)
    return np.asarray(aggregate)


def cape_noise_generator(
    ctx: PartyContext, plan: NoisePlan, length: int, *, noise: str = "float"
) -> Generator[Any, Any, None]:
    """Party program of the trusted NG: send each site its share e_s of zero-sum noise."""
    call = ctx.new_call(PROTOCOL)
    e = zero_sum_noise(noise_rng(ctx, call), plan, length, noise, ctx.fixed)
    yield Input("correlated_noise", e, call)
    n_sum = _n_summands(plan)
    payloads = {
        s: _grid(ctx.fixed, np.rint(e[s] * ctx.fixed.scale), n_sum, "CAPE correlated noise")
        for s in range(plan.n_sites)
    }
    yield SendEach(payloads, call, "correlated_noise")


def cape_aggregator(
    ctx: PartyContext,
    plan: NoisePlan,
    length: int,
    *,
    noise: str = "float",
    broadcast: bool = False,
) -> Generator[Any, Any, np.ndarray]:
    """Party program of the aggregator: returns a_CAPE = Σ_s μ_s (â_s − f_s), shape (d,)."""
    call = ctx.new_call(PROTOCOL)
    sites = tuple(range(plan.n_sites))
    n_sum = _n_summands(plan)
    f_field = None
    if plan.uses_aggregator_noise:
        rng = noise_rng(ctx, call)
        f = np.stack([draw_noise(rng, float(plan.tau_f[s]), length, noise, ctx.fixed)
                      for s in sites])
        f_field = {s: ctx.fixed.encode(f[s], n_summands=n_sum, what="CAPE aggregator noise")
                   for s in sites}
        # the values as sent (on the grid), so that the view holds exactly what was added
        yield Input("aggregator_noise", np.stack([ctx.fixed.decode(f_field[s]) for s in sites]),
                    call)
        yield SendEach(f_field, call, "aggregator_noise")
    releases = yield RecvEach(sites, call, "release")
    own = [releases[s] if f_field is None else ctx.field.sub(releases[s], f_field[s])
           for s in sites]
    aggregate = combine(ctx.fixed, own, plan.weights)
    yield Output("aggregate", aggregate, call)
    if broadcast:
        yield SendEach(dict.fromkeys(sites, aggregate), call, "aggregate")
    return aggregate


def combine(fixed: FixedPoint, releases: Sequence[np.ndarray], weights: np.ndarray) -> np.ndarray:
    """Σ_s μ_s decode(r_s): summed in the field when the weights are equal (exact cancellation
    of the correlated noise), decoded and weighed in float64 otherwise."""
    if np.all(weights == weights[0]):
        return fixed.decode(fixed.field.sum_arrays(list(releases))) * float(weights[0])
    return np.sum([w * fixed.decode(r) for w, r in zip(weights, releases, strict=True)], axis=0)


# -- the ideal functionality (protocols.functionality) -------------------------------------------


def functionality(inst: CallInstance) -> dict[str, Ideal]:
    """CAPE's ideal output: ``aggregate`` = Σ_s μ_s (f(x_s) + g_s) (Theorem 1's release).

    The correlated noise e_s sums to zero and the aggregator removes its own noise, so what
    remains is the weighted sum of the sites' statistics plus their own noise g_s (inputs
    ``site_noise``). The weights μ_s are the plan's public parameters, which the views do not
    hold: the check fits them by least squares and holds the residual to the fixed-point grid
    (1e-6 relative, 2^−10 absolute). With as many sites as coordinates any vector fits — the
    check then has no power, which the fitted value makes plain (it equals the declared one).
    """
    sites = [p for p in inst.contributors
             if any(lab == "site_noise" for lab, _ in inst.inputs.get(p, ()))]
    if not sites:
        raise FunctionalityMismatch(f"no site recorded its statistic and noise in {inst.where}")
    releases = []
    for s in sites:
        stat = [v for lab, v in inst.inputs[s] if lab != "site_noise"]
        if len(stat) != 1:
            raise FunctionalityMismatch(f"site {s} recorded {len(stat)} statistics in "
                                        f"{inst.where}, not one")
        releases.append(np.ravel(np.asarray(stat[0], dtype=np.float64))
                        + np.ravel(np.asarray(inst.input_of(s, "site_noise"), dtype=np.float64)))
    basis = np.stack(releases, axis=1)  # (d, sites)
    declared = [np.ravel(np.asarray(v, dtype=np.float64)) for recs in inst.outputs.values()
                for lab, v in recs if lab == "aggregate"]
    if not declared or declared[0].size != basis.shape[0]:
        return {"aggregate": Ideal(basis.sum(axis=1), 0.0)}
    weights, *_ = np.linalg.lstsq(basis, declared[0], rcond=None)
    fitted = basis @ weights
    tol = 2.0 ** -10 + 1e-6 * float(np.max(np.abs(basis), initial=0.0)) * len(sites)
    return {"aggregate": Ideal(fitted, tol)}
