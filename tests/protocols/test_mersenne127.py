"""GF(2^127 − 1) on 64-bit limbs (:mod:`protocols.field.mersenne127`) against Python ints and
galois."""

from __future__ import annotations

import galois
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocols import wire
from protocols.errors import InputError
from protocols.field import GaloisField, Mersenne61Field
from protocols.field.mersenne127 import ELEMENT127, MERSENNE127, Mersenne127Field, mpc_field

P = MERSENNE127
F = Mersenne127Field()
EDGES = [0, 1, 2, P - 1, P - 2, (1 << 64) - 1, 1 << 64, (1 << 64) + 1, 1 << 63, (1 << 126),
         (1 << 127) - 2, (P - 1) // 2, (P + 1) // 2, 0xFFFFFFFF, 1 << 32]
element = st.one_of(st.sampled_from(EDGES), st.integers(0, P - 1))


def ints(a: np.ndarray) -> list[int]:
    return [int(v) for v in F.to_ints(a).ravel()]


def elems(values: list[int]) -> np.ndarray:
    return F.elements(np.array(values, dtype=object))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(element, element), min_size=1, max_size=40))
def test_arithmetic_equals_python_integers(pairs: list[tuple[int, int]]) -> None:
    xs, ys = [a for a, _ in pairs], [b for _, b in pairs]
    a, b = elems(xs), elems(ys)
    assert ints(F.add(a, b)) == [(x + y) % P for x, y in pairs]
    assert ints(F.sub(a, b)) == [(x - y) % P for x, y in pairs]
    assert ints(F.mul(a, b)) == [x * y % P for x, y in pairs]
    assert ints(F.neg(a)) == [-x % P for x in xs]
    assert ints(F.mul(a, elems([ys[0]])[0])) == [x * ys[0] % P for x in xs]
    assert ints(F.sum(np.stack([a, b, a]), axis=0)) == [(2 * x + y) % P for x, y in pairs]


def test_matches_galois_on_random_vectors() -> None:
    gf = galois.GF(P)
    rng = np.random.default_rng(3)
    a, b = F.random(rng, 300), F.random(rng, 300)
    ga, gb = gf(F.to_ints(a)), gf(F.to_ints(b))
    assert ints(F.mul(a, b)) == [int(v) for v in (ga * gb)]
    assert ints(F.sub(a, b)) == [int(v) for v in (ga - gb)]


def test_broadcasting_sums_along_axes_and_signed_integers() -> None:
    rng = np.random.default_rng(4)
    m = F.random(rng, (3, 4))
    col = F.random(rng, (3, 1))
    expected = [[int(x) * int(c) % P for x in row] for row, c in
                zip(F.to_ints(m).tolist(), F.to_ints(col)[:, 0].tolist(), strict=True)]
    assert F.to_ints(F.mul(m, col)).tolist() == expected
    assert ints(F.sum(m, axis=1)) == [sum(int(v) for v in row) % P for row in F.to_ints(m)]
    assert ints(F.sum(m, axis=None)) == [sum(int(v) for v in F.to_ints(m).ravel()) % P]
    assert ints(F.elements(np.array([-1, -(1 << 62), 5], dtype=np.int64))) == [
        P - 1, P - (1 << 62), 5]
    assert ints(F.elements(np.array([(1 << 64) - 1], dtype=np.uint64))) == [(1 << 64) - 1]


def test_random_is_uniform_below_p_and_from_words_rejects_p() -> None:
    rng = np.random.default_rng(5)
    values = ints(F.random(rng, 20000))
    assert max(values) < P
    tops = np.bincount([v >> 123 for v in values], minlength=16)  # 16 equal bins
    chi2 = ((tops - 1250) ** 2 / 1250).sum()
    assert chi2 < 37.7  # χ²(15) at 0.001
    words = np.array([(1 << 64) - 1, (1 << 64) - 1, 7, 1 << 63], dtype=np.uint64)
    assert ints(F.from_words(words)) == [7]  # p rejected; the top bit of hi is masked


def test_wire_counts_one_element_per_record_and_round_trips() -> None:
    a = F.random(np.random.default_rng(6), (2, 5))
    data = wire.encode(a)
    assert wire.payload_elements(a) == 10
    assert len(data) == 4 + 16 + 10 * 16
    assert (wire.decode(data) == a).all()


def test_validate_refuses_non_canonical_records() -> None:
    bad = np.zeros(2, dtype=ELEMENT127)
    bad["hi"] = (1 << 63) - 1
    bad["lo"] = (1 << 64) - 1  # the value p
    with pytest.raises(InputError):
        F.validate(bad)
    assert F.validate(np.zeros(3, dtype=ELEMENT127)).shape == (3,)


def test_mpc_field_picks_the_fast_representations() -> None:
    assert isinstance(mpc_field(P), Mersenne127Field)
    assert isinstance(mpc_field((1 << 61) - 1), Mersenne61Field)
    assert isinstance(mpc_field((1 << 89) - 1), GaloisField)
