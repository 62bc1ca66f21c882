"""Experiment ``nmf_baselines``: DSANLS against distributed MU, HALS and ANLS/BPP (Qian et al.,
seed 004, §5.2, Figs. 2–5).

Every method runs on the scenario's data, partition and network from the same start
(:func:`sim.experiments.dsanls.starts`): DSANLS in the general setting (node r holds M_{I_r:}
and M_{:J_r}) with subsampling or Gaussian sketches and the RCD (Algorithm 3) or PGD (Eq. 14)
solver — ``DSANLS/S``, ``DSANLS/G``, ``DSANLS/S-PGD``, ``DSANLS/G-PGD`` — for
``sketched_iterations`` iterations, and the baselines ``MU`` (:mod:`algorithms.nmf.mu`),
``HALS`` (:mod:`algorithms.nmf.hals`) and ``ANLS/BPP`` (:mod:`algorithms.nmf.abpp`), which
all-gather the fixed factor (:mod:`algorithms.nmf.gathered_bcd`), for ``iterations``. Every
All-Reduce and All-Gather is in the clear (float64): this is the paper's cluster speed-up
setting, not a private one. The DSANLS runs' All-Reduce is ``allreduce``: ``plain`` sends the
k×d array to every peer, ``ring`` is MPI's reduce-scatter + all-gather
(:mod:`protocols.ring_all_reduce`, ≈ 2kd per node); on a ``star`` network (one link per node
to a switch, as in a cluster) a node's messages share its link and the ring's saving shows in
time. Simulated time counts messages (the network's
latency and bandwidth) and local work (flop counts at ``gflops`` per node); a synchronous
collective makes every node wait for the slowest.

The paper's orderings (§5.2, digest C22): DSANLS/S reaches a given error first in time
(Figs. 2–3); per iteration DSANLS/G converges faster than DSANLS/S (Fig. 4) and RCD faster than
PGD for both sketches (Fig. 5). The metrics give, per method, the error after its last
iteration, its simulated time and seconds per iteration, the elements a node sends per
iteration, and two comparisons:

* against time, over the window every run covers (``time_budget_s``, or by default the
  shortest run's simulated time): ``error_at_time`` and ``time_averaged_error`` (geometric mean
  of the error curve over the window, :func:`~sim.experiments.secure_nmf_comparison.
  time_averaged_log_error`), ranked in ``ranking_by_time``;
* against iterations, over the iterations every run made: ``error_at_iteration`` and
  ``iteration_averaged_error`` (geometric mean of the errors after iterations 1..I), ranked in
  ``ranking_by_iteration``.

The table prints both; the plot ``relative_error`` draws the curves against iterations and
against simulated time, the start's error at 0.

Keys: ``k``, ``sketch_size`` (and ``sketch_size_u``, ``sketch_size_v``), ``alpha``, ``beta``,
``gflops`` as for ``dsanls``; ``allreduce`` (``plain`` | ``ring``, the DSANLS runs');
``iterations`` (MU, HALS, ANLS/BPP), ``sketched_iterations``
(DSANLS), ``time_budget_s`` (0: the shortest run's time) and ``methods`` (a subset of the
seven labels; all by default).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from algorithms import data as data_io
from algorithms.nmf.abpp import abpp
from algorithms.nmf.dsanls.sanls import relative_error
from algorithms.nmf.gathered_bcd import GatheredConfig
from algorithms.nmf.hals import hals
from algorithms.nmf.mu import mu
from parties.party import site_parties
from protocols.errors import InputError, ScenarioError
from sim import plots
from sim.audited_runs import RevealingRun
from sim.catalog.dsanls import DSANLS, SKETCHED_METHODS
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.dsanls.dsanls import (
    check_rank,
    dense,
    dsanls_workload,
    seconds_per_flop,
    starts,
)
from sim.experiments.dsanls.secure_nmf_comparison import time_averaged_log_error
from sim.report import table

PLAIN_REVEALS = {
    True: RevealingRun("its sketched factor blocks to every node through a plain All-Reduce "
                       "(seed 004's DSANLS as compared in §5.2)", "DSANLS, plain All-Reduce"),
    False: RevealingRun("its rows of U and V to every node through a plain All-Gather",
                        "the gathered baseline (MU, HALS, ANLS/BPP)"),
}
"""What ``[[audit]]`` reports on each method (:mod:`sim.audited_runs`): every arm here
exchanges its factors in the clear, as the paper's comparison does; the secure variants are
audited by ``dsanls`` and ``secure_nmf_comparison``. All-Gather has a declaration
(:mod:`protocols.all_gather`), so a gathered arm could be audited ``private`` *relative to*
it; the arms stay revealing by design because the question a user of this table asks is
whether the factorisation keeps a node's rows from the others, and these arms, by design, do
not — "private relative to handing every block to everyone" would read as the opposite."""

def _key(label: str) -> str:
    """``DSANLS/S-PGD`` → ``dsanls_s_pgd``: a label as an output name."""
    return label.lower().replace("/", "_").replace("-", "_")


def _program(label: str) -> Callable[..., Any]:
    return {"MU": mu, "HALS": hals, "ANLS/BPP": abpp}[label]


def run_gathered(inp: RunInput, label: str, iterations: int) -> dict[str, Any]:
    """One baseline on the scenario: its curve (times, errors) and what a node sent."""

    p = inp.params
    X = dense(inp.data)
    M = X.T
    m, n = M.shape
    k = p["k"]
    check_rank(k, m, n)
    N = len(inp.shards)
    if m < N:
        raise ScenarioError(f"{label} splits the m = {m} features among the {N} nodes; it "
                            "needs m ≥ network.parties")
    columns = tuple(data_io.partition_rows(n, N, [s.shape[0] for s in inp.shards]))
    rows = tuple(data_io.partition_rows(m, N))
    try:
        config = GatheredConfig(k=k, iterations=iterations, n_features=m, n_samples=n,
                                columns=columns, rows=rows, seconds_per_flop=seconds_per_flop(p))
    except InputError as exc:
        raise ScenarioError(f"[algorithm]: {exc}") from exc
    U0, V0 = starts(inp, k)
    inputs = [{"X": shard, "X_features": X[:, a:b].copy(), "U0": U0[a:b], "V0": V0[r],
               "config": config}
              for r, (shard, (a, b)) in enumerate(zip(inp.shards, rows, strict=True))]
    parties = site_parties(_program(label), inputs, column_blocks=("X_features",))
    result = inp.simulation.run(parties, seed=inp.seed)
    nodes = [result.outputs[r] for r in result.sites]
    errors = [relative_error(M, np.vstack([x.history[t][1] for x in nodes]),
                             np.vstack([x.history[t][2] for x in nodes]))
              for t in range(iterations)]
    times = [max(x.history[t][0] for x in nodes) for t in range(iterations)]
    by_sender = result.ledger.elements_by_sender()
    sent = [by_sender.get(s, 0) for s in result.sites]
    return {"times": times, "errors": errors, "sent": max(sent) / iterations,
            "initial": relative_error(M, U0, np.vstack(V0)), "messages": len(result.ledger)}


def run_sketched(inp: RunInput, label: str, iterations: int) -> dict[str, Any]:
    """DSANLS (``dsanls``'s run, general setting, the ``allreduce`` key's All-Reduce in the
    clear) with ``label``'s sketch and solver."""

    sketch, solver = SKETCHED_METHODS[label]
    params = {**inp.params, "sketch": sketch, "solver": solver, "iterations": iterations,
              "setting": "general", "allreduce": inp.params["allreduce"], "variant": "prg"}
    run = DSANLS.run(RunInput(inp.scenario, params, inp.data, inp.shards, inp.simulation,
                              inp.seed, None, inp.extras))
    U0, V0 = starts(inp, inp.params["k"])
    metrics = run.metrics
    return {"times": metrics["simulated_time_history"],
            "errors": metrics["relative_error_history"],
            "sent": metrics["elements_sent_per_party_per_iteration"],
            "initial": relative_error(dense(inp.data).T, U0, np.vstack(V0)),
            "messages": len(run.result.ledger) if run.result is not None else 0}


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    curves: dict[str, dict[str, Any]] = {}
    for i, label in enumerate(p["methods"]):
        if inp.progress is not None:
            inp.progress("methods", i, len(p["methods"]))
        if label in SKETCHED_METHODS:
            curves[label] = run_sketched(inp, label, p["sketched_iterations"])
        else:
            curves[label] = run_gathered(inp, label, p["iterations"])
    if inp.progress is not None:
        inp.progress("methods", len(p["methods"]), len(p["methods"]))
    initial = next(iter(curves.values()))["initial"]  # the same start for every method
    window = p["time_budget_s"] or min(c["times"][-1] for c in curves.values())
    common = min(len(c["errors"]) for c in curves.values())
    at_time, by_time, at_iteration, by_iteration = {}, {}, {}, {}
    for label, c in curves.items():
        before = [e for t, e in zip(c["times"], c["errors"], strict=True) if t <= window]
        at_time[label] = before[-1] if before else initial
        by_time[label] = 10.0 ** time_averaged_log_error(c["times"], c["errors"], window, initial)
        at_iteration[label] = c["errors"][common - 1]
        by_iteration[label] = 10.0 ** (sum(math.log10(max(e, 1e-300))
                                           for e in c["errors"][:common]) / common)
    ranking_by_time = sorted(by_time, key=lambda label: by_time[label])
    ranking_by_iteration = sorted(by_iteration, key=lambda label: by_iteration[label])
    N = len(inp.shards)
    title = f"N = {N}, k = {p['k']}, M {inp.data.shape[1]} × {inp.data.shape[0]}"
    rows = [[label, by_time[label], at_time[label], by_iteration[label], at_iteration[label],
             c["errors"][-1], len(c["errors"]), c["times"][-1] / len(c["times"]), c["sent"]]
            for label, c in sorted(curves.items(), key=lambda item: by_time[item[0]])]
    return AlgorithmRun(
        result=None,
        outputs={f"error_{_key(label)}": np.array(
            [np.arange(1, len(c["errors"]) + 1), c["times"], c["errors"]])
            for label, c in curves.items()},
        metrics={
            "initial_relative_error": initial,
            "relative_error": {label: c["errors"][-1] for label, c in curves.items()},
            "iterations": {label: len(c["errors"]) for label, c in curves.items()},
            "simulated_time": {label: c["times"][-1] for label, c in curves.items()},
            "seconds_per_iteration": {label: c["times"][-1] / len(c["times"])
                                      for label, c in curves.items()},
            "elements_sent_per_party_per_iteration": {label: c["sent"]
                                                      for label, c in curves.items()},
            "messages": {label: c["messages"] for label, c in curves.items()},
            "time_window_s": window,
            "error_at_time": at_time,
            "time_averaged_error": by_time,
            "ranking_by_time": ranking_by_time,
            "common_iterations": common,
            "error_at_iteration": at_iteration,
            "iteration_averaged_error": by_iteration,
            "ranking_by_iteration": ranking_by_iteration,
        },
        audit_runs={label: PLAIN_REVEALS[label in SKETCHED_METHODS] for label in curves},
        plots={"relative_error": lambda: plots.relative_error({
            f"against iterations ({title})": ("iteration", {
                label: ([0, *range(1, len(c["errors"]) + 1)], [initial, *c["errors"]])
                for label, c in curves.items()}),
            "against simulated time": ("simulated time (s)", {
                label: ([0.0, *[t for t in c["times"] if t <= window]],
                        [initial, *[e for t, e in zip(c["times"], c["errors"], strict=True)
                                    if t <= window]])
                for label, c in curves.items()})})},
        tables=[table(["method", "time-averaged error", "error at window", "iteration-averaged "
                       "error", f"error at iteration {common}", "final error", "iterations",
                       "s per iteration", "elements sent per node per iteration"], rows,
                      f"DSANLS and its baselines, {title}: errors over the first {window:.4g} "
                      f"simulated seconds and the first {common} iterations")],
    )


