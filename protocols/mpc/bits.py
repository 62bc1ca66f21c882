"""Bit decomposition (P4) and prefix-OR (P5) over Sklansky prefix networks.

Spec ``normed_secure_sum.md`` §2.2 (Catrina–de Hoogh style BitDec; MP-SPDZ BitDecField; MPyC
to_bits).

**Sklansky network** on n inputs: at level i (i = 0..⌈log₂ n⌉ − 1) every position j with bit i
set combines with position ((j >> i) << i) − 1, the last position of the block below it. After
the last level, position j holds the prefix over 0..j. One round per level, and
B(n) = Σ_{j<n} popcount(j) node updates in all (:func:`node_count`).

**BitDec([Q], ℓ)** for Q ∈ [0, 2^ℓ): the dealer supplies ℓ shared random bits b_i and [h], h
uniform on [0, 2^κ). With [R] = Σ 2^i [b_i] the parties open
C = 2^(ℓ+κ) + Q − R − 2^ℓ·h, which is positive, below 2^(ℓ+κ) + 2^ℓ (range-checked) and within
statistical distance 2^−κ of a value independent of Q. Since C + R ≡ Q (mod 2^ℓ), Q's bits are
the low ℓ bits of the sum of the public bits γ_i of C and the secret b_i: generate and propagate
signals g_i = γ_i·b_i, π_i = γ_i ⊕ b_i are local, the carries come from the prefix network
with (G, Π)_hi ∘ (G, Π)_lo = (G_hi + Π_hi·G_lo, Π_hi·Π_lo) (2 products per node), and then
q_i = γ_i + b_i + G_{i−1} − 2G_i locally.

**Prefix-OR** with OR(a, b) = a + b − ab: 1 product per node.

Simulation (:mod:`protocols.mpc.simulator`): C is drawn as 2^(ℓ+κ) − U with U uniform on
[0, 2^(ℓ+κ)) — the real law with Q = 0, at statistical distance Q/2^(ℓ+κ) < 2^−κ (R + 2^ℓ·h
is uniform on [0, 2^(ℓ+κ)): ℓ uniform bits and a κ-bit mask). The carry and prefix-OR
networks open only Beaver differences (:mod:`protocols.mpc.multiply`): uniform.

Every function works on a batch: the last axis holds the bits, leading axes are independent
instances.

Declared costs (:func:`bit_dec_cost`, :func:`prefix_or_cost`), per instance:
BitDec 1 + ⌈log₂ ℓ⌉ rounds, 1 + 4B(ℓ) opened elements, 2B(ℓ) triples, ℓ bits, 1 mask;
prefix-OR ⌈log₂ n⌉ rounds, 2B(n) opened elements, B(n) triples.
"""

from __future__ import annotations

import math
from collections.abc import Generator
from functools import cache
from typing import Any

import numpy as np

from protocols.mpc.multiply import multiply
from protocols.mpc.public import bit_matrix, constants, small
from protocols.mpc.session import MASKED, Session


def levels(n: int) -> int:
    """Number of levels (rounds) of a Sklansky network on n inputs: ⌈log₂ n⌉."""
    return max(0, math.ceil(math.log2(n))) if n > 1 else 0


def node_count(n: int) -> int:
    """B(n) = Σ_{j<n} popcount(j): node updates of a Sklansky network on n inputs."""
    return sum(bin(j).count("1") for j in range(n))


