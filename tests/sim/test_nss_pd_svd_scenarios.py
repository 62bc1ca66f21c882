"""Catalogue entries ``normed_secure_sum`` and ``pd_svd`` through the Python API and the CLI.

Expected values: numpy's direction of the pooled column sums and numpy's SVD of the pooled
data; the declared costs of :mod:`protocols.normed_secure_sum` (themselves held to spec §3's
closed forms in ``tests/protocols``); Eckart–Young for the local and global LRA errors.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sim.cli import main
from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def nss_scenario(**algorithm) -> dict:
    return {
        "seed": 5,
        "network": {"parties": 3, "sealing": False},
        "field": {"prime": "2^127-1"},
        "data": {"source": "synthetic", "rows": 60, "cols": 12},
        "algorithm": {"name": "normed_secure_sum", **algorithm},
    }


def svd_scenario(**algorithm) -> dict:
    return {
        "seed": 6,
        "network": {"parties": 3, "sealing": False},
        "field": {"prime": "2^127-1"},
        "data": {"source": "synthetic", "kind": "topics", "rows": 90, "cols": 16, "k": 3,
                 "partition": [20, 40, 30]},
        "algorithm": {"name": "pd_svd", "k": 3, "iterations": 12, **algorithm},
    }


@pytest.mark.parametrize("variant", ["normed", "reveal_norm", "secure_sum"])
def test_normed_secure_sum_entry_reports_accuracy_and_declared_equal_measured_cost(
        variant: str) -> None:
    run = run_scenario(nss_scenario(variant=variant))
    metrics = run.report["metrics"]
    assert metrics["max_abs_error_vs_numpy"] < 1e-6
    assert metrics["same_output_at_every_party"]
    direction = run.outputs["direction"]
    assert direction.shape == (12,) and abs(np.linalg.norm(direction) - 1) < 1e-5
    assert metrics["online_rounds_per_call"] == [metrics["declared_online_rounds"]]
    sent = metrics["online_elements_sent_per_party"]
    assert set(sent.values()) == {metrics["declared_online_elements_sent_per_party"]}
    offline = metrics["offline_elements_received_per_party"]
    assert set(offline.values()) == ({metrics["declared_offline_elements_per_party"]}
                                     if variant != "secure_sum" else {0})
    roles = run.report["roles"]
    assert roles["3"] == "dealer"


def test_scale_invariance_audit_from_a_scenario_key() -> None:
    scenario = nss_scenario(audit_instances=200)
    scenario["network"]["parties"] = 2
    scenario["data"]["cols"] = 3
    audits = run_scenario(scenario).report["metrics"]["scale_invariance_audit"]
    assert [a["coalition"] for a in audits] == [[0], [1]]
    assert all(a["verdict"] == "private" for a in audits)


def test_pd_svd_entry_outputs_and_metrics() -> None:
    run = run_scenario(svd_scenario())
    metrics = run.report["metrics"]
    assert metrics["max_principal_angle_vs_numpy"] < 1e-4
    assert metrics["max_abs_diff_vs_centralized"] < 1e-5
    outputs = run.outputs
    assert outputs["V"].shape == (16, 3) and outputs["sigma"].shape == (3,)
    assert [outputs[f"U_{m}"].shape for m in range(3)] == [(20, 3), (40, 3), (30, 3)]
    np.testing.assert_allclose(metrics["sigma"], metrics["sigma_numpy"], rtol=1e-4)
    for m in ("0", "1", "2"):  # Eckart–Young: the local basis is optimal for the party's rows
        assert metrics["lra_error_local"][m] <= metrics["lra_error_global"][m] + 1e-9
    per_iteration = metrics["per_iteration"]
    assert per_iteration["online_rounds"] == per_iteration["declared_online_rounds"]
    assert set(per_iteration["online_elements_sent_per_party"].values()) == {
        per_iteration["declared_online_elements_sent_per_party"]}
    assert len(metrics["principal_angle_history"]) == 12
    assert run.report["communication"]["per_phase"]["offline"]["messages"] == 3 * 12


@pytest.mark.parametrize("variant", ["secure_sum", "sigma_revealing"])
def test_pd_svd_baselines_agree_with_numpy(variant: str) -> None:
    run = run_scenario(svd_scenario(variant=variant))
    metrics = run.report["metrics"]
    assert metrics["max_principal_angle_vs_numpy"] < 1e-4
    assert "offline" not in run.report["communication"].get("per_phase", {})


def test_cli_runs_pd_svd_and_writes_report_outputs_ledger_and_plot(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "svd.toml"
    path.write_text(
        'seed = 3\n[network]\nparties = 2\nsealing = false\n[field]\nprime = "2^127-1"\n'
        '[data]\nsource = "synthetic"\nkind = "topics"\nrows = 40\ncols = 10\nk = 2\n'
        '[algorithm]\nname = "pd_svd"\nk = 2\niterations = 6\n', encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", str(path), "--out", str(out), "--json", "--quiet"])
    stdout, _ = capsys.readouterr()
    assert code == 0
    report = json.loads(stdout)
    assert report["algorithm"] == "pd_svd"
    assert sorted(p.name for p in out.iterdir()) == ["convergence.png", "ledger.csv",
                                                     "outputs.npz", "report.json"]
    with np.load(out / "outputs.npz") as npz:
        assert sorted(npz.files) == ["U_0", "U_1", "V", "sigma"]


BAD = [
    ({"k": 20}, "svd", "k = 20 must be ≤ d = 16"),
    ({"preset": "p127-default", "input_bits": 40}, "svd", "headroom bound ℓ + κ + 2"),
    ({"variant": "secret"}, "svd", "variant"),
    ({"kappa": 30}, "nss", "demo"),
    ({"scale": 1e9}, "nss", "declared input range"),
]


@pytest.mark.parametrize(("keys", "which", "needle"), BAD)
def test_bad_input_ends_in_one_error_line_and_status_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], keys: dict, which: str,
        needle: str) -> None:
    scenario = svd_scenario(**keys) if which == "svd" else nss_scenario(**keys)
    lines = [f'seed = {scenario["seed"]}', "[network]", "parties = 3", "sealing = false",
             "[field]", 'prime = "2^127-1"', "[data]"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in scenario["data"].items()]
    lines += ["[algorithm]"] + [f"{k} = {json.dumps(v)}" for k, v in
                                scenario["algorithm"].items()]
    path = tmp_path / "bad.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    code = main(["run", str(path), "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 2 and stdout == ""
    assert len(err.splitlines()) == 1 and err.startswith("error: ")
    assert needle in err
    assert not out.exists()


def test_p61_without_the_demo_preset_is_refused_and_with_it_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", str(SCENARIOS / "normed_secure_sum_p61_demo.toml"), "--quiet"])
    capsys.readouterr()
    assert code == 0
    scenario = nss_scenario()
    scenario["field"] = {"prime": "2^61-1"}
    with pytest.raises(Exception, match="p61-demo"):
        run_scenario(scenario)


def test_pd_nmf_runs_from_the_pd_svd_start_and_rri_nmf_refuses_it() -> None:
    scenario = {
        "seed": 9,
        "network": {"parties": 3, "sealing": False},
        "data": {"source": "synthetic", "kind": "topics", "rows": 60, "cols": 15, "k": 3},
        "algorithm": {"name": "pd_nmf", "k": 3, "iterations": 3, "init": "pd_svd",
                      "svd_iterations": 15},
    }
    run = run_scenario(scenario)
    metrics = run.report["metrics"]
    assert metrics["max_abs_diff_vs_centralized"] < 1e-5
    phases = run.report["communication"]["per_phase"]
    assert {"init/init", "init/iter", "init/sigma", "init", "iter"} <= set(phases)
    scenario["algorithm"]["name"] = "rri_nmf"
    with pytest.raises(Exception, match="distributed"):
        run_scenario(scenario)


MY_SCENARIOS = ["normed_secure_sum.toml", "normed_secure_sum_p61_demo.toml", "pd_svd.toml",
                "pd_svd_secure_sum.toml"]


@pytest.mark.parametrize("name", MY_SCENARIOS)
def test_shipped_scenarios_validate(name: str) -> None:
    from sim import catalog
    from sim.scenario import load_scenario

    scenario = load_scenario(SCENARIOS / name)
    catalog.get(scenario.algorithm_name).validate(scenario.algorithm)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["normed_secure_sum.toml", "pd_svd.toml",
                                  "pd_svd_secure_sum.toml"])
def test_shipped_scenarios_run(name: str) -> None:
    metrics = run_scenario(SCENARIOS / name).report["metrics"]
    if name.startswith("pd_svd"):
        assert metrics["max_principal_angle_vs_numpy"] < 1e-4
    else:
        assert metrics["max_abs_error_vs_numpy"] < 1e-6
        assert all(a["verdict"] == "private" for a in metrics["scale_invariance_audit"])
