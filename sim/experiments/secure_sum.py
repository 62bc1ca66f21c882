"""Catalogue entry ``secure_sum``: every party inputs the column sums of its own rows.

Thesis seed 001, §2.2 (SecureSum, Table 2.1). The metric ``max_abs_error`` compares every
party's output with numpy's sum of the pooled column sums; the fixed-point bound is
M·2^−(f+1). The workload is SecureSum's declared cost on a d-vector
(:func:`protocols.secure_sum.declared_cost`).
"""

from __future__ import annotations

import numpy as np

from parties.party import site_parties
from protocols.secure_sum import declared_cost, secure_sum
from sim.entry import AlgorithmRun, EstimateInput, RunInput, Workload
from sim.privacy import AuditTarget, first_call_inputs, secure_sum_program


def run(inp: RunInput) -> AlgorithmRun:
    variant = inp.params["variant"]
    column_sums = [np.asarray(shard.sum(axis=0)).ravel() for shard in inp.shards]
    parties = site_parties(
        lambda ctx, x: secure_sum(ctx, x, variant, label="column_sums"),
        [{"x": x} for x in column_sums],
    )
    result = inp.simulation.run(parties, seed=inp.seed)
    expected = np.sum(column_sums, axis=0)
    error = max(float(np.max(np.abs(result.outputs[m] - expected))) for m in result.sites)
    m, d = len(column_sums), len(expected)
    cost = declared_cost(variant, m, d)
    fixed = inp.simulation.fixed
    return AlgorithmRun(
        result=result,
        outputs={"sum": np.asarray(result.outputs[0])},
        metrics={
            "max_abs_error": error,
            "fixed_point_bound": m * 2.0 ** -(fixed.frac_bits + 1),
            "declared_elements_sent_per_party": cost.elements_sent,
            "declared_rounds": cost.rounds,
        },
        audit_target=AuditTarget(
            tuple(parties), "secure_sum", variant,
            field_program=secure_sum_program(variant, "column_sums"),
            field_inputs=first_call_inputs(result.views, result.sites, "secure_sum"),
        ),
    )


def secure_sum_workload(variant: str, n_parties: int, length: int, calls: int = 1) -> Workload:
    """Messages and elements of ``calls`` SecureSums on ``length``-vectors among all parties."""

    cost = declared_cost(variant, n_parties, length)
    return Workload(messages=calls * n_parties * cost.messages_sent,
                    elements=calls * n_parties * cost.elements_sent)


def estimate(inp: EstimateInput) -> Workload:
    w = secure_sum_workload(inp.params["variant"], inp.n_parties, inp.n_cols)
    return Workload(messages=w.messages, elements=w.elements, audited_length=inp.n_cols,
                    basis="SecureSum's declared cost on the d column sums")


