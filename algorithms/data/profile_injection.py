"""The data models of seed 002 (Ballen, §3.5): profile injection and random noise.

Adversarial users may add (baduser, item, score) tuples but cannot change honest users'
ratings. Their goal here is to push down the rating of target items (a review bomb, or "nuke"
attack):

* **Model 3, low-knowledge attack** (:func:`fake_profiles`): new users, each rating every target
  ``rating`` (1 in the paper) and ``filler`` other items (19 in the paper, so that every fake
  user rates at least 20 items, as every real ML-1M user does) with random whole scores on the
  rating scale.
* **Model 4, informed attack** (:func:`convert_users`): existing users turned adversarial; each
  rates the targets ``rating`` and keeps its other ratings.

And the non-adversarial **Model 2, random noise** (:func:`flip_ratings`): every rating flips with
probability p — a rating in the lower half of the scale (1–3 on 1..5) becomes the maximum, one
in the upper half (4–5) the minimum. The paper applies it to the training set (digest §7.3
item 50).

These are data transformations; in the distributed run a malicious party applies them to its
own rows (:func:`algorithms.nmf.corrective.injecting_party`).
"""

from __future__ import annotations

import numpy as np

from algorithms.data.checks import check_rng
from protocols.errors import DataError

__all__ = ["convert_users", "fake_profiles", "flip_ratings"]


def _targets(target_cols: np.ndarray, n_items: int) -> np.ndarray:
    cols = np.asarray(target_cols, dtype=np.int64).ravel()
    if cols.size == 0 or cols.min() < 0 or cols.max() >= n_items:
        raise DataError(f"target columns {cols.tolist()} must be in 0..{n_items - 1}")
    return np.unique(cols)


def fake_profiles(n_items: int, target_cols: np.ndarray, n_fake: int, rating: float,
                  low: float, high: float, rng: np.random.Generator,
                  filler: int = 19) -> np.ndarray:
    """Model 3: ``n_fake`` new profiles rating the targets ``rating`` and ``filler`` others.

    Parameters
    ----------
    n_items : int
        m, the number of items.
    target_cols : array of int
        Column indices of the target items.
    n_fake : int
        Number of fake users (≥ 1).
    rating : float
        The score given to every target (the scale's minimum for a nuke attack).
    low, high : float
        The rating scale; filler scores are whole numbers drawn uniformly from
        ceil(low)..floor(high).
    rng : numpy.random.Generator
    filler : int
        Other items each fake user rates (capped at the number of non-target items).

    Returns
    -------
    ndarray of float64, shape (n_fake, n_items)
        NaN where a fake user gives no rating.
    """
    rng = check_rng(rng)
    cols = _targets(target_cols, n_items)
    if n_fake < 1:
        raise DataError(f"n_fake = {n_fake} must be ≥ 1")
    others = np.setdiff1d(np.arange(n_items), cols)
    n_fill = min(max(int(filler), 0), others.size)
    fake = np.full((n_fake, n_items), np.nan)
    fake[:, cols] = rating
    lo, hi = int(np.ceil(low)), int(np.floor(high))
    for row in fake:
        picked = rng.choice(others, size=n_fill, replace=False)
        row[picked] = rng.integers(lo, hi + 1, size=n_fill)
    return fake


def convert_users(V: np.ndarray, rows: np.ndarray, target_cols: np.ndarray,
                  rating: float) -> np.ndarray:
    """Model 4: a copy of V where users ``rows`` rate every target ``rating``."""
    out = np.array(V, dtype=np.float64, copy=True)
    cols = _targets(target_cols, out.shape[1])
    out[np.ix_(np.asarray(rows, dtype=np.int64), cols)] = rating
    return out


def flip_ratings(V: np.ndarray, probability: float, low: float, high: float,
                 rng: np.random.Generator) -> np.ndarray:
    """Model 2: a copy of V where each rating flips to the far end with ``probability``."""
    rng = check_rng(rng)
    if not 0 <= probability <= 1:
        raise DataError(f"probability = {probability} must lie in [0, 1]")
    out = np.array(V, dtype=np.float64, copy=True)
    obs = ~np.isnan(out)
    flip = obs & (rng.random(out.shape) < probability)
    lower = out <= (low + high) / 2
    out[flip & lower] = high
    out[flip & ~lower] = low
    return out
