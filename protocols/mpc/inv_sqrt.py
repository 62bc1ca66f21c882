"""Inverse square root 1/√x for x ∈ [1/4, 1) in fixed point: quadratic seed + Newton.

Spec ``normed_secure_sum.md`` §2.3 (c4), (c5) and §4.2. x is shared at scale 2^F (F fractional
bits of working precision). The seed is the minimax quadratic fit of 1/√x on [1/4, 1] in
relative error, (c0, c1, c2) = (2.6708353888, −3.2853566192, 1.6385678675) (max relative
error 2.41·10^−2), each encoded as round(c·2^F):

    [x₂] = TruncPr(square(x), 2F + 2, F)
    [u₀] = TruncPr(ĉ0·2^F + ĉ1·[x] + ĉ2·[x₂], 2F + 4, F)            (3 rounds)

and each Newton step u ← u(3 − x·u²)/2 takes 4 rounds:

    [a], [b] = [u]·[u], [x]·[u]                      (one Beaver round, 2 products)
    [a'], [b'] = TruncPr([a], [b]; 2F + 4, F)        (one round)
    [c] = [a']·[b']                                  (one Beaver round; c ≈ x·u³ at 2^(2F))
    [u] = TruncPr(3·2^F·[u] − [c], 2F + 5, F + 1)    (one round)

The relative error after a step is e′ = −(3/2)e² − (1/2)e³, so the iteration corrects itself
and rounding noise does not build up (the reason to prefer Newton on 1/√x over Goldschmidt).
Max relative error in exact arithmetic: 2.4e-2, 8.7e-4, 1.15e-6, 1.97e-12 after t = 0..3.

Simulation: each step opens Beaver differences (uniform) and TruncPr values at the stated K
(2F + 2, 2F + 4, 2F + 4, 2F + 5): 3 + 6t masked-or-uniform values per instance, the masked ones
within 2^−(κ+1) each (:mod:`protocols.mpc.truncate`).

Declared cost (:func:`cost`) per instance: 3 + 4t rounds; 3 + 9t opened elements; dealer:
1 square pair, 2 + 3t truncation pairs and 3t triples.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.mpc.multiply import multiply, square
from protocols.mpc.session import Session, concat
from protocols.mpc.truncate import trunc_pr

SEED = (2.6708353888, -3.2853566192, 1.6385678675)
"""Minimax quadratic fit of 1/√x on [1/4, 1] in relative error (spec §2.3)."""


def cost(newton_steps: int) -> dict[str, int]:
    """Rounds, opened elements and dealer items of one inverse square root."""
    t = newton_steps
    return {"rounds": 3 + 4 * t, "opened": 3 + 9 * t, "square": 1, "trunc": 2 + 3 * t,
            "triple": 3 * t}


def seed_coefficients(work_bits: int) -> tuple[int, int, int]:
    """round(c_i·2^F) for the quadratic seed."""
    return tuple(round(c * (1 << work_bits)) for c in SEED)  # type: ignore[return-value]


def inv_sqrt_seed(sess: Session, x: np.ndarray, work_bits: int
                  ) -> Generator[Any, Any, np.ndarray]:
    """Shares of u₀ ≈ 2^F/√(x/2^F) from shares of x (scale 2^F, x/2^F ∈ [1/4, 1))."""
    field, F = sess.field, work_bits
    c0, c1, c2 = seed_coefficients(F)
    x_sq = yield from square(sess, x, "seed.x2")
    x2 = yield from trunc_pr(sess, x_sq, 2 * F + 2, F, "seed.x2")
    poly = field.add(sess.scale(x, c1), sess.scale(x2, c2))
    poly = sess.add_public(poly, sess.const(c0 << F))
    return (yield from trunc_pr(sess, poly, 2 * F + 4, F, "seed.u0"))


def newton(sess: Session, x: np.ndarray, u: np.ndarray, work_bits: int, steps: int
           ) -> Generator[Any, Any, np.ndarray]:
    """``steps`` Newton iterations u ← u(3 − x·u²)/2 on shares at scale 2^F."""
    field, F = sess.field, work_bits
    n = np.size(u)
    for step in range(steps):
        ab = yield from multiply(sess, concat(field, [u, x]), concat(field, [u, u]),
                                 f"newton{step}.uu_xu")
        ab = yield from trunc_pr(sess, ab, 2 * F + 4, F, f"newton{step}.uu_xu")
        c = yield from multiply(sess, ab[:n], ab[n:], f"newton{step}.xu3")
        u = yield from trunc_pr(sess, field.sub(sess.scale(u, 3 << F), c), 2 * F + 5, F + 1,
                                f"newton{step}.u")
    return u


def inv_sqrt(sess: Session, x: np.ndarray, work_bits: int, steps: int
             ) -> Generator[Any, Any, np.ndarray]:
    """Shares of 1/√x at scale 2^F for x ∈ [1/4, 1) at scale 2^F (1-D batch)."""
    u = yield from inv_sqrt_seed(sess, x, work_bits)
    return (yield from newton(sess, x, u, work_bits, steps))
