"""``[[audit]] method = "simulation"`` on CAPE averaging (scenarios/cape_mean.toml).

The scenario's run is replayed with the honest parties' noise redrawn; CAPE's calls are judged
by its declaration with the scenario's plan and budget (:mod:`protocols.cape_simulator`). A
coalition study over every single participant — the five sites, the aggregator (id 5) and the
noise generator (id 6) — is private for each; the conventional scheme (no noise generator) too.
The run is shortened to a few releases so that the test stays small; the scenario's own size is
measured in the closing note of issue 28 (README, CAPE).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from sim.runner import run_scenario

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "cape_mean.toml"


def _spec(**algorithm: object) -> dict:
    spec = tomllib.loads(SCENARIO.read_text())
    spec["algorithm"].update({"trials": 3, **algorithm})
    return spec


def test_cape_mean_study_over_every_participant_is_private() -> None:
    spec = _spec()
    spec["audit"] = [{"method": "simulation", "sizes": [1], "trials": 80}]
    run = run_scenario(spec)
    entries = run.report["privacy"]
    members = sorted(tuple(e["coalition"]) for e in entries)
    assert members == [(p,) for p in range(7)]  # sites 0..4, aggregator 5, generator 6
    for entry in entries:
        assert entry["verdict"] == "private", entry
    aggregator = next(e for e in entries if e["coalition"] == [5])
    assert aggregator["power"]["gaussian"]["variance_ratio"] < 1.0


@pytest.mark.slow
def test_cape_mean_conventional_scheme_is_audited_too() -> None:
    spec = _spec(scheme="conventional")
    spec["audit"] = [{"method": "simulation", "sizes": [1], "trials": 80}]
    entries = run_scenario(spec).report["privacy"]
    assert sorted(tuple(e["coalition"]) for e in entries) == [(p,) for p in range(6)]
    assert all(e["verdict"] == "private" for e in entries), entries
