"""The cape_* catalogue entries end to end (seed 003): the Python API and the CLI, the paper's
orderings, the accounting block, and bad input ending in `error: ...` with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from protocols.errors import InputError
from sim.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


def mean_scenario(**algorithm) -> dict:
    return {"seed": 2, "network": {"parties": 4, "sealing": False},
            "data": {"source": "synthetic", "kind": "uniform", "rows": 400, "cols": 3},
            "algorithm": {"name": "cape_mean", "trials": 80, "norm_bound": 2.0, **algorithm}}


def pca_scenario(**algorithm) -> dict:
    return {"seed": 3, "network": {"parties": 5, "sealing": False},
            "data": {"source": "synthetic", "kind": "spiked", "rows": 4000, "cols": 30, "k": 6},
            "algorithm": {"name": "cape_pca", "k": 6, "epsilon": 1.0, "trials": 3,
                          "samples_per_site": 400, **algorithm}}


def otd_scenario(model: str, **algorithm) -> dict:
    return {"seed": 4, "network": {"parties": 5, "sealing": False},
            "data": {"source": "synthetic", "kind": model, "rows": 50_000, "cols": 8, "k": 4},
            "algorithm": {"name": "cape_otd", "model": model, "k": 4, "epsilon": 0.5,
                          "trials": 3, **algorithm}}


def test_cape_mean_reports_the_claims_and_the_accounting(tmp_path: Path) -> None:
    run = run_scenario(mean_scenario())
    m = run.report["metrics"]
    n = m["samples"]
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
    assert lo * m["pooled_variance"] < m["empirical_variance"] < hi * m["pooled_variance"]
    assert 0.6 * 4 < m["conventional_over_pooled"] < 1.6 * 4
    assert all(v >= t for v, t in zip(m["release_variance_theory"], m["tau2"], strict=True))
    assert [f["colluding_sites"] for f in m["collusion"]] == [0, 1, 2, 3]
    assert m["collusion_paper_threshold"] == 1
    acc = m["accounting"]
    for scope in ("site", "aggregate"):
        assert {"paper", "exact", "dp_accounting_pld", "dp_accounting_rdp"} <= set(acc[scope])
    assert run.report["roles"] == {"0": "site", "1": "site", "2": "site", "3": "site",
                                   "4": "aggregator", "5": "noise_generator"}
    written = run.write(tmp_path / "out")
    assert (tmp_path / "out" / "collusion.png") in written
    again = run_scenario(mean_scenario())
    assert again.ledger_csv == run.ledger_csv
    np.testing.assert_array_equal(again.outputs["aggregates"], run.outputs["aggregates"])


def test_cape_mean_conventional_scheme_and_discrete_noise() -> None:
    conv = run_scenario(mean_scenario(scheme="conventional", trials=60)).report["metrics"]
    assert "collusion" not in conv
    assert conv["empirical_variance"] == conv["conventional_empirical_variance"]
    disc = run_scenario(mean_scenario(noise="discrete", trials=60)).report["metrics"]
    n = disc["samples"]
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
    assert lo * disc["pooled_variance"] < disc["empirical_variance"] < hi * disc["pooled_variance"]


def test_cape_mean_unequal_sites_use_the_generalized_plan() -> None:
    scenario = mean_scenario(trials=80)
    scenario["data"]["partition"] = [50, 100, 100, 150]
    m = run_scenario(scenario).report["metrics"]
    n = m["samples"]
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
    assert lo * m["pooled_variance"] < m["empirical_variance"] < hi * m["pooled_variance"]
    assert all(v >= t * (1 - 1e-12) for v, t in zip(m["release_variance_theory"], m["tau2"],
                                                    strict=True))


def test_cape_pca_orders_the_methods_as_the_paper() -> None:
    run = run_scenario(pca_scenario())
    m = run.report["metrics"]
    assert m["q_nonprivate"] >= m["q_cape"] >= m["q_conventional"] >= m["q_local"]
    assert abs(m["q_cape"] - m["q_pooled_ag"]) < 0.25 * (m["q_cape"] - m["q_conventional"])
    assert m["elements_sent_per_site"] == m["declared_elements_sent_per_site"] == 30 * 31 // 2
    assert run.outputs["V"].shape == (30, 6)
    assert np.allclose(run.outputs["V"].T @ run.outputs["V"], np.eye(6), atol=1e-10)


@pytest.mark.parametrize("model", ["mog", "stm"])
def test_cape_otd_orders_the_methods_as_the_paper(model: str) -> None:
    m = run_scenario(otd_scenario(model)).report["metrics"]
    assert m["error_cape"] <= m["error_conventional"] <= m["error_local"] + 0.05
    assert m["error_nonprivate"] < m["error_cape"] + 0.05 and m["error_cape"] < m["error_random"]
    assert m["elements_sent_per_site"] == m["declared_elements_sent_per_site"]
    assert m["accounting"]["aggregate"]["paper"]["epsilon"] == pytest.approx(0.5)


def test_sweeps_write_their_plots(tmp_path: Path) -> None:
    scenario = pca_scenario(trials=1)
    scenario["algorithm"].update(name="cape_pca_sweep", sweep="epsilon", values=[0.5, 5.0])
    run = run_scenario(scenario)
    assert run.report["metrics"]["values"] == [0.5, 5.0]
    assert run.report["metrics"]["q_cape"][1] > run.report["metrics"]["q_cape"][0]
    assert (tmp_path / "a" / "captured_energy_vs_epsilon.png") in run.write(tmp_path / "a")
    scenario = otd_scenario("mog", trials=1)
    scenario["algorithm"].update(name="cape_otd_sweep", sweep="samples_per_site",
                                 values=[1000, 8000])
    run = run_scenario(scenario)
    assert (tmp_path / "b" / "otd_error_vs_samples_per_site.png") in run.write(tmp_path / "b")


def test_digits_run_through_the_data_source() -> None:
    pytest.importorskip("sklearn")
    scenario = pca_scenario(k=5, samples_per_site=100, trials=2)
    scenario["data"] = {"source": "digits"}
    m = run_scenario(scenario).report["metrics"]
    assert m["dimension"] == 64
    assert m["q_cape"] >= m["q_local"]


def test_digits_without_scikit_learn_say_what_to_install(monkeypatch) -> None:
    import builtins

    real = builtins.__import__

    def no_sklearn(name, *args, **kwargs):
        if name.startswith("sklearn"):
            raise ImportError("no sklearn")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    scenario = pca_scenario()
    scenario["data"] = {"source": "digits"}
    with pytest.raises(InputError, match=r"mpcsim\[datasets\]"):
        run_scenario(scenario)


BAD = [
    (mean_scenario(epsilon=0), "algorithm.epsilon = 0 is out of range; allowed: 0 < epsilon"),
    (mean_scenario(delta=1.0), "algorithm.delta = 1.0 is out of range; allowed: 0 < delta < 1"),
    (mean_scenario(delta=0), "algorithm.delta = 0 is out of range; allowed: 0 < delta < 1"),
    (mean_scenario(norm_bound=0.5), "above the assumed bound"),
    (pca_scenario(preprocess="none", samples_per_site=0) | {
        "data": {"source": "synthetic", "kind": "uniform", "rows": 100, "cols": 30}},
     "above the assumed bound"),
    (pca_scenario(k=31), "k = 31 must be an integer in [1, D = 30]"),
    ({**otd_scenario("mog"), "algorithm": {**otd_scenario("mog")["algorithm"], "model": "stm"}},
     "kind = 'stm'"),
    (otd_scenario("mog", k=9), "k = 9 must be an integer in [1, D = 8]"),
]


@pytest.mark.parametrize("scenario, message", BAD)
def test_bad_input_is_an_input_error(scenario: dict, message: str) -> None:
    with pytest.raises(InputError) as err:
        run_scenario(scenario)
    assert message in str(err.value)


def test_cli_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[network]\nparties = 3\n[data]\nsource = "synthetic"\nkind = "uniform"\n'
                    'rows = 30\ncols = 2\n[algorithm]\nname = "cape_mean"\nepsilon = -1\n')
    out = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(path), "--out",
                          str(tmp_path / "o")], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2
    assert out.stderr.strip() == (
        "error: algorithm.epsilon = -1 is out of range; allowed: 0 < epsilon ≤ 1000")
    assert not (tmp_path / "o").exists()


def test_cli_runs_a_cape_scenario_as_json(tmp_path: Path) -> None:
    path = tmp_path / "mean.toml"
    path.write_text('seed = 1\n[network]\nparties = 3\nsealing = false\n[data]\n'
                    'source = "synthetic"\nkind = "uniform"\nrows = 60\ncols = 2\n'
                    '[algorithm]\nname = "cape_mean"\ntrials = 20\nnorm_bound = 1.5\n')
    out = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(path), "--json",
                          "--quiet"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["algorithm"] == "cape_mean"
    assert report["communication"]["per_protocol"]["cape"]["calls"] == 20


SLOW = ["cape_mean", "cape_pca_synthetic_epsilon", "cape_pca_synthetic_samples",
        "cape_pca_synthetic_delta", "cape_pca_digits_epsilon", "cape_pca_digits_samples",
        "cape_pca_digits_delta", "cape_otd_mog_epsilon", "cape_otd_mog_samples",
        "cape_otd_stm_epsilon", "cape_otd_stm_samples"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_paper_scenarios_reproduce_the_orderings(name: str, tmp_path: Path) -> None:
    """Seed 003 §6: capePCA ≈ pooled AG ≥ conventional ≥ local, capeAGN ≤ conventional ≤
    local, and the private methods approach non-private as ε or N_s grow."""
    if "digits" in name:
        pytest.importorskip("sklearn")
    run = run_scenario(SCENARIOS / f"{name}.toml")
    m = run.report["metrics"]
    assert run.write(tmp_path)
    if name == "cape_mean":
        assert 0.7 * 5 < m["conventional_over_pooled"] < 1.4 * 5
        return
    if "pca" in name:
        cape, conv, local = (np.array(m[f"q_{k}"]) for k in ("cape", "conventional", "local"))
        pooled, top = np.array(m["q_pooled_ag"]), np.array(m["q_nonprivate"])
        spread = 0.05 * top
        assert np.all(cape >= conv - spread) and np.all(conv >= local - spread)
        assert np.all(np.abs(cape - pooled) <= spread)
        if m["sweep"] != "delta":
            assert cape[-1] > 0.85 * top[-1] and cape[-1] > cape[0]
        return
    cape, conv, local = (np.array(m[f"error_{k}"]) for k in ("cape", "conventional", "local"))
    slack = 0.03
    assert np.all(cape <= conv + slack) and np.all(conv <= local + slack)
    assert cape[-1] < cape[0]
    assert cape[-1] - m["error_nonprivate"][-1] < 0.5 * (cape[0] - m["error_nonprivate"][0])