def estimate(inp: EstimateInput) -> Workload:
    """Each DSANLS run as ``dsanls`` declares it (:func:`~sim.experiments.dsanls.
    dsanls_workload`, with its centralized reference); each baseline per iteration two
    All-Gathers — N(N − 1) messages each, (N − 1)(m + n)k elements in all — and ≈ 4mnk flops
    summed over the nodes (MU, HALS), plus the block principal pivoting's solves (ANLS/BPP,
    counted as one k×k solve per row of either factor, ≈ (m + n)k³ more)."""

    p = inp.params
    m, n, k, N = inp.n_cols, inp.n_rows, p["k"], inp.n_parties
    total = Workload(simulations=0)
    for label in p["methods"]:
        if label in SKETCHED_METHODS:
            sketch, solver = SKETCHED_METHODS[label]
            params = {**p, "sketch": sketch, "solver": solver,
                      "iterations": p["sketched_iterations"], "setting": "general",
                      "allreduce": p["allreduce"], "variant": "prg"}
            work = dsanls_workload(EstimateInput(inp.scenario, params, inp.n_rows, inp.n_cols,
                                                 inp.missing))
            work = Workload(work.messages, work.elements, 1, 2 * work.flops)
        else:
            t = p["iterations"]
            flops = 4.0 * m * n * k + 4.0 * (m + n) * k * k
            if label == "ANLS/BPP":
                flops += 2.0 * (m + n) * k**3
            work = Workload(messages=t * 2 * N * (N - 1), elements=t * (N - 1) * (m + n) * k,
                            simulations=1, flops=t * flops)
        total = Workload(total.messages + work.messages, total.elements + work.elements,
                         total.simulations + 1, total.flops + work.flops)
    return total.described(f"{len(p['methods'])} methods, DSANLS for "
                           f"{p['sketched_iterations']} and the baselines for "
                           f"{p['iterations']} iterations")
