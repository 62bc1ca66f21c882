"""CAPE's simulator for a run whose CAPE calls each have their own noise plan (capeAGN).

Seed 003, Algorithm 2 runs CAPE twice; :class:`StagedCapeSimulator` judges each call by the
:class:`~protocols.cape_simulator.CapeSimulator` of its own stage
(:func:`protocols.registry.cape_declaration` with a plan per call).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from protocols.cape_simulator import CapeSimulator
from protocols.correlated_noise import PROTOCOL
from protocols.simulator import CallView, MessageKey, SimulatorMismatch


@dataclass(frozen=True)
class StagedCapeSimulator:
    """CAPE's simulator for a run whose CAPE calls each have their own noise plan.

    capeAGN (seed 003, Algorithm 2) runs CAPE twice — stage 1 on the second moment M2 with
    plan τ_s2, stage 2 on the projected third moment with plan τ_s3 — and one declared plan
    cannot hold both. This simulator holds one :class:`CapeSimulator` per CAPE call, keyed by
    the call's number (the parties' call counter, as a report's ``call`` column names it), and
    judges each call by its own plan; a CAPE call with no declared plan is a
    :class:`~protocols.simulator.SimulatorMismatch` naming the calls that have one.

    Parameters
    ----------
    stages : mapping of int to CapeSimulator
        Call number → the simulator with that call's plan (and budget).
    """

    stages: Mapping[int, CapeSimulator]
    name: str = PROTOCOL
    uniform_on_hull: bool = False
    releases_inputs: bool = True

    def _at(self, view: CallView) -> CapeSimulator:
        sim = self.stages.get(view.call.index)
        if sim is None:
            raise SimulatorMismatch(
                f"{view.call.tag('').rstrip('.')} has no declared noise plan; plans are declared "
                f"for CAPE calls {sorted(self.stages)}")
        return sim

    def statistic(self, records: tuple[tuple[str, Any], ...]) -> np.ndarray | None:
        """As :meth:`CapeSimulator.statistic` (the same in every stage)."""
        return CapeSimulator().statistic(records)

    def determined(self, view: CallView) -> bool:
        return self._at(view).determined(view)

    def sizes(self, view: CallView) -> dict[MessageKey, int]:
        return self._at(view).sizes(view)

    def simulate(
        self, view: CallView, rng: np.random.Generator, n: int
    ) -> dict[MessageKey, np.ndarray]:
        return self._at(view).simulate(view, rng, n)

    def residuals(
        self, view: CallView, received: Mapping[MessageKey, np.ndarray]
    ) -> tuple[dict[MessageKey, np.ndarray], dict[MessageKey, np.ndarray]]:
        return self._at(view).residuals(view, received)

    def reveals(self, view: CallView) -> str | None:
        return self._at(view).reveals(view)

    def effective_delta(self, view: CallView) -> dict[int, float]:
        return self._at(view).effective_delta(view)
