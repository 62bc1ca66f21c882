"""The declared cost of the secure NMF entries (Qian et al., seed 004, §4.2–4.3, Algorithms 4–7).

Before a run, :func:`secure_workload` counts what one of Syn-SD, Syn-SSD, Asyn-SD or Asyn-SSD
will send and compute, from the scenario's sizes (M = Xᵀ: m features, n samples split over N
data holders, rank k, the sketch sizes) and from the simulated time the algorithms themselves
declare: each local iteration's flops (:func:`algorithms.nmf.dsanls.sanls.subproblem_step`: 2rdk +
2k²d + 2rk² per subproblem, charged as ``Compute`` at ``1/gflops`` ns a flop) and each message's
latency and transfer time on the scenario's links. That simulated clock decides how many
iterations fit in a ``time_budget_s`` (the asynchronous server's stop, and every method of
``secure_nmf_comparison``), and the iterations decide the messages, the elements, the snapshots
kept and the wall time (:data:`STEP_S` per local iteration of a node: the solver's Python
steps).
"""

from __future__ import annotations

import math
from typing import Any

from algorithms.nmf.dsanls.sketches import sketch_columns
from protocols.all_reduce import all_reduce_cost
from protocols.errors import InputError
from sim.entry import EstimateInput, Workload
from sim.experiments.dsanls.dsanls import seconds_per_flop, sizes

STEP_S = 1.5e-4
"""Wall time per local iteration of one node beyond its flops (the solver's Python steps,
measured on the uniform workload of seed 004, §5.3)."""
SNAPSHOT_COPIES = 2.0
"""Copies a snapshot's arrays take at the peak (the snapshot, the error curve's stacks)."""
PLAIN_NUMBER_BYTES = 16
"""Memory per float a plain All-Reduce carries: the receiver's view keeps every payload (8 B
a number) and the sum's partial arrays hold as much again until the run ends; measured ≈ 16 B
on ``secure_nmf_mnist_imbalanced.toml`` (2.34 GB peak for Syn-SD's 145 million numbers)."""


def _sketch(size: Any, dim: int) -> int:
    try:
        return sketch_columns(size, dim)
    except InputError:  # the run refuses it in its own words; estimate the largest sketch
        return dim


def _subproblem(r: int, d: int, k: int) -> float:
    """Flops of one solver step on an r × d problem of rank k (``subproblem_step``)."""
    return 2.0 * r * d * k + 2.0 * k * k * d + 2.0 * r * k * k


def _transfer(inp: EstimateInput, elements: float, rounds: int = 1) -> float:
    """Simulated seconds of ``rounds`` message hops carrying ``elements`` 8-byte values."""
    net = inp.scenario
    return rounds * net.latency_ms / 1e3 + 64.0 * elements / (net.bandwidth_mbps * 1e6)


def secure_workload(inp: EstimateInput, name: str, sketch_on: str, outer: int | None = None,
                    budget: float | None = None) -> Workload:
    """What ``name`` (``syn_sd``, ``syn_ssd``, ``asyn_sd``, ``asyn_ssd``) will cost.

    ``outer`` and ``budget`` default to the scenario's ``outer`` and ``time_budget_s``; a
    synchronous run with a ``budget`` runs as many outer iterations as fit in it.
    """

    p = inp.params
    m, n, k, N = inp.n_cols, inp.n_rows, p["k"], inp.n_parties
    inner = p["inner"]
    outer = p.get("outer", 1) if outer is None else outer
    budget = p.get("time_budget_s") if budget is None else budget
    spf = seconds_per_flop(p)
    size_v, size_u = sizes(p) if "sketch" in p else (0.1, 0.1)
    n_r = max(n // N, 1)
    d = _sketch(size_v, n_r) if "v" in sketch_on else n_r  # U's step sketched on V: S_1
    d_u = _sketch(size_u, m) if "u" in sketch_on else m  # V's step sketched on U: S_2
    per_step = _subproblem(m, d, k) + _subproblem(n_r, d_u, k)  # one local iteration, a node
    per_step += (m * n_r if "v" in sketch_on else 0) + (m * n_r if "u" in sketch_on else 0)
    if name.startswith("syn"):
        reduce = all_reduce_cost(p.get("allreduce", "secure_sum"), p.get("variant", "prg"),
                                 N, m * k)
        su = (all_reduce_cost(p.get("allreduce", "secure_sum"), p.get("variant", "prg"),
                              N, d_u * k) if "u" in sketch_on else None)
        clock = inner * per_step * spf + _transfer(inp, reduce.elements_sent, reduce.rounds)
        if su is not None:
            clock += inner * _transfer(inp, su.elements_sent, su.rounds)
        if budget is not None and clock > 0:
            outer = 2 + max(0, math.ceil(budget / clock - 2))
        messages = outer * N * reduce.messages_sent
        elements = outer * N * reduce.elements_sent
        if su is not None:
            messages += outer * inner * N * su.messages_sent
            elements += outer * inner * N * su.elements_sent
        steps = outer * inner * N
        snapshots = outer * N * (m * k + n_r * k)
    else:
        round_s = inner * per_step * spf + 2 * _transfer(inp, m * k) + 3 * m * k * spf
        updates = outer * N
        if budget is not None and round_s > 0:
            updates = min(updates, N * math.ceil(budget / round_s) + N)
        messages = 2 * updates + 2 * N
        elements = (2 * updates + N) * m * k
        steps = updates * inner
        snapshots = updates * (m * k + n_r * k)
    kept = 8 * SNAPSHOT_COPIES * snapshots
    if p.get("allreduce", "secure_sum") == "plain":  # floats summed as they are: a flop each,
        # no field encoding or masks; the views keep them all the same (no field elements,
        # so their memory is counted here, not by the elements' cost)
        flops, kept = steps * per_step + elements, kept + PLAIN_NUMBER_BYTES * elements
        elements = 0
    else:
        flops = steps * per_step
    return Workload(messages=messages, elements=elements, flops=flops,
                    working_bytes=int(kept),
                    seconds=STEP_S * steps,
                    basis=f"{name}: {steps:,} local iterations from the simulated clock")
