"""Synthetic ratings shaped like MovieLens 1M (the stand-in for seed 002's data set, §3).

Ballen (seed 002) runs every experiment on MovieLens 1M: 6,040 users × 3,706 movies, 1,000,209
whole-star ratings 1–5 (4.5 % of the cells), every user with at least 20 ratings, mean 3.58 and
standard deviation 1.12, with a few very popular movies and a long tail. The data set is not
shipped here, so :func:`synthetic_movielens` draws a matrix with the features that decide how
NMF behaves on it:

* **biases and a low-rank interaction**: the latent rating of user u for item j is
  ``μ + b_u + b_j + <p_u, q_j>`` with μ = 3.5, b_u ~ N(0, 0.45²), b_j ~ N(0, 0.6²) (a popular
  item is a little better liked: b_j correlates 0.4 with its log-popularity) and p_u, q_j ∈ ℝ^k
  Gaussian with Var<p_u, q_j> = 0.15 — a rank-(k + 2) matrix, not an exactly non-negative
  rank-k one, as real ratings are not;
* **realistic noise**: N(0, noise²) (default 0.9) added to the latent rating, rounded to whole
  stars and clipped to 1..5, so that the residual from the latent rating is ~0.86 stars, as a
  well-fitted model's is on ML-1M; the default gives mean ≈ 3.58 and standard deviation ≈ 1.11
  (ML-1M: 3.58 and 1.12), with the stars' shares 4 / 13 / 28 / 30 / 25 % (ML-1M: 6 / 11 / 26 /
  35 / 23 %);
* **sparsity**: user activity is log-normal (σ = 1) with mean ``density · n_items`` and at least
  min(20, n_items) ratings; item popularity is log-normal (σ = 1.2), and each user rates items
  drawn without replacement with probability growing with their popularity (Gumbel top-c
  sampling), so the realised density is slightly above ``density`` (the 20-rating floor).

The sizes are the caller's: the paper's experiment is affordable on ML-1M's own shape, and the
scenarios use smaller matrices with the number of ratings per user and per item kept in ML-1M's
range (what decides how far a k = 20 factorisation overfits).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.data.checks import check_rng, ratings_args
from algorithms.data.movielens import RATING_MAX, RATING_MIN

__all__ = ["MIN_RATINGS_PER_USER", "MovieLensLike", "synthetic_movielens"]

MEAN_RATING = 3.5
USER_BIAS_SD = 0.45
ITEM_BIAS_SD = 0.6
INTERACTION_VAR = 0.15
POPULARITY_BIAS_CORR = 0.4
USER_ACTIVITY_SIGMA = 1.0
ITEM_POPULARITY_SIGMA = 1.2
MIN_RATINGS_PER_USER = 20


@dataclass(frozen=True)
class MovieLensLike:
    """A synthetic ML-1M-shaped ratings matrix and its latent truth.

    Attributes
    ----------
    ratings : ndarray of float64, shape (n_users, n_items)
        Whole stars 1..5; NaN where unobserved.
    truth : ndarray of float64, shape (n_users, n_items)
        The latent ratings μ + b_u + b_j + <p_u, q_j> (before noise, rounding and clipping).
    """

    ratings: np.ndarray
    truth: np.ndarray


def synthetic_movielens(n_users: int, n_items: int, k: int, *, density: float = 0.05,
                        noise: float = 0.9, rng: np.random.Generator) -> MovieLensLike:
    """Draw ML-1M-shaped ratings (module docstring).

    Parameters
    ----------
    n_users, n_items : int
        Shape of the matrix.
    k : int
        Rank of the latent interaction ⟨p_u, q_j⟩.
    density : float
        Mean fraction of items a user rates, in (0, 1] (before the 20-rating floor).
    noise : float
        Standard deviation of the Gaussian noise before rounding (≥ 0).
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    MovieLensLike
    """
    rng = check_rng(rng)
    n, m, k, rho, sd = ratings_args(n_users, n_items, k, density, noise)

    log_pop = rng.normal(0.0, ITEM_POPULARITY_SIGMA, size=m)
    z_pop = (log_pop - log_pop.mean()) / (log_pop.std() + 1e-12)
    c = POPULARITY_BIAS_CORR
    b_item = ITEM_BIAS_SD * (c * z_pop + np.sqrt(1 - c * c) * rng.standard_normal(m))
    b_user = rng.normal(0.0, USER_BIAS_SD, size=n)
    scale = (INTERACTION_VAR / k) ** 0.25  # Var <p, q> = k · scale⁴
    p = rng.normal(0.0, scale, size=(n, k))
    q = rng.normal(0.0, scale, size=(k, m))
    truth = MEAN_RATING + b_user[:, None] + b_item[None, :] + p @ q

    s = USER_ACTIVITY_SIGMA
    activity = rho * m * rng.lognormal(-s * s / 2, s, size=n)
    counts = np.clip(np.rint(activity), min(MIN_RATINGS_PER_USER, m), m).astype(np.int64)
    keys = log_pop[None, :] + rng.gumbel(size=(n, m))  # top-c keys: weighted, no replacement
    order = np.argsort(-keys, axis=1)
    rank = np.empty_like(order)
    rank[np.arange(n)[:, None], order] = np.arange(m)[None, :]
    mask = rank < counts[:, None]

    noisy = truth + (rng.normal(0.0, sd, size=(n, m)) if sd > 0 else 0.0)
    ratings = np.clip(np.rint(noisy), RATING_MIN, RATING_MAX)
    ratings[~mask] = np.nan
    return MovieLensLike(ratings=ratings, truth=truth)
