"""Every shipped scenario and every catalogue entry accepts ``[[audit]]`` (issue 28, "Done when").

Two walks:

* every ``scenarios/*.toml``, with an ``[[audit]]`` table appended (simulation method, the
  coalition {0}: below every threshold in the project), is accepted by the scenario checks —
  the keys, the coalition's ids against the entry's roles — and names an entry that the second
  walk runs;
* every catalogue entry, at the small size of ``tests/sim/drivers/mpi_catalog.py``, runs with
  that ``[[audit]]`` and answers one of the four verdicts for each run it audits (a multi-run
  experiment: one per arm, named in ``details["run"]``, :mod:`sim.audited_runs`) — never
  "no protocol to audit", never an error.

``EXEMPT`` lists what cannot (yet) be audited, with the reason: it is empty.
"""

from __future__ import annotations

import copy
import sys
import tomllib
from pathlib import Path

import pytest

from parties.audit.result import VERDICTS
from sim import catalog
from sim.runner import run_scenario
from sim.scenario import check_role_ids, load_scenario

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sim" / "drivers"))
from mpi_catalog import SCENARIOS  # noqa: E402

AUDIT = {"coalition": [0], "method": "simulation", "trials": 10}
EXEMPT: dict[str, str] = {}
"""Scenario files or catalogue entries that refuse ``[[audit]]``, each with its reason."""
SLOW = {"pd_svd", "normed_secure_sum"}
"""Entries whose small run still takes tens of seconds to audit (NormedSecureSum's reruns)."""

SHIPPED = sorted((ROOT / "scenarios").glob("*.toml"))


def _below_threshold(parties: int) -> dict:
    """The audit table: data holder 0, or with a single data holder the next participant
    (the analyst of DP robust NMF's one-curator run)."""
    return {**AUDIT, "coalition": [0 if parties > 1 else 1]}


def test_the_walks_cover_every_file_and_entry() -> None:
    assert len(SHIPPED) >= 40
    entries = {spec["algorithm"]["name"] for spec in SCENARIOS.values()}
    assert entries == set(catalog.algorithms())
    assert not EXEMPT, f"exempt from [[audit]]: {EXEMPT}"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_scenario_accepts_an_audit_table(path: Path) -> None:
    raw = tomllib.loads(path.read_text())
    raw["audit"] = [_below_threshold(raw["network"]["parties"])]
    scenario = load_scenario(raw)
    entry = catalog.entry_for(scenario.algorithm, path.parent)
    params = entry.validate(scenario.algorithm)
    check_role_ids(scenario.audits, scenario.n_parties, entry.other_roles(params))
    ran = {spec["algorithm"]["name"] for spec in SCENARIOS.values()}
    assert entry.name in ran  # and the entry answers the audit (below)


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in SCENARIOS])
def test_every_catalogue_entry_answers_an_audit(name: str) -> None:
    spec = copy.deepcopy(SCENARIOS[name])
    spec["audit"] = [dict(AUDIT)]
    run = run_scenario(spec)
    assert run.audits, name
    runs = [a.details.get("run") for a in run.audits]
    assert len(set(runs)) == len(runs)  # one verdict per audited run
    for audit in run.audits:
        assert audit.verdict in VERDICTS
        assert audit.coalition == (0,)
        if audit.verdict == "not applicable":
            assert audit.details.get("reason")  # a reason, naming why
    assert run.report["privacy"] == [a.to_dict() for a in run.audits]


def test_a_single_curator_reports_its_release_to_the_analyst() -> None:
    """dp_nmf_outliers_epsilon_digits has one curator: the analyst (party 1) gets its noisy
    statistics in the clear by design, which the audit reports as such."""
    spec = copy.deepcopy(SCENARIOS["dp_nmf_outliers_epsilon"])
    spec["network"]["parties"] = 1
    spec["audit"] = [_below_threshold(1)]
    run = run_scenario(spec)
    [audit] = run.audits
    assert audit.verdict == "leak" and audit.coalition == (1,)
    assert audit.details["declared"] and "analyst" in audit.details["reason"]
