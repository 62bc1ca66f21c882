"""Collusion against CAPE: how much noise is left on an honest site's release (seed 003, §3;
spec §2.3).

In CAPE (:mod:`protocols.correlated_noise`) the aggregator receives every site's release
â_s = f(x_s) + e_s + f_s + g_s and knows its own f_s; a colluding site also knows the e_c the
noise generator sent it. Because Σ_s μ_s e_s = 0, the colluders' e_c say something about the
honest sites' e_s. For an honest site h the question is the variance of the noise on
r_h = â_h − f_h = f(x_h) + e_h + g_h that the coalition cannot remove: each release was
calibrated so that this noise alone gives site h its (ε, δ) guarantee (variance τ_h²).

:func:`analyse` answers it twice, from the coalition's **logged views** (:class:`Coalition`):

``view_only``
    The coalition knows what its views hold: every release and the aggregator's f_s (the
    aggregator's view), and the e_c of its member sites. Features: the e_c.
``side_information``
    The standard DP adversary also knows the other honest sites' data; then it knows their
    noise n_t = r_t − f(x_t) as well. Those statistics are not in the coalition's views: the
    caller passes them (from the honest sites' own views) and the analysis labels them.

For each, the *empirical* residual variance is what is left of the noise n_h after the best
linear predictor from the features, fitted over every logged call and coordinate (least squares
through the origin, residual variance corrected for the fitted coefficients); the *analytic*
one is the Gaussian conditional variance from the plan's covariance (:func:`analytic_residual`).
The honest site's true statistic f(x_h) is read from its own view only to measure n_h; the
coalition never uses it.

A residual below τ_h² is flagged — analytically, and as measured from the views beyond four
standard errors (which is what catches a protocol that leaks more than its plan says); the
report also gives the exact δ that the residual noise
buys at the site's ε (Balle & Wang's Gaussian privacy profile, :mod:`protocols.accounting`)
and the paper's trust condition, at most ⌈S/3⌉ − 1 colluding sites (the CAPE journal version
and the authors' code; the JSTSP text's own symbol is lost, spec §10 C2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.view import Coalition, View
from protocols.accounting import gaussian_delta
from protocols.cape_noise_plans import NoisePlan
from protocols.correlated_noise import PROTOCOL
from protocols.errors import InputError
from protocols.field import FixedPoint


def paper_threshold(n_sites: int) -> int:
    """The largest number of colluding sites the paper's condition allows: ⌈S/3⌉ − 1."""
    return math.ceil(n_sites / 3) - 1


@dataclass(frozen=True)
class Finding:
    """The residual noise on an honest site's release for one coalition."""

    coalition: tuple[int, ...]
    honest: int
    colluding_sites: int
    tau2: float
    view_only: float
    view_only_analytic: float
    side_information: float | None
    side_information_analytic: float
    samples: int
    delta_view_only: float
    delta_side_information: float
    within_paper_threshold: bool

    @property
    def tolerance(self) -> float:
        """Four standard errors of a variance estimated from ``samples`` Gaussian values."""
        return 4.0 * math.sqrt(2.0 / max(self.samples, 1))

    @property
    def measured_below(self) -> bool:
        """The residual measured from the views is below τ² beyond sampling error."""
        return self.view_only < self.tau2 * (1 - self.tolerance)

    @property
    def matches_theory(self) -> bool:
        """The measured view-only residual agrees with the plan's analytic value."""
        return abs(self.view_only - self.view_only_analytic) <= (
            self.tolerance * self.view_only_analytic)

    @property
    def below_view_only(self) -> bool:
        return self.view_only_analytic < self.tau2 * (1 - 1e-12)

    @property
    def below_side_information(self) -> bool:
        return self.side_information_analytic < self.tau2 * (1 - 1e-12)

    def to_dict(self) -> dict[str, Any]:
        return {
            "coalition": list(self.coalition), "honest_site": self.honest,
            "colluding_sites": self.colluding_sites, "tau2": self.tau2,
            "view_only": self.view_only, "view_only_analytic": self.view_only_analytic,
            "side_information": self.side_information,
            "side_information_analytic": self.side_information_analytic,
            "below_tau2_view_only": self.below_view_only,
            "below_tau2_side_information": self.below_side_information,
            "measured_below_tau2": self.measured_below, "matches_theory": self.matches_theory,
            "delta_view_only": self.delta_view_only,
            "delta_side_information": self.delta_side_information,
            "within_paper_threshold": self.within_paper_threshold, "samples": self.samples,
        }


