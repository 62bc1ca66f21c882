"""Runs the t-privacy audits of a scenario (:mod:`parties.audit`) on the simulator.

The audit methods live in ``parties`` and never import a driver; this module hands them the
runners they need: one that runs a protocol on given field inputs with a given seed (mask draws
recorded), and one that runs it with injected randomness (a tape). The audited protocol of an
algorithm is the secure aggregation it is built on (SecureSum with the algorithm's variant and
vector length), run with the scenario's parties and field.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from parties.audit import (
    AuditResult,
    Progress,
    RandomnessFactory,
    TapeRunner,
    TrialRunner,
    alternative_inputs,
    exact_audit,
    statistical_audit,
)
from parties.party import site_parties
from parties.view import View
from protocols.context import PartyContext
from protocols.field import PrimeField, prime_field
from protocols.secure_sum import secure_sum_field
from sim.network import Network
from sim.scenario import AuditSpec
from sim.simulation import Simulation

FieldProgram = Callable[[PartyContext, np.ndarray], Generator[Any, Any, Any]]


@dataclass(frozen=True)
class AuditTarget:
    """The protocol an algorithm's audits examine, and the inputs of its real invocation."""

    protocol: str
    variant: str
    inputs: tuple[np.ndarray, ...] | None  # field elements, one vector per party

    def program(self) -> FieldProgram:
        variant = self.variant

        def run(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
            return (yield from secure_sum_field(ctx, x, variant))  # type: ignore[arg-type]

        return run


def trial_runner(
    program: FieldProgram, n_parties: int, prime: int | str, network: Network | None = None
) -> TrialRunner:
    """A runner of ``program`` on field inputs: fresh pre-shared keys and masks per seed."""
    sim = Simulation(
        network if network is not None else Network.build(n_parties),
        prime=prime, frac_bits=0, sealing=False, keys="preshared", record_draws=True,
    )

    def run(inputs: list[np.ndarray], seed: int) -> dict[int, View]:
        parties = site_parties(program, [{"x": x} for x in inputs])
        return sim.run(parties, seed=seed).views

    return run


def tape_runner(program: FieldProgram, n_parties: int, prime: int | str) -> TapeRunner:
    """A runner of ``program`` whose masks come from an injected randomness (a tape)."""
    network = Network.build(n_parties)

    def run(inputs: list[np.ndarray], randomness: RandomnessFactory) -> dict[int, View]:
        sim = Simulation(network, prime=prime, frac_bits=0, sealing=False, keys="none",
                         randomness=randomness, seed=0)
        parties = site_parties(program, [{"x": x} for x in inputs])
        return sim.run(parties).views

    return run


def run_audit(
    spec: AuditSpec,
    target: AuditTarget,
    n_parties: int,
    prime: int,
    seed: int,
    network: Network | None = None,
    progress: Progress | None = None,
) -> AuditResult:
    """Run one ``[[audit]]`` of a scenario against the algorithm's audited protocol."""
    program = target.program()
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1_000_001,)))
    if spec.method == "exact":
        tiny = prime_field(spec.prime)
        inputs_a = [tiny.random(rng, 1) for _ in range(n_parties)]
        inputs_b = alternative_inputs(tiny, inputs_a, spec.coalition, rng)
        result = exact_audit(tape_runner(program, n_parties, spec.prime), tiny, inputs_a,
                             inputs_b, spec.coalition, max_runs=spec.max_runs, seed=seed,
                             progress=progress)
    else:
        field_ = prime_field(prime)
        inputs_a = _real_inputs(target, field_, n_parties, rng)
        inputs_b = alternative_inputs(field_, inputs_a, spec.coalition, rng)
        runner = trial_runner(program, n_parties, prime, network)
        result = statistical_audit(runner, field_, inputs_a, inputs_b, spec.coalition,
                                   trials=spec.trials, alpha=spec.alpha, seed=seed,
                                   coordinate_length=len(inputs_a[0]), progress=progress)
    result.details.setdefault("protocol", f"{target.protocol} ({target.variant})")
    return result


def _real_inputs(
    target: AuditTarget, field_: PrimeField, n_parties: int, rng: np.random.Generator
) -> list[np.ndarray]:
    if target.inputs is not None:
        return [np.asarray(x) for x in target.inputs]
    return [field_.random(rng, 8) for _ in range(n_parties)]


def first_call_inputs(views: dict[int, View], sites: Sequence[int], protocol: str) -> tuple:
    """The field inputs each site gave to the first call of ``protocol`` in a run."""
    out = []
    for m in sites:
        for call, _, value in views[m].protocol_inputs:
            if call is not None and call.protocol == protocol:
                out.append(np.asarray(value))
                break
        else:
            raise ValueError(f"party {m} made no call of {protocol}")
    return tuple(out)
