"""Products of shared values: Beaver triples (P1) and square pairs (P2).

Spec ``normed_secure_sum.md`` §2.2. With a dealer triple ([a], [b], [ab]), the parties open
ε = x − a and δ = y − b and compute [xy] = [ab] + ε[b] + δ[a] + εδ (the leader adds εδ). With a
square pair ([a], [a²]) they open ε = x − a only and compute [x²] = [a²] + 2ε[a] + ε². The
opened differences are one-time pads with fresh uniform masks: uniform and independent of the
secrets (perfect security). Products are vectorised: any number of them cost one round.

Declared cost (:func:`cost`): 1 round; 2 opened elements per product, 1 per square; one
triple per product, one square pair per square.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np

from protocols.mpc.sharing import BEAVER, Session

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
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    x = np.broadcast_to(x, shape).reshape(-1)
    y = np.broadcast_to(y, shape).reshape(-1)
    n = x.size
    a, b, c = sess.pool.take("triple", n)
    opened = yield from sess.open(np.concatenate([field.sub(x, a), field.sub(y, b)]), BEAVER,
                                  label)
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
    a, a2 = sess.pool.take("square", x.size)
    eps = yield from sess.open(field.sub(x, a), BEAVER, label)
    z = field.add(a2, field.mul(field.add(eps, eps), a))
    if sess.leader:
        z = field.add(z, field.mul(eps, eps))
    return z.reshape(shape)
