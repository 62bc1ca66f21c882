"""Coalition studies through the scenario runner, the CLI and the Python API.

The verdicts are checked against hand-derived facts: honest SecureSum is private for every
coalition (so the largest private t is M − 1, its declared threshold), and the planted
``reused_mask`` leak (explicit shares) reaches exactly the coalitions that leave two or more
honest parties (``tests/parties/planted_leaks.py``), so its largest private t is 0.
"""

from __future__ import annotations

import itertools
import json
import sys
from math import comb
from pathlib import Path

import numpy as np
import pytest

from parties.audit.coalitions import enumerate_coalitions
from protocols.errors import InputError, ScenarioError
from protocols.field import MERSENNE61, prime_field
from sim.cli import main
from sim.coalitions import coalition_study, heat_map
from sim.privacy import secure_sum_program
from sim.runner import run_scenario

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "parties"))
import planted_leaks as pl

F61 = prime_field(MERSENNE61)


def scenario(audit: dict, parties: int = 4, variant: str = "prg") -> dict:
    return {"name": "study", "seed": 3, "network": {"parties": parties},
            "field": {"prime": "2^61-1", "frac_bits": 16},
            "data": {"source": "synthetic", "rows": 8 * parties, "cols": 2},
            "algorithm": {"name": "secure_sum", "variant": variant}, "audit": [audit]}


def test_enumeration_leaves_a_data_holder_honest():
    got = enumerate_coalitions([0, 1, 2, 3], [0, 1, 2])  # party 3 in another role
    assert (0, 1, 2) not in got and (0, 1, 2, 3) not in got and (0, 1, 3) in got
    assert len(got) == sum(comb(4, t) for t in (1, 2, 3)) - 1
    with pytest.raises(InputError, match="sizes"):
        enumerate_coalitions([0, 1, 2], [0, 1, 2], [3])


@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_all_coalitions_from_the_runner(variant: str, tmp_path: Path):
    run = run_scenario(scenario({"coalitions": "all", "method": "linear"}, 5, variant))
    study = run.report["coalition_studies"][0]
    assert study["coalitions"] == 30 and study["largest_private_t"] == 4
    assert study["declared_threshold"] == 4 and study["meets_declared_threshold"] is True
    assert {tuple(e["coalition"]) for e in run.report["privacy"]} == set(
        c for t in range(1, 5) for c in itertools.combinations(range(5), t))
    written = {p.name for p in run.write(tmp_path)}
    assert "coalitions_0.png" in written
    assert (tmp_path / "coalitions_0.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_sizes_and_lists_and_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture):
    run = run_scenario(scenario({"sizes": [1], "method": "linear"}))
    study = run.report["coalition_studies"][0]
    assert study["largest_private_t"] == 1 and study["meets_declared_threshold"] is None
    run = run_scenario(scenario({"coalitions": [[0], [1, 2]], "method": "linear"}))
    assert [e["coalition"] for e in run.report["privacy"]] == [[0], [1, 2]]
    path = tmp_path / "s.toml"
    path.write_text('name = "s"\nseed = 1\n[network]\nparties = 3\n[field]\nprime = "2^61-1"\n'
                    '[data]\nsource = "synthetic"\nrows = 9\ncols = 2\n[algorithm]\n'
                    'name = "secure_sum"\n[[audit]]\ncoalitions = "all"\nmethod = "linear"\n')
    assert main(["run", str(path), "--json", "--quiet", "--out", str(tmp_path / "o")]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["coalition_studies"][0]["largest_private_t"] == 2
    assert (tmp_path / "o" / "coalitions_0.png").is_file()


@pytest.mark.parametrize("audit", [
    {"coalition": [0], "sizes": [1]},
    {},
    {"sizes": [0]},
    {"coalitions": "some"},
    {"coalitions": [[0, 9]]},
    {"coalitions": "all", "probes": 0},
])
def test_bad_study_keys(audit: dict, capsys: pytest.CaptureFixture, tmp_path: Path):
    with pytest.raises(ScenarioError):
        run_scenario(scenario({"method": "linear", **audit}))


def test_python_api_finds_the_planted_leak_and_plots_it():
    inputs = [F61.elements([v, v + 1]) for v in range(4)]
    study = coalition_study(pl.reused_mask_explicit, inputs, prime=MERSENNE61,
                            protocol="secure_sum")
    leaking = {r.coalition for r in study.results if r.verdict == "leak"}
    assert leaking == pl.LEAKING_COALITIONS[("reused_mask", "explicit", 4)]
    assert study.largest_private_t == 0 and study.summary()["meets_declared_threshold"] is False
    honest = coalition_study(secure_sum_program("explicit"), inputs, prime=MERSENNE61,
                             sizes=[1, 2], protocol="secure_sum")
    assert honest.largest_private_t == 2 and len(honest.results) == 10
    assert heat_map(study) is not None
    assert np.all([len(row["coalition"]) == row["size"] for row in study.table()])


def test_simulation_studies_include_non_data_roles():
    root = Path(__file__).resolve().parents[2]
    import tomllib

    raw = tomllib.loads((root / "scenarios" / "dp_nmf_outliers.toml").read_text())
    raw["data"].update(rows=60, cols=8)
    raw["algorithm"].update(iterations=1, k=2)
    raw["audit"] = [{"sizes": [1], "method": "simulation", "trials": 10}]
    table = run_scenario(raw).report["coalition_studies"][0]["table"]
    assert [(row["coalition"], row["roles"]) for row in table] == [
        ([0], ["site"]), ([1], ["site"]), ([2], ["site"]), ([3], ["analyst"])]
