"""Catalogue entries ``syn_sd``, ``syn_ssd``, ``asyn_sd`` and ``asyn_ssd`` (Qian et al., seed
004, §4.2–4.3, Algorithms 4–7): secure distributed NMF where party r holds only its samples.

Orientation and start as :mod:`sim.experiments.dsanls.dsanls` (M = Xᵀ; outputs ``U`` and each data
holder's ``V_<id>``; U^0 public, V^0_r from the party's own columns). The asynchronous entries
add a server (role ``server``, the id after the data holders) that keeps U.

Keys: ``k``; ``outer`` and ``inner`` (T_1 and T_2 of the synchronous algorithms; for the
asynchronous ones the server stops after ``outer`` × N updates and a client runs ``inner``
local iterations, T, per round); the sketch keys of ``dsanls`` (``sketch``, ``sketch_size``,
``sketch_size_u``, ``sketch_size_v``; only for ``syn_ssd`` and ``asyn_ssd``); ``sketch_on``
(``syn_ssd``: "u" | "v" | "uv", Syn-SSD-U/-V/-UV; ``asyn_ssd``: "v" only); ``solver``,
``alpha``, ``beta``; ``allreduce`` and ``variant`` (synchronous); ``rho`` (asynchronous, ω_t =
ρ/(ρ + t), ρ > 0) and ``time_budget_s`` (asynchronous: the server also stops once its clock
passes it); ``gflops`` (each party's speed for local work on the simulated clock).

Metrics: ``relative_error`` of the final U and V; ``relative_error_history`` and
``simulated_time_history`` — after every outer All-Reduce (synchronous) or every server update
(asynchronous: the server's U with each client's latest V); elements each party sent.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from algorithms import data as data_io
from algorithms.nmf.dsanls.asyn_sd import asyn_client, asyn_server
from algorithms.nmf.dsanls.sanls import StepSchedule, relative_error
from algorithms.nmf.dsanls.secure_nmf import SecureNmfConfig
from algorithms.nmf.dsanls.syn_sd import syn_sd
from algorithms.nmf.dsanls.syn_ssd import syn_ssd
from parties.party import Party, site_parties
from protocols.errors import InputError
from sim import plots
from sim.audited_runs import RevealingRun
from sim.catalog.dsanls import (
    LABELS,
)
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.dsanls.dsanls import (
    REDUCE_PROTOCOLS,
    as_scenario_error,
    audit_target,
    check_rank,
    dense,
    seconds_per_flop,
    sent_per_party,
    sizes,
    starts,
)
from sim.experiments.dsanls.secure_nmf_cost import secure_workload


def run_secure(inp: RunInput, name: str, sketch_on: str) -> AlgorithmRun:
    """Simulate one of the four algorithms on the scenario's parties; evaluate the curves."""

    p = inp.params
    M = dense(inp.data).T
    m, n = M.shape
    check_rank(p["k"], m, n)
    N = len(inp.shards)
    columns = tuple(data_io.partition_rows(n, N, [s.shape[0] for s in inp.shards]))
    size_v, size_u = sizes(p) if "sketch" in p else (0.1, 0.1)
    asynchronous = name.startswith("asyn")
    try:
        config = SecureNmfConfig(
            k=p["k"], outer=p["outer"], inner=p["inner"], n_features=m, columns=columns,
            sketch=p.get("sketch", "subsampling"), d=size_v, d_prime=size_u, sketch_on=sketch_on,
            solver=p["solver"], schedule=StepSchedule(p["alpha"], p["beta"]),
            allreduce=p.get("allreduce", "secure_sum"), variant=p.get("variant", "prg"),
            seconds_per_flop=seconds_per_flop(p), rho=p.get("rho", 1.0),
            time_budget_s=p.get("time_budget_s"))
    except InputError as exc:
        raise as_scenario_error(exc) from exc
    U0, V0 = starts(inp, config.k)
    if asynchronous:
        parties = [Party(r, asyn_client, {"X": shard, "V0": V0[r], "config": config,
                                          "server": N})
                   for r, shard in enumerate(inp.shards)]
        parties.append(Party(N, asyn_server, {"U0": U0, "config": config}, role="server"))
    else:
        program = syn_sd if name == "syn_sd" else syn_ssd
        parties = site_parties(program, [{"X": shard, "U0": U0, "V0": V0[r], "config": config}
                                         for r, shard in enumerate(inp.shards)])
    result = inp.simulation.run(parties, seed=inp.seed)
    times, errors = error_curve(result.outputs, N, V0, M, asynchronous)
    nodes = [result.outputs[r] for r in range(N)]
    U = result.outputs[N].U if asynchronous else nodes[0].U
    V = [node.V for node in nodes]
    protocols = ("asyn_sd",) if asynchronous else REDUCE_PROTOCOLS
    sent = sent_per_party(result, protocols)
    metrics: dict[str, Any] = {
        "relative_error": relative_error(M, U, np.vstack(V)),
        "initial_relative_error": relative_error(M, U0, np.vstack(V0)),
        "relative_error_history": errors,
        "simulated_time_history": times,
        "elements_sent_per_party": sent,
        "m": m, "n": n, "k": config.k,
        "local_iterations_per_party": [node.updates * (config.inner if asynchronous else 1)
                                       for node in nodes],
    }
    if asynchronous:
        server = result.outputs[N]
        metrics["server_updates"] = server.updates
        metrics["elements_received_by_server"] = sum(
            r.elements for r in result.ledger if r.receiver == N)
    if "v" in sketch_on:
        metrics["d"] = [config.d_for(r) for r in range(N)]
    if "u" in sketch_on:
        metrics["d_prime"] = config.sketch_d_prime
    label = LABELS[(name, sketch_on)]
    return AlgorithmRun(
        result=result,
        outputs={"U": U, **{f"V_{r}": v for r, v in enumerate(V)}},
        metrics=metrics,
        audit_target=(None if asynchronous
                      else audit_target(result, parties, config.allreduce, config.variant,
                                         inp)),
        audit_runs={label: ASYNCHRONOUS_REVEALS} if asynchronous else {},
        plots={"relative_error": lambda: plots.relative_error(
            {f"{label}, N = {N}, k = {config.k}": ("simulated time (s)",
                                                   {label: (times, errors)})})},
    )


