"""What a catalogue entry is: a runnable algorithm, its scenario keys, its input and its output.

Each entry (:class:`Algorithm`) names the paper and algorithm it implements, declares its
scenario keys with defaults and checks (:class:`Param`), and provides ``run``: given the
validated scenario, the parties' data shards and a configured :class:`~sim.simulation.Simulation`
(:class:`RunInput`), it returns an :class:`AlgorithmRun` — the simulation result, the public
outputs, metrics, the protocol its audits examine, and plots.

The entries themselves live in :mod:`sim.experiments`, one module per algorithm or experiment,
and import this module; :mod:`sim.catalog` collects them. Imports run one way:
``sim.entry ← sim.experiments ← sim.catalog``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from protocols.errors import ScenarioError
from sim.scenario import Scenario, check_choice, check_int, check_number

if TYPE_CHECKING:
    from parties.audit import Progress
    from sim.privacy import AuditTarget
    from sim.simulation import Result, Simulation


@dataclass(frozen=True)
class Param:
    """One scenario key of an algorithm: its default and a check that normalises it."""

    default: Any
    check: Callable[[str, Any], Any]
    help: str = ""


@dataclass
class RunInput:
    """What an algorithm's ``run`` receives."""

    scenario: Scenario
    params: dict[str, Any]
    data: Any  # the pooled matrix (rows are samples), dense or CSR
    shards: list[Any]  # one row block per data-holding party
    simulation: Simulation
    seed: int
    progress: Progress | None = None
    extras: dict[str, Any] = field(default_factory=dict)  # e.g. ground truth of synthetic data
    attack: dict[str, Any] | None = None  # the [attack] table, checked by Algorithm.attack


@dataclass
class AlgorithmRun:
    """What an algorithm's ``run`` returns."""

    result: Result | None
    outputs: dict[str, np.ndarray]
    metrics: dict[str, Any] = field(default_factory=dict)
    audit_target: AuditTarget | None = None
    plots: dict[str, Callable[[], Any]] = field(default_factory=dict)  # name -> figure builder
    tables: list[str] = field(default_factory=list)  # extra text tables for the console
    communication_by_phase: bool = False


@dataclass(frozen=True)
class Algorithm:
    """A catalogue entry."""

    name: str
    summary: str
    reference: str
    params: Mapping[str, Param]
    run: Callable[[RunInput], AlgorithmRun]
    data_kind: str = "uniform"  # the synthetic kind used when a scenario asks for synthetic data
    nonnegative: bool = False
    allow_missing: bool = False
    min_parties: int = 2  # smallest network.parties (M ≥ 2 for a secure computation)
    # checks the scenario's [attack] table given network.parties; None: no [attack] allowed
    attack: Callable[[Mapping[str, Any], int], dict[str, Any]] | None = None

    def validate(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """Check the ``[algorithm]`` table's keys; fill in defaults."""
        extra = sorted(set(given) - set(self.params) - {"name"})
        if extra:
            raise ScenarioError(
                f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(map(repr, extra))} in "
                f"[algorithm] for {self.name!r}; allowed: "
                f"{', '.join(sorted(self.params)) or '(none)'}"
            )
        out = {}
        for key, param in self.params.items():
            value = given.get(key, param.default)
            out[key] = param.check(f"algorithm.{key}", value)
        return out


# -- reusable checks ---------------------------------------------------------------------------


def choice(*options: str) -> Callable[[str, Any], Any]:
    """A check that the value is one of ``options``."""
    return lambda name, value: check_choice(name, value, options)


def integer(low: int | None = None, high: int | None = None) -> Callable[[str, Any], int]:
    """A check that the value is an integer in [low, high]."""
    return lambda name, value: check_int(name, value, low, high)


def number(low: float | None = None) -> Callable[[str, Any], float]:
    """A check that the value is a finite number ≥ low."""
    return lambda name, value: check_number(name, value, low)


def boolean() -> Callable[[str, Any], bool]:
    """A check that the value is true or false (TOML booleans only)."""

    def check(name: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise ScenarioError(f"{name} = {value!r} must be true or false")
        return value

    return check
