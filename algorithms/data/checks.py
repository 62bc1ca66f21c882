"""Checks on data matrices and on the arguments of the data functions.

* :func:`check_finite` and :func:`check_nonnegative` are the checks an algorithm applies to a
  data matrix at its entry. Loading keeps NaN: NaN means "unobserved" for ratings and is an
  error for plain SecureSum or NMF, so the caller decides. Both name the first offending row
  and column (row-major order), the value and how many entries are affected.
* :func:`int_arg`, :func:`real_arg` and :func:`check_rng` validate the arguments of the
  generators and splitters of this package (scenario values), raising
  :class:`~protocols.errors.ScenarioError` with the name, the value and the allowed range.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp

from protocols.errors import DataError, ScenarioError

__all__ = [
    "Matrix",
    "check_finite",
    "check_nonnegative",
    "check_rng",
    "check_shards_observed",
    "int_arg",
    "real_arg",
    "show",
    "whole",
]

Matrix = np.ndarray | sp.csr_array
"""A data matrix: a dense float array or a CSR sparse array, shape (n_samples, n_features)."""


# --------------------------------------------------------------------------------------------
# arguments


def show(value: object) -> str:
    """repr of a value, with numpy scalars shown as the Python numbers they hold."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def whole(value: object) -> bool:
    """True for an integer that is not a bool (Python or numpy)."""
    return isinstance(value, Integral) and not isinstance(value, bool)


def int_arg(value: object, name: str, minimum: int = 1) -> int:
    """``value`` as an int ≥ ``minimum``, or a ScenarioError naming ``name``."""
    if not whole(value):
        raise ScenarioError(f"{name} = {show(value)} must be a whole number ≥ {minimum}")
    if int(value) < minimum:  # type: ignore[call-overload]
        raise ScenarioError(f"{name} = {show(value)} must be ≥ {minimum}")
    return int(value)  # type: ignore[call-overload]


