"""Catalogue entry ``normed_secure_sum`` (thesis seed 001, Fig. 2.3, Table 2.2).

Every party inputs the column sums of its own rows; every party outputs ``direction`` = s/‖s‖₂
of their sum, computed by NormedSecureSum (:mod:`protocols.normed_secure_sum`) with a trusted
dealer (role ``dealer``, the id after the sites) whose material is dealt offline. The scenario
needs ``[field] prime = "2^127-1"`` (or ``preset = "p61-demo"`` at 2^61 − 1).

Scenario keys (``[algorithm]``): ``variant`` ("normed" | "reveal_norm" | "secure_sum"),
``preset`` (a parameter set of spec §1.5: "p127-default", "p127-wide-d", "p127-fast",
"p61-demo"), optional overrides ``input_bits`` (k_in), ``input_frac_bits`` (f), ``kappa``,
``work_bits`` (F), ``out_bits`` (f_out), ``newton_steps`` (t), ``demo`` (opt in to κ < 40),
``scale`` (a public factor applied to every input; the direction does not change) and
``audit_instances`` (> 0 runs the scale-invariance audit of :mod:`parties.scale_invariance`
with that many instances per side, for every coalition of 1..M − 1 parties).

Metrics: ``max_abs_error_vs_numpy`` (every party's output against numpy's s/‖s‖ of the real
column sums), ``max_abs_error_vs_encoded`` (against S/‖S‖ of the encoded sum, the ideal
functionality), the output resolution 2^−f_out, and the cost of the call — declared and
measured from the ledger, online and offline: rounds, elements sent per party, dealer material.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np

from parties.party import Party, site_parties
from parties.scale_invariance import ScaleAuditResult, scale_invariance_audit
from protocols import seeds
from protocols.errors import InputError, ScenarioError
from protocols.mpc.dealer import ROLE as DEALER_ROLE
from protocols.normed_secure_sum import (
    PROTOCOL,
    Layout,
    NssParams,
    check_layout,
    declared_cost,
    encode_inputs,
    normed_secure_sum,
    nss_dealer,
    preset,
)
from protocols.normed_secure_sum_simulator import NormedSecureSumSimulator
from protocols.registry import REGISTRY
from sim.console import table
from sim.entry import (
    NUMBA_BYTES,
    NUMBA_S,
    AlgorithmRun,
    EstimateInput,
    RunInput,
    Workload,
)
from sim.ledger import Ledger
from sim.privacy import AuditTarget
from sim.simulation import Result, Simulation

_OVERRIDES = {"input_bits": "input_bits", "input_frac_bits": "frac_bits", "kappa": "kappa",
              "work_bits": "work_bits", "out_bits": "out_bits", "newton_steps": "newton_steps"}


def nss_params(params: dict[str, Any]) -> NssParams:
    """The NormedSecureSum parameters a scenario's keys select (preset + overrides)."""

    overrides = {field: params[key] for key, field in _OVERRIDES.items()
                 if params.get(key) is not None}
    if params.get("demo"):
        overrides["demo"] = True
    if params.get("scale", 1.0) <= 0:
        raise ScenarioError(f"algorithm.scale = {params['scale']!r} must be positive")
    return preset(params["preset"], **overrides)


def nss_declaration(params: NssParams) -> Any:
    """NormedSecureSum's registered declaration, its simulator given the run's parameters.

    The parameters are public but not in the views; the simulator needs them for the law of
    each masked opening (:class:`protocols.normed_secure_sum_simulator.NormedSecureSumSimulator`).
    """

    return replace(REGISTRY["normed_secure_sum"],
                   simulator=lambda variant: NormedSecureSumSimulator(variant, params))


def with_dealer(parties: list[Party], calls: list[tuple[int, int]], variant: str,
                params: NssParams) -> list[Party]:
    """The data holders plus the dealer (id M) that deals material for ``calls``."""

    dealer = Party(len(parties), nss_dealer,
                   {"calls": calls, "variant": variant, "params": params}, role=DEALER_ROLE)
    return [*parties, dealer]


def layout_for(params: NssParams, prime: int, m: int, d: int, variant: str) -> Layout:
    """:func:`check_layout`, with a scenario's wording on a refused parameter set."""

    try:
        return check_layout(params, prime, m, d, variant)
    except InputError as exc:
        raise ScenarioError(f"[algorithm] NormedSecureSum: {exc}") from exc


