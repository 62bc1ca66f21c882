"""What the audit tests share: fields, coalitions, and an audit of every coalition at once."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from parties.audit import AuditResult
from parties.audit.randomness import ConditionedRandomness
from parties.party import site_parties
from parties.view import View
from protocols.field import MERSENNE61, PrimeField, prime_field
from sim.privacy import SimPyRunner, audit

F61 = prime_field(MERSENNE61)
F5 = prime_field(5)
F7 = prime_field(7)
P = MERSENNE61
D = 4  # vector length of the statistical audits
ALPHA = 1e-3


def coalitions(n_parties: int, sizes: Iterable[int] | None = None) -> list[tuple[int, ...]]:
    """Every coalition of 1..M−1 parties (or of the given sizes)."""
    sizes = range(1, n_parties) if sizes is None else sizes
    return [c for k in sizes for c in itertools.combinations(range(n_parties), k)]


def ints(values: Any) -> list[int]:
    return [int(v) for v in np.ravel(values)]


def field_inputs(field_: PrimeField, n_parties: int, d: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [field_.random(rng, d) for _ in range(n_parties)]


def verdicts(
    program: Callable, n_parties: int, method: str, *, field_: PrimeField = F61, d: int = D,
    trials: int = 32, seed: int = 11, which: Iterable[tuple[int, ...]] | None = None,
    **options: Any,
) -> dict[tuple[int, ...], AuditResult]:
    """The audit of every coalition (or of ``which``) of ``program`` on seeded inputs."""
    inputs = field_inputs(field_, n_parties, d, seed)
    chosen = coalitions(n_parties) if which is None else list(which)
    return {c: audit(program, inputs, c, prime=field_.p, method=method, trials=trials,
                     seed=seed, **options) for c in chosen}


def flagged(results: dict[tuple[int, ...], AuditResult]) -> set[tuple[int, ...]]:
    return {c for c, r in results.items() if r.leaks}


def run_views(program: Callable, inputs: list[np.ndarray], seed: int = 5,
              prime: int = MERSENNE61) -> dict[int, View]:
    """The views of one run with mask draws recorded (fresh randomness from ``seed``)."""
    parties = site_parties(program, [{"x": x} for x in inputs])
    runner = SimPyRunner(prime, seed=seed)
    return dict(runner(parties, ConditionedRandomness(range(len(inputs)), (), seed, 0)))
