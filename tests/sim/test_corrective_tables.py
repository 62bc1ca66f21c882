"""Tests of sim.experiments.nmf.corrective_nmf_tables: seed 002's Tables 1–2 under its protocol.

The metrics are checked against hand computations; the orderings against the paper's Tables 1–2
(digest §3.6) — only those that hold on ML-1M-shaped synthetic ratings for every seed tried
(the module docstring reports the ones that do not). The fast test runs a small grid; the slow
one runs the shipped scenarios and checks the orderings both on the means and repetition by
repetition.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path

import numpy as np
import pytest

from protocols.errors import InputError
from sim.experiments.nmf.corrective_nmf_tables import (
    METHODS,
    mean_prediction_shift,
    normalised_mae,
)
from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
IM, RM, IC, RC, RCN = (m.label for m in METHODS)


def test_metrics_follow_the_paper() -> None:
    test = np.array([[5.0, np.nan], [np.nan, 1.0]])
    WH = np.array([[4.0, 9.0], [0.0, 2.5]])
    assert normalised_mae(test, WH) == pytest.approx((1.0 + 1.5) / 2 / 5)
    clean, attacked = np.array([4.0, 3.0, 5.0]), np.array([3.5, 3.25, 5.0])
    assert mean_prediction_shift(clean, attacked) == pytest.approx(0.75 / 3)
    assert mean_prediction_shift(clean, attacked, signed=True) == pytest.approx(-0.25 / 3)


def small(seed: int = 2, **algorithm) -> dict:
    return {
        "seed": seed,
        "network": {"parties": 2},
        "data": {"source": "synthetic", "kind": "movielens", "rows": 400, "cols": 200,
                 "k": 10, "density": 0.15},
        "algorithm": {"name": "corrective_nmf_comparison", "k": 10, "iterations": 40,
                      "repetitions": 2, "corrupt_probability": 0.05, "noise_sd": 0.9,
                      **algorithm},
        "attack": {"fake_users": 5, "party": 1},
    }


def means(metrics: dict, model: str, key: str) -> dict[str, float]:
    table = metrics["table1" if model in ("model 1", "model 2") else "table2"][model]
    return {label: row[key] for label, row in table.items()}


def test_small_grid_keeps_the_orderings_that_hold() -> None:
    """A representative 400 × 200 grid (k = 10, 2 repetitions): the orderings seen for every
    seed tried at this size (0–7) — replace-missing beats ignore-missing without noise,
    ignore-corrupt matches it, and under random flips replace-corrupt < replace-missing <
    ignore-missing; under both attacks ignore-corrupt and replace-missing shift the target less
    than ignore-missing, and under the informed attack ignore-corrupt < replace-missing.

    Worst ratios over those seeds: without noise replace-missing / ignore-missing 0.954 and
    |ignore-corrupt − ignore-missing| 1.3 % of it (the bound is 3 %); with flips
    replace-corrupt / replace-missing 0.993, replace-missing / ignore-missing 0.916; shifts:
    ignore-corrupt / ignore-missing 0.78 (Model 3) and 0.31 (Model 4), replace-missing /
    ignore-missing 0.74 and 0.95, ignore-corrupt / replace-missing (Model 4) 0.43. Not
    asserted: ignore-corrupt < replace-missing under Model 3, which fails at seeds 1 and 6
    (1.17, 1.11) at this size."""
    run = run_scenario(small())
    m = run.report["metrics"]
    assert list(means(m, "model 1", "normalised_mae")) == [IM, RM, IC, RC, RCN]
    m1 = means(m, "model 1", "normalised_mae")
    assert m1[RM] < m1[IM] and abs(m1[IC] - m1[IM]) < 0.03 * m1[IM]
    m2 = means(m, "model 2", "normalised_mae")
    assert m2[RC] < m2[RM] < m2[IM] and m2[IC] < m2[IM]
    for model in ("model 3", "model 4"):
        shift = means(m, model, "prediction_shift")
        assert shift[IC] < shift[IM] and shift[RM] < shift[IM], (model, shift)
        if model == "model 4":
            assert shift[IC] < shift[RM], shift
        signed = means(m, model, "signed_prediction_shift")
        assert signed[IM] < 0  # the nuke attack pushes the target down
        marked = means(m, model, "adversarial_marked")
        assert marked[IM] == marked[RM] == 0.0 and marked[IC] > 0
    # both plots are written; every repetition is in the report
    assert set(run.run.plots) == {"table1", "table2"}
    assert len(m["per_repetition"]) == 2
    assert all(rep["target"] for rep in m["per_repetition"])


def test_same_seed_same_tables_and_one_table_only() -> None:
    a = run_scenario(small(seed=3, repetitions=1, iterations=5, table="1"))
    b = run_scenario(small(seed=3, repetitions=1, iterations=5, table="1"))
    for model in ("model 1", "model 2"):
        assert means(a.report["metrics"], model, "normalised_mae") == means(
            b.report["metrics"], model, "normalised_mae")
    np.testing.assert_array_equal(a.outputs["normalised_mae_model1"],
                                  b.outputs["normalised_mae_model1"])
    assert "table2" not in a.report["metrics"] and set(a.run.plots) == {"table1"}


@pytest.mark.parametrize(("change", "needle"), [
    ({"attack": {"model": "informed", "fake_users": 5}}, "both Models 3 and 4"),
    ({"attack": None}, "add an [attack] table"),
    ({"attack": {"fake_users": 500, "party": 1}}, "only 200 users"),
    ({"attack": {"fake_users": 5, "target_items": [201]}}, "unknown item"),
    ({"attack": {"fake_users": 5, "party": 2}}, "does not exist"),
    ({"algorithm": {"replace_base": "cumulative"}}, "replace_base"),
    ({"algorithm": {"fill": "twice"}}, "fill"),
    ({"algorithm": {"budget": "wall"}}, "budget"),
    ({"attack": {"fake_users": 5, "target_top_fraction": 0}}, "target_top_fraction"),
    ({"algorithm": {"table": "3"}}, "table"),
    ({"algorithm": {"k": 201}}, "algorithm.k = 201 must be ≤ min(users, items) = 200"),
])
def test_bad_comparison_input(change: dict, needle: str) -> None:
    scenario = small(iterations=2, repetitions=1)
    if "attack" in change:
        if change["attack"] is None:
            del scenario["attack"]
        else:
            scenario["attack"] = change["attack"]
    scenario["algorithm"].update(change.get("algorithm", {}))
    with pytest.raises(InputError, match=re.escape(needle)):
        run_scenario(scenario)


def _per_rep(metrics: dict, model: str, key: str) -> dict[str, np.ndarray]:
    reps = metrics["per_repetition"]
    return {label: np.array([r[model][label][key] for r in reps]) for label in (IM, RM, IC, RC,
                                                                               RCN)}


@pytest.mark.slow
def test_table1_orderings_on_the_shipped_scenario(tmp_path: Path) -> None:
    """Table 1 at 1,000 × 500, k = 20, 5 repetitions: replace-missing and replace-corrupt beat
    ignore-missing in every repetition; ignore-corrupt matches ignore-missing without noise;
    with flips replace-corrupt (both forms) < replace-missing < ignore-corrupt < ignore-missing.
    Every comparison holds in every repetition at seeds 2 (shipped), 3 and 4; at 3 and 4 the
    closest, replace-corrupt / replace-missing with flips, is at most 0.986, and the tie
    without noise is within 0.1 %."""
    run = run_scenario(SCENARIOS / "corrective_nmf_table1.toml")
    assert (tmp_path / "out" / "table1.png") in run.write(tmp_path / "out")
    m = run.report["metrics"]
    m1 = _per_rep(m, "model 1", "normalised_mae")
    assert np.all(m1[RM] < m1[IM]) and np.all(m1[RC] < m1[IM])
    assert np.all(np.abs(m1[IC] - m1[IM]) < 0.01 * m1[IM])
    assert np.all(np.abs(m1[RC] - m1[RM]) < 0.005 * m1[RM])  # a tie, not the paper's 4.5 %
    m2 = _per_rep(m, "model 2", "normalised_mae")
    assert np.all(m2[RC] < m2[RM]) and np.all(m2[RCN] < m2[RM])
    assert np.all(m2[RM] < m2[IC]) and np.all(m2[IC] < m2[IM])


@pytest.mark.slow
def test_table2_orderings_on_the_shipped_scenario(tmp_path: Path) -> None:
    """Table 2 at 1,000 × 500, k = 20, 10 adversaries, 5 repetitions: ignore-corrupt <
    replace-missing < ignore-missing on the means for both attacks, ignore-corrupt below
    ignore-missing in every repetition, and below replace-missing in every repetition of the
    informed attack. These hold at seeds 2 (shipped), 3 and 4; at 3 and 4 the worst
    repetition's ignore-corrupt / ignore-missing ratio is 0.62 (Model 3) and 0.28 (Model 4),
    ignore-corrupt / replace-missing under Model 4 0.34. Replace-missing < ignore-missing
    holds on the means (the paper's claim; at worst 0.84 of it) but not in every repetition:
    at seed 3 one Model 4 repetition is 0.8 % the other way."""
    run = run_scenario(SCENARIOS / "corrective_nmf_table2.toml")
    assert (tmp_path / "out" / "table2.png") in run.write(tmp_path / "out")
    m = run.report["metrics"]
    for model in ("model 3", "model 4"):
        mean = means(m, model, "prediction_shift")
        assert mean[IC] < mean[RM] < mean[IM], (model, mean)
        reps = _per_rep(m, model, "prediction_shift")
        assert np.all(reps[IC] < reps[IM]), (model, reps)
    reps4 = _per_rep(m, "model 4", "prediction_shift")
    assert np.all(reps4[IC] < reps4[RM])


TABLE1_TOML = """\
seed = 4
[network]
parties = 2
[data]
source = "synthetic"
kind = "movielens"
rows = 120
cols = 60
k = 4
density = 0.3
[algorithm]
name = "corrective_nmf_comparison"
table = "1"
k = 4
iterations = 10
repetitions = 2
lam = 3.0
"""


def test_cli_writes_table1_and_refuses_a_model_key(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from sim.cli import main

    path = tmp_path / "t1.toml"
    path.write_text(TABLE1_TOML)
    assert main(["run", str(path), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    out, _ = capsys.readouterr()
    assert "Table 1: normalised MAE" in out and "replace-corrupt, no interpolation" in out
    assert (tmp_path / "out" / "table1.png").read_bytes()[:4] == b"\x89PNG"
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    t1 = rep["metrics"]["table1"]
    assert set(t1) == {"model 1", "model 2"} and len(t1["model 1"]) == 5
    assert rep["metrics"]["lam"] == 3.0
    bad = tmp_path / "bad.toml"
    bad.write_text(TABLE1_TOML.replace('table = "1"', 'table = "2"')
                   + '[attack]\nmodel = "informed"\nfake_users = 3\n')
    assert main(["run", str(bad), "--out", str(tmp_path / "bad_out")]) == 2
    _, err = capsys.readouterr()
    assert err.startswith("error: ") and "attack" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "bad_out").exists()


def test_time_budget_gives_every_method_the_same_modelled_time() -> None:
    """``budget = "time"``: each method runs the iterations that fit the costliest method's
    budget in modelled operations, so any two methods' modelled times lie within one
    iteration's cost of each other; the masked methods (Z = 0 off the observed entries) get
    about 1/density as many iterations as the dense ones. The default budget runs
    ``iterations`` everywhere."""
    from algorithms.nmf.corrective_cost import iteration_flops
    from sim.experiments.nmf.corrective_nmf_tables import settings_of

    spec = small(iterations=4, repetitions=1, budget="time", table="1")
    m = run_scenario(spec).report["metrics"]
    its = m["iterations_by_method"]
    assert m["budget"] == "time" and its[RM] == its[RC] == its[RCN] == 4
    row = m["per_repetition"][0]["model 1"]
    assert {label: row[label]["iterations"] for label in its} == its
    n, cols, k, observed = 400, 200, 10, row[IM]["observed"]
    assert 0.1 * n * cols < observed < 0.2 * n * cols  # the training set, 15 % dense
    # the modelled cost of one iteration, written out (module docstring of corrective_cost)
    dense = 12 * n * cols * k + 2 * n * cols + 3 * k * (n + cols)
    masked = 12 * observed * k + 2 * observed + 3 * k * (n + cols)
    assert its[IM] == 4 * (dense + 3 * observed) // masked
    assert its[IC] == 4 * (dense + 3 * observed) // (masked + 3 * observed)
    from sim.experiments.nmf.corrective_nmf_tables import METHODS as rows
    from sim.experiments.nmf.corrective_nmf_tables import Protocol
    protocol = Protocol(k=k, iterations=4, lam=1.0, holdout=0.1, flip_probability=0.1,
                        attackers=0, target_cols=None, target_min_mean=3.5, target_top=0.1,
                        rating=1.0,
                        filler=19, budget="time")
    cost = {r.label: iteration_flops(settings_of(r, protocol), n, cols, k, observed)
            for r in rows}
    spent = {label: its[label] * cost[label] for label in cost}
    for a, b in itertools.combinations(cost, 2):
        assert abs(spent[a] - spent[b]) <= max(cost[a], cost[b]), (a, b, spent)
    default = run_scenario(small(iterations=4, repetitions=1, table="1")).report["metrics"]
    assert default["iterations_by_method"] == dict.fromkeys(cost, 4)
    # the estimate before the run counts the iterations the budget gives (at [data] density)
    from sim.runner import plan_scenario
    planned = {budget: plan_scenario(small(iterations=4, repetitions=1, table="1",
                                           budget=budget)).estimate for budget in
               ("iterations", "time")}
    assert "4 iterations on average" in planned["iterations"].basis
    average = int(planned["time"].basis.split(", ")[1].split()[0])
    assert 2 * 4 < average and planned["time"].seconds > planned["iterations"].seconds


@pytest.mark.slow
def test_table2_replace_corrupt_does_not_collapse_under_the_literal_fill() -> None:
    """Step 4 read literally (``fill = "once"``: the missing entries, the adversaries'
    included, are set to WH once and then marked and replaced as data) does not bring back
    the paper's collapse of replace-corrupt (0.621 / 0.159 against 0.042 / 0.050 for
    replace-missing): at the shipped scenario, 3 repetitions, both replace-corrupt rows stay
    below replace-missing in every repetition of both attacks (measured: 0.0325 / 0.0318
    against 0.0557 / 0.0744 on the means, the closest repetition 0.78 of replace-missing)."""
    spec = tomllib.loads((SCENARIOS / "corrective_nmf_table2.toml").read_text())
    spec["algorithm"].update(fill="once", repetitions=3)
    m = run_scenario(spec).report["metrics"]
    assert m["fill"] == "once"
    for model in ("model 3", "model 4"):
        reps = _per_rep(m, model, "prediction_shift")
        assert np.all(reps[RC] < reps[RM]) and np.all(reps[RCN] < reps[RM]), (model, reps)


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [{"replace_base": "running"},
                                       {"replace_base": "running", "fill": "once"}],
                         ids=["running", "running_once"])
def test_table2_replace_corrupt_does_not_collapse_when_step_3_overwrites_v(
        overrides: dict) -> None:
    """Step 3 read as overwriting V itself (``replace_base = "running"``: the interpolation
    compounds from the last iteration's V̄, not from the original V), alone and with the
    literal fill of step 4, 3 repetitions: both replace-corrupt rows stay below
    replace-missing on the means of both attacks — no collapse. Measured (benchmarks/
    corrective_readings.py --repetitions 3 running once_running; Models 3 / 4): replace-corrupt
    0.0433 / 0.0537 and 0.0332 / 0.0323, without interpolation 0.0176 / 0.0195 and 0.0209 /
    0.0195, against replace-missing's 0.0557 / 0.0744."""
    spec = tomllib.loads((SCENARIOS / "corrective_nmf_table2.toml").read_text())
    spec["algorithm"].update(repetitions=3, **overrides)
    m = run_scenario(spec).report["metrics"]
    for model in ("model 3", "model 4"):
        mean = means(m, model, "prediction_shift")
        assert mean[RC] < mean[RM] and mean[RCN] < mean[RM], (model, mean)


@pytest.mark.slow
def test_table2_replace_corrupt_does_not_collapse_with_a_target_among_all_movies() -> None:
    """The target drawn among every movie, of any mean rating (``target_top_fraction = 1``,
    ``target_min_mean = 0``), 3 repetitions: every shift grows, but replace-corrupt's stays
    below twice the worse baseline's in both attacks — C18c's criterion for a collapse (the
    paper: 10.0 and 1.9 times). Measured by benchmarks/corrective_readings.py: replace-corrupt
    0.121 / 0.180 against replace-missing's 0.120 / 0.186 (Models 3 / 4), a tie."""
    spec = tomllib.loads((SCENARIOS / "corrective_nmf_table2.toml").read_text())
    spec["algorithm"]["repetitions"] = 3
    spec["attack"].update(target_top_fraction=1.0, target_min_mean=0.0)
    m = run_scenario(spec).report["metrics"]
    for model in ("model 3", "model 4"):
        mean = means(m, model, "prediction_shift")
        assert mean[RC] < 2 * max(mean[IM], mean[RM]), (model, mean)


@pytest.mark.slow
def test_table2_under_the_same_time_budget_the_ignore_rows_overfit() -> None:
    """The paper's same running time for every method (``budget = "time"``, modelled from
    operation counts) at the shipped scenario, 3 repetitions: the masked (ignore-missing) rows
    get several times the iterations of the dense ones and over-fit the sparse ratings, so
    the collapse of replace-corrupt the paper reports does not appear and ignore-corrupt is
    not the best row either. Measured (benchmarks/corrective_readings.py time, means of
    Models 3 / 4): ignore-missing 0.223 / 0.249 and ignore-corrupt 0.181 / 0.085 after 385 /
    380 iterations, against replace-missing 0.056 / 0.074, replace-corrupt 0.042 / 0.051 and
    its no-interpolation form 0.013 / 0.011 after 50."""
    spec = tomllib.loads((SCENARIOS / "corrective_nmf_table2.toml").read_text())
    spec["algorithm"].update(budget="time", repetitions=3)
    m = run_scenario(spec).report["metrics"]
    its = m["iterations_by_method"]
    assert m["budget"] == "time" and its[RM] == its[RC] == its[RCN] == 50
    assert its[IM] > 5 * its[RM] and its[IC] > 5 * its[RM], its
    for model in ("model 3", "model 4"):
        mean = means(m, model, "prediction_shift")
        assert mean[RC] < mean[RM] and mean[RCN] < mean[RM], (model, mean)  # no collapse
        assert mean[IM] > 2 * mean[RM], (model, mean)  # the ignore rows over-fit
        assert min(mean, key=mean.get) == RCN, (model, mean)


def test_targets_are_drawn_among_the_most_rated_fraction() -> None:
    """``[attack] target_top_fraction``: the default draws among the most-rated tenth of the
    items; 1 among every item (here: counts 1..100 per column, all rated 4 stars)."""
    from sim.experiments.nmf.corrective_nmf_tables import draw_targets

    train = np.full((100, 100), np.nan)
    for j in range(100):
        train[: j + 1, j] = 4.0  # column j has j + 1 ratings
    rng = np.random.default_rng(5)
    tenth = {int(draw_targets(train, rng)[0]) for _ in range(200)}
    assert tenth <= set(range(90, 100)) and len(tenth) > 5
    every = {int(draw_targets(train, rng, top_fraction=1.0)[0]) for _ in range(400)}
    assert min(every) < 50 and len(every) > 80
