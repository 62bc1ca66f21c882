"""Catalogue entry ``secagg``: secure aggregation of the parties' column sums, surviving dropouts.

Bonawitz et al., CCS 2017 (SecAgg), with SecAgg+'s Harary graph (Bell et al., CCS 2020) as an
option; :mod:`protocols.secagg`. Every site inputs the column sums of its own rows; an
aggregator (party M) outputs the sum over the sites that survived to the masked-input round
(``survivors``) and sends it to them. Dropouts are scripted with ``[[fault]]`` crash entries.

Scenario keys (``[algorithm]``): ``threshold`` (t; default ⌊M/2⌋ + 1), ``graph``
("complete" | "harary"), ``degree`` (k, for harary), ``timeout_s`` (the aggregator's wait per
round, simulated seconds).

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
from protocols.secagg import AGGREGATOR, GRAPHS, Config, check_config, secagg
from protocols.secure_sum import secure_sum
from sim.entry import Algorithm, AlgorithmRun, Param, RunInput, choice, integer, number
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


def _run(inp: RunInput) -> AlgorithmRun:
    params = inp.params
    column_sums = [np.asarray(shard.sum(axis=0)).ravel() for shard in inp.shards]
    m = len(column_sums)
    threshold = params["threshold"] or m // 2 + 1
    config = check_config(Config(threshold, params["graph"], params["degree"],
                                 params["timeout_s"]), m, inp.simulation.field.p)
    result = inp.simulation.run(secagg_parties(column_sums, config), seed=inp.seed)
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


SECAGG = Algorithm(
    name="secagg",
    summary="Dropout-tolerant secure aggregation of column sums (SecAgg / SecAgg+)",
    reference="Bonawitz et al., CCS 2017 (Fig. 4, semi-honest); Bell et al., CCS 2020 (SecAgg+)",
    params={
        "threshold": Param(0, integer(0), "t, shares needed to unmask (0: ⌊M/2⌋ + 1)"),
        "graph": Param("complete", choice(*GRAPHS), "complete | harary"),
        "degree": Param(0, integer(0), "k, the Harary graph's degree"),
        "timeout_s": Param(1.0, number(0.0), "the aggregator's wait per round (simulated s)"),
    },
    run=_run,
    data_kind="uniform",
)
