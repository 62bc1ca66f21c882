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
    # PCA-2: conventional > DPdisPCA (R = 2K = 12) > local, and DPdisPCA sends least: D·R
    # against the conventional site's D(D + 1)/2 and capePCA's three such matrices per site
    assert m["q_conventional"] > m["q_dpdispca"] > m["q_local"]
    assert m["elements_per_site_by_scheme"] == {"cape": 3 * 465, "conventional": 465,
                                                "dpdispca": 30 * 12}
    assert run.outputs["V"].shape == (30, 6)
    assert np.allclose(run.outputs["V"].T @ run.outputs["V"], np.eye(6), atol=1e-10)


@pytest.mark.parametrize("model", ["mog", pytest.param("stm", marks=pytest.mark.slow)])
def test_cape_otd_orders_the_methods_as_the_paper(model: str) -> None:
    """capeAGN ≤ conventional ≤ local on the mean error over ten data sets (seeds 4–13). At
    ε = 0.5 with three trials one data set's order is noisy: MOG, seeds 4–23, conventional −
    local has mean −0.19 and standard deviation 0.18, above +0.05 in 2 of 20 (seed 4 among
    them, +0.11); STM, seeds 4–13, capeAGN exceeds conventional once (seed 11: 0.104 against
    0.084) and conventional exceeds local twice. So one seed's order held for one draw; the
    means of ten (MOG 0.21 / 0.42 / 0.62, STM 0.07 / 0.12 / 0.16) keep it with margins of
    about two standard errors or more."""
    runs = []
    for seed in range(4, 14):
        scenario = otd_scenario(model)
        scenario["seed"] = seed
        runs.append(run_scenario(scenario).report["metrics"])
    for m in runs:
        assert m["error_nonprivate"] < m["error_cape"] + 0.05
        assert m["error_cape"] < m["error_random"]
    mean = {k: np.mean([m[f"error_{k}"] for m in runs]) for k in ("cape", "conventional", "local")}
    assert mean["cape"] <= mean["conventional"] <= mean["local"]
    m = runs[0]
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
        "cape_otd_stm_epsilon", "cape_otd_stm_samples", "cape_otd_stm_delta",
        "cape_otd_mog_delta", "cape_otd_mog_delta_d50", "cape_otd_mog_epsilon_d50",
        "cape_otd_stm_epsilon_d50"]


@pytest.fixture(scope="module")
def shipped():
    """Runs of the shipped scenarios, each run once per module: the D = 50 OTD sweeps take
    minutes and serve two tests."""
    runs: dict = {}

    def run(name: str):
        if name not in runs:
            runs[name] = run_scenario(SCENARIOS / f"{name}.toml")
        return runs[name]

    return run

FLOOR_SYNTHETIC = 0.287
"""The random-subspace floor q/q_o of the synthetic PCA data, (K/D)·tr(A)/q_o (cape.md §7.1)."""


# The thresholds below come from the paper's claims (spec cape.md §7) and were checked against
# every slow scenario at seeds 1–5 besides its own (BLAS on one thread); the figures quoted
# are the worst over those six runs. Monte-Carlo noise is measured from the trials themselves
# (the sweeps' outputs hold every trial), not assumed.


def _check_cape_mean(m: dict) -> None:
    """Claim 6a with S = 5 equal sites: the aggregate noise variance equals the pooled one, the
    conventional one is S times it. Each empirical variance is a mean of n squared Gaussians,
    so its ratio to the truth is χ²_n/n: accept the central 99.9 % (quantiles 0.0005, 0.9995).
    Measured: CAPE/pooled 0.965–1.048, conventional/(S·pooled) 0.965–1.095 (band at
    n = 800: 0.84–1.17)."""
    n, S = m["samples"], m["sites"]
    lo, hi = stats.chi2.ppf([0.0005, 0.9995], n) / n
    assert m["theoretical_variance"] == pytest.approx(m["pooled_variance"], rel=1e-9)
    assert m["conventional_theoretical_variance"] == pytest.approx(S * m["pooled_variance"],
                                                                   rel=1e-9)
    assert lo < m["empirical_variance"] / m["pooled_variance"] < hi
    assert lo < m["conventional_over_pooled"] / S < hi


