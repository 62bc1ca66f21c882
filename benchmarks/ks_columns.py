"""Column-wise two-sample KS p-values: scipy's ``ks_2samp(..., axis=0)`` against the hand-written
asymptotic test the statistical audit used before (issue 31, item 5).

The audit's comparison (:func:`parties.audit.compare.ks_2samp_columns`) tests every element of
a call's view under inputs A against inputs B, column by column: two samples of ``trials``
runs each, one column per element. It now calls ``scipy.stats.ks_2samp(x, y, axis=0,
method="asymp")``; before, it sorted the pooled columns itself and took
``scipy.special.kolmogorov(D·sqrt(nm/(n+m)))``. This prints, for the audit's sample sizes and
a few column counts, one JSON line per shape with:

* ``max_abs_p_diff`` / ``max_rel_p_diff`` — the largest p-value difference between the two
  (p-values above 1e-12 for the relative one), on uniform samples (the null, with ties in one
  column in four) and on a shifted alternative;
* ``before_p_at_least_scipy`` — the share of columns where the former p-value is at least
  scipy's (1.0: the limiting Kolmogorov distribution is the conservative one);
* ``max_abs_diff_to_exact_p`` — each one's largest distance to the exact two-sample p-value
  (``method="exact"``, first ten null columns): which of the two approximations is closer;
* ``d_equal`` — whether both found the same statistic D (computed separately here from the
  sorted ECDFs);
* ``before_s`` / ``scipy_s`` — the median time of one call of each (interleaved repeats), and
  ``speed_ratio`` = before_s / scipy_s (above 1: scipy is faster).

Run: ``PYTHONPATH=. python benchmarks/ks_columns.py``.
"""

from __future__ import annotations

import json
import statistics
import time

import numpy as np
from scipy import special, stats


def statistic(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """D per column, as the audit's former test found it (sorted pooled ECDF differences)."""
    n, m = x.shape[0], y.shape[0]
    both = np.concatenate([x, y], axis=0)
    order = np.argsort(both, axis=0, kind="stable")
    values = np.take_along_axis(both, order, axis=0)
    steps = np.where(order < n, 1.0 / n, -1.0 / m)
    cdf_diff = np.cumsum(steps, axis=0)
    last_of_tie = np.ones_like(values, dtype=bool)
    last_of_tie[:-1] = values[1:] != values[:-1]
    return np.max(np.where(last_of_tie, np.abs(cdf_diff), 0.0), axis=0)


def before(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The audit's former hand-written test (the measurement's baseline, kept here only)."""
    n, m = x.shape[0], y.shape[0]
    return special.kolmogorov(statistic(x, y) * np.sqrt(n * m / (n + m)))


def with_scipy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return stats.ks_2samp(x, y, axis=0, method="asymp").pvalue


def median_seconds(fn, x: np.ndarray, y: np.ndarray, other, repeats: int) -> tuple[float, float]:
    """Median seconds of ``fn`` and ``other`` on (x, y), interleaved."""
    a, b = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        fn(x, y)
        a.append(time.perf_counter() - t)
        t = time.perf_counter()
        other(x, y)
        b.append(time.perf_counter() - t)
    return statistics.median(a), statistics.median(b)


def main() -> None:
    rng = np.random.default_rng(31)
    for trials in (100, 200, 400):
        for columns in (10, 100, 1000):
            x = rng.random((trials, columns))
            y = rng.random((trials, columns))
            x[:, ::4] = np.round(x[:, ::4], 1)  # ties, as low-order-bit columns have
            y[:, ::4] = np.round(y[:, ::4], 1)
            shifted = y + 0.08
            diffs, rels, higher = [], [], []
            for other in (y, shifted):
                p0, p1 = before(x, other), with_scipy(x, other)
                higher.append(float(np.mean(p0 >= p1)))
                diffs.append(float(np.max(np.abs(p0 - p1))))
                big = p0 > 1e-12
                rels.append(float(np.max(np.abs(p0[big] - p1[big]) / p0[big])) if big.any()
                            else 0.0)
            d_scipy = stats.ks_2samp(x, y, axis=0, method="asymp").statistic
            d_before = statistic(x, y)
            b_s, s_s = median_seconds(before, x, y, with_scipy, 15)
            exact = stats.ks_2samp(x[:, :10], y[:, :10], axis=0, method="exact").pvalue
            to_exact = {"before": float(np.max(np.abs(before(x, y)[:10] - exact))),
                        "scipy_asymp": float(np.max(np.abs(with_scipy(x, y)[:10] - exact)))}
            print(json.dumps({
                "figure": "ks_2samp_columns", "trials": trials, "columns": columns,
                "max_abs_p_diff": max(diffs), "max_rel_p_diff": max(rels),
                "before_p_at_least_scipy": min(higher),
                "d_equal": bool(np.allclose(d_scipy, d_before, rtol=1e-9, atol=1e-12)),
                "max_abs_diff_to_exact_p": to_exact,
                "before_s": b_s, "scipy_s": s_s, "speed_ratio": b_s / s_s,
            }))


if __name__ == "__main__":
    main()
