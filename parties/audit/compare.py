"""Two samples of a coalition's views, compared: element tests, linear tests, and a verdict.

Both statistical methods reduce to the same question — do two samples of the coalition's view
vector come from one law? The simulation audit compares real views with simulated ones, the
A/B audit the views under inputs A with those under inputs B. Rows are trials, columns are the
received field elements in :class:`~parties.audit.calls.Layout` order. The audits hold the
coalition's own randomness fixed (:mod:`parties.audit.randomness`), so each column is a
constant the coalition knows plus its residual view.

Element tests (one p-value per column and family)
    * ``value``: Kolmogorov–Smirnov on value / p (large fields), or a chi-square test on the
      counts of every value (p ≤ 64);
    * ``mod 2^b`` — the b low-order bits — and ``mod 3``, ``mod 5``, ``mod 7``: chi-square tests
      on the residues (large fields), each run when the smaller sample gives at least five
      trials per residue (b ≤ 8). A mask with a fixed pattern in its low bits keeps value / p
      uniform but not its residues: a constant shift mod p maps one residue class to at most
      three (the wrap around p).

Linear tests over GF(p)
    * *within a call*: does either sample leave the affine hull of the other? Ranks of the
      differences over GF(p) (:meth:`~protocols.field.PrimeField.ranks`), on the call's
      informative columns at once when the trials can saturate them, else on each coordinate
      slice (the elements with index c modulo the period of the call's messages, plus its
      one-element messages). A mask reused for two peers is invisible element by element but
      not here.
    * *between any two columns of the run*: an affine relation x_j = a·x_i + b that holds on
      every trial of one sample but not of the other (found in linear time by normalising each
      column's differences and hashing them). A mask reused in two calls — a PRG counter that
      restarts — is a relation between one element of each call.

    A hull of n samples is saturated once n exceeds its dimension; under the null both samples
    have the hull of their common support, and a separation found with an excess of e spare
    samples has probability at most p^−e (assuming, as for every SecureSum view, that the law
    is uniform on its affine hull). Columns that are the same constant in both samples carry
    nothing and are set aside, and so are duplicates (one broadcast value received by two
    members).

Verdict (:func:`decide`)
    Every p-value of every comparison goes into one Holm correction at α. A rejection is a
    ``leak``, located at the earliest (call, message) among the rejections. Otherwise the
    verdict is ``private`` only with power: the smallest deviation caught with probability 0.9
    at the corrected level — a sup distance between one element's distributions of value / p
    (Dvoretzky–Kiefer–Wolfowitz margins on the Kolmogorov critical value), an L1 distance for
    the residue tests (chi-square noncentrality, approximate) — and every linear group
    conclusive; else ``inconclusive``, with the number of trials that would do.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import optimize, special, stats

from parties.audit.calls import Layout
from parties.audit.result import INCONCLUSIVE, LEAK, PRIVATE
from protocols.fast_field import fast_field
from protocols.field import PrimeField

SMALL_FIELD = 64
"""Fields of at most this many elements get a chi-square test on every value."""

MIN_PER_CELL = 5
"""Residue tests run when the smaller sample has at least this many trials per residue."""

MODULI = (3, 5, 7)
MAX_LOW_BITS = 8
DETECT = 0.9
"""Power is stated as the deviation caught with this probability."""

ROW_SLACK = 8
"""Rows a hull test uses beyond (group size + excess needed): a saturated hull needs no more."""


@dataclass
class Comparison:
    """Every test of one two-sample comparison, with the column each one points at.

    Attributes
    ----------
    layout : Layout
        The columns' meaning.
    n_x, n_y : int
        Trials in the two samples (``x`` is the one under audit: real, or inputs A).
    p_values : ndarray of float
        One p-value per test.
    columns : ndarray of int
        The column each test locates (for a linear test, the column that closes the relation).
    families : list of str
        The family of each test (``value``, ``mod 16``, ``hull``, ``relation``, ...).
    undetermined : int
        Linear groups the trials could not saturate.
    trials_needed : int
        Trials that would saturate every linear group.
    groups : int
        Linear groups tested (the relation test counts as one).
    tests : int
        Hypotheses tested: every element test and every linear group.
    families_run : tuple of str
        The element-test families that ran.
    notes : dict
        Figures for the report (linear groups, excess needed, columns after de-duplication).
    """

    layout: Layout
    n_x: int
    n_y: int
    p_values: np.ndarray
    columns: np.ndarray
    families: list[str]
    undetermined: int = 0
    trials_needed: int = 0
    groups: int = 0
    tests: int = 0
    families_run: tuple[str, ...] = ()
    notes: dict[str, Any] = field(default_factory=dict)


# -- element tests ---------------------------------------------------------------------------


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


# -- linear tests ----------------------------------------------------------------------------


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


def _dedupe(x: np.ndarray, y: np.ndarray, cols: np.ndarray) -> np.ndarray:
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


def _hull_groups(cols: np.ndarray, elem_of: np.ndarray, msg_of: np.ndarray, sizes: np.ndarray,
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


def _locate_hull(field_: PrimeField, x: np.ndarray, y: np.ndarray, group: np.ndarray,
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


def _relation_bound(p: int, width: int, n: int) -> float:
    """p-value bound of a relation seen on n rows: width²·p^−(n−2) pairs of chances."""
    exponent = 2 * math.log10(max(width, 2)) - (n - 2) * math.log10(p)
    return float(10.0 ** max(min(exponent, 0.0), -300.0))


# -- one comparison ---------------------------------------------------------------------------


def compare(
    field_: PrimeField,
    layout: Layout,
    x: np.ndarray,
    y: np.ndarray | None = None,
    *,
    y_block: Callable[[int], np.ndarray] | None = None,
    alpha: float,
    seed: int = 0,
    linear: bool = True,
) -> Comparison:
    """Every element and linear test of sample ``x`` (n × D) against a reference sample.

    The reference is either a full matrix ``y`` (m × D: the A/B method's B views) or, call by
    call, ``y_block(c)`` (m × width of call c: simulated views, never materialised at once).
    Simulated calls are drawn independently of each other, so with ``y_block`` an affine
    relation between elements of two calls of ``x`` is a separation by construction; with a
    full ``y`` it is one when ``y`` does not satisfy it.
    """
    field_ = fast_field(field_)  # exact arithmetic, compiled ranks for 2^61 − 1 and 2^127 − 1
    call_of, msg_of, elem_of = layout.columns()
    n_calls = len(layout.calls)
    call_cols = [np.nonzero(call_of == c)[0] for c in range(n_calls)]
    if y_block is None:
        if y is None:
            raise ValueError("compare needs y or y_block")
        full = y

        def y_block(c: int) -> np.ndarray:
            return full[:, call_cols[c]]
    n_x = x.shape[0]
    width = x.shape[1]
    n_y = 0
    fams = element_families(field_.p, n_x)  # refined below once n_y is known
    need = 0
    rng = np.random.default_rng(seed)
    p_list: list[np.ndarray] = []
    where: list[np.ndarray] = []
    labels: list[str] = []
    kept_all: list[np.ndarray] = []
    informative = 0
    groups_total = undetermined = trials_needed = 0
    families_run: tuple[str, ...] = ()

    def found(bound: float, column: int, family: str) -> None:
        p_list.append(np.array([bound]))
        where.append(np.array([column]))
        labels.append(family)

    for c in range(n_calls):
        cols = call_cols[c]
        yb = y_block(c)
        if n_y == 0:
            n_y = yb.shape[0]
            fams = element_families(field_.p, min(n_x, n_y))
            families_run = tuple(name for name, _ in fams)
            need = excess_needed(field_.p, (len(fams) + 1) * max(width, 1) + 1, width, alpha)
        if cols.size == 0:
            continue
        xc = x[:, cols]
        local = informative_columns(xc, yb)
        informative += int(local.size)
        for name, pv in element_tests(field_.p, xc, yb, local):
            ok = ~np.isnan(pv)
            p_list.append(pv[ok])
            where.append(cols[local[ok]])
            labels.extend([name] * int(ok.sum()))
        if not linear or local.size == 0:
            continue
        kept = _dedupe(xc, yb, local)
        kept_all.append(cols[kept])
        groups = _hull_groups(kept, elem_of[cols], msg_of[cols],
                              np.asarray(layout.sizes[c]), min(n_x, n_y), need)
        separated, undet, needed = hull_tests(field_, xc, yb, groups, need)
        groups_total += len(groups) + 1  # + the call's relation test
        undetermined += undet
        trials_needed = max(trials_needed, needed)
        for g, bound in separated:
            found(bound, int(cols[_locate_hull(field_, xc, yb, groups[g], msg_of[cols], need)]),
                  "hull")
        for z, w, n_z in ((xc, yb, n_x), (yb, xc, n_y)):
            rel = relations(field_, z, kept, rng, need + ROW_SLACK)
            broken = rel.select(~holds(field_, w, rel))
            for col in np.maximum(broken.i, broken.j).tolist():
                found(_relation_bound(field_.p, kept.size, n_z), int(cols[col]), "relation")
    if linear and kept_all:
        kept = np.concatenate(kept_all)
        groups_total += 1
        samples = [(x, y, n_x)] if y is None else [(x, y, n_x), (y, x, n_y)]
        for z, w, n_z in samples:
            rel = relations(field_, z, kept, rng, need + ROW_SLACK)
            rel = rel.select(call_of[rel.i] != call_of[rel.j])  # within a call: tested above
            if w is not None:
                rel = rel.select(~holds(field_, w, rel))
            for col in np.maximum(rel.i, rel.j).tolist():
                found(_relation_bound(field_.p, kept.size, n_z), int(col), "relation")
        if min(n_x, n_y) - 2 < need:
            undetermined += 1
    n_elem = sum(1 for f in labels if f not in ("hull", "relation"))
    return Comparison(
        layout, n_x, n_y,
        p_values=np.concatenate(p_list) if p_list else np.zeros(0),
        columns=(np.concatenate(where).astype(np.int64) if where
                 else np.zeros(0, dtype=np.int64)),
        families=labels, undetermined=undetermined,
        trials_needed=max(trials_needed, need + 2) if linear else 0,
        groups=groups_total, tests=n_elem + groups_total, families_run=families_run,
        notes={"linear_groups": groups_total, "excess_needed": need,
               "columns_after_dedupe": int(sum(k.size for k in kept_all)),
               "informative_columns": informative},
    )


# -- power and verdict --------------------------------------------------------------------------


def sup_distance_power(n_x: int, n_y: int, level: float, detect: float = DETECT) -> float:
    """The sup-CDF distance a two-sample KS test at ``level`` catches with prob. ``detect``.

    The critical distance kolmogorov⁻¹(level)/sqrt(n_x·n_y/(n_x+n_y)) plus the DKW margins of
    both empirical CDFs (each within ε of its law with probability 1 − (1 − detect)/2).
    """
    n_eff = n_x * n_y / (n_x + n_y)
    critical = float(special.kolmogi(min(level, 1.0))) / math.sqrt(n_eff)
    beta = (1.0 - detect) / 2.0
    margin = sum(math.sqrt(math.log(2.0 / beta) / (2.0 * n)) for n in (n_x, n_y))
    return critical + margin


@lru_cache(maxsize=256)
def _noncentrality(df: int, level: float, detect: float) -> float:
    critical = stats.chi2.isf(level, df)
    return float(optimize.brentq(lambda lam: stats.ncx2.sf(critical, df, lam) - detect,
                                 1e-9, 1e6))


def cells_l1_power(n_x: int, n_y: int, cells: int, level: float,
                   detect: float = DETECT) -> float:
    """The L1 distance between residue laws a chi-square test at ``level`` catches.

    Approximate: the noncentrality of the two-sample statistic is n_eff·Σ(p − q)²/q ≥
    n_eff·L1² (Cauchy–Schwarz), and the test catches noncentrality λ* with probability
    ``detect``; so L1 ≥ sqrt(λ*/n_eff) is caught.
    """
    n_eff = n_x * n_y / (n_x + n_y)
    return math.sqrt(_noncentrality(cells - 1, level, detect) / n_eff)


def power_of(p: int, n_x: int, n_y: int, n_tests: int, alpha: float,
             families: Sequence[str]) -> dict[str, Any]:
    """The power figures of a set of comparisons at the Holm level α / tests."""
    level = alpha / max(n_tests, 1)
    out: dict[str, Any] = {"trials": n_x, "reference_trials": n_y, "tests": n_tests,
                           "level": level, "detect_probability": DETECT}
    if p > SMALL_FIELD:
        out["sup_cdf_distance"] = round(sup_distance_power(n_x, n_y, level), 4)
    cells = {}
    for name in families:
        if name == "value" and p > SMALL_FIELD:
            continue
        q = p if name == "value" else int(name.split()[1])
        cells[name] = round(cells_l1_power(n_x, n_y, q, level), 4)
    if cells:
        out["cells_l1"] = cells
    return out


def vacuous(power: dict[str, Any]) -> bool:
    """No distribution of value / p (or of the values, in a tiny field) is caught."""
    if "sup_cdf_distance" in power:
        return power["sup_cdf_distance"] >= 1.0
    return power.get("cells_l1", {}).get("value", 2.0) >= 2.0


def trials_for_power(p: int, per_family: float, fixed: int, alpha: float, ratio: float) -> int:
    """The fewest trials whose element tests are not vacuous (reference = ratio × trials).

    More trials run more residue families, so the number of tests is re-counted at each size:
    ``per_family`` tests per element family plus ``fixed`` others.
    """
    def ok(n: int) -> bool:
        m = max(2, round(n * ratio))
        tests = per_family * len(element_families(p, min(n, m))) + fixed
        level = alpha / max(tests, 1.0)
        if p > SMALL_FIELD:
            return sup_distance_power(n, m, level) < 1.0
        return cells_l1_power(n, m, p, level) < 2.0

    lo, hi = 2, 4
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > 1 << 24:
            return hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class Decision:
    """The combined verdict of one or more comparisons."""

    verdict: str
    p_value: float | None
    call: int | None
    message: str | None
    family: str | None
    power: dict[str, Any]
    details: dict[str, Any]


def decide(comparisons: Sequence[Comparison], alpha: float, p: int, ratio: float,
           linear_covers: str) -> Decision:
    """Holm over every test of every comparison; locate the first rejection; state power.

    Parameters
    ----------
    comparisons : sequence of Comparison
        Comparisons that share one layout (the audited sample's).
    ratio : float
        Reference trials per audited trial (for the number of trials that would do).
    linear_covers : str
        What the linear tests cover, in words (for the power statement).
    """
    all_p = np.concatenate([c.p_values for c in comparisons])
    n_tests = max(1, sum(c.tests for c in comparisons), int(all_p.size))
    n_x = min(c.n_x for c in comparisons)
    n_y = min(c.n_y for c in comparisons)
    families = sorted({f for c in comparisons for f in c.families_run})
    power = power_of(p, n_x, n_y, n_tests, alpha, families)
    undetermined = sum(c.undetermined for c in comparisons)
    power["linear"] = {"groups": sum(c.groups for c in comparisons),
                       "undetermined": undetermined, "covers": linear_covers}
    details: dict[str, Any] = {"tests": n_tests, "alpha": alpha}
    p_value = float(min(1.0, n_tests * float(all_p.min()))) if all_p.size else None
    rejected = _holm(all_p, alpha, n_tests)
    if rejected.size:
        found = []  # (call position, message position, comparison, test)
        offsets = np.cumsum([0] + [c.p_values.size for c in comparisons])
        for t in rejected.tolist():
            ci = int(np.searchsorted(offsets, t, side="right")) - 1
            c = comparisons[ci]
            col = int(c.columns[t - offsets[ci]])
            call_of, msg_of, _ = c.layout.columns()
            found.append((int(call_of[col]), int(msg_of[col]), ci, t - int(offsets[ci])))
        _, _, ci, t = min(found)
        c = comparisons[ci]
        call, message, element = c.layout.describe(int(c.columns[t]))
        details.update(element=element, family=c.families[t], rejections=int(rejected.size))
        return Decision(LEAK, p_value, call, message, c.families[t], power, details)
    reasons = []
    if vacuous(power):
        reasons.append("too few trials for the element tests to catch any deviation at α")
    if undetermined:
        reasons.append(f"{undetermined} linear group(s) undetermined (too few trials to "
                       "saturate their affine hull)")
    if reasons:
        details["reason"] = "; ".join(reasons)
        per_family = sum((c.tests - c.groups) / max(len(c.families_run), 1)
                         for c in comparisons)
        fixed = sum(c.groups for c in comparisons)
        details["trials_needed"] = max([trials_for_power(p, per_family, fixed, alpha, ratio)]
                                       + [c.trials_needed for c in comparisons])
        return Decision(INCONCLUSIVE, p_value, None, None, None, power, details)
    return Decision(PRIVATE, p_value, None, None, None, power, details)


def _holm(p: np.ndarray, alpha: float, n_tests: int) -> np.ndarray:
    """Indices of the tests Holm's step-down procedure rejects at α (n_tests hypotheses)."""
    if p.size == 0:
        return np.zeros(0, dtype=np.int64)
    order = np.argsort(p, kind="stable")
    thresholds = alpha / (n_tests - np.arange(p.size))
    passing = p[order] <= thresholds
    if not passing[0]:
        return np.zeros(0, dtype=np.int64)
    stop = int(np.argmin(passing)) if not passing.all() else p.size
    return order[:stop]
