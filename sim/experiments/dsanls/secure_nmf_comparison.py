"""Experiment ``secure_nmf_comparison``: relative error against simulated time for the six
secure NMF methods of Qian et al. (seed 004, §5.3, Figs. 6 and 7).

Syn-SD, Syn-SSD-U, Syn-SSD-V, Syn-SSD-UV, Asyn-SD and Asyn-SSD-V run on the scenario's data
and partition — equal blocks for the uniform workload (Fig. 6), ``[data] partition`` with one
party holding half of the samples for the imbalanced one (Fig. 7, §5.3.2) — from the same start,
each until its simulated clock passes ``time_budget_s``: the asynchronous server stops there;
a synchronous method runs as many outer iterations as reach it, counted from a two-iteration
pilot run of the same method (every outer iteration of a synchronous method costs the same
simulated time). Simulated time covers messages (the network's latency and bandwidth) and local
work (flop counts at ``gflops``), so the barrier of a synchronous All-Reduce makes every node
wait for the slowest.

The paper's conclusions (§5.3, digest C23): Syn-SSD-UV is best under a uniform workload;
Asyn-SSD-V under an imbalanced one, where Syn-SSD-UV does poorly. The metrics give each
method's error at the budget (``error_at_budget``), its ``time_averaged_error`` — the
geometric mean of the error over [0, budget], i.e. how low its curve lies over the whole window
(:func:`time_averaged_log_error`) — and the ``ranking`` by the latter, also over the first
eighth, quarter and half of the window (``ranking_by_horizon``: which method leads depends on
how long one looks); the plot, ``relative_error_vs_time.png``, their curves.

Findings (``scenarios/secure_nmf_{uniform,imbalanced}.toml``: M 400 × 600, k = 10, N = 10,
sketches of 0.1 n — d = 6 of a uniform party's 60 samples, d' = 40 of the 400 features —
1 GFLOP/s, T = T_2 = 2, ρ = 30, 0.3 simulated seconds; time-averaged error over the whole
window at seeds 1, 2, 3, the network varied; ``tests/sim/test_dsanls_scenarios.py``):

* **1 Gbit/s** (an All-Reduce of U costs about half a local U update; 0.1 simulated
  seconds): Syn-SSD-UV is best under both workloads at every seed — uniform, Syn-SSD-U next
  at 1.02–1.05 of it; imbalanced, Asyn-SSD-V second at 1.12–1.20 of it, ahead of Asyn-SD and
  of every other synchronous method. (The scenarios' former M 100 × 1000, k = 5, noise 0.3,
  seed 5, put the asynchronous methods first in both workloads.)
* **100 Mbit/s** (shipped; an All-Reduce of U costs about five local U updates): uniform —
  Syn-SSD-U and Syn-SSD-UV lie lowest at every seed, within 2 % of each other (UV first at
  seed 2, e.g. 0.1086 against 0.1094), every Syn-SSD variant below Syn-SD and both
  asynchronous methods; imbalanced — Syn-SSD-UV is best at every seed, Asyn-SSD-V 11–17 %
  above it, and both asynchronous methods beat only the unsketched barrier methods Syn-SD and
  Syn-SSD-V.
* **10 Mbit/s** (an All-Reduce of U costs about fifty local steps): Syn-SSD-U is best in both
  workloads at every seed, Syn-SSD-UV second or third, the asynchronous methods last.

The costs behind these ratios, from Syn-SD's simulated time per outer iteration (two local
iterations and one All-Reduce of U): 2.6, 4.9 and 27.8 ms at 1,000, 100 and 10 Mbit/s, so
an All-Reduce of U takes ≈ 0.35, 2.7 and 26 ms against ≈ 1.1 ms for a uniform party's local
iteration (U and V updates). So the paper's uniform ordering (Syn-SSD-UV best) holds where
sketching still saves work that counts (1 Gbit/s) and becomes a near tie with Syn-SSD-U,
then a loss to it, as communication grows; its imbalanced one (Asyn-SSD-V best) holds at
none of the three: an asynchronous client sends all of U (m·k numbers) to the server after
every T local iterations, where Syn-SSD-UV sends d'·k per inner iteration and U every T_2,
and its sketched updates shorten party 0's barrier work too.

Keys: those of ``syn_ssd`` (``k``, ``inner``, the sketch keys, ``solver``, ``alpha``, ``beta``,
``allreduce``, ``variant``, ``gflops``), ``rho`` and ``time_budget_s`` (required here), and
``methods`` (a subset of the six labels; all by default).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from sim import plots
from sim.catalog.dsanls import (
    COMPARED_METHODS,
    MAX_OUTER,
)
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.dsanls.secure_nmf import run_secure
from sim.experiments.dsanls.secure_nmf_cost import secure_workload
from sim.report import table

HORIZONS = (0.125, 0.25, 0.5, 1.0)


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    budget = p["time_budget_s"]
    curves: dict[str, tuple[list[float], list[float]]] = {}
    at_budget: dict[str, float] = {}
    mean_log: dict[str, float] = {}
    initial: dict[str, float] = {}
    iterations: dict[str, int] = {}
    messages: dict[str, int] = {}
    audit_runs: dict[str, Any] = {}  # each method's run (sim.audited_runs)
    for i, label in enumerate(p["methods"]):
        name, sketch_on = COMPARED_METHODS[label]
        params = {**p, "sketch_on": sketch_on, "outer": 2}
        if inp.progress is not None:
            inp.progress("methods", i, len(p["methods"]))
        if name.startswith("asyn"):
            params.update(outer=MAX_OUTER, time_budget_s=budget)
        else:
            pilot = run_secure(_with(inp, params), name, sketch_on)
            t1, t2 = pilot.metrics["simulated_time_history"][:2]
            params["outer"] = 2 + max(0, math.ceil((budget - t2) / (t2 - t1)))
        run = run_secure(_with(inp, params), name, sketch_on)
        audit_runs[label] = (run.audit_target if run.audit_target is not None
                             else next(iter(run.audit_runs.values())))
        times = run.metrics["simulated_time_history"]
        errors = run.metrics["relative_error_history"]
        curves[label] = (times, errors)
        before = [e for t, e in zip(times, errors, strict=True) if t <= budget]
        at_budget[label] = before[-1] if before else run.metrics["initial_relative_error"]
        initial[label] = run.metrics["initial_relative_error"]
        mean_log[label] = time_averaged_log_error(times, errors, budget, initial[label])
        iterations[label] = len(times)
        messages[label] = len(run.result.ledger) if run.result is not None else 0
    if inp.progress is not None:
        inp.progress("methods", len(p["methods"]), len(p["methods"]))
    ranking = sorted(mean_log, key=lambda label: mean_log[label])
    horizons = {}
    for fraction in HORIZONS:
        score = {label: time_averaged_log_error(*curves[label], fraction * budget,
                                                initial[label]) for label in curves}
        horizons[f"{fraction:g}"] = sorted(score, key=lambda label: score[label])
    sizes = [int(s.shape[0]) for s in inp.shards]
    workload = ("uniform" if max(sizes) - min(sizes) <= 1
                else f"imbalanced: party {int(np.argmax(sizes))} holds "
                     f"{max(sizes) / sum(sizes):.0%} of the samples")
    rows = [[label, 10.0 ** mean_log[label], at_budget[label], iterations[label],
             messages[label]] for label in ranking]
    return AlgorithmRun(
        result=None,
        audit_runs=audit_runs,
        outputs={f"error_{label}": np.array([curves[label][0], curves[label][1]])
                 for label in curves},
        metrics={
            "workload": workload,
            "party_samples": sizes,
            "time_budget_s": budget,
            "error_at_budget": at_budget,
            "time_averaged_error": {label: 10.0**v for label, v in mean_log.items()},
            "ranking": ranking,
            "best": ranking[0],
            "ranking_by_horizon": horizons,
            "evaluations": iterations,
            "messages": messages,
        },
        plots={"relative_error_vs_time": lambda: plots.relative_error(
            {f"secure NMF, {workload}, N = {len(sizes)}, k = {p['k']}": (
                "simulated time (s)",
                {label: _clip(curves[label], budget) for label in curves})})},
        tables=[table(["method", "time-averaged error", "error at budget", "evaluations",
                       "messages"], rows,
                      f"relative error over {budget:g} simulated seconds ({workload})")],
    )


def time_averaged_log_error(times: list[float], errors: list[float], budget: float,
                            initial: float) -> float:
    """The mean of log10(error) over [0, budget] for the step curve that starts at ``initial``.

    What a plot of error against time shows: a method is better when its curve lies lower over
    the window, not only at its end. Until a method's first evaluation its error is the
    start's.
    """
    edges = [0.0, *[t for t in times if t < budget], budget]
    values = [initial, *[e for t, e in zip(times, errors, strict=True) if t < budget]]
    logs = [math.log10(max(v, 1e-300)) for v in values]
    widths = [b - a for a, b in itertools.pairwise(edges)]
    return sum(w * v for w, v in zip(widths, logs, strict=True)) / budget


def _with(inp: RunInput, params: dict[str, Any]) -> RunInput:
    return RunInput(inp.scenario, params, inp.data, inp.shards, inp.simulation, inp.seed, None,
                    inp.extras)


def estimate(inp: EstimateInput) -> Workload:
    """Every method to the budget (:func:`~sim.experiments.dsanls.secure_nmf_cost.secure_workload`),
    one after the other, and a two-iteration pilot before each synchronous one."""

    budget = inp.params["time_budget_s"]
    total = Workload(simulations=0)
    for label in inp.params["methods"]:
        name, sketch_on = COMPARED_METHODS[label]
        work = secure_workload(inp, name, sketch_on, outer=MAX_OUTER, budget=budget)
        runs = 1
        if name.startswith("syn"):
            work = work + secure_workload(inp, name, sketch_on, outer=2, budget=None)
            runs = 2
        total = Workload(total.messages + work.messages, total.elements + work.elements,
                         total.simulations + runs, total.flops + work.flops,
                         max(total.working_bytes, work.working_bytes), "",
                         seconds=total.seconds + work.seconds)
    return total.described(f"{len(inp.params['methods'])} methods to the simulated budget "
                           f"of {budget:g} s")


def _clip(curve: tuple[list[float], list[float]], budget: float) -> tuple[list, list]:
    times, errors = curve
    keep = [i for i, t in enumerate(times) if t <= budget]
    return [times[i] for i in keep], [errors[i] for i in keep]


def roles(params: Mapping[str, Any]) -> tuple[str, ...]:
    """The asynchronous methods' server, if any of them is compared."""
    if any(COMPARED_METHODS[label][0].startswith("asyn") for label in params["methods"]):
        return ("server",)
    return ()


