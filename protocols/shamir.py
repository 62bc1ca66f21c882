"""Shamir secret sharing over GF(p) (Shamir, "How to share a secret", CACM 1979).

A secret s ∈ GF(p)^L is shared with threshold t among holders with distinct non-zero
evaluation points x_1..x_n: the dealer draws a polynomial f(X) = s + a_1 X + … + a_{t−1}
X^{t−1} with uniform coefficient vectors a_k ∈ GF(p)^L, and holder i gets f(x_i). Any t shares
determine s (Lagrange interpolation at 0); any t − 1 shares are jointly uniform and independent
of s. Vectors are shared coordinate by coordinate, vectorised over L.

Secure aggregation (:mod:`protocols.secagg`) shares each party's mask seeds this way; a party
``m`` evaluates at ``x = m + 1``. The arithmetic is pure (no I/O): the caller passes the random
coefficients, drawn from its own randomness, so an audit can replace them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from protocols.errors import InputError
from protocols.field import PrimeField


def check_threshold(threshold: int, n_holders: int, p: int) -> int:
    """Validate t: 1 ≤ t ≤ n_holders, and the field has n_holders distinct non-zero points."""
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise InputError(f"threshold = {threshold!r} must be an integer")
    if not 1 <= threshold <= n_holders:
        raise InputError(
            f"threshold = {threshold} must lie in [1, {n_holders}] (the number of share holders)"
        )
    if n_holders >= p:
        raise InputError(
            f"Shamir sharing among {n_holders} holders needs a field with more than "
            f"{n_holders} elements, got p = {p}; use a larger prime"
        )
    return threshold


def share(
    field: PrimeField, secret: np.ndarray, points: Sequence[int], coefficients: np.ndarray
) -> np.ndarray:
    """Shares f(x) of ``secret`` at each evaluation point, by Horner's rule.

    Parameters
    ----------
    field : PrimeField
    secret : ndarray, shape (L,)
        Field elements to share.
    points : sequence of int, length n
        Distinct non-zero evaluation points (below p).
    coefficients : ndarray, shape (t − 1, L)
        Uniform field elements a_1..a_{t−1} (threshold t = len(coefficients) + 1).

    Returns
    -------
    ndarray, shape (n, L)
        Row i is f(points[i]).
    """
    secret = np.asarray(secret)
    length = len(secret)
    coefficients = np.asarray(coefficients).reshape(-1, length)
    _check_points(points, field.p)
    if not len(points):
        return field.zeros((0, length))
    if not len(coefficients):
        return np.array(np.broadcast_to(secret, (len(points), length)), dtype=field.dtype)
    # all holders and all degrees at once: f(x_i) = Σ_k x_i^k·c_k with c_0 the secret — one
    # product and one sum (the Vandermonde powers are Python ints, reduced once), instead of
    # a product and a sum per coefficient (Horner); exact, so the shares are the same.
    p = field.p
    powers = field.elements(np.array([[pow(int(x), k, p) for k in range(len(coefficients) + 1)]
                                      for x in points], dtype=object if p >> 63 else np.int64))
    stacked = np.concatenate([secret[None, :].astype(field.dtype, copy=False),
                              coefficients.astype(field.dtype, copy=False)])
    return field.sum(field.mul(powers[:, :, None], stacked[None, :, :]), axis=1)


def lagrange_at_zero(points: Sequence[int], p: int) -> list[int]:
    """Coefficients λ_i with f(0) = Σ_i λ_i f(x_i) for every f of degree < len(points)."""
    _check_points(points, p)
    out = []
    for i, xi in enumerate(points):
        num, den = 1, 1
        for j, xj in enumerate(points):
            if j != i:
                num = num * (-xj) % p
                den = den * (xi - xj) % p
        out.append(num * pow(den, p - 2, p) % p)
    return out


def reconstruct(
    field: PrimeField, points: Sequence[int], shares: Sequence[np.ndarray], threshold: int
) -> np.ndarray:
    """The secret from at least ``threshold`` shares (the first ``threshold`` are used).

    Parameters
    ----------
    points : sequence of int
        The holders' evaluation points, in the order of ``shares``.
    shares : sequence of ndarray, each shape (L,)
    threshold : int
        t; fewer than t shares raise :class:`~protocols.errors.InputError`.
    """
    if len(shares) != len(points):
        raise InputError(f"{len(shares)} shares but {len(points)} evaluation points")
    if len(shares) < threshold:
        raise InputError(
            f"{len(shares)} shares cannot reconstruct a secret shared with threshold {threshold}"
        )
    points = list(points)[:threshold]
    stacked = np.stack([np.asarray(s) for s in list(shares)[:threshold]])
    lambdas = field.elements(np.repeat(np.array(lagrange_at_zero(points, field.p), dtype=object),
                                       stacked.shape[1]).reshape(stacked.shape))
    return field.sum(field.mul(stacked, lambdas), axis=0)


def _check_points(points: Sequence[int], p: int) -> None:
    if len(set(points)) != len(points) or any(not 0 < x < p for x in points):
        raise InputError(f"evaluation points {list(points)} must be distinct and in [1, {p})")
