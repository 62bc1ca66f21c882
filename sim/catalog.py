"""The catalogue of runnable algorithms: what ``[algorithm] name = ...`` may say.

The entries (:class:`sim.entry.Algorithm`) are defined in :mod:`sim.experiments`, one module
per algorithm or experiment; this module only looks them up by name.
"""

from __future__ import annotations

from typing import Any

from protocols.errors import ScenarioError
from sim.entry import Algorithm
from sim.experiments import ENTRIES


def algorithms() -> dict[str, Algorithm]:
    """Every runnable algorithm, by name, in the order of :data:`sim.experiments.ENTRIES`."""
    return {entry.name: entry for entry in ENTRIES}


def get(name: Any) -> Algorithm:
    """The entry called ``name``, or a ScenarioError listing the known names."""
    table = algorithms()
    if name not in table:
        raise ScenarioError(
            f"algorithm.name = {name!r} is unknown; use one of {', '.join(sorted(table))} "
            "(`mpcsim list` describes them)"
        )
    return table[name]