def analytic_residual(plan: NoisePlan, honest: int, colluders: Sequence[int],
                      side_information: bool) -> float:
    """Var(n_h | features) for n_s = e_s + g_s, features e_c (c ∈ colluders) and, with side
    information, n_t for the other honest sites t (Gaussian conditioning on the plan)."""
    S = plan.n_sites
    B = plan.generator_matrix()  # e = B ẽ
    sd_e = plan.generator_std if plan.generator_std is not None else np.zeros(S)
    # every quantity is a row of L applied to (ẽ_1..ẽ_S, g_1..g_S), independent with these stds
    scale = np.concatenate([sd_e, plan.tau_g])

    def noise(s: int) -> np.ndarray:
        return np.concatenate([B[s], np.eye(S)[s]])

    rows = [np.concatenate([B[c], np.zeros(S)]) for c in colluders]
    if side_information:
        rows += [noise(t) for t in range(S) if t != honest and t not in colluders]
    target = noise(honest) * scale
    if not rows:
        return float(target @ target)
    F = np.array(rows) * scale
    cov_oo = F @ F.T
    cov_ho = F @ target
    return float(target @ target - cov_ho @ np.linalg.pinv(cov_oo, rcond=1e-12) @ cov_ho)


def _inputs(view: View, label: str) -> dict[int, np.ndarray]:
    return {call.index: np.asarray(value, dtype=np.float64)
            for call, name, value in view.protocol_inputs
            if call is not None and call.protocol == PROTOCOL and name == label}


def _received(view: View, step: str, fixed: FixedPoint) -> dict[tuple[int, int], np.ndarray]:
    return {(m.sender, m.call): fixed.decode(m.payload) for m in view.received
            if m.protocol == PROTOCOL and m.step == step}


def _residual_variance(target: np.ndarray, features: list[np.ndarray]) -> float:
    if not features:
        return float(np.mean(target**2))
    F = np.column_stack(features)
    coef, *_ = np.linalg.lstsq(F, target, rcond=None)
    resid = target - F @ coef
    rank = int(np.linalg.matrix_rank(F))
    return float(resid @ resid / max(len(target) - rank, 1))


def analyse(
    coalition: Coalition,
    plan: NoisePlan,
    aggregator: int,
    honest: int,
    fixed: FixedPoint,
    honest_views: dict[int, View],
    statistic_label: str,
    epsilon: float,
    sensitivity: float,
) -> Finding:
    """The residual noise on site ``honest``'s releases over every CAPE call in the views.

    Parameters
    ----------
    coalition : Coalition
        The aggregator and the colluding sites; everything the coalition uses comes from here.
    plan : NoisePlan
        The public noise plan (for the analytic value).
    aggregator, honest : int
        Party ids.
    fixed : FixedPoint
        The run's public field and precision (to decode payloads).
    honest_views : dict
        The views of the honest sites, read **only** for their true statistics: that of
        ``honest`` to measure its noise, the others' as the side information of the standard
        DP adversary.
    statistic_label : str
        The label under which sites record their statistic (``Input``).
    epsilon, sensitivity : float
        Site ``honest``'s ε and Δ, for the δ its residual noise buys.
    """
    if aggregator not in coalition.members:
        raise InputError("the collusion analysis needs the aggregator in the coalition")
    if honest in coalition.members:
        raise InputError(f"site {honest} is in the coalition; pick an honest site")
    colluders = [m for m in coalition.members if m != aggregator]
    agg_view = coalition.views[aggregator]
    releases = _received(agg_view, "release", fixed)
    own_noise = _inputs(agg_view, "aggregator_noise")
    calls = sorted({call for (_, call) in releases})
    if not calls:
        raise InputError("the aggregator's view holds no CAPE releases")

    def released(site: int, call: int) -> np.ndarray:
        r = releases[(site, call)]
        return r - own_noise[call][site] if call in own_noise else r

    generator_noise = {c: _received(coalition.views[c], "correlated_noise", fixed)
                       for c in colluders}
    truth = {t: _inputs(v, statistic_label) for t, v in honest_views.items()}
    others = [t for t in range(plan.n_sites) if t != honest and t not in colluders]
    target, view_feats, side_feats = [], [], []
    for call in calls:
        target.append(released(honest, call) - truth[honest][call])
        view_feats.append([next(v for (_, k), v in generator_noise[c].items() if k == call)
                           for c in colluders])
        side_feats.append([released(t, call) - truth[t][call] for t in others])
    y = np.concatenate(target)
    vf = [np.concatenate([row[i] for row in view_feats]) for i in range(len(colluders))]
    sf = [np.concatenate([row[i] for row in side_feats]) for i in range(len(others))]
    tau2 = float(plan.tau[honest] ** 2)
    view_an = analytic_residual(plan, honest, colluders, side_information=False)
    side_an = analytic_residual(plan, honest, colluders, side_information=True)
    return Finding(
        coalition=coalition.members, honest=honest, colluding_sites=len(colluders), tau2=tau2,
        view_only=_residual_variance(y, vf), view_only_analytic=view_an,
        side_information=_residual_variance(y, vf + sf) if all(
            t in truth for t in others) else None,
        side_information_analytic=side_an, samples=len(y),
        delta_view_only=gaussian_delta(sensitivity / math.sqrt(view_an), epsilon),
        delta_side_information=gaussian_delta(sensitivity / math.sqrt(side_an), epsilon),
        within_paper_threshold=len(colluders) <= paper_threshold(plan.n_sites),
    )
