"""Probabilistic truncation TruncPr (P3) and the dithered output opening (O4).

Spec ``normed_secure_sum.md`` §2.2 P3 (Catrina–Saxena; MP-SPDZ TruncPrField; MPyC trunc).
For a secret v ∈ [−2^(K−1), 2^(K−1)) and 0 < m < K, TruncPr returns shares of
⌊v/2^m⌋ + u, with u ∈ {0, 1} and Pr[u = 1] = (v mod 2^m)/2^m (unbiased stochastic rounding).
The dealer supplies [r_lo] with r_lo uniform on [0, 2^m) and [r] = [r_lo + 2^m·r_hi] with
r_hi uniform on [0, 2^(K+κ−m)). The parties open c = v + 2^(K−1) + r, and
[result] = ([v] − (c mod 2^m) + [r_lo]) · (2^m)^(−1). c is v plus a uniform integer on an
interval of length 2^(K+κ), so it is within statistical distance 2^−κ of a value that does not
depend on v; the headroom rule K + κ + 1 ≤ ⌊log₂ p⌋ (checked by the protocol's parameters)
rules out wrap-around, and the opening is range-checked: c < 2^(K+κ) + 2^K.

O4 (:func:`dither_open`): open c = v + 2^(K−1) + r_lo with no high mask and return the public
⌊c/2^m⌋ − 2^(K−1−m) — the same value TruncPr followed by an opening gives, and the same
information (§2.4), in one round and needing only K + 1 ≤ ⌊log₂ p⌋.

Simulation (:mod:`protocols.mpc.simulator`): c is drawn as 2^(K−1) + r with r uniform on
[0, 2^(K+κ)) — the real law with v = 0; the two laws are shifts of one uniform law by |v| <
2^(K−1), so their statistical distance is |v|/2^(K+κ) ≤ 2^−(κ+1) per value (headroom κ: the
declared ``kappa``). O4's opening is the declared output (the simulator reads it from the
output), not simulated from a mask.

Declared cost: 1 round, 1 opened element and 1 truncation pair per value.
"""

from __future__ import annotations

from collections.abc import Generator
from functools import cache
from typing import Any

import numpy as np

from protocols.errors import InputError
from protocols.field.mersenne127 import Mersenne127Field, trunc_combine
from protocols.mpc.public import check_range, low_bits, to_ints
from protocols.mpc.session import MASKED, OUTPUT, Session

TRUNC_ROUNDS = 1


def cost(values: int) -> dict[str, int]:
    """Rounds, opened elements and truncation pairs of one TruncPr round on ``values``."""
    return {"rounds": TRUNC_ROUNDS if values else 0, "opened": values, "trunc": values}


def check_truncation(K: int, m: int, kappa: int, p: int) -> None:
    """Raise unless TruncPr of a K-bit value by m bits is sound in GF(p) with κ = ``kappa``."""
    if not 0 < m < K:
        raise InputError(f"TruncPr needs 0 < m < K, got K = {K}, m = {m}")
    budget = p.bit_length() - 1
    if K + kappa + 1 > budget:
        raise InputError(
            f"TruncPr of a {K}-bit value with κ = {kappa} needs K + κ + 1 = {K + kappa + 1} ≤ "
            f"⌊log2 p⌋ = {budget}"
        )


def trunc_pr(
    sess: Session, v: np.ndarray, K: int, m: int, label: str
) -> Generator[Any, Any, np.ndarray]:
    """Shares of ⌊v/2^m⌋ + u (stochastic rounding) for secrets v ∈ [−2^(K−1), 2^(K−1))."""
    field = sess.field
    shape = np.shape(v)
    flat = np.asarray(v).reshape(-1)
    r_lo, r = sess.pool.take("trunc", flat.size, bits=K + sess.kappa, m=m)
    c_share = sess.add_public(field.add(flat, r), sess.const(1 << (K - 1)))
    c = yield from sess.open(c_share, MASKED, label, bound=(1 << (K + sess.kappa)) + (1 << K))
    inv = inverse_power_of_two(m, field.p)
    if isinstance(field, Mersenne127Field):
        return trunc_combine(flat, c, r_lo, m, inv, sess.leader).reshape(shape)
    low = low_bits(field, c, m)
    t = field.add(field.sub(flat, low), r_lo) if sess.leader else field.add(flat, r_lo)
    return field.mul(t, sess.const(inv)).reshape(shape)


@cache
def inverse_power_of_two(m: int, p: int) -> int:
    """(2^m)^−1 mod p."""
    return pow(1 << m, p - 2, p)


def dither_open(
    sess: Session, v: np.ndarray, K: int, m: int, label: str
) -> Generator[Any, Any, np.ndarray]:
    """O4: the public ⌊(v + r_lo)/2^m⌋ for secrets v ∈ [−2^(K−1), 2^(K−1)), as Python ints.

    Returns an ``object`` array of signed integers (the truncated values), one round.
    """
    field = sess.field
    shape = np.shape(v)
    flat = np.asarray(v).reshape(-1)
    r_lo, _ = sess.pool.take("trunc", flat.size, bits=m, m=m)
    c_share = sess.add_public(field.add(flat, r_lo), sess.const(1 << (K - 1)))
    c = yield from sess.open(c_share, OUTPUT, label)
    check_range(field, c, (1 << K) + (1 << m), f"dithered output '{label}'")
    return ((to_ints(field, c) >> m) - (1 << (K - 1 - m))).reshape(shape)