@cache
def network(n: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """Per level, the (updated positions, partner positions) of a Sklansky network.

    The result is cached and shared by every party of a process, so its arrays are read-only
    over immutable ``bytes``: no party program can rewrite the network another party uses
    next (an array whose memory is a ``bytes`` object cannot be made writeable again).
    """
    out = []
    j = np.arange(n)
    for i in range(levels(n)):
        hi = j[(j >> i) & 1 == 1]
        lo = ((hi >> i) << i) - 1
        out.append((_sealed(hi), _sealed(lo)))
    return tuple(out)


def _sealed(arr: np.ndarray) -> np.ndarray:
    """A read-only copy of a 1-d array over a new ``bytes`` object."""
    return np.frombuffer(arr.tobytes(), arr.dtype)


def bit_dec_cost(ell: int) -> dict[str, int]:
    """Rounds, opened elements and dealer items of one BitDec of an ℓ-bit value."""
    return {"rounds": 1 + levels(ell), "opened": 1 + 4 * node_count(ell),
            "triple": 2 * node_count(ell), "bit": ell, "mask": 1}


def prefix_or_cost(n: int) -> dict[str, int]:
    """Rounds, opened elements and triples of one prefix-OR over n bits."""
    return {"rounds": levels(n), "opened": 2 * node_count(n), "triple": node_count(n)}


def carries(
    sess: Session, g: np.ndarray, pi: np.ndarray, label: str
) -> Generator[Any, Any, np.ndarray]:
    """Prefix carries G_j (carry out of positions 0..j) from generate/propagate shares."""
    field = sess.field
    g, pi = g.copy(), pi.copy()
    for level, (hi, lo) in enumerate(network(g.shape[-1])):
        prod = yield from multiply(
            sess,
            np.concatenate([pi[..., hi], pi[..., hi]], axis=-1),
            np.concatenate([g[..., lo], pi[..., lo]], axis=-1),
            f"{label}.carry{level}",
        )
        g[..., hi] = field.add(g[..., hi], prod[..., : len(hi)])
        pi[..., hi] = prod[..., len(hi):]
    return g


def bit_dec(
    sess: Session, q: np.ndarray, ell: int, label: str = "bitdec"
) -> Generator[Any, Any, np.ndarray]:
    """Shares of the ℓ bits of Q ∈ [0, 2^ℓ) (shape ``q.shape + (ℓ,)``, bit 0 first)."""
    field, kappa = sess.field, sess.kappa
    shape = np.shape(q)
    n = int(np.prod(shape, dtype=np.int64))
    (b,) = sess.pool.take("bit", n * ell)
    (h,) = sess.pool.take("mask", n, bits=kappa)
    b = b.reshape(*shape, ell)
    powers = constants(field, [1 << i for i in range(ell)])
    r = field.sum(np.moveaxis(field.mul(b, powers), -1, 0), axis=0)
    c_share = field.sub(field.sub(np.asarray(q), r),
                        field.mul(h.reshape(shape), sess.const(1 << ell)))
    c_share = sess.add_public(c_share, sess.const(1 << (ell + kappa)))
    c = yield from sess.open(c_share, MASKED, label, bound=(1 << (ell + kappa)) + (1 << ell))
    gamma = bit_matrix(field, c, ell).astype(bool)
    one = sess.add_public(field.zeros(b.shape), small(field, np.ones(1, np.int64)).reshape(()))
    g = np.where(gamma, b, field.zeros(b.shape))
    pi = np.where(gamma, field.sub(one, b), b)
    big_g = yield from carries(sess, g, pi, label)
    # q_i = γ_i + b_i + G_{i−1} − 2 G_i
    prev = np.concatenate([field.zeros((*shape, 1)), big_g[..., :-1]], axis=-1)
    out = field.sub(field.add(b, prev), field.add(big_g, big_g))
    return sess.add_public(out, small(field, gamma.astype(np.int64)))


def prefix_or(sess: Session, w: np.ndarray, label: str) -> Generator[Any, Any, np.ndarray]:
    """Shares of y_j = OR(w_0, ..., w_j) for shared bits w (last axis), ⌈log₂ n⌉ rounds."""
    field = sess.field
    y = w.copy()
    for level, (hi, lo) in enumerate(network(w.shape[-1])):
        a, b = y[..., hi], y[..., lo]
        prod = yield from multiply(sess, a, b, f"{label}.or{level}")
        y[..., hi] = field.sub(field.add(a, b), prod)
    return y
