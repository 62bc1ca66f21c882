"""Honest draws that reach the coalition only through the expansion of a short seed.

A program may draw a few field elements and use them as a seed: it hashes them into an AES key
and expands the key into masks (a pair seed set up by one party, a share key). In the program's
own field (p = 2^61 − 1) a 2-element seed has 2^122 values and its expansion is
pseudo-random; in the exact audit's tiny field (p = 5) the same seed has 25 values, and 25
values hashed into GF(5) are not uniform. The exact method enumerates the seed's values with
their true probabilities, so it sees that non-uniformity as a difference between inputs — an
artefact of the tiny field, not a property of the program. It must neither call it a leak nor
call the program private (it cannot model the expansion as uniform without auditing another
program), so it answers *not applicable* for it.

What marks a seed expansion, and not a real leak of a badly used draw, is the shape of the
coalition's view as a function f of the key's draws s ∈ GF(p)^n (everything else fixed),
element by element (:func:`expansion_of`). Every element of the view that varies with s must

1. depend on at least two draws jointly (a hash mixes every seed element into every output;
   a mask reduced to a small range, ``s mod 2``, depends on one draw);
2. not be affine in s (an affine image of uniform draws is uniform: the enumeration is then
   exact and a difference is real — a carried seed is the identity);
3. take its values as a random function of p^n points would — a χ² test of the p counts
   against uniform at level :data:`LEVEL` (a draw reduced to a few values, or a sum of
   small-range draws, fails it in any field).

A key whose draws appear in the view themselves (a seed handed on) fails 1 or 2, so the leaks of
key flow stay leaks. Only a key every one of whose dependent elements passes all three is a
seed expansion.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.stats import chi2

LEVEL = 1e-3
"""χ² level below which an element's value counts are not those of a random function.

An error at this level errs towards *leak* (the method's answer without this module), never
towards hiding one: a true expansion is refused as one with probability ≤ LEVEL per element.
With 25 points in GF(5) the bound is χ² ≈ 18.5; two bits added (counts 9, 12, 4, 0, 0) give
23.2."""


@dataclass(frozen=True)
class Expansion:
    """How the coalition's view depends on one key's draws.

    Attributes
    ----------
    seeded : bool
        Whether every element that varies with the draws looks like a seed expansion.
    columns : tuple of int
        The view's elements (columns) that vary with the draws.
    why : str
        For ``seeded = False`` with varying columns, the first column's failed property.
    """

    seeded: bool
    columns: tuple[int, ...]
    why: str = ""


def expansion_of(table: np.ndarray, p: int, n: int) -> Expansion:
    """Classify the view's dependence on n draws of GF(p) from its table.

    Parameters
    ----------
    table : array of int, shape (p**n, width)
        Row i: the coalition's view (field elements as integers) when the draws are the i-th
        vector of GF(p)^n in lexicographic order (first draw most significant).
    p : int
        The field's prime.
    n : int
        Number of draws.
    """
    table = np.asarray(table, dtype=np.int64) % p
    if table.shape[0] != p**n:
        raise ValueError(f"the table has {table.shape[0]} rows, not p^n = {p ** n}")
    varying = tuple(int(c) for c in np.flatnonzero(np.ptp(table, axis=0) > 0)) if len(
        table) else ()
    if not varying:
        return Expansion(False, ())
    grid = np.array(list(np.ndindex(*(p,) * n)), dtype=np.int64)  # row i's draws
    threshold = chi2.isf(LEVEL, p - 1)
    for c in varying:
        f = table[:, c].reshape((p,) * n)
        joint = [j for j in range(n) if np.any(np.ptp(f, axis=j) > 0)]
        if len(joint) < 2:
            return Expansion(False, varying, f"element {c} depends on one draw")
        f0 = int(f[(0,) * n])
        slopes = [int(f[tuple(1 if i == j else 0 for i in range(n))]) - f0 for j in range(n)]
        affine = (f0 + grid @ np.array(slopes, dtype=np.int64)) % p
        if np.array_equal(affine, table[:, c]):
            return Expansion(False, varying, f"element {c} is affine in the draws")
        counts = np.bincount(table[:, c], minlength=p)
        expected = table.shape[0] / p
        if float(((counts - expected) ** 2).sum() / expected) > threshold:
            return Expansion(False, varying, f"element {c} is far from uniform")
    return Expansion(True, varying)

