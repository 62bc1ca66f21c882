"""DP-PD-NMF (thesis seed 001, §3.3, Fig. 3.7c) through the simulator: its audit, its scenario
keys, and the thesis's claim shape on ratings.

The audit's declared inputs of every SecureSum are what the parties put in: the noisy,
row-clipped statistics. The honest DP run must stay ``private`` with power; a planted bug (the
``raw`` SecureSum of :mod:`planted_runs`: one sweep's statistic sent unmasked) must be caught, and
the attack that bug allows — party 0 reads party 1's noisy statistic off the column-sum
message — recovers the recorded input exactly.
"""

from __future__ import annotations

import itertools
import math
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from algorithms.nmf import pd_nmf as pd_nmf_module
from algorithms.nmf.dp_pd_nmf import DpSettings
from algorithms.nmf.pd_nmf import normalize_rows, pd_nmf
from algorithms.nmf.rri_steps import RRIParams
from parties.party import site_parties
from protocols.errors import ScenarioError
from sim.claims.table import Runs
from sim.network import Network
from sim.privacy import audit
from sim.runner import run_scenario
from sim.simulation import Simulation

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "parties"))
import planted_runs as pr  # noqa: E402

P61 = 2**61 - 1
K, D, SWEEPS = 2, 6, 3
DP = DpSettings(epsilon=1.0, delta=0.01, clip=1.0)


def _program(dp: DpSettings):
    rng = np.random.default_rng(0)
    shards = [{"X": rng.random((8, D))} for _ in range(3)]
    T0 = normalize_rows(rng.random((K, D)))

    def program(ctx, X):
        return pd_nmf(ctx, X, K, sweeps=SWEEPS, params=RRIParams(), variant="prg", T0=T0,
                      dp=dp)

    return program, shards


def _audit(coalition, trials=48, dp=DP):
    program, shards = _program(dp)
    return audit(program, shards, coalition, prime=P61, frac_bits=24, trials=trials, seed=2)


def test_honest_dp_pd_nmf_is_private_on_its_noisy_inputs_with_power():
    result = _audit((0,))
    assert result.verdict == "private", result.details
    assert result.details["calls"] == K * SWEEPS
    # the noise comes from the parties' own coins, fixed across the audit's replays
    assert result.details["contexts"] == 1
    assert 0 < result.power["sup_cdf_distance"] < 1


def test_a_raw_sweep_in_dp_pd_nmf_is_caught_and_the_noisy_statistic_recovered(monkeypatch):
    leaky = pr.LeakySum("raw", K, sweep=1)
    monkeypatch.setattr(pd_nmf_module, "secure_sum", leaky.secure_sum)
    result = _audit((0,), trials=32)
    assert result.leaks, result.details
    assert result.call == leaky.first_call()
    # the attack: in the bugged call party 1's column sum is its encoded input itself
    program, shards = _program(DP)
    run = Simulation(Network.build(3), frac_bits=24, seed=5).run(site_parties(program, shards))
    view0, view1 = run.views[0], run.views[1]
    call = leaky.first_call()
    got = next(m.payload for m in view0.received
               if m.sender == 1 and m.call == call and m.step == "column_sum")
    truth = next(v for c, label, v in view1.protocol_inputs if c is not None and c.index == call)
    assert [int(v) for v in got] == [int(v) for v in truth]


@pytest.mark.parametrize("kind", pr.KINDS)
def test_every_planted_sweep_bug_is_caught_in_a_dp_run(kind, monkeypatch):
    """The noise does not hide a broken SecureSum: each of planted_runs' bugs is a leak."""
    leaky = pr.LeakySum(kind, K, sweep=1)
    monkeypatch.setattr(pd_nmf_module, "secure_sum", leaky.secure_sum)
    result = _audit((0,), trials=32)
    assert result.verdict == "leak" and result.call == leaky.first_call(), result.details


def test_dp_keys_are_validated_and_refused_with_secagg(tmp_path):
    spec = tomllib.loads((ROOT / "scenarios" / "pd_nmf_ratings.toml").read_text())
    spec["algorithm"]["dp_delta"] = 1.5
    with pytest.raises(ScenarioError, match="dp_delta"):
        run_scenario(spec)
    spec["algorithm"].update(dp_delta=0.01, dp_epsilon=1.0, secure_sum="secagg")
    with pytest.raises(ScenarioError, match="dp_epsilon"):
        run_scenario(spec)


