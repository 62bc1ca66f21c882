"""Held-out splits of the learning-uplift experiment (thesis seed 001, §3.3.1).

Held-out local documents for topic models (:func:`holdout_rows`), a held-out part of each local
user's ratings for recommenders (:func:`holdout_entries`).

Choices the thesis leaves open (digest §7.1 item 34): ``round(fraction · n)`` documents, at least
one and at most n − 1; per user, ``round(fraction · n_u)`` of the n_u observed ratings, always
leaving at least one rating in training (users with a single rating keep it). Rounding is
half-up.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from algorithms.data.checks import Matrix, check_rng, real_arg
from protocols.errors import DataError, ScenarioError

__all__ = ["EntryHoldout", "RowHoldout", "holdout_entries", "holdout_rows"]


@dataclass(frozen=True)
class RowHoldout:
    """Held-out rows (documents).

    Attributes
    ----------
    train, test : ndarray or csr_array, shapes (n - n_test, d) and (n_test, d)
        The kept and the held-out rows, in their original order.
    train_rows, test_rows : ndarray of int64
        The row indices of ``train`` and ``test`` in the input (increasing, disjoint, covering).
    """

    train: Matrix
    test: Matrix
    train_rows: np.ndarray
    test_rows: np.ndarray


@dataclass(frozen=True)
class EntryHoldout:
    """Held-out observed entries of a ratings matrix.

    Attributes
    ----------
    train : ndarray of float64, shape (n_users, n_items)
        The input with the held-out entries replaced by NaN.
    test : ndarray of float64, shape (n_users, n_items)
        NaN everywhere except the held-out entries, which keep their ratings.
    test_mask : ndarray of bool, shape (n_users, n_items)
        True exactly at the held-out entries.
    """

    train: np.ndarray
    test: np.ndarray
    test_mask: np.ndarray


def _fraction(value: object) -> float:
    return real_arg(value, "fraction", low=0.0, high=1.0, low_open=True, high_open=True)


def holdout_rows(X: Matrix, fraction: float, rng: np.random.Generator) -> RowHoldout:
    """Hold out a random ``fraction`` of the rows (documents) as a test set.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The rows to split; n ≥ 2.
    fraction : float
        Fraction of rows to hold out, in (0, 1); ``round(fraction · n)`` rows, clipped to
        [1, n − 1].
    rng : numpy.random.Generator
        Chooses the rows.

    Returns
    -------
    RowHoldout
        ``train`` (n − n_test, d), ``test`` (n_test, d) and their row indices, in input order.

    Raises
    ------
    ScenarioError
        If ``fraction`` is outside (0, 1) or X has fewer than 2 rows.
    """
    rng = check_rng(rng)
    frac = _fraction(fraction)
    n = X.shape[0]
    if n < 2:
        raise ScenarioError(f"holding out rows needs at least 2 rows, the data has {n}")
    n_test = min(max(math.floor(frac * n + 0.5), 1), n - 1)
    chosen = np.zeros(n, dtype=bool)
    chosen[rng.permutation(n)[:n_test]] = True
    test_rows = np.flatnonzero(chosen)
    train_rows = np.flatnonzero(~chosen)
    if sp.issparse(X):
        csr = sp.csr_array(X)
        return RowHoldout(csr[train_rows], csr[test_rows], train_rows, test_rows)
    dense = np.asarray(X)
    return RowHoldout(dense[train_rows], dense[test_rows], train_rows, test_rows)


def holdout_entries(R: np.ndarray, fraction: float, rng: np.random.Generator) -> EntryHoldout:
    """Hold out a random ``fraction`` of each user's observed ratings.

    Parameters
    ----------
    R : ndarray of float, shape (n_users, n_items)
        Ratings with NaN for unobserved cells.
    fraction : float
        Fraction of each user's n_u observed ratings to hold out, in (0, 1):
        ``min(round(fraction · n_u), n_u − 1)`` of them, so every user keeps at least one
        training rating.
    rng : numpy.random.Generator
        Chooses the entries.

    Returns
    -------
    EntryHoldout
        NaN-masked ``train`` and ``test`` matrices of shape (n_users, n_items) and the
        boolean ``test_mask``.

    Raises
    ------
    ScenarioError
        If ``fraction`` is outside (0, 1).
    DataError
        If ``R`` is not a 2-D matrix.
    """
    rng = check_rng(rng)
    frac = _fraction(fraction)
    arr = np.asarray(R, dtype=np.float64)
    if arr.ndim != 2:
        raise DataError(f"ratings must be a 2-D users × items matrix, got shape {arr.shape}")
    rows, cols = np.nonzero(~np.isnan(arr))
    keys = rng.random(rows.size)
    order = np.lexsort((keys, rows))  # by user, then by random key
    per_user = np.bincount(rows, minlength=arr.shape[0])
    starts = np.concatenate(([0], np.cumsum(per_user)[:-1]))
    rank = np.arange(rows.size) - starts[rows[order]]
    n_test = np.minimum(np.floor(frac * per_user + 0.5).astype(np.int64), per_user - 1)
    held = rank < n_test[rows[order]]
    test_mask = np.zeros(arr.shape, dtype=bool)
    test_mask[rows[order][held], cols[order][held]] = True
    train = np.where(test_mask, np.nan, arr)
    test = np.where(test_mask, arr, np.nan)
    return EntryHoldout(train=train, test=test, test_mask=test_mask)
