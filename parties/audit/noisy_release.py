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
    p_list: list[float] = []
    where: list[int] = []
    families: list[str] = []
    pooled: dict[tuple[int, int, str], list[np.ndarray]] = {}
    first_col: dict[tuple[int, int, str], int] = {}
    offset = 0
    sizes_seen: list[int] = []
    for call, ids, sizes in zip(layout.calls, layout.messages, layout.sizes, strict=True):
        sim = simulators.get(call)
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(int) + offset
        offset += int(sum(sizes))
        whiten = getattr(sim, "residuals", None)
        if whiten is None:
            continue
        per_key: dict[tuple[int, int, str], list[np.ndarray]] = {}
        for t, ctx in enumerate(contexts):
            received = {k[:3]: x[t, starts[j]:starts[j + 1]] for j, k in enumerate(ids)
                        if k[3] == 0}
            for key, z in whiten(ctx[call], received).items():
                per_key.setdefault(key, []).append(np.ravel(z))
        for key, zs in per_key.items():
            j = next(i for i, k in enumerate(ids) if k[:3] == key and k[3] == 0)
            z = np.concatenate(zs)
            for fam, pv in _tests(z):
                p_list.append(pv)
                where.append(int(starts[j]))
                families.append(fam)
            pooled.setdefault(key, []).append(z)
            first_col.setdefault(key, int(starts[j]))
            sizes_seen.append(z.size)
    if not p_list:
        return None
    n_calls = sum(1 for c in layout.calls if getattr(simulators.get(c), "residuals", None))
    pooled_n = []
    if n_calls > 1:
        for key, zs in pooled.items():
            z = np.concatenate(zs)
            pooled_n.append(z.size)
            for fam, pv in _tests(z):
                p_list.append(pv)
                where.append(first_col[key])
                families.append(fam + " (all calls)")
    n = len(contexts)
    return Comparison(
        layout, n, n, p_values=np.array(p_list), columns=np.array(where, dtype=np.int64),
        families=families, tests=len(p_list), families_run=(),
        notes={"gaussian_tests": len(p_list),
               "gaussian_elements_per_message": min(sizes_seen) if sizes_seen else 0,
               "gaussian_elements_pooled": min(pooled_n) if pooled_n else 0},
    )


def _tests(z: np.ndarray) -> list[tuple[str, float]]:
    if z.size == 0:  # a determined message that holds
        return []
    if not np.all(np.isfinite(z)):
        return [("gauss determined", 0.0)]
    n = z.size
    q = float(z @ z)
    var_p = float(min(1.0, 2.0 * min(stats.chi2.cdf(q, n), stats.chi2.sf(q, n))))
    ks_p = float(stats.kstest(z, "norm").pvalue)
    return [("gauss var", var_p), ("gauss ks", ks_p)]


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
