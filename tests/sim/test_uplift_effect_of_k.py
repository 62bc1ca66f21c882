"""Claim C11 (thesis §3.3.1, Fig. 3.7a–b): the learning uplift by party size, with the global
model trained to convergence, and the effect of k.

The thesis: "parties of all sizes have something to gain from cooperative distributed
learning, but small parties (with the least local data) stand to gain the most. We also
observe that simpler models, with smaller k, see lesser uplift from using more data compared
to more complex model, with larger k."

Uplift is computed here from the scenario's own reported errors (the relative decrease of
the held-out error), and averaged over data sets (seeds) so that one draw decides nothing.
"""

from __future__ import annotations

import functools
import tomllib
from pathlib import Path

import numpy as np
import pytest

from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

RATINGS_SEEDS = (8, 9, 10, 11)
"""The scenario's seed and the next three (as the 40-sweep test of C11 uses)."""
CONVERGED_SWEEPS = 150
"""Sweeps of the global PD-NMF that bring it to where the parties' local models stop (their
relative change below 10^−4, best of three starts): the scenario's 40 sweeps from a random
start do not."""


@functools.cache
def uplift_by_size(name: str, seeds: tuple[int, ...], **algorithm: object) -> np.ndarray:
    """(seeds, parties by size) uplift in %, computed from each party's two errors (cached:
    both tests read the converged k = 5 runs)."""
    spec = tomllib.loads((SCENARIOS / f"{name}.toml").read_text())
    spec["algorithm"].update(algorithm)
    rows = []
    for seed in seeds:
        spec["seed"] = seed
        parties = sorted(run_scenario(spec).report["metrics"]["parties"],
                         key=lambda q: q["train_rows"])
        rows.append([100 * (q["error_local"] - q["error_global"]) / q["error_local"]
                     for q in parties])
    return np.array(rows)


@pytest.mark.slow
def test_every_party_gains_once_the_global_model_is_trained_as_long_as_the_local_ones():
    """Ratings (Fig. 3.7b), k = 5 (the data's rank). With the scenario's 40 sweeps the party
    holding half the users gains −1.6 % on the mean of seeds 8–11 (−5.5 to +3.6): its local
    model is trained to convergence from three starts, the global one is not. With 150 sweeps
    measured: 53.9 / 54.9 / 44.0 / 37.6 / 8.8 % (smallest → largest), the largest party
    +4.8 % to +13 % in every seed. Asserted: every party gains in every seed; the smallest
    party's mean gain is over three times the largest's and the two smallest gain more than
    the two largest."""
    up = uplift_by_size("pd_nmf_uplift_ratings", RATINGS_SEEDS, k=5,
                        iterations=CONVERGED_SWEEPS)
    assert np.all(up > 0), up
    mean = up.mean(axis=0)
    assert mean[0] > 3 * mean[-1], mean
    assert min(mean[:2]) > max(mean[-2:]), mean


@pytest.mark.slow
def test_simpler_models_see_lesser_uplift():
    """Ratings, global model converged: k = 2 against k = 5 (the data's rank). Measured mean
    uplift (seeds 8–11), smallest → largest party: k = 2: 48.8 / 26.9 / 14.5 / 7.6 / 3.0 %;
    k = 5: 53.9 / 54.9 / 44.0 / 37.6 / 8.8 %. Asserted: at k = 5 every party's mean uplift
    exceeds its uplift at k = 2. (Beyond the data's rank the smallest parties' gain falls
    again — k = 8: 36.5 / 37.6 / 34.2 / 29.0 / 13.2 % — as their users' weights, refit on
    ~16 training ratings each, overfit whichever topics they are given; the largest party's
    gain keeps rising: 3.0 → 3.5 → 8.8 → 13.2 % at k = 2, 3, 5, 8.)"""
    simple = uplift_by_size("pd_nmf_uplift_ratings", RATINGS_SEEDS, k=2,
                            iterations=CONVERGED_SWEEPS).mean(axis=0)
    rich = uplift_by_size("pd_nmf_uplift_ratings", RATINGS_SEEDS, k=5,
                          iterations=CONVERGED_SWEEPS).mean(axis=0)
    assert np.all(rich > simple), (simple, rich)


TOPIC_SEEDS = (5, 6, 7, 8, 9)
"""The topic scenario's seed and the next four (as C11's topic test uses)."""


@pytest.mark.slow
def test_simpler_topic_models_see_lesser_uplift():
    """Topics (Fig. 3.7a; the corpus has 8 planted topics), k = 4 against k = 16. Measured
    mean uplift (seeds 5–9), smallest → largest party: k = 4: 12.5 / 4.2 / 2.6 / 1.3 / 0.1 %;
    k = 8 (the scenario's): median 19.5 / 5.3 / 2.3 / 1.0 / 0.4 % (one seed's poor PD-NMF-Init
    optimum pulls the mean below zero for the larger parties); k = 16: 22.1 / 10.4 / 3.6 /
    1.4 / 0.9 %, every party gaining in every seed. Asserted: at k = 16 every party gains in
    every seed; the three smallest parties' mean uplift and the mean over parties exceed
    those at k = 4 (the two largest gain about 1 % at either k, within the seeds' spread)."""
    simple = uplift_by_size("pd_nmf_uplift_topics", TOPIC_SEEDS, k=4)
    rich = uplift_by_size("pd_nmf_uplift_topics", TOPIC_SEEDS, k=16)
    assert np.all(rich > 0), rich
    assert np.all(rich.mean(axis=0)[:3] > simple.mean(axis=0)[:3]), (simple, rich)
    assert rich.mean() > simple.mean()
