"""Tests of :mod:`protocols.field`: prime fields and fixed-point encoding.

Every expected value is computed independently of the code under test: with Python integers
(exact, arbitrary precision), with the ``galois`` package (``galois.GF(p)`` arrays and
``np.linalg.matrix_rank`` on them), with :class:`fractions.Fraction`, or by brute force on tiny
fields.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols.errors import EncodingError, FieldOverflowError, InputError
from protocols.field import (
    MERSENNE61,
    FixedPoint,
    GaloisField,
    Mersenne61Field,
    PrimeField,
    SmallPrimeField,
    parse_prime,
    prime_field,
)

P61 = (1 << 61) - 1
P31 = (1 << 31) - 1
P127 = (1 << 127) - 1
P64 = (1 << 64) - 59  # the largest prime below 2^64: a GaloisField wider than 63 bits

SMALL_PRIMES = (2, 3, 5, 7, 65537, P31)
FAST_PRIMES = (*SMALL_PRIMES, P61)  # the fields with a hand-written fast path


def fast_field(p: int) -> PrimeField:
    return Mersenne61Field() if p == P61 else SmallPrimeField(p)


def edge_values(p: int) -> list[int]:
    """0, 1, p−1, p−2, the halves, and the 32-bit and 61-bit boundaries — those below p."""
    candidates = [
        0, 1, 2, 3, p - 1, p - 2, (p - 1) // 2, (p + 1) // 2,
        (1 << 29) - 1, 1 << 29, (1 << 31) - 1, 1 << 31,
        (1 << 32) - 1, 1 << 32, (1 << 32) + 1, (1 << 33) + 12345,
        1 << 60, (1 << 61) - 2, (1 << 61) - 3,
    ]
    return sorted({v for v in candidates if 0 <= v < p})


def as_field(field: PrimeField, ints: list[int] | np.ndarray) -> np.ndarray:
    """Python ints (already reduced) as an element array of ``field``'s dtype."""
    arr = np.array(ints, dtype=object)  # never via float: ints may exceed 2^63
    return np.array([int(v) for v in arr.ravel()], dtype=field.dtype).reshape(arr.shape)


def ints(a: np.ndarray) -> list:
    """An element array as nested lists of Python ints."""
    return np.asarray(a, dtype=object).tolist()


def random_ints(rng: np.random.Generator, p: int, shape: tuple[int, ...]) -> np.ndarray:
    """Uniform values in [0, p) as an object array of Python ints (independent of the field)."""
    n = int(np.prod(shape))
    chunks = [rng.integers(0, 1 << 62, size=n, dtype=np.int64).tolist() for _ in range(3)]
    values = [(a << 124 | b << 62 | c) % p for a, b, c in zip(*chunks, strict=True)]
    return np.array(values, dtype=object).reshape(shape)


# -- element-wise arithmetic on edge values, against Python integers --------------------------


@pytest.mark.parametrize("p", FAST_PRIMES)
def test_add_sub_mul_neg_on_all_pairs_of_edge_values_match_python_ints(p: int) -> None:
    field = fast_field(p)
    edges = edge_values(p)
    a = as_field(field, edges)[:, None]
    b = as_field(field, edges)[None, :]
    expected_add = [[(x + y) % p for y in edges] for x in edges]
    expected_sub = [[(x - y) % p for y in edges] for x in edges]
    expected_mul = [[(x * y) % p for y in edges] for x in edges]
    for op, expected in ((field.add, expected_add), (field.sub, expected_sub),
                         (field.mul, expected_mul)):
        out = op(a, b)
        assert out.dtype == field.dtype
        assert ints(out) == expected
    assert ints(field.neg(as_field(field, edges))) == [(-x) % p for x in edges]


@pytest.mark.parametrize("p", FAST_PRIMES)
def test_scalar_operations_match_python_ints(p: int) -> None:
    field = fast_field(p)
    for x, y in itertools.product(edge_values(p), repeat=2):
        a, b = field.dtype.type(x), field.dtype.type(y)
        assert int(field.add(a, b)) == (x + y) % p
        assert int(field.sub(a, b)) == (x - y) % p
        assert int(field.mul(a, b)) == (x * y) % p
        assert int(field.neg(a)) == (-x) % p


GALOIS_PRIMES = (7, P31, P61, P64, P127)  # galois compiles each small prime (~1 s): a few


