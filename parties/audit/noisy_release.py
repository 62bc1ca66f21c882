"""Calls whose declared leakage is a noisy release: their functionality's input and their tests.

A differentially private protocol (CAPE, seed 003, Theorem 1) reveals more than its aggregate
by design: each site's release is its statistic plus Gaussian noise of a declared law. Its ideal
functionality is randomized — a trusted party draws the noise and hands out the releases — so
the simulation audit's ideal world needs the honest statistics as that trusted party's input.
A simulator that says so (``releases_inputs = True``, e.g.
:class:`protocols.cape_simulator.CapeSimulator`) gets them in
:attr:`~protocols.simulator.CallView.honest_inputs`, picked from each honest party's inputs
to the call by the simulator's own ``statistic(records)`` (the statistic, never the party's
noise): :func:`give_statistics`.

Gaussian messages are not uniform on a GF(p)-affine hull, so the audit's linear tests do not
apply to them. Their power across elements comes from :func:`gaussian_comparison`: every trial's
received messages of such a call are whitened by the simulator's conditional law
(``residuals(view, received)``: i.i.d. N(0, 1) under the declared law), and for every message,
and for every message stream pooled over the run's calls,

* ``gauss var``: the sum of squared residuals against χ²(N), two-sided — a variance that is
  not the declared one (too little noise, a raw statistic, noise that does not cancel so that
  the releases do not add up to the aggregate as declared);
* ``gauss ks``: the residuals against N(0, 1) by a one-sample KS test (a shifted or misshapen
  law);

and a determined value that does not hold (``inf`` residual) is a rejection at p = 0.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from parties.audit.calls import CallRecord, Layout
from parties.audit.compare import DETECT, Comparison, sup_distance_power
from parties.view import View
from protocols.effects import Call
from protocols.simulator import CallView, Simulator


def releasing(simulators: Mapping[Call, Simulator]) -> bool:
    """Whether any call's simulator declares a noisy release of the honest inputs."""
    return any(getattr(s, "releases_inputs", False) for s in simulators.values())


def give_statistics(records: Mapping[Call, CallRecord], views: Mapping[int, View],
                    simulators: Mapping[Call, Simulator]) -> None:
    """Hand each noisy-release call's simulator the honest statistics (module docstring)."""
    from dataclasses import replace

    for call, sim in simulators.items():
        pick = getattr(sim, "statistic", None)
        record = records.get(call)
        if not getattr(sim, "releases_inputs", False) or pick is None or record is None:
            continue
        view = record.view
        if view is None:
            continue
        found: dict[int, np.ndarray] = {}
        for h in view.honest:
            got = tuple((label, value) for c, label, value in views[h].protocol_inputs
                        if c == call)
            value = pick(got)
            if value is not None:
                found[h] = value
        record.view = replace(view, honest_inputs=found)


def gaussian_comparison(
    layout: Layout, x: np.ndarray, contexts: Sequence[Mapping[Call, CallView]],
    simulators: Mapping[Call, Simulator],
) -> Comparison | None:
    """The whitened-residual tests of every noisy-release call (module docstring).

    Parameters
    ----------
    layout : Layout
        The columns of ``x``.
    x : ndarray of shape (trials, width)
        The real views.
    contexts : sequence of mapping
        Per trial, each call's :class:`CallView`.
    """
    tests = _Tests()
    streams: dict[tuple[int, int, str], list[tuple[int, list[np.ndarray]]]] = {}
    joints: list[tuple[int, dict[tuple[int, int, str], np.ndarray]]] = []
    offset = 0
    for call, ids, sizes in zip(layout.calls, layout.messages, layout.sizes, strict=True):
        sim = simulators.get(call)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int) + offset
        offset += int(sum(sizes))
        whiten = getattr(sim, "residuals", None)
        if whiten is None:
            continue
        per_key: dict[tuple[int, int, str], list[np.ndarray]] = {}
        joint: dict[tuple[int, int, str], list[np.ndarray]] = {}
        for t, ctx in enumerate(contexts):
            received = {k[:3]: x[t, starts[j]:starts[j + 1]] for j, k in enumerate(ids)
                        if k[3] == 0}
            marginal, together = whiten(ctx[call], received)
            for key, z in marginal.items():
                per_key.setdefault(key, []).append(np.ravel(z))
            for key, z in together.items():
                joint.setdefault(key, []).append(np.ravel(z))
        column = {k[:3]: int(starts[j]) for j, k in enumerate(ids) if k[3] == 0}
        for key, zs in per_key.items():
            tests.add(np.concatenate(zs), column[key], "")
            streams.setdefault(key, []).append((column[key], zs))
        if joint:
            parts = {key: np.concatenate(zs) for key, zs in joint.items()}
            z = np.concatenate(list(parts.values()))
            tests.add(z, column[_worst(parts)], "joint ", ks=False)
            joints.append((column[_worst(parts)], parts))
    if not tests.p:
        return None
    pooled_n = 0
    if len(joints) > 1:
        for per_call in streams.values():
            z = np.concatenate([np.concatenate(zs) for _, zs in per_call])
            pooled_n = z.size if not pooled_n else min(pooled_n, z.size)
            tests.add(z, per_call[0][0], "", suffix=" (all calls)")
            tests.correlation(per_call)
        at, _ = min(joints, key=lambda j: _extremity(np.concatenate(list(j[1].values()))))
        everything = np.concatenate([z for _, parts in joints for z in parts.values()])
        tests.add(everything, at, "joint ", suffix=" (all calls)", ks=False)
    n = len(contexts)
    return Comparison(
        layout, n, n, p_values=np.array(tests.p), columns=np.array(tests.at, dtype=np.int64),
        families=tests.families, tests=len(tests.p), families_run=(),
        notes={"gaussian_tests": len(tests.p),
               "gaussian_elements_per_message": tests.smallest,
               "gaussian_elements_pooled": pooled_n},
    )


