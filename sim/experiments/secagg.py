"""Catalogue entry ``secagg``: secure aggregation of the parties' column sums, surviving dropouts.

Bonawitz et al., CCS 2017 (SecAgg), with SecAgg+'s Harary graph (Bell et al., CCS 2020) as an
option; :mod:`protocols.secagg`. Every site inputs the column sums of its own rows; an
aggregator (party M) outputs the sum over the sites that survived to the masked-input round
(``survivors``) and sends it to them. Dropouts are scripted with ``[[fault]]`` crash entries.

Scenario keys (``[algorithm]``): ``threshold`` (t; default ⌊M/2⌋ + 1), ``graph``
("complete" | "harary"), ``degree`` (k, for harary), ``timeout_s`` (the aggregator's wait per
round, simulated seconds).

``[[audit]]`` with ``method = "simulation"`` replays the sites and the aggregator with the
run's ``[[fault]]`` dropouts, their PRG programmed by the audit (affine in a seed of field
elements, :class:`parties.audit.randomness.AffineOracle`, as the simulator of Bonawitz et al.
programs its random oracle), and judges every SecAgg call by
:class:`protocols.secagg_simulator.SecAggSimulator` (a coalition study over ``coalitions = "all"``
or ``sizes`` includes the aggregator, party M).

Metrics: ``survivors`` and ``dropped`` (site ids), ``max_abs_error`` (the aggregator's and every
surviving site's output against numpy's sum of the survivors' column sums; the fixed-point
bound is M·2^−(f+1)), and the comparison with the thesis's SecureSum (PRG variant, seed 001
§2.2) on the same input without faults: elements and bytes per site for both, and the
aggregator's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from parties.party import Party, site_parties
from protocols.errors import ScenarioError
from protocols.field import prime_field
from protocols.secagg import (
    AGGREGATOR,
    Config,
    check_config,
    neighbourhoods,
    secagg,
    secret_length,
    variant_of,
)
from protocols.secure_sum import secure_sum
from sim.entry import (
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.experiments.secure_sum import secure_sum_workload
from sim.privacy import AuditTarget
from sim.simulation import Result, Simulation


def secagg_parties(inputs: list[np.ndarray], config: Config) -> list[Party]:
    """Sites 0..M−1 with ``inputs`` and the aggregator M, all running :func:`secagg`."""

    m = len(inputs)

    def program(ctx: Any, x: np.ndarray) -> Any:
        return (yield from secagg(ctx, x, config, label="column_sums"))

    parties = [Party(u, program, {"x": x}) for u, x in enumerate(inputs)]
    parties.append(Party(m, program, {"x": np.zeros_like(inputs[0])}, role=AGGREGATOR))
    return parties


def _per_site(result: Result, sites: range) -> tuple[int, int]:
    """The largest elements and bytes sent by one site (all protocols but key agreement)."""
    elements = dict.fromkeys(sites, 0)
    n_bytes = dict.fromkeys(sites, 0)
    for row in result.ledger:
        if row.sender in elements and row.protocol != "key_agreement":
            elements[row.sender] += row.elements
            n_bytes[row.sender] += row.bytes
    return max(elements.values()), max(n_bytes.values())


FIELD_REASON = (
    "SecAgg is not one: its output is the sum over the survivors, which the dropout schedule "
    "decides, its aggregator (a party beyond the data holders) unmasks with the survivors' "
    "Shamir shares of the dropped sites' keys, and its masks expand agreed keys — a re-run on "
    "other inputs with the same outputs, or an enumeration of the coalition's tapes, is not "
    "defined for it (Bonawitz et al. 2017, Thm 6.3 is a simulation argument, which the "
    "simulation method implements)")
"""Why the A/B, exact and linear methods answer ``not applicable`` on a SecAgg run."""


def run(inp: RunInput) -> AlgorithmRun:
    params = inp.params
    column_sums = [np.asarray(shard.sum(axis=0)).ravel() for shard in inp.shards]
    m = len(column_sums)
    threshold = params["threshold"] or m // 2 + 1
    config = check_config(Config(threshold, params["graph"], params["degree"],
                                 params["timeout_s"]), m, inp.simulation.field.p)
    parties = secagg_parties(column_sums, config)
    result = inp.simulation.run(parties, seed=inp.seed)
    total, survivors = result.outputs[m]
    expected = np.sum([column_sums[u] for u in survivors], axis=0)
    finished = [p for p in result.outputs if p == m or p in survivors]
    error = max(float(np.max(np.abs(result.outputs[p][0] - expected))) for p in finished)
    # the thesis's SecureSum on the same input, without faults, for comparison
    plain = Simulation(inp.simulation.network, prime=inp.simulation.field.p,
                       frac_bits=inp.simulation.fixed.frac_bits, sealing=inp.simulation.sealing)
    reference = plain.run(site_parties(lambda ctx, x: secure_sum(ctx, x, "prg"),
                                       [{"x": x} for x in column_sums]), seed=inp.seed)
    sa_elements, sa_bytes = _per_site(result, range(m))
    ss_elements, ss_bytes = _per_site(reference, range(m))
    agg_rows = [r for r in result.ledger if r.sender == m and r.protocol != "key_agreement"]
    fixed = inp.simulation.fixed
    return AlgorithmRun(
        result=result,
        outputs={"sum": np.asarray(total), "survivors": np.asarray(survivors, dtype=np.int64)},
        # the simulation method replays these parties with the run's dropouts
        # (protocols.secagg_simulator.SecAggSimulator); the other methods need a field program
        audit_target=AuditTarget(tuple(parties), "secagg", variant_of(config, "affine"),
                                 faults=inp.scenario.faults, oracle="affine",
                                 field_reason=FIELD_REASON),
        metrics={
            "survivors": list(survivors),
            "dropped": [u for u in range(m) if u not in survivors],
            "threshold": threshold,
            "max_abs_error": error,
            "fixed_point_bound": m * 2.0 ** -(fixed.frac_bits + 1),
            "secagg_elements_per_site": sa_elements,
            "secagg_bytes_per_site": sa_bytes,
            "secagg_aggregator_elements": sum(r.elements for r in agg_rows),
            "secure_sum_elements_per_site": ss_elements,
            "secure_sum_bytes_per_site": ss_bytes,
            "bytes_ratio_secagg_vs_secure_sum": sa_bytes / ss_bytes if ss_bytes else None,
        },
    )


def secagg_workload(n_parties: int, length: int, prime: int, graph: str = "complete",
                    degree: int = 0, calls: int = 1) -> Workload:
    """Messages and elements of ``calls`` SecAgg invocations on ``length``-vectors among
    ``n_parties`` sites and the aggregator, without dropouts.

    :data:`protocols.secagg.COST_FORMULAS` summed over the parties: with Σk = Σ_u |N(u)| and
    L = :func:`~protocols.secagg.secret_length`, the sites send Σk + 4M messages and
    3L·Σk + M(1 + d + L) elements, the aggregator 5M messages and 2Σk + M·d + M² elements
    (``tests/sim/test_estimates.py`` holds this equal to :func:`protocols.secagg.declared_cost`).
    Closed form for the complete graph, so that a large M is estimated without building it.
    """

    m, d = n_parties, length
    lsec = secret_length(prime_field(prime))
    if graph == "complete" or degree >= m - 1:
        ks = m * (m - 1)
    else:
        ks = sum(len(v) for v in neighbourhoods(m, graph, degree))
    messages = ks + 9 * m
    elements = (3 * lsec + 2) * ks + m * (1 + lsec + 2 * d) + m * m
    return Workload(messages=calls * messages, elements=calls * elements)


def check_graph(graph: str, degree: int, n_parties: int, key: str = "algorithm.degree") -> None:
    """A Harary graph needs 1 ≤ degree ≤ M − 1 (checked before the run, with the scenario's
    key names)."""
    if graph == "harary" and not 1 <= degree <= n_parties - 1:
        raise ScenarioError(f"{key} = {degree} must lie in 1..{n_parties - 1} for graph = "
                            f"'harary' with {n_parties} sites; set it, or use graph = "
                            "'complete'")


def estimate(inp: EstimateInput) -> Workload:
    p = inp.params
    d, m = inp.n_cols, inp.n_parties
    check_graph(p["graph"], p["degree"], m)
    work = (secagg_workload(m, d, inp.scenario.prime, p["graph"], p["degree"])
            + secure_sum_workload("prg", m, d))  # the comparison run without faults
    return Workload(messages=work.messages, elements=work.elements, simulations=2,
                    audited_length=d,
                    basis="SecAgg's and SecureSum's declared costs on the d column sums")