@pytest.mark.parametrize("p", GALOIS_PRIMES)
def test_random_arrays_match_galois_and_python_ints(p: int) -> None:
    field = prime_field(p)
    gf = galois.GF(p)
    rng = np.random.default_rng(20240611 + p % 1000)
    x = random_ints(rng, p, (4, 50))
    y = random_ints(rng, p, (4, 50))
    gx, gy = gf(x.tolist()), gf(y.tolist())
    a, b = as_field(field, x), as_field(field, y)
    assert ints(field.add(a, b)) == ints(gx + gy)
    assert ints(field.sub(a, b)) == ints(gx - gy)
    assert ints(field.mul(a, b)) == ints(gx * gy)
    assert ints(field.neg(a)) == ints(-gx)
    # and galois itself against Python ints, so the reference is not taken on trust
    assert ints(gx * gy) == [[(u * v) % p for u, v in zip(r, s, strict=True)]
                             for r, s in zip(x.tolist(), y.tolist(), strict=True)]


@pytest.mark.parametrize("p", [P31, P61])
def test_galois_backed_field_agrees_with_fast_path(p: int) -> None:
    """GaloisField(p) is the reference the fast paths are tested against: same answers."""
    fast, ref = fast_field(p), GaloisField(p)
    rng = np.random.default_rng(5)
    x, y = random_ints(rng, p, (64,)), random_ints(rng, p, (64,))
    for op in ("add", "sub", "mul"):
        got = getattr(fast, op)(as_field(fast, x), as_field(fast, y))
        want = getattr(ref, op)(as_field(ref, x), as_field(ref, y))
        assert ints(got) == ints(want)


# -- reductions: elements, sum, sum_arrays ----------------------------------------------------


@pytest.mark.parametrize("p", [*FAST_PRIMES, P64, P127])
def test_elements_reduces_any_integer_of_any_sign(p: int) -> None:
    field = prime_field(p)
    values = [0, 1, -1, p - 1, p, p + 1, -p, 2 * p + 3, (1 << 62) + 7, -(1 << 62) - 7,
              (1 << 63) - 1, -(1 << 63), 10**30, -(10**30)]
    out = field.elements(np.array(values, dtype=object))
    assert out.dtype == field.dtype
    assert ints(out) == [v % p for v in values]
    small = [v for v in values if -(1 << 63) <= v < (1 << 63)]
    assert ints(field.elements(np.array(small, dtype=np.int64))) == [v % p for v in small]


@pytest.mark.parametrize("p", [*FAST_PRIMES, P64])
def test_elements_reduces_uint64_words_above_2_63(p: int) -> None:
    """Unsigned 64-bit inputs are reduced as unsigned numbers (no wrap to negative int64)."""
    field = prime_field(p)
    words = [0, 1, (1 << 63) - 1, 1 << 63, (1 << 63) + 5, (1 << 64) - 1]
    out = field.elements(np.array(words, dtype=np.uint64))
    assert ints(out) == [w % p for w in words]


@pytest.mark.parametrize("p", [*FAST_PRIMES, P127])
def test_sum_along_axis_0_and_all(p: int) -> None:
    field = prime_field(p)
    rng = np.random.default_rng(11)
    x = random_ints(rng, p, (37, 6))
    a = as_field(field, x)
    cols = [sum(int(v) for v in x[:, j]) % p for j in range(6)]
    assert ints(field.sum(a, axis=0)) == cols
    assert ints(field.sum(a)) == cols  # axis 0 is the default
    assert int(field.sum(a, axis=None)) == sum(int(v) for v in x.ravel()) % p
    assert ints(field.sum(a, axis=1)) == [sum(int(v) for v in row) % p for row in x]
    if p in GALOIS_PRIMES:
        assert ints(field.sum(a, axis=0)) == ints(np.sum(galois.GF(p)(x.tolist()), axis=0))


