"""Linear tests over GF(p) of two samples of a coalition's views (:mod:`parties.audit.compare`).

*Within a call*: does either sample leave the affine hull of the other? Ranks of the
differences over GF(p) (:meth:`~protocols.field.PrimeField.ranks`), on the call's informative
columns at once when the trials can saturate them, else on each coordinate slice. *Between any
two columns*: an affine relation x_j = a·x_i + b that holds on every trial of one sample but not
of the other, found in linear time by normalising each column's differences and hashing them.
A hull of n samples is saturated once n exceeds its dimension; a separation found with an
excess of e spare samples has probability at most p^−e under the null (:func:`excess_needed`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from protocols.field import PrimeField

ROW_SLACK = 8
"""Rows a hull test uses beyond (group size + excess needed): a saturated hull needs no more."""


def excess_needed(p: int, n_tests: int, width: int, alpha: float) -> int:
    """Spare samples a linear test needs so that p^−excess can fall below α / (tests·width²)."""
    return max(1, math.ceil(math.log(max(n_tests, 1) * max(width, 2) ** 2 / alpha) / math.log(p)))


def _column_keys(z: np.ndarray) -> list[bytes]:
    if z.dtype == object:
        return [repr(col.tolist()).encode() for col in z.T]
    zt = np.ascontiguousarray(z.T)
    return [row.tobytes() for row in zt]


def informative_columns(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Columns that are not one and the same constant in both samples."""
    if x.shape[1] == 0:
        return np.zeros(0, dtype=np.int64)
    const = np.all(x == x[:1], axis=0) & np.all(y == y[:1], axis=0) & (x[0] == y[0])
    return np.nonzero(~np.asarray(const, dtype=bool))[0]


