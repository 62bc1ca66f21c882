"""Two samples of a coalition's views, compared: element tests, linear tests, and a verdict.

The tests live in :mod:`parties.audit.element_tests` and :mod:`parties.audit.affine_tests`;
this module runs them on two samples (:func:`compare`), states their power and decides.

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

from parties.audit.affine_tests import (
    ROW_SLACK,
    dedupe,
    excess_needed,
    holds,
    hull_groups,
    hull_tests,
    informative_columns,
    locate_hull,
    relation_bound,
    relations,
)
from parties.audit.calls import Layout
from parties.audit.element_tests import SMALL_FIELD, element_families, element_tests
from parties.audit.result import INCONCLUSIVE, LEAK, PRIVATE
from protocols import seeds
from protocols.field import PrimeField
from protocols.field.fast_field import fast_field

DETECT = 0.9
"""Power is stated as the deviation caught with this probability."""


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
    rng = seeds.rng(seed, "audit.compare")
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
        kept = dedupe(xc, yb, local)
        kept_all.append(cols[kept])
        groups = hull_groups(kept, elem_of[cols], msg_of[cols],
                              np.asarray(layout.sizes[c]), min(n_x, n_y), need)
        separated, undet, needed = hull_tests(field_, xc, yb, groups, need)
        groups_total += len(groups) + 1  # + the call's relation test
        undetermined += undet
        trials_needed = max(trials_needed, needed)
        for g, bound in separated:
            found(bound, int(cols[locate_hull(field_, xc, yb, groups[g], msg_of[cols], need)]),
                  "hull")
        for z, w, n_z in ((xc, yb, n_x), (yb, xc, n_y)):
            rel = relations(field_, z, kept, rng, need + ROW_SLACK)
            broken = rel.select(~holds(field_, w, rel))
            for col in np.maximum(broken.i, broken.j).tolist():
                found(relation_bound(field_.p, kept.size, n_z), int(cols[col]), "relation")
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
                found(relation_bound(field_.p, kept.size, n_z), int(col), "relation")
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
