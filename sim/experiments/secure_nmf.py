"""Catalogue entries ``syn_sd``, ``syn_ssd``, ``asyn_sd`` and ``asyn_ssd`` (Qian et al., seed
004, §4.2–4.3, Algorithms 4–7): secure distributed NMF where party r holds only its samples.

Orientation and start as :mod:`sim.experiments.dsanls` (M = Xᵀ; outputs ``U`` and each data
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

from protocols.errors import InputError, ScenarioError
from sim.audited_runs import RevealingRun
from sim.entry import (
    MAX_ITERATIONS,
    Algorithm,
    AlgorithmRun,
    EstimateInput,
    Param,
    RunInput,
    Workload,
    described,
    integer,
)
from sim.experiments.dsanls import (
    REDUCE_PARAMS,
    SKETCH_PARAMS,
    as_scenario_error,
    audit_target,
    check_rank,
    dense,
    positive,
    seconds_per_flop,
    sent_per_party,
    sizes,
    starts,
)
from sim.experiments.secure_nmf_cost import secure_workload

LOOP_PARAMS: dict[str, Param] = {
    "outer": Param(20, integer(1, MAX_ITERATIONS),
                   "T_1 (synchronous); rounds per client (asynchronous)"),
    "inner": Param(5, integer(1, MAX_ITERATIONS),
                   "T_2 (synchronous); T, local iterations per round"),
}
UNSKETCHED = {key: SKETCH_PARAMS[key] for key in ("k", "solver", "alpha", "beta", "gflops")}


def _time_budget(name: str, value: Any) -> float | None:
    return None if value is None else positive(name, value)


ASYNC_PARAMS: dict[str, Param] = {
    "rho": Param(1.0, positive, "ω_t = ρ/(ρ + t), ρ > 0"),
    "time_budget_s": Param(None, described(_time_budget,
                                           f"{positive.describe()}; left out: no budget"),
                           "server stops after this simulated time"),
}


def run_secure(inp: RunInput, name: str, sketch_on: str) -> AlgorithmRun:
    """Simulate one of the four algorithms on the scenario's parties; evaluate the curves."""
    import numpy as np

    from algorithms import data as data_io
    from algorithms.nmf.asyn_sd import asyn_client, asyn_server
    from algorithms.nmf.sanls import StepSchedule, relative_error
    from algorithms.nmf.secure_nmf import SecureNmfConfig
    from algorithms.nmf.syn_sd import syn_sd
    from algorithms.nmf.syn_ssd import syn_ssd
    from parties.party import Party, site_parties
    from sim import plots

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
    protocols = ("asyn_sd",) if asynchronous else ("secure_sum", "all_reduce")
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

LABELS = {("syn_sd", ""): "Syn-SD", ("syn_ssd", "u"): "Syn-SSD-U",
          ("syn_ssd", "v"): "Syn-SSD-V", ("syn_ssd", "uv"): "Syn-SSD-UV",
          ("asyn_sd", ""): "Asyn-SD", ("asyn_ssd", "v"): "Asyn-SSD-V"}


def error_curve(outputs: dict[int, Any], n_nodes: int, V0: list[Any], M: Any,
                asynchronous: bool) -> tuple[list[float], list[float]]:
    """Relative error against simulated time, from the parties' snapshots (an evaluation).

    Synchronous: after outer iteration j, U (identical at every node after the All-Reduce)
    and every node's V_r, at the latest of the nodes' clocks. Asynchronous: after every server
    update, the server's U with each client's latest V_r sent by then (V^0_r before its first).
    """
    import numpy as np

    from algorithms.nmf.sanls import relative_error

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


def _sketch_on(*allowed: str) -> Any:
    def check(name: str, value: Any) -> str:
        if value not in allowed:
            raise ScenarioError(f"{name} = {value!r} is unknown; use one of "
                                f"{', '.join(allowed)}" + (
                                    " (U cannot be sketched asynchronously: a shared S_2 needs "
                                    "a synchronous All-Reduce)" if allowed == ("v",) else ""))
        return str(value)

    return check


def _entry(name: str, summary: str, reference: str, params: dict[str, Param]) -> Algorithm:
    def run(inp: RunInput) -> AlgorithmRun:
        return run_secure(inp, name, inp.params.get("sketch_on", ""))

    def estimate(inp: EstimateInput) -> Workload:
        return secure_workload(inp, name, inp.params.get("sketch_on", ""))

    roles = ("server",) if name.startswith("asyn") else ()
    return Algorithm(name=name, summary=summary, reference=reference, params=params, run=run,
                     estimate=estimate, data_kind="uniform", nonnegative=True,
                     other_roles=lambda params: roles)


SKETCHED = {key: SKETCH_PARAMS[key] for key in SKETCH_PARAMS if key not in UNSKETCHED}

SYN_SD = _entry(
    "syn_sd", "Syn-SD: local NMF with a local copy of U, averaged every T_2 iterations",
    "Qian et al. (seed 004), §4.2 Algorithm 4",
    {**UNSKETCHED, **LOOP_PARAMS, **REDUCE_PARAMS})
SYN_SSD = _entry(
    "syn_ssd", "Syn-SSD(-U/-V/-UV): Syn-SD with sketched updates and All-Reduced S_2U",
    "Qian et al. (seed 004), §4.2 Algorithm 5",
    {**UNSKETCHED, **LOOP_PARAMS, **SKETCHED, **REDUCE_PARAMS,
     "sketch_on": Param("uv", described(_sketch_on("u", "v", "uv"), "u | v | uv"), "u | v | uv")})
ASYN_SD = _entry(
    "asyn_sd", "Asyn-SD: clients send local copies of U to a server that relaxes them in",
    "Qian et al. (seed 004), §4.3 Algorithms 6 and 7",
    {**UNSKETCHED, **LOOP_PARAMS, **ASYNC_PARAMS})
ASYN_SSD = _entry(
    "asyn_ssd", "Asyn-SSD(-V): Asyn-SD with the clients' U update sketched on V",
    "Qian et al. (seed 004), §4.3 Algorithms 6 and 7 (line 7 from Algorithm 5)",
    {**UNSKETCHED, **LOOP_PARAMS, **SKETCHED, **ASYNC_PARAMS,
     "sketch_on": Param("v", described(_sketch_on("v"), "v"),
                        "v (U cannot be sketched asynchronously)")})
