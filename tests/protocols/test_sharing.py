"""Shamir sharing over GF(p): any t shares give the secret, t − 1 shares say nothing about it.

References independent of the code under test: shares against the polynomial evaluated with
Python integers, the secret against galois's Lagrange interpolation.
"""

from __future__ import annotations

import itertools
from collections import Counter

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols import sharing
from protocols.errors import InputError
from protocols.field import prime_field

P7, P31, P61 = 7, (1 << 31) - 1, (1 << 61) - 1


@pytest.mark.parametrize("p", [P7, P31, P61, (1 << 127) - 1])
def test_shares_are_the_polynomial_evaluated_at_the_points(p: int) -> None:
    field = prime_field(p)
    rng = np.random.default_rng(0)
    secret = field.random(rng, 3)
    coefficients = field.random(rng, (2, 3))
    points = [1, 2, 5]
    shares = sharing.shamir_share(field, secret, points, coefficients)
    for c in range(3):  # f(x) = s + a1 x + a2 x^2 with Python integers
        s, a1, a2 = int(secret[c]), int(coefficients[0, c]), int(coefficients[1, c])
        assert [int(v) for v in shares[:, c]] == [(s + a1 * x + a2 * x * x) % p
                                                  for x in points]
    constant = sharing.shamir_share(field, secret, points, field.zeros((0, 3)))  # t = 1: f = s
    assert constant.dtype == field.dtype
    assert [[int(v) for v in row] for row in constant] == [[int(v) for v in secret]] * 3


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 6), data=st.data())
def test_any_t_shares_reconstruct_the_secret(n: int, data: st.DataObject) -> None:
    field = prime_field(P61)
    t = data.draw(st.integers(1, n))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    secret = field.random(rng, 4)
    points = [int(x) for x in rng.choice(np.arange(1, 50), size=n, replace=False)]
    shares = sharing.shamir_share(field, secret, points, field.random(rng, (t - 1, 4)))
    subset = sorted(data.draw(st.lists(st.integers(0, n - 1), min_size=t, max_size=n,
                                       unique=True)))
    got = sharing.shamir_reconstruct(field, [points[i] for i in subset],
                                     [shares[i] for i in subset], t)
    assert np.array_equal(got, secret)
    gf = galois.GF(P61)  # galois's interpolation through the same t points agrees
    xs, ys = gf([points[i] for i in subset[:t]]), gf([int(shares[i][0]) for i in subset[:t]])
    assert int(galois.lagrange_poly(xs, ys)(0)) == int(secret[0])


def test_t_minus_one_shares_are_uniform_whatever_the_secret() -> None:
    """In GF(7) with t = 3, any 2 shares take every pair of values equally often for each
    secret, over all coefficient choices (exhaustive): they carry no information."""
    field = prime_field(P7)
    points = [1, 2, 4]
    for secret in range(P7):
        counts: Counter[tuple[int, int]] = Counter()
        for a1, a2 in itertools.product(range(P7), repeat=2):
            shares = sharing.shamir_share(field, field.elements([secret]), points,
                                  field.elements([[a1], [a2]]))
            counts[(int(shares[0, 0]), int(shares[2, 0]))] += 1
        assert len(counts) == P7 * P7 and set(counts.values()) == {1}


def test_fewer_than_t_shares_refused_and_bad_parameters_named() -> None:
    field = prime_field(P61)
    shares = sharing.shamir_share(field, field.elements([5]), [1, 2, 3], field.elements([[1], [2]]))
    with pytest.raises(InputError, match="threshold 3"):
        sharing.shamir_reconstruct(field, [1, 2], list(shares[:2]), 3)
    with pytest.raises(InputError, match="distinct"):
        sharing.shamir_share(field, field.elements([5]), [1, 1], field.elements([[1]]))
    with pytest.raises(InputError, match="threshold = 4"):
        sharing.check_threshold(4, 3, P61)
    with pytest.raises(InputError, match="larger prime"):
        sharing.check_threshold(2, 7, P7)
