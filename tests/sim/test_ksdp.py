"""The ``ksdp`` experiment end to end (runner, CLI): the one-bit sum through SecureSum against
the closed form, and claim C10's orderings on synthetic topic corpora (thesis §3.4)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from protocols.errors import ScenarioError
from sim.cli import main
from sim.runner import run_scenario


def scenario(algorithm: dict, rows: int = 300, parties: int = 2, seed: int = 5) -> dict:
    return {"name": "ksdp", "seed": seed, "network": {"parties": parties},
            "data": {"source": "synthetic", "kind": "topics", "rows": rows, "cols": 16, "k": 4},
            "algorithm": {"name": "ksdp", **algorithm}}


def test_one_bit_sum_through_secure_sum_estimates_the_closed_form():
    run = run_scenario(scenario({"mechanism": "one_bit_sum", "party_sizes": [10, 40],
                                 "samples": 1500, "documents": 2, "p": 0.75}, parties=3))
    m = run.report["metrics"]
    exact = [float(np.max(binom.pmf(np.arange(n), n - 1, 0.75))) for n in (10, 40)]
    assert m["mechanisms"]["one_bit_sum"]["exact_ks"] == pytest.approx(exact, rel=1e-12)
    # the two-sample KS statistic of 1500 + 1500 draws is within 0.07 of the true gap
    # (DKW: each ECDF within 0.035 with probability 1 − 2e^{−2·1500·0.035²} > 0.999)
    assert np.all(np.abs(np.array(m["ks_statistic"]) - exact) < 0.07)
    assert run.outputs["p_values"].shape == (2, 2)
    assert m["pi"][0] < 1e-6  # n = 10: the victim's bit is plainly visible


@pytest.mark.parametrize("simulator", ["resample", "swap"])
def test_pd_nmf_p_values_rise_with_party_size(simulator: str):
    run = run_scenario(scenario({"mechanism": "pd_nmf", "party_sizes": [3, 40], "samples": 25,
                                 "documents": 4, "iterations": 8, "adversary_size": 60,
                                 "simulator": simulator}))
    pi = run.report["metrics"]["pi"]
    assert pi[0] < pi[1]
    assert run.outputs["p_values"].shape == (2, 4)


@pytest.mark.slow
def test_pd_svd_hides_more_than_sigma_revealing_svd_and_rises_with_size():
    run = run_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "ksdp_pd_svd.toml")
    mech = run.report["metrics"]["mechanisms"]
    for name in ("pd_svd", "sigma_revealing_svd"):
        assert mech[name]["pi"] == sorted(mech[name]["pi"])
    # on the same databases, hiding Σ leaves the adversary a smaller KS distance at every size
    # (mean over documents of the most discriminative statistic's KS statistic), and π is higher
    # wherever it is not negligible for both (at n_v = 2 both are below 1e-5)
    pd, sigma = mech["pd_svd"], mech["sigma_revealing_svd"]
    assert all(a < b for a, b in zip(pd["ks_statistic"], sigma["ks_statistic"], strict=True))
    assert all(a > b for a, b in zip(pd["pi"][1:], sigma["pi"][1:], strict=True))
    assert max(pd["pi"][0], sigma["pi"][0]) < 1e-5


def test_cli_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture):
    path = tmp_path / "k.toml"
    path.write_text('name = "k"\nseed = 2\n[network]\nparties = 2\n[data]\nsource = "synthetic"\n'
                    'kind = "topics"\nrows = 60\ncols = 8\n[algorithm]\nname = "ksdp"\n'
                    'mechanism = ["pd_svd", "sigma_revealing_svd"]\nparty_sizes = [2, 6]\n'
                    'samples = 6\ndocuments = 2\nadversary_size = 20\nk = 2\niterations = 4\n')
    assert main(["run", str(path), "--json", "--quiet", "--out", str(tmp_path / "o")]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert set(rep["metrics"]["mechanisms"]) == {"pd_svd", "sigma_revealing_svd"}
    assert (tmp_path / "o" / "ksdp_p_values.png").read_bytes()[:4] == b"\x89PNG"
    outputs = np.load(tmp_path / "o" / "outputs.npz")
    assert outputs["p_values_pd_svd"].shape == (2, 2)


@pytest.mark.parametrize("algorithm", [
    {"mechanism": "nope"},
    {"mechanism": ["one_bit_sum", "pd_nmf"]},
    {"party_sizes": [1]},
    {"party_sizes": []},
    {"p": 1.5},
    {"samples": 1},
    {"simulator": "other"},
    {"party_sizes": [250], "adversary_size": 100},
])
def test_bad_keys_are_scenario_errors(algorithm: dict):
    with pytest.raises(ScenarioError):
        run_scenario(scenario(algorithm))
