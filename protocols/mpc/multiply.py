"""Products of shared values: Beaver triples (P1) and square pairs (P2).

Spec ``normed_secure_sum.md`` §2.2. With a dealer triple ([a], [b], [ab]), the parties open
ε = x − a and δ = y − b and compute [xy] = [ab] + ε[b] + δ[a] + εδ (the leader adds εδ). With a
square pair ([a], [a²]) they open ε = x − a only and compute [x²] = [a²] + 2ε[a] + ε². The
opened differences are one-time pads with fresh uniform masks: uniform and independent of the
secrets (perfect security). Products are vectorised: any number of them cost one round.

Simulation (:mod:`protocols.mpc.simulator`): ε and δ are drawn uniform on F_p — their real
law exactly, independent of x, y and every other opening (perfect, distance 0) — and the
honest shares complete them against the members' own shares.

O1 of spec §2.6 (open each operand once, :func:`multiply_rows`): a row of m products
x_i·y by one value y uses a row triple ([a_i], [b], [a_i·b]) from the dealer — one b for the
row — and opens ε_i = x_i − a_i and δ = y − b once: m + 1 openings instead of 2m. Each mask
still pads exactly one value (b pads y alone), so the openings stay uniform and independent.

Declared cost (:func:`cost`): 1 round; 2 opened elements per product, 1 per square; one
triple per product, one square pair per square; a row of m products by one value, m + 1.
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


def multiply_rows(
    sess: Session, x: np.ndarray, y: np.ndarray, label: str,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
) -> Generator[Any, Any, tuple[np.ndarray, np.ndarray | None]]:
    """Shares of x[r, i]·y[r] (``x`` of shape (rows, m), ``y`` of shape (rows,)), one round.

    ``pairs = (x2, y2)``: elementwise products (:func:`multiply`) opened in the same round.
    Returns (x·y of shape (rows, m), x2·y2 flat or None).
    """
    field = sess.field
    rows, m = np.shape(x)
    n = rows * m
    block = sess.pool.take_block("rowtriple", n, m=m)
    a, b, ab = block[:n], block[n : n + rows], block[n + rows :]
    opening = [field.sub(np.reshape(x, -1), a), field.sub(np.reshape(y, -1), b)]
    if pairs is not None:
        x2, y2 = (np.reshape(v, -1) for v in pairs)
        k = x2.size
        triple = sess.pool.take_block("triple", k).reshape(-1)
        opening.append(field.sub(concat(field, [x2, y2]), triple[: 2 * k]))
    opened = yield from sess.open(concat(field, opening), BEAVER, label)
    eps, delta = opened[:n], np.repeat(opened[n : n + rows], m)
    if isinstance(field, Mersenne127Field):
        z = beaver_combine(concat(field, [eps, delta]), concat(field, [a, np.repeat(b, m)]), ab,
                           sess.leader)
    else:
        z = field.add(ab, field.add(field.mul(eps, np.repeat(b, m)), field.mul(delta, a)))
        if sess.leader:
            z = field.add(z, field.mul(eps, delta))
    other = None
    if pairs is not None:
        rest, ab2 = opened[n + rows :], triple[: 2 * k]
        if isinstance(field, Mersenne127Field):
            other = beaver_combine(rest, ab2, triple[2 * k :], sess.leader)
        else:
            e2, d2 = rest[:k], rest[k:]
            other = field.add(triple[2 * k :], field.add(field.mul(e2, ab2[k:]),
                                                         field.mul(d2, ab2[:k])))
            if sess.leader:
                other = field.add(other, field.mul(e2, d2))
    return z.reshape(rows, m), other