def audit_inputs(column_sums: list[np.ndarray], params: NssParams, coalition: tuple[int, ...],
                 ratio: tuple[int, int] = (31, 16)) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Inputs A and B on the 2^−f grid with S_B = λ·S_A exactly, λ = 31/16, C's inputs kept.

    A's encoded inputs are made multiples of 16 (so λ·S_A is an integer vector); B adds
    (λ − 1)·S_A to the first honest party's input. Both are range-checked.
    """

    num, den = ratio
    unit = float(1 << params.frac_bits)
    encoded = [encode_inputs(x, params) for x in column_sums]
    a = [np.rint(x / den) * den for x in encoded]
    total = np.sum(a, axis=0)
    honest = min(set(range(len(a))) - set(coalition))
    b = [x.copy() for x in a]
    b[honest] = b[honest] + total // den * (num - den)
    inputs_a = [x / unit for x in a]
    inputs_b = [x / unit for x in b]
    for i, x in enumerate(inputs_b):
        encode_inputs(x, params, f"audit input B of party {i}")
    return inputs_a, inputs_b


def scale_invariance(
    column_sums: list[np.ndarray], params: NssParams, variant: str, prime: int,
    instances: int, seed: int, coalitions: list[tuple[int, ...]] | None = None,
    alpha: float = 1e-3,
) -> list[ScaleAuditResult]:
    """The scale-invariance audit for every coalition of 1..M − 1 parties (or the given ones).

    Run A (inputs ``column_sums``, made exactly divisible) once and, per coalition, run B whose
    sum is 31/16 times A's; each run is one batched call of ``instances`` identical instances
    (fresh dealer masks per instance), on pre-shared keys without sealing.
    """

    m = len(column_sums)
    if coalitions is None:
        coalitions = [c for size in range(1, m) for c in itertools.combinations(range(m), size)]
    sim = Simulation(prime=prime, sealing=False, keys="preshared")

    def run(inputs: list[np.ndarray], run_seed: int) -> Any:
        d = len(inputs[0])
        parties = site_parties(
            lambda ctx, x: normed_secure_sum(ctx, x, variant=variant, params=params),
            [{"x": np.tile(x, (instances, 1))} for x in inputs])
        return sim.run(with_dealer(parties, [(instances, d)], variant, params),
                       seed=run_seed).views

    results = []
    views_a = None
    for j, coalition in enumerate(coalitions):
        inputs_a, inputs_b = audit_inputs(column_sums, params, coalition)
        if views_a is None:
            views_a = run(inputs_a, seed)
        views_b = run(inputs_b, seeds.derive_int(seed, "normed_secure_sum.scaled", index=(j,)))
        results.append(scale_invariance_audit(views_a, views_b, coalition, PROTOCOL, prime,
                                              alpha))
    return results


def call_cost(ledger: Ledger, sites: tuple[int, ...]) -> dict[str, Any]:
    """Online and offline cost measured from the ledger, per call and per site."""

    online = [r for r in ledger if r.protocol == PROTOCOL]
    offline = [r for r in ledger if r.phase.split("/")[-1] == "offline"]
    calls = sorted({r.call for r in online})
    rounds = [max(r.round for r in online if r.call == c) - min(
        r.round for r in online if r.call == c) + 1 for c in calls]
    return {
        "calls": len(calls),
        "online_rounds_per_call": rounds,
        "online_elements_sent_per_party": {
            m: sum(r.elements for r in online if r.sender == m) for m in sites},
        "offline_elements_received_per_party": {
            m: sum(r.elements for r in offline if r.receiver == m) for m in sites},
        "offline_messages": len(offline),
    }


def cost_table(layout: Layout, batch: int, calls: int, measured: dict[str, Any],
               title: str) -> str:
    """Console table: declared against measured, online and offline, per call."""

    cost = declared_cost(layout, batch)
    m0 = min(measured["online_elements_sent_per_party"])
    rows = [
        ["online rounds", cost.rounds, measured["online_rounds_per_call"][0]],
        ["opened elements", cost.opened, "—"],
        ["online elements sent / party", cost.sent,
         measured["online_elements_sent_per_party"][m0] // max(calls, 1)],
        ["offline elements / party", cost.offline,
         measured["offline_elements_received_per_party"][m0] // max(calls, 1)],
    ]
    return table(["per call", "declared", "measured"], rows, title)


def run(inp: RunInput) -> AlgorithmRun:
    variant = inp.params["variant"]
    params = nss_params(inp.params)
    scale = inp.params["scale"]
    column_sums = [np.asarray(shard.sum(axis=0)).ravel() * scale for shard in inp.shards]
    m, d = len(column_sums), len(column_sums[0])
    layout = layout_for(params, inp.simulation.field.p, m, d, variant)
    for i, x in enumerate(column_sums):  # refuse out-of-range inputs before anything runs
        encode_inputs(x, params, f"input of party {i} (its column sums)")
    parties = site_parties(
        lambda ctx, x: normed_secure_sum(ctx, x, variant=variant, params=params,
                                         label="column_sums"),
        [{"x": x} for x in column_sums],
    )
    parties = with_dealer(parties, [(1, d)], variant, params)
    result = inp.simulation.run(parties, seed=inp.seed)
    total = np.sum(column_sums, axis=0)
    encoded = np.sum([encode_inputs(x, params) for x in column_sums], axis=0).astype(float)
    metrics = accuracy_metrics(result, total, encoded, params)
    measured = call_cost(result.ledger, result.sites)
    cost = declared_cost(layout)
    metrics.update({
        "variant": variant,
        "ell": layout.ell,
        "declared_online_rounds": cost.rounds,
        "declared_opened_elements": cost.opened,
        "declared_online_elements_sent_per_party": cost.sent,
        "declared_offline_elements_per_party": cost.offline,
        **measured,
    })
    if inp.params["audit_instances"]:
        audits = scale_invariance(column_sums, params, variant, inp.simulation.field.p,
                                  inp.params["audit_instances"], inp.seed)
        metrics["scale_invariance_audit"] = [a.to_dict() for a in audits]
    return AlgorithmRun(
        result=result,
        outputs={"direction": np.asarray(result.outputs[0])},
        metrics=metrics,
        # whole-run audits: NormedSecureSum's simulator re-runs the coalition's programs, with
        # this run's public parameters (the scale-invariance audit is its own method)
        audit_target=AuditTarget(tuple(parties), (nss_declaration(params),), variant),
        tables=[cost_table(layout, 1, 1, measured,
                           f"NormedSecureSum ({variant}), M = {m}, d = {d}, ℓ = {layout.ell}")],
        communication_by_phase=True,
    )


def accuracy_metrics(result: Result, total: np.ndarray, encoded: np.ndarray,
                     params: NssParams) -> dict[str, Any]:
    """Errors of every site's output against numpy's direction of the real and encoded sums."""

    def direction(v: np.ndarray) -> np.ndarray:
        n = np.linalg.norm(v)
        return v / n if n > 0 else np.zeros_like(v)

    outputs = [np.asarray(result.outputs[m]) for m in result.sites]
    return {
        "max_abs_error_vs_numpy": max(float(np.abs(y - direction(total)).max()) for y in outputs),
        "max_abs_error_vs_encoded": max(float(np.abs(y - direction(encoded)).max())
                                        for y in outputs),
        "output_resolution": 2.0 ** -params.out_bits,
        "zero_sum": bool(not np.any(outputs[0])),
        "same_output_at_every_party": all(np.array_equal(y, outputs[0]) for y in outputs),
    }


VIEW_ELEMENT_BYTES = 48
"""Memory per element of a batched run's views that the scale-invariance audit keeps (two runs at
a time; GF(2^127 − 1) elements on two 64-bit limbs, sent and received copies): measured ≈ 47 B
on the default scenario (600 MB for 12.8 million elements)."""


WIDE_ELEMENT_S = 0.066e-6
"""Time per GF(2^127 − 1) element beyond ``Costs.element_s`` (two 64-bit limbs through the
kernels, the dealer's material, the openings). Refitted after the 30-round protocol from the
process CPU time of ``normed_secure_sum.toml`` (measured as ``benchmarks/estimate_accuracy.py``
measures it, numba's cache warm, load average 10–13): 2.71–2.86 s with ``audit_instances =
100`` (10.5 million elements) and 6.31–6.51 s with 400 (41.9 million), three runs each; less
the estimate's fixed part (1.58 s: start, numba, messages) that is 0.116 µs per element in all
at both sizes, 0.066 µs beyond ``element_s``. The 37-round protocol's 0.18 µs made the estimate
1.4–1.8× the measured time. A fresh clone's first run also compiles the kernels (~6 s of CPU
more), which no estimate here includes."""


def nss_workload(layout: Layout, batch: int = 1, calls: int = 1) -> Workload:
    """``calls`` NormedSecureSum calls of ``batch`` instances, from the declared cost.

    :func:`protocols.normed_secure_sum.declared_cost` gives per party the online rounds and the
    elements sent and received from the dealer; every online round is an exchange among the
    M sites (M(M − 1) messages) and the dealer sends each site one message per call.
    """

    m = layout.n_parties
    cost = declared_cost(layout, batch)
    elements = calls * m * (cost.sent + cost.offline)
    return Workload(messages=calls * (cost.rounds * m * (m - 1) + m), elements=elements,
                    seconds=WIDE_ELEMENT_S * elements if layout.prime.bit_length() > 64 else 0.0)


def nss_loading(prime: int) -> Workload:
    """Loading numba's GF(2^127 − 1) kernels, which every NormedSecureSum run in a field wider
    than 64 bits does (``normed_secure_sum_p61_demo``: 1.3 s of CPU in all)."""
    if prime.bit_length() <= 64:
        return Workload(simulations=0)
    return Workload(simulations=0, working_bytes=NUMBA_BYTES, seconds=NUMBA_S)


def estimate(inp: EstimateInput) -> Workload:
    """One call on the column sums, then the scale-invariance audit: run A once and a run B per
    coalition (2^M − 2), each a call of ``audit_instances`` instances."""
    m, d = inp.n_parties, inp.n_cols
    layout = layout_for(nss_params(inp.params), inp.scenario.prime, m, d,
                        inp.params["variant"])
    work = nss_workload(layout) + nss_loading(inp.scenario.prime)
    instances = inp.params["audit_instances"]
    if instances:
        runs = 2**m - 1
        audit = nss_workload(layout, instances)
        work = Workload(work.messages + runs * audit.messages,
                        work.elements + runs * audit.elements, 1 + runs,
                        working_bytes=2 * VIEW_ELEMENT_BYTES * audit.elements + NUMBA_BYTES,
                        seconds=work.seconds + runs * audit.seconds)
    return work.described("NormedSecureSum's declared cost"
                          + (f"; scale-invariance audit of {2**m - 2} coalitions"
                             if instances else ""))