def _extremity(z: np.ndarray) -> float:
    """How far the squares of ``z`` are from χ²: minus the |z-score| of Σ z² (smaller is
    worse; −inf for a failed determined value)."""
    if z.size == 0:
        return 0.0
    if not np.all(np.isfinite(z)):
        return -math.inf
    return -abs(float(z @ z) - z.size) / math.sqrt(2.0 * z.size)


def _worst(parts: Mapping[tuple[int, int, str], np.ndarray]) -> tuple[int, int, str]:
    """The message whose sequential residuals stray furthest from the declared law."""
    return min(parts, key=lambda k: _extremity(parts[k]))


class _Tests:
    """The p-values of the whitened tests, with the column each one points at."""

    def __init__(self) -> None:
        self.p: list[float] = []
        self.at: list[int] = []
        self.families: list[str] = []
        self.smallest = 0

    def _put(self, p: float, at: int, family: str) -> None:
        self.p.append(p)
        self.at.append(at)
        self.families.append(family)

    def add(self, z: np.ndarray, at: int, kind: str, suffix: str = "", ks: bool = True) -> None:
        if z.size == 0:  # a determined message that holds
            return
        if not np.all(np.isfinite(z)):
            self._put(0.0, at, f"gauss {kind}determined{suffix}")
            return
        if not kind and not suffix:
            self.smallest = z.size if not self.smallest else min(self.smallest, z.size)
        n = z.size
        q = float(z @ z)
        self._put(float(min(1.0, 2.0 * min(stats.chi2.cdf(q, n), stats.chi2.sf(q, n)))), at,
                  f"gauss {kind}var{suffix}")
        if ks:
            self._put(float(stats.kstest(z, "norm").pvalue), at, f"gauss {kind}ks{suffix}")

    def correlation(self, per_call: list[tuple[int, list[np.ndarray]]]) -> None:
        """One stream's residuals in consecutive calls, trial by trial: uncorrelated under the
        declared law (fresh noise in every call); Σ z_c·z_{c+1}/√N is N(0, 1)."""
        total, count = 0.0, 0
        for (_, a), (_, b) in itertools.pairwise(per_call):
            for za, zb in zip(a, b, strict=True):
                if za.shape == zb.shape and np.all(np.isfinite(za)) and np.all(np.isfinite(zb)):
                    total += float(za @ zb)
                    count += za.size
        if count:
            p = float(2.0 * stats.norm.sf(abs(total) / math.sqrt(count)))
            self._put(p, per_call[1][0], "gauss corr (across calls)")


def gaussian_power(comparison: Comparison, tests: int, alpha: float) -> dict[str, Any]:
    """The deviations the whitened tests catch with probability 0.9 at the Holm level.

    ``variance_ratio``: the relative change of a message's variance caught by ``gauss var``
    on the pooled residuals (normal approximation of χ²(N): |ρ − 1| ≥ (z_{L/2} + z_{0.1})·
    √(2/N)); per single message in ``variance_ratio_per_message``; ``sup_cdf_distance``: the
    one-sample KS distance caught on a single message (critical value plus DKW margin).
    """
    level = alpha / max(tests, 1)
    z = float(special.ndtri(1 - level / 2) + special.ndtri(DETECT))
    per = int(comparison.notes.get("gaussian_elements_per_message", 0))
    pooled = int(comparison.notes.get("gaussian_elements_pooled", 0)) or per
    out: dict[str, Any] = {"level": level, "detect_probability": DETECT}
    if per:
        out["variance_ratio_per_message"] = round(z * math.sqrt(2.0 / per), 4)
        critical = float(special.kolmogi(min(level, 1.0))) / math.sqrt(per)
        margin = math.sqrt(math.log(2.0 / ((1 - DETECT) / 2)) / (2.0 * per))
        out["sup_cdf_distance_per_message"] = round(critical + margin, 4)
    if pooled:
        out["variance_ratio"] = round(z * math.sqrt(2.0 / pooled), 4)
    out["two_sample_sup_cdf"] = round(sup_distance_power(comparison.n_x, comparison.n_x,
                                                         level), 4)
    return out
