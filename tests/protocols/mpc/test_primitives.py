"""The MPC engine's primitives in real runs (3 data holders + dealer, GF(2^127 − 1)).

Each test shares secrets, runs one primitive and opens the result; expected values are
computed with Python integers from the secrets. A contract test holds the ledger (rounds,
opened elements per party) to each primitive's declared ``cost``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from harness import KAPPA, P127, engine_rows, run_engine, signed

from protocols.errors import FieldOverflowError, MpcsimError, ProtocolAbort
from protocols.field.mersenne127 import Mersenne127Field
from protocols.mpc import bits, inv_sqrt, masked, multiply, normalize, truncate
from protocols.mpc.dealer import Request, deal, plan_elements
from protocols.mpc.inv_sqrt import SEED
from protocols.mpc.public import constants

RNG = np.random.default_rng(2024)


def test_dealt_shares_add_up_to_triples_squares_bits_masks_and_trunc_pairs() -> None:
    field = Mersenne127Field()
    plan = (Request("triple", 5), Request("square", 4), Request("bit", 50),
            Request("mask", 40, bits=40), Request("trunc", 30, bits=90, m=20))
    shares = deal(field, np.random.default_rng(1), plan, 3)
    assert all(len(s) == plan_elements(plan) for s in shares)
    total = [int(v) for v in field.to_ints(field.sum(np.stack(shares), axis=0))]
    a, b, c = total[0:5], total[5:10], total[10:15]
    assert all(ci == ai * bi % P127 for ai, bi, ci in zip(a, b, c, strict=True))
    sq, sq2 = total[15:19], total[19:23]
    assert all(y == x * x % P127 for x, y in zip(sq, sq2, strict=True))
    assert set(total[23:73]) <= {0, 1} and len(set(total[23:73])) == 2
    assert all(0 <= h < 1 << 40 for h in total[73:113])
    r_lo, r = total[113:143], total[143:173]
    assert all(0 <= lo < 1 << 20 and (x - lo) % (1 << 20) == 0 and x < 1 << 90
               for lo, x in zip(r_lo, r, strict=True))
    # any M − 1 shares are uniform: the first share's top limb spreads over its range
    assert len({int(v) >> 120 for v in field.to_ints(shares[0])}) > 60


def test_beaver_products_and_squares_equal_the_integer_products() -> None:
    xs = [int(v) for v in RNG.integers(0, 1 << 62, 8)] + [P127 - 1, 0, 1, P127 - 5]
    ys = list(reversed(xs))
    n = len(xs)

    def body(sess, s):
        prod = yield from multiply.multiply(sess, s, s[::-1].copy(), "xy")
        sq = yield from multiply.square(sess, s, "xx")
        return np.concatenate([prod, sq])

    out, result = run_engine(body, xs, [Request("triple", n), Request("square", n)])
    assert out[:n] == [x * y % P127 for x, y in zip(xs, ys, strict=True)]
    assert out[n:] == [x * x % P127 for x in xs]
    rows = engine_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == 2
    sent0 = sum(r.elements for r in rows if r.sender == 0)
    declared = multiply.cost(products=n)["opened"] + multiply.cost(squares=n)["opened"]
    assert sent0 == 2 * declared  # to each of the M − 1 = 2 peers


@pytest.mark.parametrize(("K", "m"), [(20, 5), (85, 45), (124 - KAPPA, 60)])
def test_truncpr_rounds_down_or_up_at_the_range_ends(K: int, m: int) -> None:
    vs = [-(1 << (K - 1)), (1 << (K - 1)) - 1, 0, -1, 1, (1 << m) + 3, -(1 << m) - 3]
    vs += [int(v) for v in RNG.integers(-(1 << min(K - 1, 62)), 1 << min(K - 1, 62), 20)]

    def body(sess, s):
        return (yield from truncate.trunc_pr(sess, s, K, m, "t"))

    plan = [Request("trunc", len(vs), bits=K + KAPPA, m=m)]
    out, result = run_engine(body, [v % P127 for v in vs], plan)
    for v, got in zip(vs, out, strict=True):
        assert signed(got) - (v >> m) in (0, 1), (v, signed(got))
    rows = engine_rows(result)
    assert {r.round for r in rows} == {rows[0].round}
    assert sum(r.elements for r in rows if r.sender == 1) == 2 * truncate.cost(len(vs))["opened"]


def test_truncpr_is_unbiased() -> None:
    """Mean of ⌊v/2^m⌋ + u over 4000 instances of one v equals v/2^m within 4σ."""
    K, m, n = 40, 8, 4000
    v = (123 << m) + 77  # fraction 77/256

    def body(sess, s):
        return (yield from truncate.trunc_pr(sess, s, K, m, "t"))

    out, _ = run_engine(body, [v] * n, [Request("trunc", n, bits=K + KAPPA, m=m)])
    frac = 77 / 256
    ups = np.array([signed(x) - 123 for x in out])
    assert set(np.unique(ups)) <= {0, 1}
    sigma = math.sqrt(frac * (1 - frac) / n)
    assert abs(ups.mean() - frac) < 4 * sigma


def test_an_opening_outside_its_headroom_is_an_error_naming_the_bound() -> None:
    K, m = 30, 10
    too_big = 1 << (K + KAPPA + 1)  # far beyond 2^(K−1): the opened c exceeds its bound

    def body(sess, s):
        return (yield from truncate.trunc_pr(sess, s, K, m, "t"))

    with pytest.raises(ProtocolAbort) as info:
        run_engine(body, [too_big], [Request("trunc", 1, bits=K + KAPPA, m=m)])
    cause = info.value.__cause__
    assert isinstance(cause, FieldOverflowError)
    assert str((1 << (K + KAPPA)) + (1 << K)) in str(cause) or "headroom" in str(cause)
    # a value far below −2^(K−1) wraps c to the top of the field: caught the same way
    with pytest.raises(ProtocolAbort):
        run_engine(body, [P127 - (1 << (K + KAPPA + 1))],
                   [Request("trunc", 1, bits=K + KAPPA, m=m)])


@pytest.mark.parametrize("ell", [6, 38, 80])
def test_bit_decomposition_gives_the_bits(ell: int) -> None:
    qs = [0, 1, (1 << ell) - 1, 1 << (ell - 1)]
    qs += [int(v) % (1 << ell) for v in RNG.integers(0, 1 << 62, 6)] + [
        int.from_bytes(RNG.bytes(11), "little") % (1 << ell)]
    n = len(qs)

    def body(sess, s):
        return (yield from bits.bit_dec(sess, s, ell))

    cost = bits.bit_dec_cost(ell)
    plan = [Request("bit", n * ell), Request("mask", n, bits=KAPPA)]
    plan += [Request("triple", 2 * n * len(hi)) for hi, _ in bits.network(ell)]
    out, result = run_engine(body, qs, plan)
    expected = [(q >> i) & 1 for q in qs for i in range(ell)]
    assert out == expected
    rows = engine_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == cost["rounds"]
    assert sum(r.elements for r in rows if r.sender == 2) == 2 * n * cost["opened"]
    assert sum(r.count for r in plan if r.kind == "triple") == n * cost["triple"]


def test_sklansky_node_counts_match_the_spec_examples() -> None:
    """B(66) = 195, B(72) = 212, B(80) = 240, B(84) = 252, B(33) = 81, B(40) = 100 (spec §2.2)."""
    assert [bits.node_count(n) for n in (66, 72, 80, 84, 33, 40)] == [195, 212, 240, 252, 81, 100]
    for n in (1, 2, 7, 40, 84):
        assert sum(len(hi) for hi, _ in bits.network(n)) == bits.node_count(n)
        assert len(bits.network(n)) == (math.ceil(math.log2(n)) if n > 1 else 0)


def test_prefix_or_is_the_running_or() -> None:
    words = RNG.integers(0, 2, size=(5, 13))
    words[0] = 0
    words[1, -1] = 1

    def body(sess, s):
        return (yield from bits.prefix_or(sess, s.reshape(5, 13), "or"))

    plan = [Request("triple", 5 * len(hi)) for hi, _ in bits.network(13)]
    out, _ = run_engine(body, words.ravel().tolist(), plan)
    assert out == np.maximum.accumulate(words, axis=1).ravel().tolist()


@pytest.mark.parametrize("ell", [8, 66])
def test_pair_normaliser_finds_the_top_bit_pair(ell: int) -> None:
    qs = [0, 1, 2, 3, 4, (1 << ell) - 1, 1 << (ell - 2), (1 << (ell - 2)) - 1, 37]
    n, half = len(qs), ell // 2

    def body(sess, s):
        v, v2, zeta = yield from normalize.pair_normalizer(sess, s, ell)
        return np.concatenate([v, v2, zeta])

    plan = [Request("bit", n * ell), Request("mask", n, bits=KAPPA)]
    plan += [Request("triple", 2 * n * len(hi)) for hi, _ in bits.network(ell)]
    plan.append(Request("triple", n * half))
    plan += [Request("triple", n * len(hi)) for hi, _ in bits.network(half)]
    out, result = run_engine(body, qs, plan)
    for i, q in enumerate(qs):
        v, v2, zeta = out[i], out[n + i], out[2 * n + i]
        if q == 0:
            assert (v, v2, zeta) == (0, 0, 1)
            continue
        assert zeta == 0 and v2 == v * v
        assert 1 << (ell - 2) <= q * v2 < 1 << ell
    cost = normalize.cost(ell)
    rows = engine_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == cost["rounds"]
    assert cost["rounds"] == 2 * math.ceil(math.log2(ell)) + 1
    assert sum(r.elements for r in rows if r.sender == 0) == 2 * n * cost["opened"]


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_inverse_square_root_meets_the_newton_error_table(steps: int) -> None:
    """Max relative error on [1/4, 1): 2.41e-2, 8.7e-4, 2e-12 (+ fixed-point noise) (spec §4.2)."""
    F = 40
    xs = np.concatenate([np.linspace(0.25, 0.999, 30), [0.25, 0.5, 0.75, 0.9999]])
    ints = [round(x * (1 << F)) for x in xs]
    n = len(ints)

    def body(sess, s):
        # x enters as a TruncPr output (O2): x·2^8 truncated by 8 bits, exact for these inputs
        x = yield from masked.trunc_masked(sess, sess.scale(s, 1 << 8), F + 10, 8, "x")
        return (yield from inv_sqrt.inv_sqrt(sess, x, F, steps)).shares(sess)

    plan = [Request("trunc", n, bits=F + 10 + KAPPA, m=8)]
    plan += inv_sqrt.plan(1, 0, n, F, KAPPA, steps)
    out, result = run_engine(body, ints, plan)
    got = np.array([signed(v) for v in out], dtype=np.float64) / (1 << F)
    exact = 1 / np.sqrt(np.array(ints, dtype=np.float64) / (1 << F))
    rel = np.abs(got / exact - 1).max()
    bound = {0: 2.42e-2, 1: 8.8e-4, 3: 2e-12}[steps] + 8 * 2.0**-F
    assert rel < bound
    cost = inv_sqrt.cost(steps)
    assert cost == {"rounds": 2 + 2 * steps, "opened": 2 + 3 * steps,  # spec §2.6, O2
                    "trunc": 2 + 3 * steps, "hiprod": 1 + 3 * steps}
    rows = engine_rows(result)
    assert max(r.round for r in rows) - min(r.round for r in rows) + 1 == 1 + cost["rounds"]
    assert sum(r.elements for r in rows if r.sender == 1) == 2 * n * (1 + cost["opened"])


def test_seed_is_the_minimax_quadratic_of_the_spec() -> None:
    x = np.linspace(0.25, 1, 20001)
    rel = np.abs((SEED[0] + SEED[1] * x + SEED[2] * x * x) * np.sqrt(x) - 1)
    assert 0.0240 < rel.max() < 0.0242


def test_material_taken_out_of_step_is_an_error() -> None:
    def body(sess, s):
        return (yield from multiply.square(sess, s, "xx"))

    with pytest.raises(ProtocolAbort) as info:
        run_engine(body, [3], [Request("triple", 1)])
    assert isinstance(info.value.__cause__, MpcsimError)
    assert "out of step" in str(info.value)


@pytest.mark.parametrize("prime", [P127, (1 << 61) - 1])
def test_products_by_one_value_per_row_open_each_operand_once(prime: int) -> None:
    """O1: x[r, i]·y[r] and the paired products equal the integer products mod p; a row of m
    products opens m + 1 elements (ε_i and one δ), the pairs 2 each, in one round."""
    rows, m = 3, 5
    xs = [int(v) for v in RNG.integers(-(1 << 40), 1 << 40, rows * m)]
    ys = [int(v) for v in RNG.integers(-(1 << 40), 1 << 40, rows)]
    ps = [int(v) for v in RNG.integers(-(1 << 40), 1 << 40, 2 * rows)]

    def body(sess, s):
        x, y = s[: rows * m].reshape(rows, m), s[rows * m : rows * m + rows]
        pair = (s[rows * m + rows : rows * m + 2 * rows], s[rows * m + 2 * rows :])
        z, other = yield from multiply.multiply_rows(sess, x, y, "rows", pairs=pair)
        return np.concatenate([z.reshape(-1), other])

    plan = [Request("rowtriple", rows * m, m=m), Request("triple", rows)]
    out, result = run_engine(body, [v % prime for v in xs + ys + ps], plan, prime=prime)
    want = [xs[r * m + i] * ys[r] for r in range(rows) for i in range(m)]
    want += [ps[r] * ps[rows + r] for r in range(rows)]
    assert out == [w % prime for w in want]
    rows_ = engine_rows(result)
    assert {r.round for r in rows_} == {rows_[0].round}
    assert sum(r.elements for r in rows_ if r.sender == 0) == 2 * (rows * (m + 1) + 2 * rows)


def test_masked_products_of_truncations_equal_the_integer_products() -> None:
    """O2: TruncPr outputs held as P − [ρ] multiply locally with the dealer's ρ_a·ρ_b; the
    product equals the product of the two truncated integers (each ⌊v/2^m⌋ + u, u ∈ {0, 1})."""
    K, m = 60, 20
    vs = [(1 << 45) + 12345, -(1 << 44) - 777, 1 << 30, 5 << m]
    n = len(vs) // 2

    def body(sess, s):
        t = yield from masked.trunc_masked(sess, s, K, m, "t")
        (rho,) = sess.pool.take("hiprod", n)
        prod = masked.product(sess, t.part(0, n), t.part(n, 2 * n), rho)
        return np.concatenate([t.shares(sess), constants(sess.field, prod)])

    plan = [Request("trunc", 2 * n, bits=K + KAPPA, m=m), Request("hiprod", n, refs=(0, 0, 0, n))]
    out, result = run_engine(body, [v % P127 for v in vs], plan)
    truncated = [signed(v) for v in out[: 2 * n]]
    for v, t in zip(vs, truncated, strict=True):
        assert t - (v >> m) in (0, 1)
    assert [signed(v) for v in out[2 * n :]] == [truncated[i] * truncated[n + i]
                                                for i in range(n)]
    rows = engine_rows(result)
    assert sum(r.elements for r in rows if r.sender == 0) == 2 * 2 * n  # the TruncPr opening


def test_the_dealer_multiplies_the_high_masks_it_names() -> None:
    """A hiprod item is r_hi of one trunc item times r_hi of another (recovered from the
    dealt r_lo and r_lo + 2^m·r_hi with Python integers)."""
    from protocols.field.mersenne127 import mpc_field
    from protocols.mpc.dealer import material_values
    from protocols.mpc.public import to_ints

    field = mpc_field(P127)
    plan = (Request("trunc", 3, bits=70, m=10), Request("square", 2),
            Request("trunc", 4, bits=50, m=7), Request("hiprod", 3, refs=(0, 0, 2, 1)))
    values = [int(v) for v in to_ints(field, material_values(field, RNG, plan))]
    hi0 = [(r - lo) >> 10 for lo, r in zip(values[0:3], values[3:6], strict=True)]
    hi2 = [(r - lo) >> 7 for lo, r in zip(values[10:14], values[14:18], strict=True)]
    assert all(0 <= h < 1 << 60 for h in hi0) and all(0 <= h < 1 << 43 for h in hi2)
    assert values[18:21] == [hi0[k] * hi2[1 + k] for k in range(3)]
    with pytest.raises(ValueError, match="earlier trunc"):
        material_values(field, RNG, (Request("hiprod", 1, refs=(1, 0, 1, 0)),
                                     Request("trunc", 1, bits=20, m=5)))


def test_the_int64_signed_view_equals_python_integers_and_refuses_what_does_not_fit() -> None:
    from protocols.field.mersenne127 import mpc_field
    from protocols.mpc.public import constants, signed_int64

    field = mpc_field(P127)
    values = [0, 1, -1, (1 << 63) - 1, -(1 << 63) + 1, 1 << 40, -(1 << 40)]
    values += [int(v) for v in RNG.integers(-(1 << 62), 1 << 62, 50)]
    got = signed_int64(field, constants(field, values))
    assert got.dtype == np.int64 and got.tolist() == values
    for bad in (1 << 63, -(1 << 63), 1 << 100):
        with pytest.raises(ValueError, match="2\\^63"):
            signed_int64(field, constants(field, [bad]))
