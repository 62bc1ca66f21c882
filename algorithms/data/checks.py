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


def check_finite(X: Matrix, what: str = "X") -> None:
    """Raise :class:`DataError` if ``X`` holds NaN or ±infinity.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The matrix (for sparse matrices, only stored entries are checked).
    what : str
        Name of the matrix for the message (e.g. ``"party 2's data"``).

    Raises
    ------
    DataError
        Naming the first offending row and column (row-major order), its value and how many
        entries are affected.
    """
    found = _first_bad(X, lambda v: ~np.isfinite(v))
    if found is not None:
        r, c, v, count = found
        raise DataError(
            f"{what}: row {r}, column {c} holds {v!r} ({count} non-finite entries); this "
            "algorithm needs finite values — remove or impute them (NaN means 'unobserved' "
            "only for algorithms that accept missing ratings)"
        )


def check_nonnegative(X: Matrix, what: str = "X") -> None:
    """Raise :class:`DataError` if ``X`` holds a negative value (NaN is not checked here).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The matrix.
    what : str
        Name of the matrix for the message.

    Raises
    ------
    DataError
        Naming the first negative entry (row-major order), its value and how many there are.
    """
    found = _first_bad(X, lambda v: v < 0)
    if found is not None:
        r, c, v, count = found
        raise DataError(
            f"{what}: row {r}, column {c} holds {v!r} ({count} negative entries); NMF needs "
            "non-negative data — shift, clip or drop those values"
        )
