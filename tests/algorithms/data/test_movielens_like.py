"""Tests of algorithms.data.movielens_like: ML-1M-shaped synthetic ratings (seed 002's data).

The references are MovieLens 1M's published shape (whole stars 1–5, at least 20 ratings per
user, mean 3.58, standard deviation 1.12) and numpy statistics of the drawn matrix.
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.data import synthetic_dataset, synthetic_movielens
from protocols.errors import ScenarioError


def test_ratings_have_ml1m_shape() -> None:
    data = synthetic_movielens(800, 400, 20, density=0.1, rng=np.random.default_rng(0))
    R = data.ratings
    obs = ~np.isnan(R)
    values = R[obs]
    assert set(np.unique(values)) == {1.0, 2.0, 3.0, 4.0, 5.0}
    assert obs.sum(axis=1).min() >= 20  # every user rates at least 20 movies, as on ML-1M
    assert 0.1 <= obs.mean() <= 0.13  # the floor of 20 adds a little to the requested density
    assert abs(values.mean() - 3.58) < 0.15 and abs(values.std() - 1.12) < 0.12
    # heavy-tailed popularity: the most-rated tenth of the movies holds over a quarter of them
    per_item = np.sort(obs.sum(axis=0))[::-1]
    assert per_item[: 40].sum() > 0.25 * per_item.sum()
    # the residual from the latent ratings is ML-1M-like (~0.85 stars), and far from zero
    resid = np.sqrt(np.mean((values - data.truth[obs]) ** 2))
    assert 0.75 < resid < 0.95


def test_latent_ratings_carry_user_and_item_biases() -> None:
    data = synthetic_movielens(600, 300, 5, density=0.2, noise=0.0,
                               rng=np.random.default_rng(1))
    T = data.truth - data.truth.mean()
    rows, cols = T.mean(axis=1), T.mean(axis=0)
    residual = T - rows[:, None] - cols[None, :]
    # the biases explain most of the latent variance; the rank-5 interaction the rest
    assert rows.var() + cols.var() > 2 * residual.var() > 0
    s = np.linalg.svd(residual, compute_uv=False)
    assert s[5] < 1e-8 * s[0]


def test_scenario_kind_and_bad_arguments() -> None:
    ds = synthetic_dataset(50, 30, np.random.default_rng(2), "movielens", k=3, density=0.3)
    assert ds.kind == "ratings" and ds.X.shape == (50, 30) and "ratings" in ds.truth
    with pytest.raises(ScenarioError, match="density"):
        synthetic_movielens(10, 10, 2, density=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ScenarioError, match="noise"):
        synthetic_movielens(10, 10, 2, noise=-1.0, rng=np.random.default_rng(0))