def _check_pca_sweep(m: dict, outputs: dict) -> None:
    """Spec §7.1's claims, in units of q_o (non-private q at each value):

    1. capePCA ≡ pooled AG in law: at every value their means differ by at most 5 standard
       errors (from the trials, treating the two as independent, which overstates the error
       since both see the same samples; at least 0.001 q_o, far below any difference that
       matters). Measured worst: 2.2 SE. Power: twice the pooled noise
       variance lowers q by 0.09 q_o on the synthetic data at ε = 0.5 and 1 (N = 10 000), 14
       to 35 SE there.
    2. capePCA dominates conventional, and conventional local, up to ties at the random-subspace
       floor (claim 4): ≥ −0.02 q_o everywhere (about 5 SE at the floor). Measured worst:
       +0.017 and +0.002 q_o.
    3. The gain is real: capePCA beats conventional by ≥ 0.1 q_o somewhere in the sweep (the
       paper's panels a, d, g peak at about 0.37; measured peaks ≥ 0.25).
    4. Every private method rises with ε, N_s and δ (first → last value; measured rises
       ≥ 0.034 q_o).
    5. capePCA approaches q_o as ε or N_s grows: its gap to q_o at the last value is ≤ 1/4 of
       that at the first (measured ≤ 0.17), and it reaches 0.95 q_o at ε = 10 (paper panel a:
       0.996; measured ≥ 0.997) and 0.8 q_o at the largest N_s (paper panel d: 0.785 already
       at N_s = 2000 < our 3000; measured ≥ 0.887).
    """
    top = np.array(m["q_nonprivate"])
    cape, pooled = outputs["q_cape"], outputs["q_pooled_ag"]  # (values, trials)
    trials = cape.shape[1]
    se = np.sqrt((cape.var(axis=1, ddof=1) + pooled.var(axis=1, ddof=1)) / trials)
    se = np.maximum(se, 1e-3 * top)  # a tie in every trial is not evidence of a difference
    assert np.all(np.abs(cape.mean(axis=1) - pooled.mean(axis=1)) <= 5 * se)
    q = {k: np.array(m[f"q_{k}"]) / top for k in ("cape", "conventional", "local")}
    assert np.all(q["cape"] >= q["conventional"] - 0.02)
    assert np.all(q["conventional"] >= q["local"] - 0.02)
    assert np.max(q["cape"] - q["conventional"]) >= 0.1
    for k in q:
        assert q[k][-1] > q[k][0], k
    if m["sweep"] != "delta":
        assert 1 - q["cape"][-1] <= 0.25 * (1 - q["cape"][0])
        assert q["cape"][-1] >= (0.95 if m["sweep"] == "epsilon" else 0.8)


def _check_synthetic_epsilon_floor_and_dpdispca(m: dict, outputs: dict) -> None:
    """Spec §7.1 claims 2 and 4 on the synthetic ε sweep (ε from 0.001, the paper's grid):

    * at ε = 0.001 every method sits at the random-subspace floor 0.287 q_o, within 0.03
      (measured 0.281–0.284; trial sd ≤ 0.005 q_o);
    * conventional ≥ DPdisPCA (R = 2K) everywhere, beyond 4 standard errors of the difference
      wherever conventional is ≥ 0.05 q_o above the floor (measured gaps 0.068–0.175 at
      ε = 0.5–5, ≥ 7 SE);
    * DPdisPCA > local at ε = 5 and 10 (measured 0.842 vs 0.640, 0.955 vs 0.818). Not
      asserted below: at ε = 0.5 and 1 DPdisPCA measured 0.019 and 0.007 q_o *below* local,
      stated in the claims table (PCA-2).
    """
    top = np.array(m["q_nonprivate"])
    q = {k: np.array(m[f"q_{k}"]) / top
         for k in ("cape", "pooled_ag", "conventional", "dpdispca", "local")}
    assert m["values"][0] <= 0.001
    for k, v in q.items():
        assert abs(v[0] - FLOOR_SYNTHETIC) < 0.03, k
    trials = outputs["q_cape"].shape[1]
    se = np.sqrt((outputs["q_conventional"].var(axis=1, ddof=1)
                  + outputs["q_dpdispca"].var(axis=1, ddof=1)) / trials) / top
    informative = q["conventional"] - FLOOR_SYNTHETIC >= 0.05
    assert np.all(q["conventional"] >= q["dpdispca"] - 0.01)
    assert np.all((q["conventional"] > q["dpdispca"] + 4 * se)[informative])
    values = list(m["values"])
    for eps in (5.0, 10.0):
        i = values.index(eps)
        assert q["dpdispca"][i] > q["local"][i] + 0.05


