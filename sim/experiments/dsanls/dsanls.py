"""Catalogue entry ``dsanls`` (Qian et al., seed 004, §3 Algorithm 2 and §4.1), and what the
seed-004 entries share: their keys, the random start, the error curves.

Orientation: the scenario's data X (rows are samples) is the paper's M = Xᵀ; outputs are in
the paper's orientation — ``U`` (m×k, m = X's columns) and each node's ``V_<id>`` (its
samples × k) — so that M ≈ U·[V_0ᵀ … V_{N−1}ᵀ].

Keys: ``k``; ``iterations``; ``setting`` ("general": node r holds M_{I_r:} and M_{:J_r}, the
cluster speed-up setting; "federated": node r holds only its samples M_{:J_r} and MS^t is
All-Reduced — the target of the ``dsanls_recovery`` attack); ``sketch`` ("gaussian" |
"subsampling"); ``sketch_size`` (columns of a sketch, or a fraction in (0, 1] of the dimension
sketched; the paper's rule of thumb, a tenth, by default), ``sketch_size_v`` (d of S^t, which
sketches the n samples — "sketch on V") and ``sketch_size_u`` (d' of S'^t, the m features —
"sketch on U"), both ``sketch_size`` unless given; ``solver`` ("rcd" | "pgd"); ``alpha``,
``beta`` (μ_t = α + βt); ``allreduce`` ("secure_sum" | "plain"); ``variant`` (SecureSum's);
``gflops`` (each node's speed: local work costs flops / (gflops·10^9) seconds of simulated
time; 0 makes it free).

Start: U^0 has U[0, 1) entries drawn from the scenario seed (public); node r's V^0_r has
U[0, s_r) entries with s_r = 4·mean(M_{:J_r})/k from its own columns, so that U^0V^0ᵀ has the
data's mean (:func:`algorithms.nmf.dsanls.sanls.v_start_scale`).

Metrics: ``relative_error`` (final) and its history per iteration with the simulated time;
``max_abs_diff_vs_sanls`` — the largest difference of U and V from centralized SANLS from the
same start and seed (the contract of :mod:`algorithms.nmf.dsanls.dsanls`); elements each node sends
per iteration, measured and declared (O(kd) per subproblem, §3.6.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from algorithms import data as data_io
from algorithms.nmf.dsanls.dsanls import DsanlsConfig, dense, dsanls
from algorithms.nmf.dsanls.sanls import (
    StepSchedule,
    random_factor,
    relative_error,
    sanls,
    v_start_scale,
)
from algorithms.nmf.dsanls.sketches import sketch_columns
from parties.party import Party, site_parties
from protocols import seeds
from protocols.all_reduce import all_reduce_cost, all_reduce_field
from protocols.errors import InputError, ScenarioError
from protocols.public_coin import SKETCH_SEED
from sim import plots
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.privacy import AuditTarget, first_call_inputs, secure_sum_program

CLEAR_PROTOCOL = {"plain": "all_reduce", "ring": "ring_all_reduce"}
"""The call name of each All-Reduce method in the clear (SecureSum's calls are ``secure_sum``)."""

REDUCE_PROTOCOLS = ("secure_sum", *CLEAR_PROTOCOL.values())
"""Every protocol an All-Reduce's messages are recorded under."""

def sizes(params: dict[str, Any]) -> tuple[Any, Any]:
    """(sketch on V, sketch on U): ``sketch_size_v`` and ``sketch_size_u`` or ``sketch_size``."""
    default = params["sketch_size"]
    v = params["sketch_size_v"] if params["sketch_size_v"] is not None else default
    u = params["sketch_size_u"] if params["sketch_size_u"] is not None else default
    return v, u


def seconds_per_flop(params: dict[str, Any]) -> float:
    return 0.0 if params["gflops"] == 0 else 1.0 / (params["gflops"] * 1e9)


def check_rank(k: int, m: int, n: int) -> None:
    if k > min(m, n):
        raise ScenarioError(f"algorithm.k = {k} must be ≤ min(m, n) = {min(m, n)} for M = Xᵀ "
                            f"of shape ({m}, {n})")


def starts(inp: RunInput, k: int) -> tuple[Any, list[Any]]:
    """U^0 (m×k, public) and each node's V^0_r, drawn from the scenario seed."""

    def rng(*key: int | str) -> Any:
        return seeds.rng(inp.seed, "dsanls.init", index=key)

    U0 = random_factor(inp.data.shape[1], k, 1.0, rng("U"))
    V0 = []
    for r, shard in enumerate(inp.shards):
        block = dense(shard).T
        V0.append(random_factor(block.shape[1], k, v_start_scale(block, k),
                                rng("V", r)))
    return U0, V0


def as_scenario_error(exc: InputError) -> ScenarioError:
    """A configuration's refusal, reported as a mistake in the ``[algorithm]`` table."""
    return ScenarioError(f"[algorithm]: {exc}")


def sent_per_party(result: Any, protocols: tuple[str, ...]) -> list[int]:
    """Elements each data holder sent in the given protocols."""
    sent = result.ledger.elements_by_sender(protocol=protocols)
    return [sent.get(m, 0) for m in result.sites]


def run(inp: RunInput) -> AlgorithmRun:
    p = inp.params
    M = dense(inp.data).T
    m, n = M.shape
    k = p["k"]
    check_rank(k, m, n)
    N = len(inp.shards)
    if m < N:
        raise ScenarioError(f"DSANLS splits the m = {m} features among the {N} nodes; it "
                            "needs m ≥ network.parties")
    columns = tuple(data_io.partition_rows(n, N, [s.shape[0] for s in inp.shards]))
    rows = tuple(data_io.partition_rows(m, N))
    size_v, size_u = sizes(p)
    try:
        config = DsanlsConfig(
            k=k, iterations=p["iterations"], n_features=m, n_samples=n, columns=columns,
            rows=rows, sketch=p["sketch"], d=size_v, d_prime=size_u, solver=p["solver"],
            schedule=StepSchedule(p["alpha"], p["beta"]), setting=p["setting"],
            allreduce=p["allreduce"], variant=p["variant"], seconds_per_flop=seconds_per_flop(p))
    except InputError as exc:
        raise as_scenario_error(exc) from exc
    U0, V0 = starts(inp, k)
    general = config.setting == "general"
    X = dense(inp.data)
    inputs = [
        {"X": shard, "U0": U0[a:b], "V0": V0[r], "config": config,
         **({"X_features": X[:, a:b].copy()} if general else {})}
        for r, (shard, (a, b)) in enumerate(zip(inp.shards, rows, strict=True))
    ]
    parties = site_parties(dsanls, inputs, column_blocks=("X_features",))
    result = inp.simulation.run(parties, seed=inp.seed)
    nodes = [result.outputs[r] for r in result.sites]
    U = np.vstack([node.U_rows for node in nodes])
    V = [node.V for node in nodes]
    history = [
        relative_error(M, np.vstack([node.history[t][1] for node in nodes]),
                       np.vstack([node.history[t][2] for node in nodes]))
        for t in range(config.iterations)
    ]
    times = [max(node.history[t][0] for node in nodes) for t in range(config.iterations)]
    U_c, V_c = sanls(M, U0, np.vstack(V0), iterations=config.iterations, seed=nodes[0].seed,
                     sketch=config.sketch, d=config.sketch_d, d_prime=config.sketch_d_prime,
                     solver=config.solver, schedule=config.schedule)
    sent = sent_per_party(result, REDUCE_PROTOCOLS)
    per_call = [k * config.sketch_d, k * config.sketch_d_prime]
    if not general:
        per_call.append(m * config.sketch_d)
    declared = sum(all_reduce_cost(config.allreduce, config.variant, N, length).elements_sent
                   for length in per_call)
    metrics: dict[str, Any] = {
        "relative_error": history[-1],
        "relative_error_history": history,
        "simulated_time_history": times,
        "max_abs_diff_vs_sanls": float(max(np.abs(U - U_c).max(),
                                           np.abs(np.vstack(V) - V_c).max())),
        "elements_sent_per_party_per_iteration": sent[0] / config.iterations,
        "declared_elements_sent_per_party_per_iteration": declared,
        "m": m, "n": n, "k": k, "d": config.sketch_d, "d_prime": config.sketch_d_prime,
        "flops_per_party": [node.flops for node in nodes],
    }
    if len(set(sent)) != 1:
        metrics["elements_sent_per_party"] = sent
    title = (f"DSANLS ({config.setting}, {config.sketch}, {config.solver}), N = {N}, k = {k}")
    iterations = np.arange(1, config.iterations + 1)
    return AlgorithmRun(
        result=result,
        outputs={"U": U, **{f"V_{r}": v for r, v in zip(result.sites, V, strict=True)}},
        metrics=metrics,
        audit_target=audit_target(result, parties, config.allreduce, config.variant, inp),
        plots={"relative_error": lambda: plots.relative_error(
            {title: ("iteration", {"DSANLS": (iterations, history)}),
             "against simulated time": ("simulated time (s)", {"DSANLS": (times, history)})})},
    )


def audit_target(result: Any, parties: Sequence[Party], method: str, variant: str,
                 inp: RunInput) -> Any:
    """What an ``[[audit]]`` examines: the run's parties, and the All-Reduce on field inputs.

    The simulation method replays ``parties`` (every All-Reduce call of the run). The
    statistical and exact methods run the All-Reduce alone on the field inputs of the run's
    first call: SecureSum's first call records its encoded input; the plain All-Reduce records
    the floats it sent, encoded here with the run's fixed point, and the audit then runs the
    plain All-Reduce on field elements (:func:`protocols.all_reduce.all_reduce_field`).
    The run's seed agreement (``sketch_seed``, Algorithm 2 line 2) is part of the audited
    protocol: a public coin (:mod:`protocols.public_coin`), judged by its declaration.
    """

    if method == "secure_sum":
        return AuditTarget(tuple(parties), ("secure_sum", SKETCH_SEED), variant,
                           field_program=secure_sum_program(variant),
                           field_inputs=first_call_inputs(result.views, result.sites,
                                                          "secure_sum"))
    fixed = inp.simulation.fixed
    protocol = CLEAR_PROTOCOL[method]
    floats = first_call_inputs(result.views, result.sites, protocol)
    inputs = tuple(fixed.encode(np.ravel(x), n_summands=len(floats)) for x in floats)
    return AuditTarget(tuple(parties), (protocol, SKETCH_SEED), "plain",
                       field_program=lambda ctx, x: all_reduce_field(ctx, x, method),
                       field_inputs=inputs)


def dsanls_workload(inp: EstimateInput) -> Workload:
    """Per iteration the All-Reduces of Algorithm 2 (:func:`protocols.all_reduce.all_reduce_cost`
    per party): B = VᵀS (k × d) and B' = UᵀS' (k × d'), and in the federated setting MS
    (m × d) as well; locally the sketches applied to the node's blocks (≈ 2k(m·d + n·d') flops
    summed over the nodes, and as many for M's blocks). M = Xᵀ: m = the data's columns
    (features), n = its rows (samples)."""

    p = inp.params
    m, n, k, parties = inp.n_cols, inp.n_rows, p["k"], inp.n_parties
    size_v, size_u = sizes(p)
    try:
        d = sketch_columns(size_v, n, "sketch_size_v")
        d_prime = sketch_columns(size_u, m, "sketch_size_u")
    except InputError:  # the run refuses it, in its own words; estimate the largest sketch
        d, d_prime = n, m
    lengths = [k * d, k * d_prime] + ([m * d] if p["setting"] == "federated" else [])
    costs = [all_reduce_cost(p["allreduce"], p["variant"], parties, x) for x in lengths]
    t = p["iterations"]
    return Workload(messages=t * parties * sum(c.messages_sent for c in costs),
                    elements=t * parties * sum(c.elements_sent for c in costs),
                    flops=4.0 * t * (k + 1) * (m * d + n * d_prime),
                    basis=f"All-Reduce's declared cost × {t} iterations")


