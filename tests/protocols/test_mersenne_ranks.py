"""Compiled ranks over GF(2^61 − 1) and GF(2^127 − 1), and the audits' fast field, against galois.

Ranks are computed independently by galois (``np.linalg.matrix_rank`` on a galois array) and by
construction (a product of an r×k and a k×c matrix of uniform elements has rank k with
overwhelming probability; planted duplicate and combined rows lower it by a known amount).
"""

from __future__ import annotations

import galois
import numpy as np
import pytest

from protocols.field import GaloisField, Mersenne61Field, prime_field
from protocols.field import ranks as mersenne_ranks
from protocols.field.fast_field import fast_field
from protocols.field.mersenne127 import Mersenne127Field

PRIMES = [(1 << 61) - 1, (1 << 127) - 1]


def _galois_rank(p: int, m: np.ndarray) -> int:
    gf = galois.GF(p)
    if m.size == 0:
        return 0
    return int(np.linalg.matrix_rank(gf(m if m.dtype == object else m.astype(np.int64))))


def _low_rank(field_, rng, shape, k):
    """A stack of r×c matrices of rank k (with probability 1 − O(c/p)), as a product."""
    s, r, c = shape
    a = field_.random(rng, (s, r, k))
    b = field_.random(rng, (s, k, c))
    if k == 0:
        return field_.zeros((s, r, c))
    return field_.sum(field_.mul(a[:, :, :, None], b[:, None, :, :]), axis=2)


@pytest.mark.parametrize("p", PRIMES)
def test_ranks_match_galois_on_random_rank_deficient_stacks(p):
    field_ = prime_field(p)
    rng = np.random.default_rng(7)
    for _ in range(25):
        r, c = int(rng.integers(1, 14)), int(rng.integers(1, 14))
        k = int(rng.integers(0, min(r, c) + 1))
        stack = _low_rank(field_, rng, (4, r, c), k)
        before = stack.copy()
        got = mersenne_ranks.ranks(p, stack)
        want = [_galois_rank(p, stack[s]) for s in range(4)]
        assert got.tolist() == want == [k] * 4
        assert np.array_equal(stack, before)  # the input is not modified


@pytest.mark.parametrize("p", PRIMES)
def test_ranks_of_planted_dependencies_and_edge_values(p):
    field_ = prime_field(p)
    rng = np.random.default_rng(3)
    m = field_.random(rng, (6, 9))
    m[2] = m[0]  # duplicate row
    m[4] = field_.add(m[1], field_.mul(m[3], field_.elements(np.array([5]))))  # combination
    m[5] = field_.elements(np.array([p - 1] * 9, dtype=object))  # −1 everywhere
    zero = field_.zeros((1, 3, 4))
    stack = np.stack([m, field_.sub(m, m)])
    assert mersenne_ranks.ranks(p, stack).tolist() == [_galois_rank(p, m), 0] == [4, 0]
    assert mersenne_ranks.ranks(p, zero).tolist() == [0]
    assert mersenne_ranks.ranks(p, field_.zeros((0, 3, 3))).tolist() == []


def test_ranks_of_limb_records_equal_ranks_of_python_ints():
    p = (1 << 127) - 1
    ints = prime_field(p)
    records = Mersenne127Field()
    rng = np.random.default_rng(11)
    stack = _low_rank(ints, rng, (3, 7, 8), 5)
    as_records = records.elements(stack)
    assert mersenne_ranks.ranks(p, as_records).tolist() == [5, 5, 5]


def test_unsupported_prime_is_refused():
    assert not mersenne_ranks.supported((1 << 64) - 59)
    with pytest.raises(ValueError, match="no compiled rank path"):
        mersenne_ranks.ranks((1 << 64) - 59, np.zeros((1, 2, 2), dtype=object))


@pytest.mark.parametrize("p", [(1 << 127) - 1, (1 << 64) - 59])
def test_fast_field_arithmetic_matches_galois(p):
    field_ = prime_field(p)
    fast = fast_field(field_)
    assert fast == field_ and fast.dtype == field_.dtype and fast is not field_
    gf = galois.GF(p)
    rng = np.random.default_rng(5)
    a, b = field_.random(rng, (5, 6)), field_.random(rng, (5, 6))
    a[0, :3] = 0
    b[1, :3] = p - 1
    ga, gb = gf(a), gf(b)
    cases = [(fast.add(a, b), ga + gb), (fast.sub(a, b), ga - gb), (fast.mul(a, b), ga * gb),
             (fast.neg(a), -ga), (fast.sum(a, axis=0), np.sum(ga, axis=0)),
             (fast.sum(a, axis=None), np.sum(ga.ravel()))]
    for got, want in cases:
        assert got.dtype == object
        assert [int(v) for v in np.ravel(got)] == [int(v) for v in np.ravel(want)]
    nonzero = field_.sub(field_.add(a, a), a)
    nonzero[nonzero == 0] = 1
    assert [int(v) for v in fast.inv(nonzero).ravel()] == [
        int(v) for v in np.reciprocal(gf(nonzero)).ravel()]
    assert [int(v) for v in fast.inv(a[0]).ravel()] == [int(v) for v in field_.inv(a[0])]
    assert int(fast.inv(a[0])[0]) == 0  # zero maps to zero, as Fermat's x^(p−2) does
    stack = _low_rank(field_, rng, (3, 5, 6), 3)
    assert fast.ranks(stack).tolist() == field_.ranks(stack).tolist() == [3, 3, 3]


def test_fast_field_keeps_other_fields_and_compiles_61():
    small = prime_field(101)
    assert fast_field(small) is small
    f61 = prime_field((1 << 61) - 1)
    fast = fast_field(f61)
    assert isinstance(f61, Mersenne61Field) and fast == f61
    stack = _low_rank(f61, np.random.default_rng(1), (5, 12, 9), 6)
    assert fast.ranks(stack).tolist() == f61.ranks(stack).tolist() == [6] * 5
    assert not isinstance(fast_field(prime_field((1 << 64) - 59)), Mersenne61Field)
    assert isinstance(prime_field((1 << 127) - 1), GaloisField)
