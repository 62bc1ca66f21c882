"""Element tests of two samples of a coalition's views: one p-value per column and family.

``value``: Kolmogorov–Smirnov on value / p (large fields), or a chi-square test on the counts of
every value (p ≤ :data:`SMALL_FIELD`); ``mod 2^b`` and ``mod 3``, ``mod 5``, ``mod 7``:
chi-square tests on the residues, each run when the smaller sample gives at least
:data:`MIN_PER_CELL` trials per residue. :mod:`parties.audit.compare` runs them with the linear
tests (:mod:`parties.audit.affine_tests`) and corrects them together.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

SMALL_FIELD = 64
"""Fields of at most this many elements get a chi-square test on every value."""

MIN_PER_CELL = 5
"""Residue tests run when the smaller sample has at least this many trials per residue."""

MODULI = (3, 5, 7)
MAX_LOW_BITS = 8


def ks_2samp_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Two-sample Kolmogorov–Smirnov p-values, column by column, vectorised.

    Parameters
    ----------
    x : ndarray of shape (n, c)
    y : ndarray of shape (m, c)

    Returns
    -------
    ndarray of shape (c,)
        The asymptotic p-value of each column: ``kolmogorov(D·sqrt(n·m/(n+m)))`` with D the
        largest distance between the two empirical CDFs — the same D as
        ``scipy.stats.ks_2samp(x, y, axis=0)`` (a test holds them equal).

    Notes
    -----
    Kept rather than replaced by ``scipy.stats.ks_2samp(x, y, axis=0, method="asymp")``
    (issue 31, item 5), on ``benchmarks/ks_columns.py``'s figures at the audit's sizes
    (100–400 trials per side, 10–1,000 columns): scipy's call took 3× to 450× longer
    here (it loops over the columns), and its "asymp" p-value — the finite-n one-sample
    law ``kstwo(D, round(nm/(n+m)))`` — is smaller than this one in every column, by up to
    0.037. With equal samples, as the audit draws them, this one is 15–30× closer to the
    exact two-sample p-value (within 0.0027 at 100 trials per side, 0.0007 at 400; scipy's
    "asymp": 0.039 and 0.020). With unequal samples scipy's can be the closer one.
    """
    n, m = x.shape[0], y.shape[0]
    both = np.concatenate([x, y], axis=0)
    order = np.argsort(both, axis=0, kind="stable")
    values = np.take_along_axis(both, order, axis=0)
    steps = np.where(order < n, 1.0 / n, -1.0 / m)
    cdf_diff = np.cumsum(steps, axis=0)
    # Only the last of a run of tied values is a point where both ECDFs are evaluated.
    last_of_tie = np.ones_like(values, dtype=bool)
    last_of_tie[:-1] = values[1:] != values[:-1]
    d = np.max(np.where(last_of_tie, np.abs(cdf_diff), 0.0), axis=0)
    return special.kolmogorov(d * np.sqrt(n * m / (n + m)))


def chi2_2samp_columns(x: np.ndarray, y: np.ndarray, cells: int) -> np.ndarray:
    """Chi-square test of homogeneity of two samples of cell indices, column by column.

    Parameters
    ----------
    x : ndarray of int, shape (n, c)
        Cell indices in [0, cells).
    y : ndarray of int, shape (m, c)

    Returns
    -------
    ndarray of shape (c,)
        p-values; NaN where both samples fall in one cell (nothing to compare).
    """
    n, m = x.shape[0], y.shape[0]
    c = x.shape[1]
    offsets = (np.arange(c) * cells)[None, :]
    cx = np.bincount((x + offsets).ravel(), minlength=c * cells).reshape(c, cells)
    cy = np.bincount((y + offsets).ravel(), minlength=c * cells).reshape(c, cells)
    total = cx + cy
    used = total > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ex = total * (n / (n + m))
        ey = total * (m / (n + m))
        stat = np.where(used, (cx - ex) ** 2 / ex + (cy - ey) ** 2 / ey, 0.0).sum(axis=1)
    df = used.sum(axis=1) - 1
    out = np.full(c, np.nan)
    ok = df >= 1
    out[ok] = stats.chi2.sf(stat[ok], df[ok])
    return out


def _as_unit(x: np.ndarray, p: int) -> np.ndarray:
    if x.dtype == object:
        return np.vectorize(lambda v: int(v) / p, otypes=[np.float64])(x)
    return x.astype(np.float64) / float(p)


def _residues(x: np.ndarray, q: int) -> np.ndarray:
    if x.dtype == object:  # Python ints: numpy's object remainder, no per-element lambda
        return np.mod(x, q).astype(np.int64)
    return (x % q).astype(np.int64)


def element_families(p: int, n_min: int) -> list[tuple[str, int]]:
    """The element-test families that run for a field and a smaller-sample size.

    ``(name, cells)``: ``cells = 0`` for the KS test of value / p.
    """
    if p <= SMALL_FIELD:
        return [("value", p)]
    out = [("value", 0)]
    bits = min(MAX_LOW_BITS, math.floor(math.log2(max(n_min, 1) / MIN_PER_CELL)))
    if bits >= 1:
        out.append((f"mod {1 << bits}", 1 << bits))
    out.extend((f"mod {q}", q) for q in MODULI if n_min >= MIN_PER_CELL * q)
    return out


def element_tests(
    p: int, x: np.ndarray, y: np.ndarray, columns: np.ndarray
) -> list[tuple[str, np.ndarray]]:
    """p-values of every element family on the given columns (NaN where a column is skipped)."""
    out = []
    xs, ys = x[:, columns], y[:, columns]
    for name, cells in element_families(p, min(x.shape[0], y.shape[0])):
        if cells == 0:
            pv = ks_2samp_columns(_as_unit(xs, p), _as_unit(ys, p)) if columns.size else (
                np.zeros(0))
        elif name == "value":
            pv = chi2_2samp_columns(_residues(xs, p), _residues(ys, p), p)
        else:
            pv = chi2_2samp_columns(_residues(xs, cells), _residues(ys, cells), cells)
        out.append((name, pv))
    return out
