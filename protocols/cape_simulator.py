"""CAPE's simulator: a coalition's view of one call, drawn from the declared noise law.

CAPE (Imtiaz & Sarwate, seed 003, §3, Algorithm 1; :mod:`protocols.correlated_noise`) is a
differentially private release, not a protocol that hides everything beyond its aggregate:
Theorem 1 argues that each site's release â_s = f(x_s) + e_s + f_s + g_s carries at least the
noise τ_s² the site would add on its own. What the protocol *declares revealed* is therefore
the noisy release itself. Its ideal functionality is randomized: a trusted party holding every
f(x_s) draws the noise terms from the declared plan (:class:`~protocols.correlated_noise.
NoisePlan`) and hands each party what the protocol gives it. The simulator of this module is
that functionality followed by the (trivial) simulator of the real messages: it receives the
honest sites' statistics f(x_h) — only as the centre of the law, as the trusted party would
(the audit hands them over, :mod:`parties.audit.noisy_release`; never their noise) — and draws
the messages the coalition receives from the Gaussian law of the plan **conditioned on
everything the coalition knows**:

* its members' inputs (a site's statistic and its g_s, the aggregator's f_s, the noise
  generator's e_s), the messages it receives from its own members, and the call's declared
  output a_CAPE (Σ_s μ_s (f(x_s) + g_s));
* the zero sum Σ_s μ_s e_s = 0 (a coalition holding some shares e_c knows the weighted sum of
  the others), so the residual law of the honest shares is the plan's generator covariance
  conditioned on the members' shares.

Per coordinate, every quantity is a linear form in the independent Gaussians
(ẽ_1..ẽ_S, f_1..f_S, g_1..g_S) with the plan's stds; the coordinates are independent with the
same covariance. The simulator conditions the forms of the received messages on the forms the
coalition knows (Gaussian conditioning, a pseudo-inverse for the exact constraints) and draws
from the result; messages whose conditional variance is zero (a broadcast aggregate, the last
release when the aggregate pins it) are determined and drawn as their conditional mean.

What it assumes, stated: the noise is Gaussian with the plan's stds (the discrete Gaussian of
``noise = "discrete"`` is within 1e−10 of it in variance at σ ≥ 1 grid unit, below what any
test here resolves); values are rounded to the fixed-point grid, which moves a value by at most
3 grid units (invisible at the audit's trial counts); the parties' roles follow
:func:`sim.experiments.cape.cape_setup.cape_parties` (aggregator S, noise generator S + 1) unless
given; the noise each party draws comes from its randomness source
(:func:`protocols.correlated_noise.noise_rng`), so that the audit can draw it afresh.

Messages are Gaussian, not uniform on a GF(p)-affine hull, so ``uniform_on_hull = False``: the
audit's linear tests do not apply. Its power for Gaussian laws comes from the element tests
(two-sample KS and residue tests per element) and from :meth:`CapeSimulator.residuals`: the
real messages whitened by the conditional law (sequential Gaussian conditioning, message by
message), which the audit tests per message and across every call (χ² of the squared
residuals and a KS test against N(0, 1)) — a wrong variance, a correlation the plan does not
have (noise that does not cancel), a determined value that differs are each caught there.

DP, beyond the law: the simulator reproduces the declared mechanism; whether that mechanism
is (ε, δ)-DP *against this coalition* is a second question, answered by
:meth:`CapeSimulator.reveals` through :mod:`protocols.cape_dp_check` (the audit answers
``leak`` at the call when it fails). With a declared :class:`~protocols.cape_dp_check.Budget`
(each site's ε_s, δ_s and sensitivity Δ_s), the coalition's whole Gaussian view of an honest
statistic f(x_h) — its release, the aggregate and the other honest releases, whose data a DP
adversary may know, given every noise share the coalition holds — is a Gaussian mechanism with
μ_h = Δ_h·√(aᵀ Σ⁺ a) (spec §2.3's effective-δ construction with every share explicit), and its
exact δ at ε_h (Balle & Wang 2018, Thm. 8) must not exceed δ_h. Without a budget the check is
Theorem 1's per-release argument: the noise on a release that the coalition cannot remove must
keep variance τ_h². With S = 5, ε = 1, δ = 0.01 the aggregator with up to two sites passes (the
paper's condition S_C ≤ ⌈S/3⌉ − 1 allows one), three sites or the noise generator (which the
paper trusts) do not.

Coverage of the comparison, stated: the per-message and joint tests are within one call and
along one message stream across consecutive calls; a dependence between different streams of
different calls, or a non-Gaussian law with the right first two moments on every residual,
is left to the two-sample element tests (KS and residues per element), whose power the audit
states with the rest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from protocols.cape_dp_check import (
    Budget,
    budget_shortfall,
    release_form,
    release_shortfall,
    view_deltas,
)
from protocols.cape_noise_plans import NoisePlan
from protocols.correlated_noise import PROTOCOL, SITE_NOISE_COV
from protocols.field import FixedPoint, Mersenne61Field
from protocols.gaussian_conditioning import condition, whiten
from protocols.simulator import CallView, MessageKey, SimulatorMismatch

RELEASE, CORRELATED, AGGREGATOR_NOISE, AGGREGATE = (
    "release", "correlated_noise", "aggregator_noise", "aggregate")
SITE_NOISE = "site_noise"
NOISE_COV = SITE_NOISE_COV
"""The label under which a call's parties record the covariance of the site noise per unit σ²
when it is not the identity (capeAGN's stage 2 projects D-space noise into K-space)."""
GRID_SLACK = 8.0
"""Grid units a determined value may differ by (each term is rounded to the grid once)."""
@dataclass(frozen=True)
class _Roles:
    """Who is who in one call, from the coalition's side."""

    sites: tuple[int, ...]
    aggregator: int
    generator: int
    members: tuple[int, ...]
    broadcast: bool

    @property
    def member_sites(self) -> tuple[int, ...]:
        return tuple(m for m in self.members if m in self.sites)

    @property
    def honest_sites(self) -> tuple[int, ...]:
        return tuple(s for s in self.sites if s not in self.members)


@dataclass
class _Model:
    """The Gaussian law of one call's received messages given the coalition's knowledge.

    ``keys`` are the Gaussian messages (received from honest parties), one form per site
    or party; ``mean_coef`` maps (known values − their means) to the conditional mean; ``cov``
    is the conditional covariance per coordinate.
    """

    keys: list[MessageKey]
    forms: np.ndarray  # (R, 3S) received forms
    offsets: list[tuple[str, int]]  # ("x", site) mean of a release; ("", -1) zero mean
    known: list[tuple[str, int]]  # what each known form is read from
    known_forms: np.ndarray  # (K, 3S)
    known_offsets: list[tuple[str, int]]
    gain: np.ndarray  # (R, K)
    cov: np.ndarray  # (R, R)
    gain_before: np.ndarray  # (R, K): the same given the noise alone (zero on the output)
    var_before: np.ndarray  # (R,)


@dataclass(frozen=True)
class CapeSimulator:
    """Draws a coalition's view of one CAPE call from the declared noise plan.

    Parameters
    ----------
    plan : NoisePlan, optional
        The declared noise law (the audit target's, never the program's); without it the
        simulator cannot say what the releases' law is and raises
        :class:`~protocols.simulator.SimulatorMismatch`.
    frac_bits : int
        The run's fixed-point precision (the messages are f(x) + noise on the 2^−f grid).
    aggregator, generator : int, optional
        The ids of the aggregator and the noise generator (default S and S + 1, as
        :func:`sim.experiments.cape.cape_setup.cape_parties` numbers them).
    budget : Budget, optional
        The sites' declared (ε_s, δ_s) and sensitivities Δ_s: :meth:`reveals` then checks
        the exact δ of the coalition's view against δ_s (else τ_s², Theorem 1's argument).
    """

    plan: NoisePlan | None = None
    frac_bits: int = 0
    aggregator: int | None = None
    generator: int | None = None
    budget: Budget | None = None
    name: str = PROTOCOL
    uniform_on_hull: bool = False
    releases_inputs: bool = True
    _cache: dict[Any, _Model] = field(default_factory=dict, compare=False, repr=False)

    # -- what the audit asks --------------------------------------------------------------

    def statistic(self, records: tuple[tuple[str, Any], ...]) -> np.ndarray | None:
        """The statistic f(x_h) among an honest site's inputs to the call (never its noise).

        The randomized functionality's input: the audit hands it to the simulator in
        :attr:`CallView.honest_inputs` (:mod:`parties.audit.noisy_release`).
        """
        stats = [v for label, v in records if label not in (SITE_NOISE, NOISE_COV)]
        if len(stats) != 1 or not any(label == SITE_NOISE for label, _ in records):
            return None
        return np.ravel(np.asarray(stats[0], dtype=np.float64))

    def determined(self, view: CallView) -> bool:
        """Never: the releases carry fresh noise (determined messages are drawn as such)."""
        return False

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        """Every message of the call has the statistic's length d."""
        self._declared(view)
        roles = self._roles(view)
        d = self._length(view, roles)
        return {k: d for k in self._received_keys(roles)}

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        """``n`` draws of every message the members receive in the call: key → (n, d)."""
        _, fixed = self._declared(view)
        roles = self._roles(view)
        model = self._model(view, roles)
        d = self._length(view, roles)
        out: dict[MessageKey, np.ndarray] = {}
        noise_cov = self._noise_cov(view, roles, d)
        if model.keys and noise_cov is not None:
            Q, models = self._rotated(view, roles, noise_cov)
            mean = self._rotated_mean(view, roles, models, Q, d)  # (R, d), rotated
            draws = np.empty((len(model.keys), n, d))
            for j, mj in enumerate(models):
                w, v = np.linalg.eigh(mj.cov)
                root = v * np.sqrt(np.clip(w, 0.0, None))
                z = rng.standard_normal((len(model.keys), n))
                draws[:, :, j] = mean[:, j][:, None] + root @ z
            draws = draws @ Q.T  # back from the eigenbasis of the site noise's covariance
            for i, key in enumerate(model.keys):
                out[key] = _encode(fixed, draws[i])
        elif model.keys:
            mean = self._conditional_mean(view, roles, model, d)  # (R, d)
            w, v = np.linalg.eigh(model.cov)
            root = v * np.sqrt(np.clip(w, 0.0, None))
            z = rng.standard_normal((len(model.keys), n, d))
            draws = mean[:, None, :] + np.einsum("rk,knd->rnd", root, z)
            for i, key in enumerate(model.keys):
                out[key] = _encode(fixed, draws[i])
        for m in roles.member_sites:
            if roles.broadcast and roles.aggregator not in roles.members:
                total = _aggregate(view)
                out[(m, roles.aggregator, AGGREGATE)] = np.broadcast_to(total, (n, total.size))
        for (r, s, step), value in view.sent.items():  # messages between members
            if r in roles.members and s in roles.members:
                value = np.ravel(value)
                out[(r, s, step)] = np.broadcast_to(value, (n, value.size))
        return out

    def residuals(
        self, view: CallView, received: Mapping[MessageKey, np.ndarray]
    ) -> tuple[dict[MessageKey, np.ndarray], dict[MessageKey, np.ndarray]]:
        """The received Gaussian messages whitened by their declared conditional law.

        Returns
        -------
        marginal : dict of (receiver, sender, step) to ndarray
            Each message's elements minus their mean given the noise the coalition holds
            (not the output), over their conditional std: N(0, 1) each under the declared law
            (a message's own law, so that a deviation is located at the message that carries
            it). A message that
            the law determines gives no residual when it holds (within the grid's rounding)
            and ``inf`` for each element that does not.
        joint : dict of (receiver, sender, step) to ndarray
            Each message whitened given the ones before it (sequential conditioning): all of
            them i.i.d. N(0, 1) together, so a correlation the plan does not have (noise that
            does not cancel) shows in their squares; ``inf`` where a determined value fails.

        Parameters
        ----------
        received : mapping of (receiver, sender, step) to ndarray of shape (d,)
            The call's received messages as field elements (one trial).
        """
        _, fixed = self._declared(view)
        roles = self._roles(view)
        model = self._model(view, roles)
        d = self._length(view, roles)
        if not model.keys:
            return {}, {}
        y = np.stack([fixed.decode(np.asarray(received[k])).reshape(-1) for k in model.keys])
        tol = GRID_SLACK * len(roles.sites) / fixed.scale
        noise_cov = self._noise_cov(view, roles, d)
        if noise_cov is None:
            mean = self._conditional_mean(view, roles, model, d)
            before = self._conditional_mean(view, roles, model, d, before_output=True)
            return whiten(model.keys, y, mean, before, model.cov, model.var_before, tol)
        # coordinates are independent in the eigenbasis of the site noise's covariance, each
        # with its own law: whiten coordinate by coordinate there
        Q, models = self._rotated(view, roles, noise_cov)
        mean = self._rotated_mean(view, roles, models, Q, d)
        before = self._rotated_mean(view, roles, models, Q, d, before_output=True)
        y = y @ Q
        marginal: dict[MessageKey, list[np.ndarray]] = {k: [] for k in model.keys}
        joint: dict[MessageKey, list[np.ndarray]] = {k: [] for k in model.keys}
        for j, mj in enumerate(models):
            mg, jt = whiten(model.keys, y[:, j:j + 1], mean[:, j:j + 1], before[:, j:j + 1],
                             mj.cov, mj.var_before, tol * math.sqrt(d))
            for key in model.keys:
                marginal[key].append(mg[key])
                joint[key].append(jt[key])
        return ({k: np.concatenate(v) for k, v in marginal.items()},
                {k: np.concatenate(v) for k, v in joint.items()})

    def reveals(self, view: CallView) -> str | None:
        """Why the coalition's view is not each honest site's declared mechanism, or None.

        With a declared :class:`~protocols.cape_dp_check.Budget`: the coalition's whole
        Gaussian view of site h's statistic — its release, the aggregate and the other honest
        releases, whose data a DP adversary may know, given every noise share the coalition
        holds — is a Gaussian
        mechanism with μ_h = Δ_h·√(aᵀ Σ⁺ a) (a: how f(x_h) enters the observations, Σ their
        noise covariance; spec §2.3's effective-δ construction, with every share made
        explicit); its exact δ at ε_h (Balle & Wang, :func:`protocols.accounting.
        gaussian_delta`) must not exceed δ_h. Without a budget: Theorem 1's per-release
        argument — the variance of e_h + f_h + g_h given the coalition's noise shares must be
        at least τ_h².
        """
        plan, _ = self._declared(view)
        roles = self._roles(view)
        if self.budget is not None:
            return budget_shortfall(self._deltas(plan, roles, self.budget), self.budget)
        if roles.aggregator not in roles.members:
            return None  # no honest release reaches the coalition
        forms, _ = self._known(roles, plan, with_outputs=False)
        return release_shortfall(plan, forms, self._variances(plan), roles.honest_sites)

    def effective_delta(self, view: CallView) -> dict[int, float]:
        """Per honest site: the exact δ at ε_h of the coalition's view of its statistic."""
        plan, _ = self._declared(view)
        if self.budget is None:
            raise SimulatorMismatch("no privacy budget is declared")
        roles = self._roles(view)
        return {h: d for h, (d, _) in self._deltas(plan, roles, self.budget).items()}

    def _deltas(self, plan: NoisePlan, roles: _Roles,
                budget: Budget) -> dict[int, tuple[float, float]]:
        known, _ = self._known(roles, plan, with_outputs=False)
        return view_deltas(plan, known, self._variances(plan), roles.honest_sites,
                           sees_releases=roles.aggregator in roles.members,
                           holds_output=roles.aggregator in roles.members or roles.broadcast,
                           budget=budget)

    # -- the law ------------------------------------------------------------------------------

    def _declared(self, view: CallView) -> tuple[NoisePlan, FixedPoint]:
        if self.plan is None:
            raise SimulatorMismatch(
                "CAPE's simulator draws the releases from the declared noise plan, and none is "
                "declared: audit with protocol = protocols.registry.cape_declaration(plan, "
                "frac_bits) (the scenario's cape_mean entry does)")
        if len(view.parties) != self.plan.n_sites:
            raise SimulatorMismatch(
                f"{view.call.tag('').rstrip('.')} has {len(view.parties)} sites; the declared "
                f"plan has {self.plan.n_sites}")
        return self.plan, FixedPoint(view.field, self.frac_bits)

    def _roles(self, view: CallView) -> _Roles:
        sites = tuple(view.parties)
        S = len(sites)
        agg = S if self.aggregator is None else self.aggregator
        gen = S + 1 if self.generator is None else self.generator
        members = tuple(view.members)
        broadcast = any(lab == AGGREGATE for m in members if m in sites
                        for lab, _ in view.outputs.get(m, ()))
        return _Roles(sites, agg, gen, members, broadcast)

    def _received_keys(self, roles: _Roles) -> list[MessageKey]:
        plan = self.plan
        assert plan is not None
        keys: list[MessageKey] = []
        for s in roles.member_sites:
            if plan.uses_generator and roles.generator not in roles.members:
                keys.append((s, roles.generator, CORRELATED))
            if plan.uses_aggregator_noise and roles.aggregator not in roles.members:
                keys.append((s, roles.aggregator, AGGREGATOR_NOISE))
            if roles.broadcast and roles.aggregator not in roles.members:
                keys.append((s, roles.aggregator, AGGREGATE))
        if roles.aggregator in roles.members:
            keys.extend((roles.aggregator, h, RELEASE) for h in roles.honest_sites)
        return keys

    def _length(self, view: CallView, roles: _Roles) -> int:
        for m in roles.members:
            for label, value in view.inputs.get(m, ()):
                arr = np.asarray(value)
                if label == NOISE_COV:
                    continue
                if label in (CORRELATED, AGGREGATOR_NOISE):
                    return int(arr.shape[-1]) if arr.ndim > 1 else int(arr.size)
                return int(arr.size)
        for m in roles.members:
            for _, value in view.outputs.get(m, ()):
                return int(np.asarray(value).size)
        raise SimulatorMismatch(f"no member recorded anything about "
                                f"{view.call.tag('').rstrip('.')}")

    def _variances(self, plan: NoisePlan, g_scale: float = 1.0) -> np.ndarray:
        """The latents' variances; ``g_scale`` multiplies the site noises' (one coordinate
        of the eigenbasis of a declared site-noise covariance)."""
        S = plan.n_sites
        gen = plan.generator_std if plan.generator_std is not None else np.zeros(S)
        if not plan.uses_generator:
            gen = np.zeros(S)
        return np.concatenate([gen ** 2, plan.tau_f ** 2,
                               g_scale * plan.tau_g ** 2]).astype(np.float64)

    def _known(self, roles: _Roles, plan: NoisePlan,
               with_outputs: bool = True) -> tuple[np.ndarray, list[tuple[str, int]]]:
        """The noise forms the coalition knows, and where each one's value is read."""
        S = plan.n_sites
        forms: list[np.ndarray] = []
        where: list[tuple[str, int]] = []
        B = plan.generator_matrix()
        eye = np.eye(S)
        zero = np.zeros(S)
        if roles.generator in roles.members and plan.uses_generator:
            for s in range(S):
                forms.append(np.concatenate([B[s], zero, zero]))
                where.append((CORRELATED, s))
        if roles.aggregator in roles.members and plan.uses_aggregator_noise:
            for s in range(S):
                forms.append(np.concatenate([zero, eye[s], zero]))
                where.append((AGGREGATOR_NOISE, s))
        for s in roles.member_sites:
            forms.append(np.concatenate([zero, zero, eye[s]]))
            where.append((SITE_NOISE, s))
            if plan.uses_generator and roles.generator not in roles.members and not with_outputs:
                # a member site's share (received): known to the coalition
                forms.append(np.concatenate([B[s], zero, zero]))
                where.append((CORRELATED, s))
            if (plan.uses_aggregator_noise and roles.aggregator not in roles.members
                    and not with_outputs):
                forms.append(np.concatenate([zero, eye[s], zero]))
                where.append((AGGREGATOR_NOISE, s))
        has_output = roles.aggregator in roles.members or roles.broadcast
        if with_outputs and has_output:
            forms.append(np.concatenate([zero, zero, plan.weights]))
            where.append((AGGREGATE, -1))
        return (np.array(forms) if forms else np.zeros((0, 3 * S))), where

    def _model(self, view: CallView, roles: _Roles, g_scale: float | None = None) -> _Model:
        """The call's Gaussian model; with ``g_scale`` one coordinate of the eigenbasis of a
        declared site-noise covariance (not cached: the covariance changes run by run)."""
        plan = self.plan
        assert plan is not None
        key = (roles.members, roles.broadcast, roles.sites, roles.aggregator, roles.generator)
        if g_scale is None and key in self._cache:
            return self._cache[key]
        S = plan.n_sites
        B = plan.generator_matrix()
        eye = np.eye(S)
        zero = np.zeros(S)
        keys, forms, offsets = [], [], []
        for k in self._received_keys(roles):
            _, sender, step = k
            if step == AGGREGATE:
                continue  # equal to the declared output: not part of the Gaussian model
            s = k[0] if step in (CORRELATED, AGGREGATOR_NOISE) else sender
            if step == CORRELATED:
                form, off = np.concatenate([B[s], zero, zero]), ("", -1)
            elif step == AGGREGATOR_NOISE:
                form, off = np.concatenate([zero, eye[s], zero]), ("", -1)
            else:
                form, off = release_form(plan, s), ("x", s)
            keys.append(k)
            forms.append(form)
            offsets.append(off)
        known_forms, known = self._known(roles, plan)
        sd2 = self._variances(plan, 1.0 if g_scale is None else g_scale)
        F = np.array(forms) if forms else np.zeros((0, 3 * S))
        gain, cov = condition(F, known_forms, sd2)
        noise_only = np.array([w != AGGREGATE for w, _ in known], dtype=bool)
        gain_before = np.zeros_like(gain)
        part, cov_before = condition(F, known_forms[noise_only], sd2)
        gain_before[:, noise_only] = part
        known_offsets = [("agg", -1) if w == AGGREGATE else ("", -1) for w, _ in known]
        model = _Model(keys, F, offsets, known, known_forms, known_offsets, gain, cov,
                       gain_before, np.diag(cov_before).copy())
        if g_scale is None:
            self._cache[key] = model
        return model

    def _noise_cov(self, view: CallView, roles: _Roles, d: int) -> np.ndarray | None:
        """The site noise's covariance per unit σ² that the call's members recorded
        (:data:`NOISE_COV`; capeAGN's projected stage-2 noise), or None (the identity)."""
        found = [np.asarray(v, dtype=np.float64) for m in roles.members
                 for label, v in view.inputs.get(m, ()) if label == NOISE_COV]
        if not found:
            return None
        if any(f.shape != (d, d) or not np.array_equal(f, found[0]) for f in found):
            raise SimulatorMismatch(f"the members recorded differing or misshapen "
                                    f"'{NOISE_COV}' in {view.call.tag('').rstrip('.')}")
        return found[0]

    def _rotated(self, view: CallView, roles: _Roles,
                 noise_cov: np.ndarray) -> tuple[np.ndarray, list[_Model]]:
        """The eigenbasis Q of the site noise's covariance and one model per coordinate
        there: the correlated and aggregator noises are i.i.d. per coordinate, so invariant
        under the rotation, and the site noise's variance there is τ_g²·λ_j."""
        lam, Q = np.linalg.eigh((noise_cov + noise_cov.T) / 2.0)
        return Q, [self._model(view, roles, float(max(v, 0.0))) for v in lam]

    def _rotated_mean(self, view: CallView, roles: _Roles, models: list[_Model],
                      Q: np.ndarray, d: int, before_output: bool = False) -> np.ndarray:
        """The conditional mean in the eigenbasis (R × d): per coordinate its own gain."""
        centred, base = self._centred(view, roles, models[0], d)
        centred, base = centred @ Q, base @ Q
        out = np.empty_like(base)
        for j, mj in enumerate(models):
            gain = mj.gain_before if before_output else mj.gain
            out[:, j] = base[:, j] + gain @ centred[:, j]
        return out

    def _conditional_mean(self, view: CallView, roles: _Roles, model: _Model,
                          d: int, before_output: bool = False) -> np.ndarray:
        centred, base = self._centred(view, roles, model, d)
        return base + (model.gain_before if before_output else model.gain) @ centred

    def _centred(self, view: CallView, roles: _Roles, model: _Model,
                 d: int) -> tuple[np.ndarray, np.ndarray]:
        """The known values minus their means (K × d), and the received forms' means (R × d)."""
        plan = self.plan
        assert plan is not None
        stats = self._statistics(view, roles, d)
        values = []
        for (what, s), (off, _) in zip(model.known, model.known_offsets, strict=True):
            v = self._known_value(view, roles, what, s, d)
            if off == "agg":
                v = v - np.sum([plan.weights[t] * stats[t] for t in roles.sites], axis=0)
            values.append(v)
        centred = np.stack(values) if values else np.zeros((0, d))
        base = np.stack([stats[s] if kind == "x" else np.zeros(d) for kind, s in model.offsets])
        return centred, base

    def _statistics(self, view: CallView, roles: _Roles, d: int) -> dict[int, np.ndarray]:
        stats: dict[int, np.ndarray] = {}
        for s in roles.member_sites:
            value = self.statistic(tuple(view.inputs.get(s, ())))
            if value is None:
                raise SimulatorMismatch(f"site {s} did not record its statistic and its noise "
                                        f"in {view.call.tag('').rstrip('.')}")
            stats[s] = value
        for h in roles.honest_sites:
            value = view.honest_inputs.get(h)
            if value is None:
                raise SimulatorMismatch(
                    f"the audit gave the CAPE simulator no statistic of honest site {h} in "
                    f"{view.call.tag('').rstrip('.')} (the randomized functionality's input)")
            stats[h] = np.ravel(np.asarray(value, dtype=np.float64))
        for s, v in stats.items():
            if v.size != d:
                raise SimulatorMismatch(f"site {s}'s statistic has {v.size} elements, the "
                                        f"call's messages {d}")
        return stats

    def _known_value(self, view: CallView, roles: _Roles, what: str, s: int,
                     d: int) -> np.ndarray:
        if what == AGGREGATE:
            return _aggregate(view).astype(np.float64)
        if what == SITE_NOISE:
            return _input(view, s, SITE_NOISE)
        owner = roles.generator if what == CORRELATED else roles.aggregator
        if owner in roles.members:
            table = np.asarray(_input(view, owner, what, flat=False), dtype=np.float64)
            return table.reshape(len(roles.sites), -1)[s]
        raise SimulatorMismatch(f"the coalition does not hold {what} of site {s}")


def _aggregate(view: CallView) -> np.ndarray:
    """The declared output a_CAPE, as every member that declares it recorded it."""
    values = [np.ravel(np.asarray(v)) for m in view.members for lab, v in view.outputs.get(m, ())
              if lab == AGGREGATE]
    if not values or any(not np.array_equal(v, values[0]) for v in values[1:]):
        raise SimulatorMismatch(f"the members declared {len(values)} differing or no outputs "
                                f"'aggregate' of {view.call.tag('').rstrip('.')}")
    return values[0]


def _input(view: CallView, member: int, label: str, flat: bool = True) -> np.ndarray:
    values = [v for lab, v in view.inputs.get(member, ()) if lab == label]
    if len(values) != 1:
        raise SimulatorMismatch(f"party {member} recorded {len(values)} '{label}' inputs to "
                                f"{view.call.tag('').rstrip('.')}, not one")
    arr = np.asarray(values[0], dtype=np.float64)
    return np.ravel(arr) if flat else arr


def _encode(fixed: FixedPoint, values: np.ndarray) -> np.ndarray:
    """Real values on the fixed-point grid as field elements (rounded, signed)."""
    ints = np.rint(np.asarray(values) * fixed.scale).astype(np.int64)
    if isinstance(fixed.field, Mersenne61Field):
        return fixed.field.from_signed(ints)
    return fixed.field.elements(ints)


SIMULATOR = CapeSimulator()
"""The registered simulator: without a declared plan it names what to declare."""