ASYNCHRONOUS_REVEALS = RevealingRun(
    "every client's copy U_(r) to the server in the clear (its declared output U_client), and "
    "the server's U — a running mix of the other clients' copies — to every client "
    "(seed 004, §4.3; digest §7.4 item 66)", "Asyn-SD / Asyn-SSD")
"""What ``[[audit]]`` reports on the asynchronous variants (:mod:`sim.audited_runs`): they
exchange plain copies of U by design, so there is nothing for a simulator to hide."""
def error_curve(outputs: dict[int, Any], n_nodes: int, V0: list[Any], M: Any,
                asynchronous: bool) -> tuple[list[float], list[float]]:
    """Relative error against simulated time, from the parties' snapshots (an evaluation).

    Synchronous: after outer iteration j, U (identical at every node after the All-Reduce)
    and every node's V_r, at the latest of the nodes' clocks. Asynchronous: after every server
    update, the server's U with each client's latest V_r sent by then (V^0_r before its first).
    """

    nodes = [outputs[r] for r in range(n_nodes)]
    times, errors = [], []
    if not asynchronous:
        for j in range(len(nodes[0].history)):
            snaps = [node.history[j] for node in nodes]
            times.append(max(s[0] for s in snaps))
            errors.append(relative_error(M, snaps[0][1], np.vstack([s[2] for s in snaps])))
        return times, errors
    latest = [0] * n_nodes
    current = list(V0)
    for clock, U, _ in outputs[n_nodes].history:
        for r, node in enumerate(nodes):
            while latest[r] < len(node.history) and node.history[latest[r]][0] <= clock:
                current[r] = node.history[latest[r]][2]
                latest[r] += 1
        times.append(clock)
        errors.append(relative_error(M, U, np.vstack(current)))
    return times, errors


def run(inp: RunInput) -> AlgorithmRun:
    """The entry the scenario names (``syn_sd``, ``syn_ssd``, ``asyn_sd``, ``asyn_ssd``)."""
    return run_secure(inp, inp.scenario.algorithm_name, inp.params.get("sketch_on", ""))


def estimate(inp: EstimateInput) -> Workload:
    """The declared cost of the entry the scenario names (:func:`secure_workload`)."""
    return secure_workload(inp, inp.scenario.algorithm_name, inp.params.get("sketch_on", ""))