@pytest.mark.parametrize("p", FAST_PRIMES)
def test_sum_of_many_maximal_terms(p: int) -> None:
    """10^5 copies of p − 1 (and of 2^61 − 2): half-sums never overflow."""
    field = fast_field(p)
    n = 100_000
    for v in {p - 1, (p - 1) // 2, edge_values(p)[-1]}:
        a = np.full((n, 2), v, dtype=field.dtype)
        assert ints(field.sum(a, axis=0)) == [(n * v) % p] * 2
        assert int(field.sum(a, axis=None)) == (2 * n * v) % p


@pytest.mark.parametrize("p", [*FAST_PRIMES, P127])
@pytest.mark.parametrize("count", [1, 2, 7, 8, 9, 15, 16, 17, 31])
def test_sum_arrays_crosses_the_lazy_reduction_boundary(p: int, count: int) -> None:
    field = prime_field(p)
    # all p − 1 first: the worst case for the unreduced running total
    worst = [np.full(5, p - 1, dtype=field.dtype) if field.dtype != object
             else as_field(field, [p - 1] * 5) for _ in range(count)]
    assert ints(field.sum_arrays(worst)) == [(count * (p - 1)) % p] * 5
    rng = np.random.default_rng(count)
    xs = [random_ints(rng, p, (3, 4)) for _ in range(count)]
    got = field.sum_arrays([as_field(field, x) for x in xs])
    expected = [[sum(int(x[i, j]) for x in xs) % p for j in range(4)] for i in range(3)]
    assert ints(got) == expected


@pytest.mark.parametrize("p", [7, P31, P61, P127])
@pytest.mark.parametrize(("n_plus", "n_minus"), [(1, 0), (1, 1), (1, 7), (7, 1), (8, 8),
                                                 (3, 12), (15, 0)])
def test_combine_adds_and_subtracts_like_python_ints(p: int, n_plus: int, n_minus: int) -> None:
    field = prime_field(p)
    rng = np.random.default_rng(n_plus * 31 + n_minus)
    plus = [random_ints(rng, p, (2, 3)) for _ in range(n_plus)]
    minus = [random_ints(rng, p, (2, 3)) for _ in range(n_minus)]
    plus[0][0, 0] = p - 1  # extremes: p − 1 added, 0 and p − 1 subtracted
    if minus:
        minus[0][0, 0], minus[0][0, 1] = 0, p - 1
    got = field.combine([as_field(field, a) for a in plus], [as_field(field, a) for a in minus])
    assert got.shape == (2, 3) and got.dtype == field.dtype
    expected = [[(sum(int(a[i, j]) for a in plus) - sum(int(a[i, j]) for a in minus)) % p
                 for j in range(3)] for i in range(2)]
    assert ints(got) == expected


@pytest.mark.parametrize("count", [1, 8, 9])
def test_mersenne_sums_of_long_arrays_cross_block_boundaries(count: int) -> None:
    """Arrays longer than the blocks the fast path sums in (2^14 elements) and odd sizes."""
    field = Mersenne61Field()
    n = 2 * (1 << 14) + 5
    worst = [np.full(n, P61 - 1, dtype=np.uint64) for _ in range(count)]
    assert set(field.sum_arrays(worst).tolist()) == {(count * (P61 - 1)) % P61}
    ramp = np.arange(n, dtype=np.uint64) * np.uint64(1 << 40)  # distinct values per element
    got = field.combine([ramp] * count, [worst[0]] * count)
    expected = [(count * (i << 40) - count * (P61 - 1)) % P61 for i in range(0, n, 4099)]
    assert got[::4099].tolist() == expected
    assert got.shape == (n,)


@pytest.mark.parametrize("shape", [(2 * (1 << 13) + 5,), (3, 6000), ((1 << 13) + 1,)])
def test_mersenne_add_sub_neg_mul_of_long_arrays_match_python_ints(shape: tuple[int, ...]
                                                                    ) -> None:
    """Arrays longer than the block the reduction runs in place in (2^13 elements), in one and
    two dimensions, with the edge values 0, 1, p − 1 and p − 2 at block boundaries; the inputs
    are left as they were."""
    field = Mersenne61Field()
    rng = np.random.default_rng(5)
    a = rng.integers(0, P61, size=shape, dtype=np.uint64)
    b = rng.integers(0, P61, size=shape, dtype=np.uint64)
    flat_a, flat_b = a.reshape(-1), b.reshape(-1)
    for i, (x, y) in zip(range(0, flat_a.size, (1 << 13) - 1),
                         itertools.cycle([(0, 0), (P61 - 1, 1), (1, P61 - 1), (P61 - 1, P61 - 2),
                                          (0, P61 - 1)]), strict=False):
        flat_a[i], flat_b[i] = x, y
    a_before, b_before = a.copy(), b.copy()
    ia, ib = [int(v) for v in a.reshape(-1)], [int(v) for v in b.reshape(-1)]
    cases = {"add": (field.add(a, b), [(x + y) % P61 for x, y in zip(ia, ib, strict=True)]),
             "sub": (field.sub(a, b), [(x - y) % P61 for x, y in zip(ia, ib, strict=True)]),
             "neg": (field.neg(a), [(-x) % P61 for x in ia]),
             "mul": (field.mul(a, b), [(x * y) % P61 for x, y in zip(ia, ib, strict=True)])}
    for name, (got, expected) in cases.items():
        assert got.shape == shape and got.dtype == np.uint64, name
        assert got.reshape(-1).tolist() == expected, name
    np.testing.assert_array_equal(a, a_before)
    np.testing.assert_array_equal(b, b_before)


def test_combine_and_sum_arrays_of_empty_and_zero_dimensional_arrays() -> None:
    field = Mersenne61Field()
    empty = np.zeros((0, 4), dtype=np.uint64)
    assert field.combine([empty, empty], [empty]).shape == (0, 4)
    a, b = np.uint64(P61 - 1), np.uint64(5)
    assert int(field.combine([np.array(a), np.array(b)], [np.array(b)])) == P61 - 1
    assert field.sum_arrays([np.array(a)] * 9).shape == ()
    with pytest.raises(ValueError):
        field.combine([], [np.array(a)])


def test_mersenne_from_signed_maps_negatives_to_the_upper_half() -> None:
    half = (P61 - 1) // 2
    values = [0, 1, -1, half, -half, 12345, -(1 << 40)]
    got = Mersenne61Field().from_signed(np.array(values, dtype=np.int64))
    assert got.dtype == np.uint64
    assert got.tolist() == [v % P61 for v in values]


@pytest.mark.parametrize("p", [5, P61])
def test_sum_arrays_of_nothing_is_refused(p: int) -> None:
    with pytest.raises(ValueError, match="at least one"):
        prime_field(p).sum_arrays([])


# -- linear algebra: inverse, rank, row reduction ---------------------------------------------


@pytest.mark.parametrize("p", [5, 7, P31, P61, P127])
def test_inverse_scalar_and_elementwise(p: int) -> None:
    field = prime_field(p)
    values = [v for v in edge_values(p) if v != 0]
    for v in values:
        inv = field.inv_scalar(v)
        assert (inv * v) % p == 1
    inv = field.inv(as_field(field, values))
    assert ints(inv) == [pow(v, -1, p) for v in values]
    with pytest.raises(ZeroDivisionError):
        field.inv_scalar(p)  # ≡ 0


def low_rank_matrix(p: int, rows: int, cols: int, rank: int, seed: int) -> list[list[int]]:
    """B·C with B (rows × rank) and C (rank × cols), computed with galois."""
    gf = galois.GF(p)
    rng = np.random.default_rng(seed)
    b = gf(random_ints(rng, p, (rows, rank)).tolist())
    c = gf(random_ints(rng, p, (rank, cols)).tolist())
    return ints(b @ c)


@pytest.mark.parametrize("p", [7, P31, P61, P127])
@pytest.mark.parametrize(("rows", "cols", "inner"), [(4, 6, 2), (6, 4, 3), (5, 5, 5), (3, 7, 1)])
def test_rank_and_row_reduce_match_galois(p: int, rows: int, cols: int, inner: int) -> None:
    field = prime_field(p)
    gf = galois.GF(p)
    m = low_rank_matrix(p, rows, cols, inner, seed=rows * 10 + cols)
    expected_rank = int(np.linalg.matrix_rank(gf(m)))
    a = as_field(field, np.array(m, dtype=object))
    assert field.rank(a) == expected_rank
    reduced, pivots = field.row_reduce(a)
    assert ints(reduced) == ints(gf(m).row_reduce())
    assert len(pivots) == expected_rank
    for r, c in enumerate(pivots):  # each pivot column is the r-th unit vector
        assert [int(v) for v in reduced[:, c]] == [int(i == r) for i in range(rows)]


@pytest.mark.parametrize("p", [7, P61])
def test_rank_of_zero_and_identity_and_stacked_ranks(p: int) -> None:
    field = prime_field(p)
    gf = galois.GF(p)
    assert field.rank(field.zeros((3, 4))) == 0
    assert field.rank(as_field(field, np.eye(4, dtype=np.int64).tolist())) == 4
    stack = [low_rank_matrix(p, 4, 5, k, seed=k) for k in (1, 2, 3, 4)]
    stack.append([[0] * 5 for _ in range(4)])
    got = field.ranks(as_field(field, np.array(stack, dtype=object)))
    assert got.tolist() == [int(np.linalg.matrix_rank(gf(m))) for m in stack]


def brute_force_rank(p: int, matrix: tuple[tuple[int, ...], ...]) -> int:
    """log_p of the number of distinct vectors in the row space (every combination listed)."""
    rows = len(matrix)
    span = {
        tuple(sum(c * matrix[i][j] for i, c in enumerate(coefs)) % p
              for j in range(len(matrix[0])))
        for coefs in itertools.product(range(p), repeat=rows)
    }
    rank = 0
    while p**rank < len(span):
        rank += 1
    assert p**rank == len(span)
    return rank


@pytest.mark.parametrize(("p", "shape"), [(2, (3, 3)), (3, (2, 3)), (2, (2, 4))])
def test_rank_of_every_tiny_matrix_matches_brute_force(p: int, shape: tuple[int, int]) -> None:
    field = SmallPrimeField(p)
    rows, cols = shape
    matrices = [
        tuple(tuple(flat[r * cols:(r + 1) * cols]) for r in range(rows))
        for flat in itertools.product(range(p), repeat=rows * cols)
    ]
    expected = [brute_force_rank(p, m) for m in matrices]
    stack = np.array(matrices, dtype=np.int64)
    assert field.ranks(stack).tolist() == expected
    assert [field.rank(np.array(m, dtype=np.int64)) for m in matrices] == expected


# -- from_words: masking and rejection ---------------------------------------------------------


def reference_from_words(p: int, words: list[int]) -> list[int]:
    """Mask each candidate (groups of ceil(bits/64) little-endian words) and reject ≥ p."""
    bits = p.bit_length()
    per = max(1, (bits + 63) // 64)
    out = []
    for i in range(len(words) // per):
        value = sum(words[i * per + j] << (64 * j) for j in range(per)) & ((1 << bits) - 1)
        if value < p:
            out.append(value)
    return out


@pytest.mark.parametrize("p", [5, 7, P31, P61, P64, P127])
def test_from_words_masks_and_rejects(p: int) -> None:
    field = prime_field(p)
    bits = p.bit_length()
    mask = (1 << min(bits, 64)) - 1
    rng = np.random.default_rng(p % 997)
    words = rng.integers(0, 1 << 64, size=400, dtype=np.uint64).tolist()
    # words whose masked value is exactly p − 1, p, p + 1 (rejected unless < p) and 0
    specials = [(p - 1) & mask, p & mask, (p + 1) & mask, 0, (1 << 64) - 1, 1 << min(bits, 63)]
    words = [*specials, *words]
    got = field.from_words(np.array(words, dtype=np.uint64))
    expected = reference_from_words(p, words)
    assert ints(got) == expected
    assert got.dtype == field.dtype


def test_from_words_rejects_exactly_the_values_at_or_above_p() -> None:
    # GF(5): 3-bit candidates 0..7; 5, 6, 7 are rejected, order is kept
    words = np.array([7, 0, 5, 4, 6, 1, 8 + 3, 2], dtype=np.uint64)
    assert SmallPrimeField(5).from_words(words).tolist() == [0, 4, 1, 3, 2]
    # GF(2^61 − 1): candidate 2^61 − 1 = p is rejected, the high 3 bits are masked off
    p = MERSENNE61
    words61 = np.array([p, p - 1, (1 << 64) - 1, (7 << 61) | 5, 1 << 61], dtype=np.uint64)
    assert Mersenne61Field().from_words(words61).tolist() == [p - 1, 5, 0]


# -- hypothesis: field laws against Python integers --------------------------------------------

PRIMES_FOR_PROPERTIES = st.sampled_from([2, 3, 7, 65537, P31, P61, P127])


@settings(max_examples=150, deadline=None, derandomize=True)
@given(data=st.data(), p=PRIMES_FOR_PROPERTIES)
def test_field_operations_agree_with_python_ints(data: st.DataObject, p: int) -> None:
    field = prime_field(p)
    values = st.integers(min_value=0, max_value=p - 1)
    xs = data.draw(st.lists(values, min_size=1, max_size=12))
    ys = data.draw(st.lists(values, min_size=len(xs), max_size=len(xs)))
    a, b = as_field(field, xs), as_field(field, ys)
    assert ints(field.add(a, b)) == [(x + y) % p for x, y in zip(xs, ys, strict=True)]
    assert ints(field.sub(a, b)) == [(x - y) % p for x, y in zip(xs, ys, strict=True)]
    assert ints(field.mul(a, b)) == [(x * y) % p for x, y in zip(xs, ys, strict=True)]
    assert ints(field.neg(a)) == [(-x) % p for x in xs]
    assert int(field.sum(a, axis=None)) == sum(xs) % p
    # distributivity and additive inverse, computed through the field
    assert ints(field.mul(a, field.add(b, b))) == ints(field.add(field.mul(a, b),
                                                                  field.mul(a, b)))
    assert ints(field.add(a, field.neg(a))) == [0] * len(xs)


@settings(max_examples=60, deadline=None, derandomize=True)
@given(data=st.data(), count=st.integers(min_value=1, max_value=40))
def test_sum_arrays_matches_python_ints_for_any_count(data: st.DataObject, count: int) -> None:
    field = Mersenne61Field()
    values = st.integers(min_value=0, max_value=P61 - 1)
    arrays = [data.draw(st.lists(values, min_size=3, max_size=3)) for _ in range(count)]
    got = field.sum_arrays([as_field(field, a) for a in arrays])
    assert ints(got) == [sum(col) % P61 for col in zip(*arrays, strict=True)]


# -- parse_prime and the field factory ---------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2^61-1", P61), ("2**61-1", P61), ("2^61 - 1", P61), (" 2 ^ 31 - 1 ", P31),
        ("2^127-1", P127), ("2^64-59", P64), ("2^4+1", 17), ("2^2+1", 5),
        ("7", 7), (7, 7), (P61, P61), ("2305843009213693951", P61),
    ],
)
def test_parse_prime_forms(text: str | int, expected: int) -> None:
    assert parse_prime(text) == expected


@pytest.mark.parametrize(
    "text",
    ["2^61", "2^61-2", "9", 9, 1, 0, -7, "", "abc", "2^x-1", "0x1f", "1.5", 1.5, True, "3^5-2",
     "2^61-1-1"],
)
def test_parse_prime_errors(text: object) -> None:
    with pytest.raises(InputError):
        parse_prime(text)  # type: ignore[arg-type]


def test_prime_field_picks_the_fast_paths() -> None:
    assert type(prime_field("2^61-1")) is Mersenne61Field
    assert type(prime_field(7)) is SmallPrimeField
    assert type(prime_field("2^31-1")) is SmallPrimeField
    assert type(prime_field("2^127-1")) is GaloisField
    assert prime_field(7) == GaloisField(7) and prime_field(7) != prime_field(11)
    with pytest.raises(InputError):
        SmallPrimeField(P61)
    with pytest.raises(InputError):
        SmallPrimeField(15)
    with pytest.raises(InputError):
        GaloisField(2**61)


# -- uniform sampling --------------------------------------------------------------------------


@pytest.mark.parametrize("p", [5, P31, P61, P127])
def test_random_elements_are_in_range_and_seeded(p: int) -> None:
    field = prime_field(p)
    a = field.random(np.random.default_rng(1), (200,))
    b = field.random(np.random.default_rng(1), (200,))
    assert a.dtype == field.dtype and a.shape == (200,)
    assert ints(a) == ints(b)
    assert all(0 <= v < p for v in ints(a))


def test_random_tiny_field_covers_every_value_evenly() -> None:
    """Chi-square of 70 000 draws over GF(7): far from the 0.1% critical value 22.46."""
    counts = np.bincount(SmallPrimeField(7).random(np.random.default_rng(3), 70_000), minlength=7)
    chi2 = float(np.sum((counts - 10_000) ** 2) / 10_000)
    assert chi2 < 22.46


# -- fixed point -------------------------------------------------------------------------------

FIXED_CASES = [(P61, 24), (P61, 0), (P31, 8), (P127, 60), (P64, 20), (65537, 4)]


def exact_encoding(p: int, f: int, x: float) -> int:
    """round-half-even(x·2^f) mod p, with Fractions."""
    return round(Fraction(x) * (1 << f)) % p


@pytest.mark.parametrize(("p", "f"), FIXED_CASES)
def test_encode_matches_exact_rational_rounding(p: int, f: int) -> None:
    fixed = FixedPoint(prime_field(p), f)
    rng = np.random.default_rng(f + p % 101)
    bound = float(Fraction((p - 1) // 2, 1 << f))
    x = np.concatenate([
        rng.uniform(-bound, bound, 100),
        rng.uniform(-3, 3, 50),
        [0.0, -0.0, 1.0, -1.0, 2.0**-f, -(2.0**-f), 0.5 * 2.0**-f, 1.5 * 2.0**-f],
    ])
    x = x[np.abs(x) <= bound * (1 - 1e-12)]
    encoded = fixed.encode(x)
    assert ints(encoded) == [exact_encoding(p, f, float(v)) for v in x]


@pytest.mark.parametrize(("p", "f"), FIXED_CASES)
def test_round_trip_is_within_half_a_unit_in_the_last_place(p: int, f: int) -> None:
    fixed = FixedPoint(prime_field(p), f)
    rng = np.random.default_rng(7)
    limit = min(float(Fraction((p - 1) // 2, 1 << f)), 1e12)
    x = rng.uniform(-limit, limit, 500)
    back = fixed.decode(fixed.encode(x))
    assert back.dtype == np.float64 and back.shape == x.shape
    assert np.all(np.abs(back - x) <= 2.0 ** -(f + 1))


@pytest.mark.parametrize(("p", "f"), FIXED_CASES)
def test_negatives_live_in_the_upper_half(p: int, f: int) -> None:
    fixed = FixedPoint(prime_field(p), f)
    scale = 1 << f
    encoded = fixed.encode([-1.0, -(2.0**-f), 1.0, 2.0**-f, 0.0])
    assert ints(encoded) == [p - scale, p - 1, scale % p, 1, 0]
    half = (p - 1) // 2
    top = as_field(fixed.field, [half, half + 1, p - 1])  # largest positive, most negative, −1
    assert fixed.decode(top).tolist() == [
        float(Fraction(half, scale)), float(Fraction(half + 1 - p, scale)),
        float(Fraction(-1, scale)),
    ]


def test_decode_keeps_the_shape() -> None:
    fixed = FixedPoint(Mersenne61Field(), 3)
    x = np.arange(-12, 12, dtype=np.float64).reshape(2, 3, 4) / 8
    assert np.array_equal(fixed.decode(fixed.encode(x)), x)
    assert fixed.encode(x).shape == (2, 3, 4)
    assert fixed.decode(fixed.encode(2.5)).shape == ()


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize(("p", "f"), [(P61, 24), (P127, 60), (7, 0)])
def test_nan_and_infinity_are_refused(bad: float, p: int, f: int) -> None:
    fixed = FixedPoint(prime_field(p), f)
    with pytest.raises(EncodingError) as info:
        fixed.encode([1.0, bad, 2.0], what="my input")
    assert type(info.value) is EncodingError  # not an overflow: the value is not a number
    assert "my input" in str(info.value)


@pytest.mark.parametrize(("p", "f"), FIXED_CASES)
@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
def test_values_at_the_bound_encode_and_beyond_it_overflow(p: int, f: int, m: int) -> None:
    fixed = FixedPoint(prime_field(p), f)
    exact = Fraction((p - 1) // 2 // m, 1 << f)  # largest |x| whose m-fold sum fits
    bound = fixed.bound(m)
    assert Fraction(bound) <= exact  # the bound never overstates the range
    assert Fraction(bound) > exact - Fraction(1, 1 << f) - abs(exact) * Fraction(1, 2**52)
    for x in (bound, -bound):
        got = fixed.encode([x], n_summands=m)
        assert ints(got) == [exact_encoding(p, f, x)]
    # one unit of the last fixed-point place beyond the bound (or the next float, if larger)
    beyond = max(float(exact + Fraction(1, 1 << f)), float(np.nextafter(bound, np.inf)))
    for x in (beyond, -beyond):
        with pytest.raises(FieldOverflowError) as info:
            fixed.encode([0.0, x, 1.0], n_summands=m, what="column 3")
        err = info.value
        assert err.value == x
        assert Fraction(err.bound) <= exact
        assert Fraction(err.bound) >= exact - Fraction(1, 1 << f) - abs(exact) / 2**52
        assert "column 3" in str(err) and repr(x) in str(err)
        assert f"{err.bound:.6g}" in str(err)


def test_the_m_fold_headroom_is_checked() -> None:
    fixed = FixedPoint(Mersenne61Field(), 24)
    x = 1.9 * 2.0**33  # fits four summands (bound ≈ 2^34), not five (bound ≈ 1.6·2^33)
    fixed.encode([x], n_summands=4)
    with pytest.raises(FieldOverflowError) as info:
        fixed.encode([x], n_summands=5)
    assert "5 such values" in str(info.value)


def test_big_field_with_60_fractional_bits() -> None:
    """2^127 − 1 with 60 fractional bits: values beyond 2^53 and below 2^−52 survive."""
    p, f = P127, 60
    fixed = FixedPoint(GaloisField(p), f)
    x = np.array([1e15, -1e15, 2.0**62 + 2.0**10, -(2.0**-60), 2.0**-59 * 3, 123.456, -7.0e18])
    encoded = fixed.encode(x, n_summands=5)
    assert encoded.dtype == object
    assert ints(encoded) == [exact_encoding(p, f, float(v)) for v in x]
    assert fixed.decode(encoded).tolist() == x.tolist()  # exact: every x is a multiple of 2^−60
    exact = Fraction((p - 1) // 2 // 5, 1 << f)  # ≈ 1.47·10^19
    assert float(exact) == pytest.approx(2.0**126 / 5 / 2.0**60)
    with pytest.raises(FieldOverflowError):
        fixed.encode([float(exact) * 1.001], n_summands=5)
    fixed.encode([float(exact) * 0.999], n_summands=5)
    # a sum of five encodings decodes to the real sum
    total = fixed.field.sum(fixed.encode(x[:5].reshape(5, 1), n_summands=5), axis=0)
    assert fixed.decode(total).tolist() == [float(sum(Fraction(v) for v in x[:5]))]


@pytest.mark.parametrize("frac_bits", [-1, 60, 61, 1.5, True, "8"])
def test_frac_bits_out_of_range_is_refused(frac_bits: object) -> None:
    with pytest.raises(InputError):
        FixedPoint(Mersenne61Field(), frac_bits)  # type: ignore[arg-type]


def test_frac_bits_range_edges() -> None:
    FixedPoint(Mersenne61Field(), 59)  # 61 bits: signed range needs one bit, so 0..59
    FixedPoint(SmallPrimeField(7), 1)  # 3 bits: frac_bits 0 or 1
    with pytest.raises(InputError):
        FixedPoint(SmallPrimeField(7), 2)


@pytest.mark.parametrize(("p", "text"), [(2**61 - 1, "2^61-1"), (2**127 - 1, "2^127-1"),
                                         (2**64 - 59, "2^64-59"), (2**31 - 1, "2^31-1"),
                                         (5, "5"), (1000003, "1000003"), (65537, "2^16+1")])
def test_describe_prime_writes_near_powers_of_two_as_such(p: int, text: str) -> None:
    from protocols.field import describe_prime

    assert describe_prime(p) == text
    assert parse_prime(text) == p


@pytest.mark.parametrize("shape", [(2, 3), (1, 300)], ids=["stacked", "blocked"])
@pytest.mark.parametrize("count", [9, 48, 49, 50, 56, 57, 343, 401])
def test_mersenne_sums_of_many_arrays(count: int, shape: tuple[int, int]) -> None:
    """Many short arrays are stacked and summed seven rows at a time, over several levels;
    longer ones are added one by one. Both against Python integers."""
    field = Mersenne61Field()
    worst = [np.full(shape, P61 - 1, dtype=np.uint64) for _ in range(count)]
    assert set(field.sum_arrays(worst).ravel().tolist()) == {(count * (P61 - 1)) % P61}
    rng = np.random.default_rng(count)
    plus = [random_ints(rng, P61, shape) for _ in range(count)]
    minus = [random_ints(rng, P61, shape) for _ in range(count // 2)]
    got = field.combine([as_field(field, a) for a in plus], [as_field(field, a) for a in minus])
    cols = range(0, shape[1], 37)
    expected = [[(sum(int(a[i, j]) for a in plus) - sum(int(a[i, j]) for a in minus)) % P61
                 for j in cols] for i in range(shape[0])]
    assert got.shape == shape and [[int(v) for v in row[::37]] for row in got] == expected
