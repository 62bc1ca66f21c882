"""Planted outliers: the contamination of seed 000's outlier experiment (Saha & Imtiaz, §4).

"A random 10% of samples, in each 70% of pixels contaminated with U[−1, 1] noise" (after
Zhao & Tan), applied to data whose samples are normalised to unit maximum (§4). Contaminated
values are clipped to [0, 1] so that the data stay non-negative, as NMF needs; the clean data
are kept as the reference of the paper's Objective Value (Eq. 15).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from algorithms.data.checks import check_rng, real_arg

__all__ = ["Contaminated", "plant_outliers", "unit_max_rows"]


@dataclass(frozen=True)
class Contaminated:
    """Data with planted outliers.

    Attributes
    ----------
    X : ndarray of float64, shape (n, d)
        The contaminated data (rows are samples), in [0, 1].
    clean : ndarray of float64, shape (n, d)
        The data before contamination.
    rows : ndarray of bool, shape (n,)
        The contaminated samples.
    """

    X: np.ndarray
    clean: np.ndarray
    rows: np.ndarray


def unit_max_rows(X: np.ndarray) -> np.ndarray:
    """Every row divided by its largest entry (zero rows stay zero): §4's normalisation."""
    X = np.asarray(X, dtype=np.float64)
    top = X.max(axis=1, keepdims=True)
    return X / np.where(top > 0, top, 1.0)


def plant_outliers(X: np.ndarray, fraction: float, entries: float,
                   rng: np.random.Generator, amplitude: float = 1.0) -> Contaminated:
    """Contaminate ``round(fraction·n)`` random rows, ``entries`` of each row's entries.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Data in [0, 1] (e.g. after :func:`unit_max_rows`).
    fraction : float
        Fraction of samples contaminated, in [0, 1].
    entries : float
        Fraction of a contaminated sample's entries that get noise, in [0, 1] (each entry
        independently).
    rng : numpy.random.Generator
    amplitude : float
        The noise is U[−amplitude, amplitude].
    """
    rng = check_rng(rng)
    frac = real_arg(fraction, "planted_fraction", low=0.0, high=1.0)
    share = real_arg(entries, "planted_entries", low=0.0, high=1.0)
    clean = np.asarray(X, dtype=np.float64)
    n, d = clean.shape
    rows = np.zeros(n, dtype=bool)
    rows[rng.permutation(n)[: int(np.floor(frac * n + 0.5))]] = True
    hit = rows[:, None] & (rng.random((n, d)) < share)
    noise = rng.uniform(-amplitude, amplitude, size=(n, d))
    out = np.where(hit, np.clip(clean + noise, 0.0, 1.0), clean)
    return Contaminated(out, clean.copy(), rows)