def test_dp_scenario_keys_reach_the_run():
    spec = tomllib.loads((ROOT / "scenarios" / "pd_nmf_ratings.toml").read_text())
    spec["algorithm"].update(iterations=2, dp_epsilon=2.0, dp_clip=3.0)
    metrics = run_scenario(spec).report["metrics"]
    expected = 3.0 * math.sqrt(2 * math.log(1.25 / 0.01)) / 2.0
    assert metrics["dp_noise_std_total"] == pytest.approx(expected, rel=1e-12)
    assert metrics["dp_noise_std_per_party"] == pytest.approx(expected / 2.0, rel=1e-12)  # M = 4


# ------------------------------------------------------------------------------------------
# the thesis's claim shape (Fig. 3.7c): the DP model's RMSE climbs to random guessing
# ------------------------------------------------------------------------------------------

SEEDS = (21, 22, 23)
EPSILONS = (None, 10.0, 1.0, 0.3)


@pytest.mark.slow
def test_dp_pd_nmf_rmse_climbs_to_random_guessing_as_epsilon_shrinks():
    """Over three data sets: the mean held-out RMSE of the global model rises as ε falls; at
    ε = 10 it is still far below random guessing's (closed form, per party) and the parties
    gain from joining; at ε ≤ 1 (per SecureSum, δ = 0.01, k = 7) it is at least random
    guessing's — the thesis finds it "only slightly better"; here it is worse."""
    runs = Runs()
    rmse, rand, uplift = {}, {}, {}
    for eps in EPSILONS:
        per_seed = [runs.metrics("pd_nmf_dp_ratings", drop_audits=True, seed=s, dp_epsilon=eps)
                    for s in SEEDS]
        rmse[eps] = np.array([np.mean([p["error_global"] for p in m["parties"]])
                              for m in per_seed])
        rand[eps] = np.array([np.mean([p["error_random"] for p in m["parties"]])
                              for m in per_seed])
        uplift[eps] = np.array([m["mean_uplift_pct"] for m in per_seed])
    means = [rmse[e].mean() for e in EPSILONS]
    spread = max(rmse[e].std(ddof=1) for e in EPSILONS)
    assert all(b > a - 2 * spread for a, b in itertools.pairwise(means)), means
    assert means[0] < means[1] < means[2], means
    assert np.all(rmse[10.0] < 0.8 * rand[10.0]) and np.all(uplift[10.0] > 0)
    for eps in (1.0, 0.3):
        assert np.all(rmse[eps] > 0.95 * rand[eps]), (eps, rmse[eps], rand[eps])
        assert np.all(uplift[eps] < uplift[10.0])


@pytest.mark.slow
def test_a_ridge_at_the_noise_level_takes_dp_pd_nmf_below_random_guessing():
    """Fig. 3.7c at ε = 1 under the reading that adds a ridge of 3σ on T
    (``scenarios/pd_nmf_dp_ratings_ridge.toml``: post-processing of the released sums, so the
    same (ε, δ) per release). Without it a column's noisy curvature Σ W² lands near 0 in some
    release, T_tj shoots off and the clipped predictions sit at the ends of the rating range:
    RMSE 1.81–1.92 against random guessing's 1.40–1.41 (seeds 21–23), and neither a total
    budget (basic or advanced composition over the 70 releases: 1.95–2.00) nor another C (0.1
    to 30: 1.79–1.97) changes that (benchmarks/dp_pd_nmf_readings.py). With the ridge at 3σ:
    0.95–0.97 at seeds 21–23, below the local models' 1.10–1.12 — better than the thesis's
    "slightly better than random". Asserted at every seed: the ridge run's mean held-out RMSE
    is below random guessing's (closed form, per party) by more than a tenth of it, and below
    the ridge-free run's."""
    runs = Runs()
    for seed in SEEDS:
        ridge = runs.metrics("pd_nmf_dp_ratings_ridge", drop_audits=True, seed=seed)["parties"]
        plain = runs.metrics("pd_nmf_dp_ratings", drop_audits=True, seed=seed)["parties"]
        rmse = np.mean([p["error_global"] for p in ridge])
        rand = np.mean([p["error_random"] for p in ridge])
        assert rmse < 0.9 * rand, (seed, rmse, rand)
        assert rmse < np.mean([p["error_global"] for p in plain]), seed
