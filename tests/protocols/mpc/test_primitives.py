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
