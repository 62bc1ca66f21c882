"""The ``ksdp`` experiment end to end (runner, CLI): the one-bit sum through SecureSum against
the closed form, and claim C10's orderings on synthetic topic corpora (thesis §3.4)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from protocols.errors import ScenarioError
from sim.cli import main
from sim.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]


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
def test_pi_rises_with_size_and_hiding_sigma_is_within_the_spread_at_small_sizes():
    """``ksdp_pd_svd.toml`` (victims of 2, 5 and 20 documents against 200, 20 documents × 50
    databases with and 50 without). Measured: KS (mean over documents of the most
    discriminative statistic) PD-SVD 0.694 / 0.449 / 0.312, Σ-revealing 0.680 / 0.417 / 0.295;
    π 1.9e-7 / 0.0079 / 0.090 against 6.6e-5 / 0.016 / 0.111 (sd over documents at n_v = 20:
    0.15 / 0.21). Holds: π rises and KS falls with the victim's size for both, and at 2
    documents both are negligible. Not reproduced here: "PD-SVD hides more than a Σ-revealing
    SVD" — on the same databases the adversary's KS distance is 0.014–0.032 larger for PD-SVD
    (one KS statistic of 50 against 50 samples has a 5 % critical value of 0.27; the mean of 20
    differs by about its spread), so hiding Σ is not seen at these sizes (the Enron-shaped
    scenario shows where it is: the smallest party). Asserted: the trends, π < 1e-3 for both
    at 2 documents, and the two mechanisms' KS within 0.05 of each other at every size."""
    run = run_scenario(Path(__file__).resolve().parents[2] / "scenarios" / "ksdp_pd_svd.toml")
    mech = run.report["metrics"]["mechanisms"]
    for name in ("pd_svd", "sigma_revealing_svd"):
        assert mech[name]["pi"] == sorted(mech[name]["pi"])
        assert mech[name]["ks_statistic"] == sorted(mech[name]["ks_statistic"], reverse=True)
    pd, sigma = mech["pd_svd"], mech["sigma_revealing_svd"]
    assert max(pd["pi"][0], sigma["pi"][0]) < 1e-3
    assert all(abs(a - b) < 0.05
               for a, b in zip(pd["ks_statistic"], sigma["ks_statistic"], strict=True))


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


ENRON_SEEDS = (5, 6, 7)
"""The data sets of the Enron-shaped comparison: the scenario's seed and the next two."""


@pytest.mark.slow
def test_sigma_revealing_p_is_far_above_005_at_enron_shaped_party_sizes():
    """Claim C10 at the thesis's party sizes (§3.4.2, Fig. 3.10): victims of 0.75–33.3 % of
    the two parties' documents (20–1,333 of an adversary's 2,667, a tenth of Enron's), three
    data sets of 20 documents each, 50 databases per side.

    Measured (mean π over 20 documents and seeds 5–7): Σ-revealing 0.073, 0.28, 0.33, 0.32
    at 20, 80, 400, 1,333 documents; PD-SVD 0.11, 0.28, 0.31, 0.32. Asserted: π rises from
    the smallest size to every larger one for both; the Σ-revealing SVD's π is ≥ 0.15
    (three times 0.05) at every size from 2.9 % (the thesis's "much larger than 0.05");
    hiding Σ helps at the smallest size (PD-SVD's π above the Σ-revealing SVD's on the mean
    over data sets). Not asserted: PD-SVD above the Σ-revealing SVD at every size — from 80
    documents on both level off at ≈ 0.3 (π is the least of six correlated p-values, so it
    stays well below 0.5 even where x is invisible) and their order is within the spread
    (the thesis itself excepts its 33.3 % party)."""
    spec = tomllib.loads((ROOT / "scenarios" / "ksdp_pd_svd_enron.toml").read_text())
    pi = {"pd_svd": [], "sigma_revealing_svd": []}
    for seed in ENRON_SEEDS:
        spec["seed"] = seed
        mech = run_scenario(spec).report["metrics"]["mechanisms"]
        for name in pi:
            pi[name].append(mech[name]["pi"])
    mean = {name: np.mean(v, axis=0) for name, v in pi.items()}
    for name in pi:
        assert np.all(mean[name][1:] > mean[name][0]), (name, mean[name])
    assert np.all(mean["sigma_revealing_svd"][1:] >= 0.15), mean
    assert mean["pd_svd"][0] > mean["sigma_revealing_svd"][0], mean
