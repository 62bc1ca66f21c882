"""Products of shared values: Beaver triples (P1) and square pairs (P2).

Spec ``normed_secure_sum.md`` §2.2. With a dealer triple ([a], [b], [ab]), the parties open
ε = x − a and δ = y − b and compute [xy] = [ab] + ε[b] + δ[a] + εδ (the leader adds εδ). With a
square pair ([a], [a²]) they open ε = x − a only and compute [x²] = [a²] + 2ε[a] + ε². The
opened differences are one-time pads with fresh uniform masks: uniform and independent of the
secrets (perfect security). Products are vectorised: any number of them cost one round.

Simulation (:mod:`protocols.mpc.simulator`): ε and δ are drawn uniform on F_p — their real
law exactly, independent of x, y and every other opening (perfect, distance 0) — and the
honest shares complete them against the members' own shares.

Declared cost (:func:`cost`): 1 round; 2 opened elements per product, 1 per square; one
triple per product, one square pair per square.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.field.mersenne127 import Mersenne127Field, beaver_combine, square_combine
from protocols.mpc.session import BEAVER, Session, concat

PRODUCT_ROUNDS = 1


def cost(products: int = 0, squares: int = 0) -> dict[str, int]:
    """Rounds, opened elements and dealer items of one round of products and squares."""
    return {"rounds": PRODUCT_ROUNDS if products or squares else 0,
            "opened": 2 * products + squares, "triple": products, "square": squares}


def multiply(
    sess: Session, x: np.ndarray, y: np.ndarray, label: str
) -> Generator[Any, Any, np.ndarray]:
    """Shares of x·y elementwise (``x`` and ``y`` broadcast to one shape), one round."""
    field = sess.field
    shape = np.shape(x)
    if shape != np.shape(y):
        shape = np.broadcast_shapes(shape, np.shape(y))
        x, y = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
    xs, ys = np.reshape(x, -1), np.reshape(y, -1)
    n = xs.size
    block = sess.pool.take_block("triple", n)  # rows a, b, ab: a‖b is one contiguous slice
    flat = block.reshape(-1)
    opened = yield from sess.open(field.sub(concat(field, [xs, ys]), flat[: 2 * n]), BEAVER,
                                  label)
    if isinstance(field, Mersenne127Field):
        return beaver_combine(opened, flat[: 2 * n], flat[2 * n :], sess.leader).reshape(shape)
    a, b, c = block
    eps, delta = opened[:n], opened[n:]
    z = field.add(c, field.add(field.mul(eps, b), field.mul(delta, a)))
    if sess.leader:
        z = field.add(z, field.mul(eps, delta))
    return z.reshape(shape)


def square(sess: Session, x: np.ndarray, label: str) -> Generator[Any, Any, np.ndarray]:
    """Shares of x² elementwise, one round, with square pairs."""
    field = sess.field
    shape = np.shape(x)
    x = np.asarray(x).reshape(-1)
    a, a2 = sess.pool.take_block("square", x.size)
    eps = yield from sess.open(field.sub(x, a), BEAVER, label)
    if isinstance(field, Mersenne127Field):
        return square_combine(eps, a, a2, sess.leader).reshape(shape)
    z = field.add(a2, field.mul(field.add(eps, eps), a))
    if sess.leader:
        z = field.add(z, field.mul(eps, eps))
    return z.reshape(shape)
