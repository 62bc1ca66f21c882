"""What the ``cape_*`` catalogue entries share (seed 003): their privacy and trial keys, the
party list of a CAPE run, the trials (seeds and samples), the sweeps and the accounting block
of the report.

A CAPE run has the S data sites (ids 0..S−1, the scenario's ``network.parties``), then the
untrusted aggregator (id S) and, for the ``cape`` scheme, the trusted noise generator (id S+1);
the simulation links the extra roles to every site. Trials are separate simulations seeded
from the scenario seed and the trial number, so a scenario replays byte for byte.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from parties.party import Party
from protocols import seeds
from protocols.accounting import Release, account
from protocols.cape_dp_check import Budget
from protocols.correlated_noise import AGGREGATOR, NOISE_GENERATOR
from protocols.errors import ScenarioError
from protocols.registry import cape_declaration
from sim import plots
from sim.catalog.cape import (
    SWEEP_LABELS,
)
from sim.console import table
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    Param,
    RunInput,
    Workload,
)
from sim.privacy import AuditTarget


def cape_parties(
    site_program: Callable[..., Any],
    site_inputs: Sequence[Mapping[str, Any]],
    aggregator: tuple[Callable[..., Any], Mapping[str, Any]],
    noise_generator: tuple[Callable[..., Any], Mapping[str, Any]] | None,
) -> list[Party]:
    """Sites 0..S−1, the aggregator (S) and, if given, the noise generator (S + 1)."""

    S = len(site_inputs)
    parties = [Party(s, site_program, dict(kw)) for s, kw in enumerate(site_inputs)]
    parties.append(Party(S, aggregator[0], dict(aggregator[1]), role=AGGREGATOR))
    if noise_generator is not None:
        parties.append(Party(S + 1, noise_generator[0], dict(noise_generator[1]),
                             role=NOISE_GENERATOR))
    return parties


def cape_audit_target(parties: Sequence[Party], plan: Any, frac_bits: int, epsilon: float,
                      delta: float, sensitivities: Any) -> Any:
    """What a CAPE run's ``[[audit]]`` examines: its parties, judged by CAPE's declaration
    with the run's noise plan and the sites' (ε, δ, Δ_s) (:mod:`protocols.cape_simulator`).

    The plan and the budget come from the scenario, not from the programs: the releases are
    held to the law the scenario declares.
    """

    S = plan.n_sites
    budget = Budget(np.full(S, float(epsilon)), np.full(S, float(delta)),
                    np.broadcast_to(np.asarray(sensitivities, dtype=np.float64), (S,)).copy())
    return AuditTarget(tuple(parties), cape_declaration(plan, frac_bits, budget=budget))


def trial_seed(seed: int, trial: int) -> int:
    """The seed of trial ``trial`` (trial 0 runs with the scenario seed itself)."""

    if trial == 0:
        return seed
    return seeds.derive_int(seed, "cape.trial", index=(trial,))


def trials(inp: RunInput, count: int, purpose: str,
           stage: str = "trials") -> Iterator[tuple[int, np.random.Generator]]:
    """The trials of one setting: ``count`` of them, progress reported as each one ends.

    Yields
    ------
    seed : int
        The trial's simulation seed (:func:`trial_seed`).
    rng : numpy.random.Generator
        For the trial's central work (sampling rows, the centralized baselines), derived from
        the trial's seed under the label ``purpose`` (:mod:`protocols.seeds`), so each entry
        draws from its own stream.
    """

    for trial in range(count):
        seed = trial_seed(inp.seed, trial)
        yield seed, seeds.rng(seed, purpose)
        if inp.progress is not None:
            inp.progress(stage, trial + 1, count)


def trial_rows(inp: RunInput, samples_per_site: int, rng: np.random.Generator,
               prepare: Callable[[np.ndarray], np.ndarray] | None = None) -> list[np.ndarray]:
    """The sites' rows for one trial, dense float64.

    Parameters
    ----------
    inp : RunInput
        The run; ``inp.data`` (n × D) holds the pooled rows and ``inp.shards`` the sites'
        contiguous blocks of it.
    samples_per_site : int
        0: the sites' own shards. N_s ≥ 1: S·N_s rows drawn from the data without replacement
        (the paper's trials, §6), N_s per site in the order drawn.
    rng : numpy.random.Generator
        The trial's generator (only used to draw rows).
    prepare : callable, optional
        Applied to the pooled rows of the trial (shape (Σ N_s, D)) before they are cut into
        sites, e.g. the paper's non-private centring and scaling.

    Returns
    -------
    list of ndarray, one per site, shape (N_s, D)

    Raises
    ------
    ScenarioError
        If the data has fewer than S·N_s rows.
    """

    S = len(inp.shards)
    pool = np.asarray(inp.data.toarray() if sp.issparse(inp.data) else inp.data, dtype=float)
    if samples_per_site:
        n = S * samples_per_site
        if n > len(pool):
            raise ScenarioError(
                f"algorithm.samples_per_site = {samples_per_site} needs {n} rows for {S} "
                f"sites; the data has {len(pool)}"
            )
        X = pool[rng.choice(len(pool), n, replace=False)]
        bounds = np.arange(0, n + 1, samples_per_site)
    else:
        X = pool
        bounds = np.cumsum([0, *(s.shape[0] for s in inp.shards)])
    if prepare is not None:
        X = prepare(X)
    return [X[a:b] for a, b in itertools.pairwise(bounds)]


def accounting(site: Sequence[Release], aggregate: Sequence[Release],
               delta: float | None = None) -> dict[str, Any]:
    """The report's ``accounting`` block: per site (its releases alone) and for the aggregate,
    each composed over the algorithm's stages (:func:`protocols.accounting.account`; ε is
    reported at ``delta``, by default the paper's total δ)."""

    return {"site": account(site, delta), "aggregate": account(aggregate, delta)}


def accounting_rows(block: Mapping[str, Any]) -> list[list[Any]]:
    """Console rows: scope, paper (ε, δ), exact ε, dp-accounting PLD and RDP ε, met."""
    rows = []
    for scope, a in block.items():
        rows.append([scope, a["paper"]["epsilon"], a["paper"]["delta"], a["exact"]["epsilon"],
                     a["dp_accounting_pld"]["epsilon"], a["dp_accounting_rdp"]["epsilon"],
                     "yes" if a["paper_epsilon_met"] else "no"])
    return rows


ACCOUNTING_HEADERS = ["scope", "paper ε", "paper δ", "exact ε", "PLD ε", "RDP ε",
                      "paper ε met"]


# -- sweeps (Figures 2–5): one key swept, every method's mean over trials per value -----------


def sweep_points(inp: RunInput, params: dict[str, Any], base: Mapping[str, Param],
                 point: Callable[[RunInput, dict[str, Any], str], dict[str, Any]],
                 ) -> tuple[list[Any], list[dict[str, Any]]]:
    """Run ``point`` at every value of the swept key (each value checked as that key)."""
    key = params["sweep"]
    values = [base[key].check(f"algorithm.values[{i}]", v)
              for i, v in enumerate(params["values"])]
    if key == "samples_per_site" and 0 in values:
        raise ScenarioError("algorithm.values: samples_per_site must be ≥ 1 in a sweep")
    out = []
    for i, v in enumerate(values):
        out.append(point(inp, {**params, key: v}, f"{key} = {v} ({i + 1}/{len(values)})"))
    return values, out


@dataclass(frozen=True)
class SweepFigure:
    """How a sweep entry reports its points.

    ``measure`` is both the key of a point's per-method samples (``point[measure][method]``, one
    value per trial) and the prefix of the metrics (``<measure>_<method>``: the means per swept
    value, and with ``spread`` also ``<measure>_<method>_sd``). ``labels`` maps each method, in
    order, to its legend label; ``title`` heads the plot, ``caption`` the table, and the plot is
    written as ``<plot>_vs_<key>.png``.
    """

    measure: str
    labels: Mapping[str, str]
    ylabel: str
    title: str
    caption: str
    plot: str
    spread: bool = False
    communication_by_phase: bool = False


def sweep_run(inp: RunInput, base: Mapping[str, Param],
              point: Callable[[RunInput, dict[str, Any], str], dict[str, Any]],
              figure: SweepFigure) -> AlgorithmRun:
    """A sweep entry's run: ``point`` at every value, then its metrics, outputs (method ×
    value × trial), table and plot; ``[[audit]]`` audits the runs each point names in its
    ``"audits"`` (``"<arm> <key>=<value>"``, :mod:`sim.audited_runs`)."""

    p = inp.params
    values, points = sweep_points(inp, p, base, point)
    methods = list(figure.labels)
    curves = {m: [float(pt[figure.measure][m].mean()) for pt in points] for m in methods}
    metrics: dict[str, Any] = {"sweep": p["sweep"], "values": values}
    metrics.update({f"{figure.measure}_{m}": curves[m] for m in methods})
    if figure.spread:
        metrics.update({f"{figure.measure}_{m}_sd": [
            float(pt[figure.measure][m].std(ddof=1)) if p["trials"] > 1 else 0.0
            for pt in points] for m in methods})
    xlabel = SWEEP_LABELS[p["sweep"]]
    title = (f"{figure.title} vs {xlabel} "
             f"(S = {len(inp.shards)}, K = {p['k']}, {p['trials']} trials)")
    rows = [[v, *(curves[m][i] for m in methods)] for i, v in enumerate(values)]
    return AlgorithmRun(
        result=points[0]["result"],
        outputs={f"{figure.measure}_{m}": np.array([pt[figure.measure][m] for pt in points])
                 for m in methods},
        metrics=metrics,
        plots={f"{figure.plot}_vs_{p['sweep']}": lambda: plots.sweep(
            values, {figure.labels[m]: curves[m] for m in methods}, xlabel, figure.ylabel,
            title, logx=p["sweep"] != "samples_per_site")},
        tables=[table([p["sweep"], *methods], rows, figure.caption)],
        communication_by_phase=figure.communication_by_phase,
        # [[audit]]: each value's runs (a point's "audits", sim.audited_runs)
        audit_runs={f"{name} {p['sweep']}={v:g}": target
                    for v, pt in zip(values, points, strict=True)
                    for name, target in pt.get("audits", {}).items()},
    )


# -- the declared cost of a CAPE experiment -----------------------------------------------------

ACCOUNTING_S = 0.4
"""Time to import :mod:`protocols.accounting` (scipy.optimize and scipy.special: ≈ 0.5 s of CPU
measured, part of it shared with the run's other imports) and account the releases: every CAPE
report is accounted. ``dp_accounting`` (about a second) is imported only by its cross-check."""

ELEMENT_OBJECT_BYTES = 40
"""Memory per field element of a simulation's views and ledger payloads held as Python
integers (the fixed-point statistics of a CAPE release)."""

TRIAL_COPIES = 8.0
"""Copies of a trial's rows (S·N_s × D doubles) alive at its peak: drawn, prepared, cut into
sites, and each method's centred or scaled copies. Fitted to ``cape_pca_synthetic_epsilon``
and ``_samples`` (peak RSS 634 and 891 MB at 10,000 and 30,000 rows of D = 200 per trial)."""


def cape_workload(inp: EstimateInput, length: Callable[[int], int],
                  trial_flops: Callable[[dict[str, Any], int], float],
                  simulations_per_trial: int = 2, basis: str = "") -> Workload:
    """The cost of a CAPE experiment: every point of a sweep (or the one setting) × ``trials``
    × ``simulations_per_trial`` (capeAGN and the conventional scheme) simulations.

    Each simulation is one CAPE call on a statistic of ``length(D)`` elements
    (:func:`protocols.correlated_noise.declared_cost`: each of the S sites sends one message,
    the noise generator and the aggregator at most S each — 3S messages of that many
    elements); ``trial_flops(params, N)`` is the local arithmetic of one trial on N rows per
    site (moments, eigen- or tensor decompositions of every method compared). Three
    simulations' views are alive at the peak (the first trial's, kept for the report, and the
    current pair), and :data:`TRIAL_COPIES` copies of a trial's rows (S·N_s, or the whole
    data when the sites use their shards). The report's accounting adds :data:`ACCOUNTING_S`.
    """
    S, D = inp.n_parties, inp.n_cols
    p = inp.params
    points = ([{**p, p["sweep"]: v} for v in p["values"]] if "sweep" in p else [p])
    sims, flops, rows = 0, 0.0, 0
    for point in points:
        n = point.get("samples_per_site") or max(inp.n_rows // S, 1)
        sims += point["trials"] * simulations_per_trial
        flops += point["trials"] * trial_flops(point, n)
        rows = max(rows, S * n)
    per = 3 * S * length(D)
    return Workload(messages=sims * 3 * S, elements=sims * per, simulations=sims, flops=flops,
                    working_bytes=3 * per * ELEMENT_OBJECT_BYTES
                    + int(TRIAL_COPIES * 8 * D * rows), seconds=ACCOUNTING_S,
                    basis=basis or f"CAPE's declared cost × {sims:,} simulations")
