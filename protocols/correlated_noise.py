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

Noise plans (:class:`~protocols.cape_noise_plans.NoisePlan`, in
:mod:`protocols.cape_noise_plans`; ``../shared/spec/cape.md`` §2–§3 reconstructs the formulas
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

from protocols import seeds
from protocols.accounting import check_budget, classical_gaussian_std
from protocols.cape_noise_plans import NoisePlan
from protocols.context import PartyContext
from protocols.effects import Call, Input, Output, Recv, RecvEach, Send, SendEach
from protocols.errors import InputError
from protocols.field import FixedPoint, Mersenne61Field
from protocols.functionality import CallInstance, FunctionalityMismatch, Ideal
from protocols.vocabulary import CAPE_NOISE_KINDS, CAPE_SCHEMES

PROTOCOL = "cape"
AGGREGATOR = "aggregator"
NOISE_GENERATOR = "noise_generator"
SCHEMES: tuple[str, ...] = CAPE_SCHEMES
NOISE_KINDS: tuple[str, ...] = CAPE_NOISE_KINDS

Scheme = Literal["cape", "conventional"]
NoiseKind = Literal["float", "discrete"]


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


SITE_NOISE_COV = "site_noise_cov"
"""The input label of a site noise's covariance per unit τ² (:func:`cape_site` ``noise_cov``)."""


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
    return seeds.generator([int(w) for w in np.ravel(words)])


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
    noise_cov: np.ndarray | None = None,
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
    noise_cov : ndarray of shape (d, d), optional
        The covariance of the mapped noise per unit τ² (public: a function of ``noise_map``),
        recorded in the view as the input ``site_noise_cov`` so that an audit can hold the
        release to its law (:mod:`protocols.cape_simulator`); not sent.
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
    if noise_cov is not None:
        yield Input(SITE_NOISE_COV, np.asarray(noise_cov, dtype=np.float64), call)
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
    site_noise_cov: np.ndarray | None = None,
) -> Generator[Any, Any, np.ndarray]:
    """Party program of the aggregator: returns a_CAPE = Σ_s μ_s (â_s − f_s), shape (d,).

    ``site_noise_cov`` (public, as :func:`cape_site`'s ``noise_cov``) is recorded in the view
    for the audits, never sent.
    """
    call = ctx.new_call(PROTOCOL)
    if site_noise_cov is not None:
        yield Input(SITE_NOISE_COV, np.asarray(site_noise_cov, dtype=np.float64), call)
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
    public = ("site_noise", SITE_NOISE_COV)
    if not sites:
        raise FunctionalityMismatch(f"no site recorded its statistic and noise in {inst.where}")
    releases = []
    for s in sites:
        stat = [v for lab, v in inst.inputs[s] if lab not in public]
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