def real_arg(
    value: object,
    name: str,
    *,
    low: float,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    """``value`` as a finite float in the given interval, or a ScenarioError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ScenarioError(f"{name} = {show(value)} must be a finite number")
    x = float(value)
    too_low = x <= low if low_open else x < low
    too_high = x >= high if high_open else x > high
    if too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open or math.isinf(high) else "]"
        raise ScenarioError(f"{name} = {show(value)} must lie in {left}{low:g}, {high:g}{right}")
    return x


def ratings_args(n_users: object, n_items: object, k: object, density: object,
                 noise: object) -> tuple[int, int, int, float, float]:
    """The arguments of a synthetic ratings generator, checked: sizes ≥ 1, density in (0, 1],
    noise ≥ 0."""
    return (int_arg(n_users, "n_users"), int_arg(n_items, "n_items"), int_arg(k, "k"),
            real_arg(density, "density", low=0.0, high=1.0, low_open=True),
            real_arg(noise, "noise", low=0.0))


def check_rng(rng: object) -> np.random.Generator:
    """``rng`` if it is a numpy Generator (the only source of randomness), else TypeError."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# --------------------------------------------------------------------------------------------
# data matrices


def _entries(X: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """(rows, cols, values) of the stored entries, and the shape."""
    if sp.issparse(X):
        coo = sp.coo_array(X)
        return coo.row, coo.col, np.asarray(coo.data), tuple(coo.shape)  # type: ignore[return-value]
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise DataError(f"expected a 2-D matrix, got shape {arr.shape}")
    return np.empty(0), np.empty(0), arr, arr.shape  # dense: values is the whole array


def _first_bad(X: object, bad_of: Any) -> tuple[int, int, float, int] | None:
    """(row, column, value, count) of the first entry (row-major) where ``bad_of`` is True."""
    rows, cols, values, _ = _entries(X)
    bad = bad_of(values)
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    if values.ndim == 2:
        r, c = np.argwhere(bad)[0]
        return int(r), int(c), float(values[r, c]), count
    idx = np.flatnonzero(bad)
    first = idx[np.lexsort((cols[idx], rows[idx]))[0]]
    return int(rows[first]), int(cols[first]), float(values[first]), count


def _entries_text(count: int, kind: str) -> str:
    return f"{count} {kind} entr{'y' if count == 1 else 'ies'}"


def _where(r: int, ranges: Sequence[tuple[int, int]] | None) -> str:
    """"row r" and, when the rows are partitioned, the party that holds it."""
    if ranges is None:
        return f"row {r}"
    for m, (start, stop) in enumerate(ranges):
        if start <= r < stop:
            return f"row {r} (party {m}'s row {r - start})"
    return f"row {r}"


def check_finite(
    X: Matrix,
    what: str = "X",
    *,
    ranges: Sequence[tuple[int, int]] | None = None,
    allow_nan: bool = False,
) -> None:
    """Raise :class:`DataError` if ``X`` holds ±infinity, or NaN unless ``allow_nan``.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The matrix (for sparse matrices, only stored entries are checked).
    what : str
        Name of the matrix for the message (e.g. ``"data file 'X.csv'"``).
    ranges : sequence of (int, int), optional
        The parties' row ranges (:func:`~algorithms.data.partition.partition_rows`): the message
        then names the party that holds the offending row.
    allow_nan : bool
        NaN marks unobserved entries (ratings): only infinities are refused.

    Raises
    ------
    DataError
        Naming the first offending row (and party) and column (row-major order, rows counted
        from 0), its value and how many entries are affected.
    """
    bad_of = (lambda v: np.isinf(v)) if allow_nan else (lambda v: ~np.isfinite(v))
    found = _first_bad(X, bad_of)
    if found is not None:
        r, c, v, count = found
        kind = "infinite" if allow_nan else "non-finite"
        fix = ("remove or replace them (NaN marks an unobserved entry)" if allow_nan else
               "remove or impute them (NaN means 'unobserved' only for algorithms that accept "
               "missing ratings)")
        raise DataError(
            f"{what}: {_where(r, ranges)}, column {c} holds {v!r} ({_entries_text(count, kind)}); "
            f"this algorithm needs finite values — {fix}"
        )


def check_nonnegative(
    X: Matrix, what: str = "X", *, ranges: Sequence[tuple[int, int]] | None = None
) -> None:
    """Raise :class:`DataError` if ``X`` holds a negative value (NaN is not checked here).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The matrix.
    what : str
        Name of the matrix for the message.
    ranges : sequence of (int, int), optional
        The parties' row ranges, to name the party in the message.

    Raises
    ------
    DataError
        Naming the first negative entry (row-major order), its party, its value and how many
        there are.
    """
    found = _first_bad(X, lambda v: v < 0)
    if found is not None:
        r, c, v, count = found
        raise DataError(
            f"{what}: {_where(r, ranges)}, column {c} holds {v!r} "
            f"({_entries_text(count, 'negative')}); "
            "NMF needs non-negative data — shift, clip or drop those values"
        )


def check_shards_observed(
    X: Matrix, what: str, ranges: Sequence[tuple[int, int]]
) -> None:
    """Raise :class:`DataError` if some party's rows hold no observed (non-NaN) entry.

    Such a party would take part in every sum with nothing to contribute, and its model
    would be undefined. Sparse matrices store observed entries only, so every shard with a
    stored entry passes.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
    what : str
        Name of the matrix for the message.
    ranges : sequence of (int, int)
        The parties' row ranges.
    """
    for m, (start, stop) in enumerate(ranges):
        if stop <= start:
            raise DataError(f"{what}: party {m} holds no rows; every party needs at least one")
        block = X[start:stop]
        observed = (block.nnz if sp.issparse(block)
                    else int(np.count_nonzero(~np.isnan(np.asarray(block)))))
        if observed == 0:
            raise DataError(
                f"{what}: party {m}'s rows {start}..{stop - 1} hold no observed entry (all "
                "NaN); give every party some observed values or change data.partition"
            )