def _check_digits_floor(m: dict) -> None:
    """Spec §7.1 claim 4 on the digits stand-in (Fig. 2b's grid, from ε = 0.001): every
    method sits at the random-subspace floor (K/D)·tr(A)/q_o, computed here from the centred
    digits with numpy (0.212; measured 0.205–0.220 at ε = 0.001)."""
    from sklearn.datasets import load_digits

    X = load_digits().data.astype(float)
    X -= X.mean(axis=0)
    eig = np.sort(np.linalg.eigvalsh(X.T @ X / len(X)))[::-1]
    k, d = 10, X.shape[1]
    floor = (k / d) * eig.sum() / eig[:k].sum()
    assert m["values"][0] <= 0.001
    top = m["q_nonprivate"][0]
    for key in ("cape", "pooled_ag", "conventional", "dpdispca", "local"):
        assert abs(m[f"q_{key}"][0] / top - floor) < 0.03, key


def _check_otd_sweep(name: str, m: dict, outputs: dict) -> None:
    """Spec §7.2's claims on the recovery error (lower is better):

    1. capeAGN ≤ conventional ≤ local up to Monte-Carlo ties (the paper notes STM points where
       conventional is marginally below capeAGN, and all private methods sit near the random
       level at tiny ε): at every value, a ≤ b + 0.01 + 4 standard errors of the difference of
       the means (from the trials, as independent samples). Measured worst: 0.87 SE above
       b + 0.01 (MOG, ε = 0.1, where conventional exceeded local by 0.083 at one seed — a
       fixed slack of 0.03 failed there).
    2. The gain is real: conventional exceeds capeAGN by ≥ 0.1 (MOG) or ≥ 0.03 (STM) somewhere
       (the paper's smallest gaps: MOG 0.13 at D = 10, N_s = 20k, ε = 0.5; STM 0.03; measured
       minima of the largest gap 0.17 and 0.07).
    3. Every private method's error falls from the first to the last value (ε or N_s;
       measured falls ≥ 0.08).
    4. capeAGN approaches non-private: its excess error at the last value is ≤ 0.1 of that at
       the first along ε (measured ≤ 0.033), ≤ 0.5 along N_s for MOG (measured ≤ 0.23). Along
       N_s for STM at ε = 0.1 with 5 trials the ratio scatters from 0.2 to 0.72 over the six
       seeds (a trend test over the trials is not significant at every seed), so only claim 3
       is asserted there (measured fall of capeAGN's error ≥ 0.08).
    """
    err = {k: np.array(m[f"error_{k}"]) for k in ("cape", "conventional", "local", "nonprivate")}
    trials = outputs["error_cape"].shape[1]
    if m["sweep"] == "epsilon" and m["values"][0] <= 0.001:
        # 5. (OTD-2) at ε = 0.001 every private method is at the random-vector level: not
        # below it by 4 standard errors of the difference (measured 0.92–1.04 of it)
        for k in ("cape", "conventional", "local"):
            se = np.sqrt((outputs[f"error_{k}"][0].var(ddof=1)
                          + outputs["error_random"][0].var(ddof=1)) / trials)
            assert err[k][0] >= m["error_random"][0] - 4 * se, k
    for a, b in (("cape", "conventional"), ("conventional", "local")):
        se = np.sqrt((outputs[f"error_{a}"].var(axis=1, ddof=1)
                      + outputs[f"error_{b}"].var(axis=1, ddof=1)) / trials)
        assert np.all(err[a] <= err[b] + 0.01 + 4 * se), (a, b)
    assert np.max(err["conventional"] - err["cape"]) >= (0.1 if "mog" in name else 0.03)
    if name == "cape_otd_stm_epsilon":
        # 6. (OTD-4) STM at D = 10: at the largest ε conventional is close to capeAGN — their
        # gap is at most a quarter of local's (measured 0.002 against 0.056). Not asserted at
        # D = 50, where the paper's own values (.046 / .072 / .11 at ε = 10) are not close
        # either (measured at one trial: 0.028 / 0.055 / 0.091)
        gap = abs(err["conventional"][-1] - err["cape"][-1])
        assert gap <= 0.25 * (err["local"][-1] - err["cape"][-1])
    if m["sweep"] == "delta":
        # Fig. 5 (OTD-3): the fall with δ at ε = 0.1 (paper: capeAGN .24 → .17) is within the
        # noise of 5 trials here (measured slope −0.016 per decade of δ, −1.1 SE), and so is
        # capeAGN's in the MOG panel at D = 50, ε = 2 (0.632 → 0.492, −1.4 SE; conventional
        # 0.868 → 0.708 at −6.1 SE), and so is the MOG panel at D = 10, ε = 0.1 with 10 trials
        # (0.700 → 0.592, −2.2 SE), so only the orderings above are asserted; the claims
        # table reports it as not reproduced
        return
    for k in ("cape", "conventional", "local"):
        assert err[k][-1] < err[k][0], k
    excess = err["cape"] - err["nonprivate"]
    if m["sweep"] == "epsilon":
        assert excess[-1] <= 0.1 * excess[0]
    elif "mog" in name:
        assert excess[-1] <= 0.5 * excess[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_paper_scenarios_reproduce_the_orderings(name: str, tmp_path: Path, shipped) -> None:
    """Seed 003 §6: capePCA ≈ pooled AG ≥ conventional ≥ local, capeAGN ≤ conventional ≤
    local, and the private methods approach non-private as ε or N_s grow."""
    if "digits" in name:
        pytest.importorskip("sklearn")
    run = shipped(name)
    assert run.write(tmp_path)
    m = run.report["metrics"]
    if name == "cape_mean":
        _check_cape_mean(m)
    elif "pca" in name:
        _check_pca_sweep(m, run.outputs)
        if name == "cape_pca_synthetic_epsilon":
            _check_synthetic_epsilon_floor_and_dpdispca(m, run.outputs)
        if name == "cape_pca_digits_epsilon":
            _check_digits_floor(m)
    else:
        _check_otd_sweep(name, m, run.outputs)


def _utility(m: dict, k: str) -> np.ndarray:
    """q/q_o rescaled so that the sweep's smallest ε (its floor) is 0 and q_o is 1."""
    q = np.array(m[f"q_{k}"]) / np.array(m["q_nonprivate"])
    return (q - q[0]) / (1.0 - q[0])


@pytest.mark.slow
def test_lower_dimensional_data_need_a_smaller_epsilon() -> None:
    """Spec §7.1 claim 3 (PCA-3), "lower-dimensional data need smaller ε for the same
    utility": the synthetic ε sweep at D = 50 (K = 12) against D = 200 (K = 50), same N_s, S,
    δ. Each method's utility, rescaled from its floor (ε = 0.001) to q_o, is ahead at D = 50
    by ≥ 0.1 at ε = 0.5 and 1 (measured gaps 0.2–0.8; trial sd ≤ 0.04 in these units) and
    never behind by more than 0.02 (both reach q_o at ε = 10)."""
    low = run_scenario(SCENARIOS / "cape_pca_synthetic_epsilon_d50.toml").report["metrics"]
    high = run_scenario(SCENARIOS / "cape_pca_synthetic_epsilon.toml").report["metrics"]
    assert low["values"] == high["values"]
    for k in ("cape", "conventional", "local"):
        u50, u200 = _utility(low, k), _utility(high, k)
        assert np.all(u50 >= u200 - 0.02), k
        for eps in (0.5, 1.0):
            i = low["values"].index(eps)
            assert u50[i] >= u200[i] + 0.1, (k, eps)


def _recovered(m: dict, k: str) -> dict[float, float]:
    """OTD utility by ε: 0 at the random vectors' error, 1 at the non-private one."""
    err, rnd, top = (np.array(m[f"error_{x}"]) for x in (k, "random", "nonprivate"))
    return dict(zip(m["values"], (rnd - err) / (rnd - top), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("model", ["mog", "stm"])
def test_lower_dimensional_tensors_need_a_smaller_epsilon(model: str, shipped) -> None:
    """Spec §7.2 with §7.1's claim 3 for capeAGN (Figs. 3–4 top, D = 10 against D = 50, same
    N_s, S, δ): each method's utility — 0 at the random vectors' error, 1 at non-private — is
    ahead at D = 10 by ≥ 0.2 at ε = 1 (measured, D = 50 at one trial: MOG 0.57–0.91 against
    0.26–0.51, STM 0.74–0.98 against 0.22–0.39; the paper's D = 50 MOG errors at ε = 1, .58 /
    .83 / .98, against D = 10's .11 / .17 / .34), and never behind by more than 0.05 from
    ε = 0.1 up."""
    low = shipped(f"cape_otd_{model}_epsilon").report["metrics"]
    high = shipped(f"cape_otd_{model}_epsilon_d50").report["metrics"]
    import tomllib

    dims = [tomllib.loads((SCENARIOS / f"{n}.toml").read_text())["data"]["cols"]
            for n in (f"cape_otd_{model}_epsilon", f"cape_otd_{model}_epsilon_d50")]
    assert dims == [10, 50]
    common = sorted(set(low["values"]) & set(high["values"]))
    assert 1.0 in common
    for k in ("cape", "conventional", "local"):
        u10, u50 = _recovered(low, k), _recovered(high, k)
        assert u10[1.0] >= u50[1.0] + 0.2, (k, u10, u50)
        for eps in common:
            if eps >= 0.1:
                assert u10[eps] >= u50[eps] - 0.05, (k, eps, u10, u50)