def dedupe(x: np.ndarray, y: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Drop columns identical (in both samples) to an earlier one."""
    keys = _column_keys(np.concatenate([x[:, cols], y[:, cols]], axis=0))
    seen: set[bytes] = set()
    keep = []
    for c, key in zip(cols, keys, strict=True):
        if key not in seen:
            seen.add(key)
            keep.append(c)
    return np.asarray(keep, dtype=np.int64)


@dataclass
class _Hulls:
    rank_x: np.ndarray
    rank_y: np.ndarray
    rank_xy: np.ndarray
    rows_x: int
    rows_y: int


def _hull_ranks(field_: PrimeField, x: np.ndarray, y: np.ndarray, idx: np.ndarray,
                need: int) -> _Hulls:
    """Ranks of X's, Y's and their union's affine hulls for a stack of groups idx (S, g)."""
    g = idx.shape[1]
    rows_x = min(x.shape[0] - 1, g + need + ROW_SLACK)
    rows_y = min(y.shape[0] - 1, g + need + ROW_SLACK)
    base_x = x[0][idx][:, None, :]
    xd = field_.sub(x[1 : rows_x + 1][:, idx].transpose(1, 0, 2), base_x)
    yd = field_.sub(y[1 : rows_y + 1][:, idx].transpose(1, 0, 2), y[0][idx][:, None, :])
    yx = field_.sub(y[: rows_y + 1][:, idx].transpose(1, 0, 2), base_x)
    return _Hulls(field_.ranks(xd), field_.ranks(yd),
                  field_.ranks(np.concatenate([xd, yx], axis=1)), rows_x, rows_y)


def hull_groups(cols: np.ndarray, elem_of: np.ndarray, msg_of: np.ndarray, sizes: np.ndarray,
                 n_min: int, need: int) -> list[np.ndarray]:
    """One call's hull groups: all its columns, or one group per coordinate slice.

    A slice holds the elements whose index is c modulo the period g of the call's messages
    (the gcd of the sizes of its messages longer than one element — so that element c of a
    2d-element seed and element c of a d-element sum meet), plus every one-element message.
    """
    if cols.size == 0:
        return []
    if cols.size + need + 1 <= n_min - 1:
        return [cols]
    long = sizes[msg_of[cols]] > 1
    period = int(np.gcd.reduce(sizes[msg_of[cols][long]])) if long.any() else 1
    scalars = cols[~long]
    return [np.concatenate([cols[long & (elem_of[cols] % period == c)], scalars])
            for c in range(period)]


def hull_tests(
    field_: PrimeField, x: np.ndarray, y: np.ndarray, groups: list[np.ndarray], need: int
) -> tuple[list[tuple[int, float]], int, int]:
    """Affine-hull tests of each group (column indices into ``x`` and ``y``).

    Returns
    -------
    separated : list of (group index, p-value bound)
    undetermined : int
        Groups where either sample has fewer than ``need`` spare rows.
    trials_needed : int
        Trials that would give every group ``need`` spare rows.
    """
    separated: list[tuple[int, float]] = []
    undetermined = 0
    trials_needed = 0
    by_size: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        by_size.setdefault(int(g.size), []).append(i)
    log_p = math.log10(field_.p)
    for members in by_size.values():
        idx = np.stack([groups[i] for i in members])
        h = _hull_ranks(field_, x, y, idx, need)
        spare_x = h.rows_x - h.rank_xy
        spare_y = h.rows_y - h.rank_xy
        for k, i in enumerate(members):
            trials_needed = max(trials_needed, int(h.rank_xy[k]) + need + 1)
            bounds = []
            if h.rank_x[k] < h.rank_xy[k] and spare_x[k] >= 1:  # y leaves x's hull
                bounds.append(-spare_x[k] * log_p)
            if h.rank_y[k] < h.rank_xy[k] and spare_y[k] >= 1:  # x leaves y's hull
                bounds.append(-spare_y[k] * log_p)
            if bounds:
                separated.append((i, float(10.0 ** max(min(bounds), -300.0))))
            elif min(spare_x[k], spare_y[k]) < need:
                undetermined += 1
    return separated, undetermined, trials_needed


def locate_hull(field_: PrimeField, x: np.ndarray, y: np.ndarray, group: np.ndarray,
                 msg_of: np.ndarray, need: int) -> int:
    """The column of the first message whose elements complete a separation in ``group``."""
    order = group[np.lexsort((group, msg_of[group]))]
    for end in range(1, order.size + 1):
        if end < order.size and msg_of[order[end]] == msg_of[order[end - 1]]:
            continue  # cut prefixes at message boundaries
        h = _hull_ranks(field_, x, y, order[None, :end], need)
        if h.rank_x[0] < h.rank_xy[0] or h.rank_y[0] < h.rank_xy[0]:
            return int(order[end - 1])
    return int(order[-1])


@dataclass(frozen=True)
class Relations:
    """Affine relations column j = a·column i + b, one per entry of the four arrays."""

    i: np.ndarray
    j: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def __len__(self) -> int:
        return int(self.i.size)

    def select(self, keep: np.ndarray) -> Relations:
        return Relations(self.i[keep], self.j[keep], self.a[keep], self.b[keep])


def relations(
    field_: PrimeField, z: np.ndarray, cols: np.ndarray, rng: np.random.Generator, rows: int
) -> Relations:
    """Affine relations between two varying columns that hold on every row of ``z``.

    Each varying column's differences from its first row are normalised (divided by their
    first nonzero entry), so two columns are affinely related exactly when their normalised
    differences agree. Candidates are found on the first ``rows`` rows by hashing (a random
    GF(p)-linear fingerprint), confirmed exactly, and checked on every row. Each class of
    related columns is reported as the relations of its members to its first member.
    """
    empty = Relations(*(np.zeros(0, dtype=np.int64),) * 2, field_.zeros(0), field_.zeros(0))
    if z.shape[0] < 3 or cols.size < 2:
        return empty
    head = z[: max(3, min(rows, z.shape[0]))]
    v = field_.sub(head[1:, cols], head[0, cols][None, :])
    nonzero = np.asarray(v != 0, dtype=bool)
    varying = nonzero.any(axis=0)
    if varying.sum() < 2:
        return empty
    cols_v, v = cols[varying], v[:, varying]
    first = np.argmax(nonzero[:, varying], axis=0)
    lead = v[first, np.arange(v.shape[1])]
    canon = field_.mul(v, field_.inv(lead)[None, :])
    weights = field_.random(rng, canon.shape[0])
    prints = field_.sum(field_.mul(canon, weights[:, None]), axis=0)
    if prints.dtype == object:
        prints = np.asarray([hash(int(f)) for f in prints], dtype=np.int64)
    keys = np.stack([first.astype(np.int64), prints.astype(np.int64)], axis=1)
    _, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    shared = counts[inverse] > 1
    if not shared.any():
        return empty
    members = np.nonzero(shared)[0]
    order = members[np.argsort(inverse[members], kind="stable")]
    cls = inverse[order]
    is_rep = np.ones(order.size, dtype=bool)
    is_rep[1:] = cls[1:] != cls[:-1]
    rep_of = order[np.maximum.accumulate(np.where(is_rep, np.arange(order.size), 0))]
    k, r = order[~is_rep], rep_of[~is_rep]
    same = np.all(canon[:, k] == canon[:, r], axis=0)  # not a fingerprint collision
    k, r = k[same], r[same]
    i, j = cols_v[r], cols_v[k]
    a = field_.mul(lead[k], field_.inv(lead[r]))
    b = field_.sub(z[0, j], field_.mul(a, z[0, i]))
    found = Relations(i.astype(np.int64), j.astype(np.int64), a, b)
    return found.select(holds(field_, z, found))


def holds(field_: PrimeField, w: np.ndarray, rel: Relations) -> np.ndarray:
    """Per relation: whether column j = a·column i + b on every row of ``w``."""
    if len(rel) == 0:
        return np.zeros(0, dtype=bool)
    predicted = field_.add(field_.mul(w[:, rel.i], rel.a[None, :]), rel.b[None, :])
    return np.all(np.asarray(predicted == w[:, rel.j]), axis=0)


def relation_bound(p: int, width: int, n: int) -> float:
    """p-value bound of a relation seen on n rows: width²·p^−(n−2) pairs of chances."""
    exponent = 2 * math.log10(max(width, 2)) - (n - 2) * math.log10(p)
    return float(10.0 ** max(min(exponent, 0.0), -300.0))
