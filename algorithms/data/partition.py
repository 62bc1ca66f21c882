"""Partitions: one contiguous block of rows per party, ``X = vstack_m X^(m)`` (digest §0.1).

Rows are samples — documents for topic models, users for recommender systems (thesis seed 001,
§1.2.2) — so a horizontal partition gives each party whole samples. ``"equal"`` partitions give
the first ``n_rows % n_parties`` parties one extra row. Shards are copies, so no party holds a
view into another party's rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp

from algorithms.data.checks import Matrix, show, whole
from protocols.errors import ScenarioError

__all__ = ["partition_rows", "split_rows"]


def partition_rows(
    n_rows: int, n_parties: int, partition: str | Sequence[int] = "equal"
) -> list[tuple[int, int]]:
    """Assign contiguous blocks of rows to parties.

    Parameters
    ----------
    n_rows : int
        Number of rows of the data (≥ n_parties).
    n_parties : int
        Number of data-holding parties (≥ 1).
    partition : "equal" or sequence of int
        ``"equal"``: sizes differ by at most one, the first ``n_rows % n_parties`` parties get
        the extra row. A sequence: one positive row count per party, summing to ``n_rows``.

    Returns
    -------
    list of (int, int), length n_parties
        Half-open row ranges ``(start, stop)``, consecutive and covering ``0..n_rows``.

    Raises
    ------
    ScenarioError
        Naming the offending value and what it must be.
    """
    if not whole(n_parties) or n_parties < 1:
        raise ScenarioError(f"n_parties = {show(n_parties)} must be a whole number ≥ 1")
    if not whole(n_rows) or n_rows < 1:
        raise ScenarioError(f"the data's row count {show(n_rows)} must be a whole number ≥ 1")
    if n_rows < n_parties:
        raise ScenarioError(
            f"the data has {n_rows} rows but n_parties = {n_parties}; every party needs at "
            "least one row — use fewer parties or more data"
        )
    if isinstance(partition, str):
        if partition != "equal":
            raise ScenarioError(
                f'partition = {partition!r} is not recognised; use "equal" or a list of '
                f"{n_parties} row counts"
            )
        base, extra = divmod(int(n_rows), int(n_parties))
        sizes = [base + (1 if m < extra else 0) for m in range(n_parties)]
    else:
        if not isinstance(partition, Sequence | np.ndarray):
            raise ScenarioError(
                f'partition = {partition!r} must be "equal" or a list of {n_parties} row counts'
            )
        counts = list(partition)
        if len(counts) != n_parties:
            raise ScenarioError(
                f"partition lists {len(counts)} row counts but n_parties = {n_parties}; give "
                "one count per party"
            )
        for m, count in enumerate(counts):
            if not whole(count):
                raise ScenarioError(
                    f"partition[{m}] = {show(count)} must be a whole number of rows"
                )
            if count < 1:
                raise ScenarioError(
                    f"partition[{m}] = {show(count)}; every party needs at least 1 row"
                )
        sizes = [int(c) for c in counts]
        if sum(sizes) != n_rows:
            raise ScenarioError(
                f"partition row counts sum to {sum(sizes)} but the data has {n_rows} rows; "
                "the counts must add up to the number of rows"
            )
    stops = np.cumsum(sizes).tolist()
    starts = [0, *stops[:-1]]
    return list(zip(starts, stops, strict=True))


def split_rows(X: Matrix, ranges: Sequence[tuple[int, int]]) -> list[Matrix]:
    """Cut ``X`` into per-party row blocks.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The data.
    ranges : sequence of (int, int)
        Half-open row ranges, e.g. from :func:`partition_rows`.

    Returns
    -------
    list of ndarray or sparse matrix
        ``X[start:stop]`` for each range, shape (stop − start, d); dense shards are copies,
        sparse shards keep the input's sparse type (CSR).

    Raises
    ------
    ScenarioError
        If a range is not ``0 ≤ start ≤ stop ≤ n``.
    """
    n = X.shape[0]
    shards: list[Matrix] = []
    rows = X.tocsr() if sp.issparse(X) else np.asarray(X)
    for m, rng_ in enumerate(ranges):
        try:
            start, stop = rng_
        except (TypeError, ValueError):
            raise ScenarioError(f"ranges[{m}] = {rng_!r} must be a (start, stop) pair") from None
        if not (whole(start) and whole(stop) and 0 <= start <= stop <= n):
            raise ScenarioError(
                f"ranges[{m}] = ({show(start)}, {show(stop)}) must satisfy 0 ≤ start ≤ stop ≤ {n}"
            )
        block = rows[int(start) : int(stop)]
        shards.append(block.copy() if isinstance(block, np.ndarray) else block)
    return shards
