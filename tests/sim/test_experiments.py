"""The experiment scenarios of issue 3: the initialisation comparison and learning uplift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def init_comparison(tmp: Path) -> dict:
    return {
        "seed": 4,
        "network": {"parties": 3, "sealing": False},
        "data": {"source": "synthetic", "kind": "topics", "rows": 150, "cols": 40, "k": 3,
                 "doc_length": 30, "alpha": 0.3},
        "algorithm": {"name": "pd_nmf_init_comparison", "k": 3, "iterations": 4,
                      "form": "plain", "trials": 2},
    }


def test_init_comparison_curves_plot_and_ranking(tmp_path: Path) -> None:
    run = run_scenario(init_comparison(tmp_path))
    curves = run.outputs
    assert sorted(curves) == ["objective_nndsvd", "objective_pd_nmf_init", "objective_random",
                              "objective_random_2x"]
    assert curves["objective_random"].shape == (2, 4)
    assert curves["objective_random_2x"].shape == (2, 8)  # twice the sweeps
    # plain RRI without regularisers is exact block coordinate descent: never increases
    for h in curves.values():
        assert np.all(np.diff(h, axis=1) <= 1e-9 * np.abs(h[:, :-1]))
    # nndsvd is deterministic, so its trials coincide; random starts differ between trials
    np.testing.assert_array_equal(curves["objective_nndsvd"][0], curves["objective_nndsvd"][1])
    assert not np.array_equal(curves["objective_random"][0], curves["objective_random"][1])
    # random_2x's first sweeps are the random run's (same T0 in the same trial)
    np.testing.assert_allclose(curves["objective_random_2x"][:, :4], curves["objective_random"])
    metrics = run.report["metrics"]
    assert sorted(metrics["ranking_at_iterations"]) == sorted(["random", "random_2x", "nndsvd",
                                                               "pd_nmf_init"])
    written = run.write(tmp_path / "out")
    png = tmp_path / "out" / "init_comparison.png"
    assert png in written and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert run.report["communication"]["per_phase"]["init"]["messages"] > 0


@pytest.mark.slow  # 11 s: the topic corpus at full size
def test_uplift_topic_scenario_reproduces_the_thesis_trend(tmp_path: Path) -> None:
    """Thesis §3.3.1 (Fig. 3.7a): every party gains from the global topics, the smallest most.

    The figure is a trend over data sets, not a property of one draw: PD-NMF-Init sometimes
    ends in a poor local optimum (the module docstring of ``algorithms.nmf.pd_nmf``: 8 of 10
    trials recovered every planted topic). Measured on this scenario, seeds 0–14: 14 of 15
    show the whole trend (smallest party +7.5 to +25 %, largest +0.2 to +0.6 %); at the
    scenario's seed 5 the global model is that optimum — uplifts +13.4, −10.7, −8.1, −7.2,
    −10.4 %, while a random or NNDSVD start on the same data gives +15.4 … +0.24 %. One
    failure in five seeds moves a mean by several points, so the trend is asserted on the
    median over seeds 5–9 (the scenario's and the next four), with at most one seed off it."""
    runs = [run_scenario(SCENARIOS / "pd_nmf_uplift_topics.toml", seed=s) for s in range(5, 10)]
    sizes = [q["train_rows"] for q in runs[0].report["metrics"]["parties"]]
    uplift = np.array([[q["uplift_pct"] for q in run.report["metrics"]["parties"]]
                       for run in runs])  # (seeds, parties)
    median = np.median(uplift, axis=0)
    assert np.all(median > 0)
    assert int(np.argmax(median)) == int(np.argmin(sizes))
    trend = [bool(np.all(u > 0) and int(np.argmax(u)) == int(np.argmin(sizes))) for u in uplift]
    assert sum(trend) >= len(runs) - 1
    for run in runs:  # the uplift is the relative decrease of the held-out error
        for q in run.report["metrics"]["parties"]:
            assert q["uplift_pct"] == 100 * (q["error_local"] - q["error_global"]) / q[
                "error_local"]
    written = runs[0].write(tmp_path / "out")
    assert (tmp_path / "out" / "uplift.png") in written


def test_uplift_on_ratings_uses_the_rmse(tmp_path: Path) -> None:
    scenario = {
        "seed": 8,
        "network": {"parties": 3, "sealing": False},
        "data": {"source": "synthetic", "kind": "ratings", "rows": 150, "cols": 40, "k": 3,
                 "density": 0.3, "partition": [20, 50, 80]},
        "algorithm": {"name": "pd_nmf_uplift", "k": 3, "iterations": 15, "form": "plain",
                      "init": "random", "holdout": 0.2, "local_restarts": 2},
    }
    run = run_scenario(scenario)
    metrics = run.report["metrics"]
    assert metrics["measure"] == "held-out RMSE"
    for q in metrics["parties"]:
        # predictions are clipped to the party's rating range, so an RMSE on 1..5 stars is < 4
        assert 0 < q["error_global"] < 4 and 0 < q["error_local"] < 4
    assert run.outputs["uplift_pct"].shape == (3,)


def test_init_comparison_takes_pd_svds_start_and_it_is_nndsvd_of_the_pooled_rows() -> None:
    """``inits = [..., "pd_svd"]``: the thesis's PD-SVD line (nndsvd from PD-SVD's factors)."""
    spec = init_comparison(Path())
    spec["algorithm"].update(inits=["nndsvd", "pd_svd"], trials=2, svd_iterations=60)
    curves = run_scenario(spec).outputs
    assert sorted(curves) == ["objective_nndsvd", "objective_pd_svd"]
    # PD-SVD's converged V_k and U^(m) give nndsvd's start up to the power iteration's error,
    # so both curves agree closely with the centralized nndsvd from sweep 1 on
    np.testing.assert_allclose(curves["objective_pd_svd"], curves["objective_nndsvd"],
                               rtol=1e-3)



@pytest.mark.slow
def test_uplift_ratings_scenario_reproduces_the_thesis_trend() -> None:
    """Thesis §3.3.1 (Fig. 3.7b, claim C11): on ratings the gain falls as the party grows.

    Asserted on the mean over seeds 8–11 (the scenario's and the next three), not on one
    draw. Measured, seeds 0–11: the four smaller parties gain 47–60 % (30 users), 43–54 %,
    32–47 % and 23–39 % (300 users) in every seed; the party holding half the users (600)
    gains −9.0 to +6.1 %, mean −0.9 %, standard deviation 4.9 — about nothing, as under the
    spawn-key streams before (seeds 0–8: −11.3 to +7.6 %, mean 0.0; the scenario's seed 8
    gave +7.6 % there and −5.5 % now). So every party but the largest gains, and the largest
    party's mean gain is within 3 standard errors (3 · 4.9 / √4) of zero: the thesis's
    "every party gains" is not reproduced for a party holding half the data at this scale."""
    runs = [run_scenario(SCENARIOS / "pd_nmf_uplift_ratings.toml", seed=s) for s in range(8, 12)]
    order = np.argsort([q["train_rows"] for q in runs[0].report["metrics"]["parties"]])
    uplift = np.array([[q["uplift_pct"] for q in run.report["metrics"]["parties"]]
                       for run in runs])[:, order]  # (seeds, parties by size)
    mean = uplift.mean(axis=0)
    assert np.all(uplift[:, :-1] > 0)
    assert np.all(np.diff(mean) < 0)  # strictly largest for the smallest party, and so on
    assert abs(mean[-1]) < 3 * 4.9 / np.sqrt(len(runs))
    for run in runs:
        for q in run.report["metrics"]["parties"]:
            assert q["uplift_pct"] == 100 * (q["error_local"] - q["error_global"]) / q[
                "error_local"]

def _final(metrics: dict, init: str) -> tuple[float, float]:
    return metrics[f"final_objective_{init}"], metrics[f"final_objective_sem_{init}"]


@pytest.mark.slow
def test_init_ranking_of_the_thesis_on_the_comparison_scenarios() -> None:
    """Claim C12 (thesis §2.4) on the two comparison scenarios, 10 trials each.

    Asserted where the means are ≥ 2 standard errors apart: topic modelling — WR-NMF
    (``pd_nmf_init``) ends below ``random``, and within 2 standard errors of the centralized
    ``nndsvd``; recommender, k = 5 — ``random_2x`` ends below every other start. Measured on
    topics (k = 10, seed 2, the HKDF seed streams): nndsvd 21.155, WR-NMF 21.196 ± 0.042,
    random_2x 21.228 ± 0.052, PD-SVD 21.39 ± 0.09, random 21.49 ± 0.11. Not asserted: WR-NMF
    below ``random_2x`` (0.6 standard errors apart) or below ``nndsvd`` (1 standard error
    above it; it was below under the earlier seed streams) — the thesis runs k = 5 and 50.
    """
    topics = run_scenario(SCENARIOS / "pd_nmf_init_comparison.toml").report["metrics"]
    wr, wr_sem = _final(topics, "pd_nmf_init")
    assert wr + 2 * wr_sem < _final(topics, "random")[0]
    assert abs(wr - _final(topics, "nndsvd")[0]) < 2 * wr_sem
    ratings = run_scenario(SCENARIOS / "pd_nmf_init_comparison_ratings.toml").report["metrics"]
    best, best_sem = _final(ratings, "random_2x")
    for other in ("random", "nndsvd", "pd_nmf_init"):
        value, sem = _final(ratings, other)
        assert best + 2 * max(best_sem, sem) < value


@pytest.mark.slow
def test_ratings_uplift_falls_with_party_size_in_every_repetition() -> None:
    """Thesis Fig. 3.7b: the trend over five repetitions (seeds 8–12: new ratings, splits and
    starts each), with the global model trained to convergence (150 sweeps; at the scenario's
    40 the party holding half the users loses in some seeds, see
    tests/sim/test_uplift_effect_of_k.py). Measured, smallest → largest party: seed 8: 58.8,
    57.0, 42.8, 38.9, 6.1 %; 9: 54.4, 52.0, 48.0, 39.4, 14.8; 10: 51.4, 56.7, 44.2, 31.7, 4.8;
    11: 51.2, 54.1, 41.1, 40.4, 9.6; 12: 60.2, 49.5, 42.3, 30.9, 5.7. Asserted in every one:
    every party gains; the gain falls strictly from the second-smallest party on; the two
    smallest gain more than any larger party (their order is within the spread); the smallest
    gains over three times what the largest does."""
    import itertools
    import tomllib

    spec = tomllib.loads((SCENARIOS / "pd_nmf_uplift_ratings.toml").read_text())
    spec["algorithm"]["iterations"] = 150
    for seed in (8, 9, 10, 11, 12):
        spec["seed"] = seed
        parties = run_scenario(spec).report["metrics"]["parties"]
        by_size = [q["uplift_pct"] for q in sorted(parties, key=lambda q: q["train_rows"])]
        assert all(u > 0 for u in by_size), seed
        assert all(a > b for a, b in itertools.pairwise(by_size[1:])), (seed, by_size)
        assert min(by_size[:2]) > max(by_size[2:]), (seed, by_size)
        assert by_size[0] > 3 * by_size[-1], (seed, by_size)
