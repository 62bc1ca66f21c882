"""Secret normalisation by the top non-zero bit pair: [V] = 2^e, [V₂] = 4^e, [ζ] = [Q = 0].

Spec ``normed_secure_sum.md`` §2.3 (c1), (c2). For a shared Q ∈ [0, 2^ℓ) (ℓ even):

1. BitDec([Q], ℓ) gives shared bits q_0..q_{ℓ−1} (:func:`protocols.mpc.bits.bit_dec`).
2. Pair-OR: w_j = q_{2j} + q_{2j+1} − q_{2j}·q_{2j+1}, j < ℓ/2 (one Beaver round).
3. Suffix-OR y_j = OR(w_j, ..., w_{ℓ/2−1}) (a prefix-OR on the reversed pairs).
4. One-hot z_j = y_j − y_{j+1}: exactly one z_j = 1 iff Q ≠ 0, and then 4^j ≤ Q < 4^(j+1).
   With e_j = ℓ/2 − 1 − j, locally [V] = Σ 2^(e_j)[z_j], [V₂] = Σ 4^(e_j)[z_j] (V₂ = V²
   exactly, because z is one-hot) and [ζ] = 1 − Σ [z_j].

Simulation: the only openings are BitDec's masked C and Beaver differences
(:mod:`protocols.mpc.bits`, :mod:`protocols.mpc.multiply`); e, V and ζ are never opened, so
the simulator needs nothing of Q but its bit length ℓ.

So Q·V₂ ∈ [2^(ℓ−2), 2^ℓ) and S·V is S scaled by the matching power of two, while e itself is
never opened. Declared cost per instance (:func:`cost`): 2⌈log₂ ℓ⌉ + 1 rounds,
1 + 4B(ℓ) + ℓ + 2B(ℓ/2) opened elements.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.mpc.bits import bit_dec, bit_dec_cost, prefix_or, prefix_or_cost
from protocols.mpc.multiply import cost as product_cost
from protocols.mpc.multiply import multiply
from protocols.mpc.public import constants
from protocols.mpc.session import Session


def cost(ell: int) -> dict[str, int]:
    """Rounds, opened elements and dealer items of one normalisation of an ℓ-bit Q."""
    parts = [bit_dec_cost(ell), product_cost(products=ell // 2), prefix_or_cost(ell // 2)]
    keys = {k for part in parts for k in part}
    return {k: sum(part.get(k, 0) for part in parts) for k in sorted(keys)}


def pair_normalizer(sess: Session, q: np.ndarray, ell: int
                    ) -> Generator[Any, Any, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Shares of (V, V₂, ζ) for each Q of the 1-D batch ``q`` (see the module docstring)."""
    field = sess.field
    half = ell // 2
    bits = yield from bit_dec(sess, q, ell, "bitdec")
    even, odd = bits[..., 0::2], bits[..., 1::2]
    both = yield from multiply(sess, even, odd, "pair_or")
    w = field.sub(field.add(even, odd), both)
    y = yield from prefix_or(sess, w[..., ::-1].copy(), "suffix_or")
    y = y[..., ::-1]
    z = field.sub(y, np.concatenate([y[..., 1:], field.zeros((*y.shape[:-1], 1))], axis=-1))
    e = [half - 1 - j for j in range(half)]
    v = field.sum(np.moveaxis(field.mul(z, constants(field, [1 << x for x in e])), -1, 0), 0)
    v2 = field.sum(np.moveaxis(field.mul(z, constants(field, [1 << (2 * x) for x in e])), -1,
                               0), 0)
    zeta = sess.add_public(field.neg(field.sum(np.moveaxis(z, -1, 0), 0)), sess.const(1))
    return v, v2, zeta
