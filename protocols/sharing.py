"""Pure sharing math for every scheme: additive shares, pairwise masks, Shamir over GF(p).

One module for the arithmetic of sharing, with no I/O — in the style of MPyC's ``thresha.py`` —
so that every protocol orders the same functions and exchanges their results:

* **Additive sharing** (SecureSum, Tsikhanovich thesis seed 001, §2.2, Table 2.1; the MPC
  engine's input sharing, spec ``normed_secure_sum.md`` §2.1): a party splits x̂ into M shares
  that sum to x̂ — the M − 1 it sends are uniform (:func:`additive_split`, :func:`own_share`);
  party j adds the shares it holds (:func:`column_sum`); the column sums add up to Σ_i x̂_i
  (:func:`additive_reconstruct`).
* **Pairwise masks** (SecureSum's PRG variants; Bonawitz et al. 2017): a pair's stream stands for
  the shares the two would exchange (:func:`pair_shares`), and a party's net mask is the signed
  sum of its pair streams (:func:`pairwise_mask_from_streams`,
  :func:`one_stream_mask_from_streams`); every pair's contribution cancels in the sum.
* **Shamir sharing** (Shamir, "How to share a secret", CACM 1979): a secret s ∈ GF(p)^L is
  shared with threshold t among holders with distinct non-zero evaluation points x_1..x_n: the
  dealer draws a polynomial f(X) = s + a_1 X + … + a_{t−1} X^{t−1} with uniform coefficient
  vectors a_k ∈ GF(p)^L, and holder i gets f(x_i) (:func:`shamir_share`, through the
  Vandermonde matrix of the points, :func:`vandermonde`). Any t shares determine s (Lagrange
  interpolation at 0, :func:`lagrange_at_zero`, :func:`shamir_reconstruct`); any t − 1 shares
  are jointly uniform and independent of s. Vectors are shared coordinate by coordinate,
  vectorised over L. Secure aggregation (:mod:`protocols.secagg`) shares each party's mask
  seeds this way; a party ``m`` evaluates at ``x = m + 1``.

The caller passes the randomness (masks, coefficients), drawn from its own source, so an audit
can replace it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from protocols.errors import InputError
from protocols.field import PrimeField

# -- additive sharing ------------------------------------------------------------------------


def own_share(field: PrimeField, x_hat: np.ndarray, shares_out: list[np.ndarray]) -> np.ndarray:
    """r_i^(i) = x̂_i − Σ_{j≠i} r_i^(j): the share a party keeps (Table 2.1, row i)."""
    if not shares_out:
        return x_hat
    return field.sub(x_hat, field.sum_arrays(shares_out))


def column_sum(field: PrimeField, kept: np.ndarray, shares_in: list[np.ndarray]) -> np.ndarray:
    """r^(j) = r_j^(j) + Σ_{i≠j} r_i^(j): the sum of the shares party j holds (column j)."""
    if not shares_in:
        return kept
    return field.add(kept, field.sum_arrays(shares_in))


def additive_split(field: PrimeField, x_hat: np.ndarray, masks: list[np.ndarray]
                   ) -> list[np.ndarray]:
    """All M shares of x̂ given the M − 1 random ones: ``masks + [own share]``."""
    return [*masks, own_share(field, x_hat, masks)]


def additive_reconstruct(field: PrimeField, column_sums: list[np.ndarray]) -> np.ndarray:
    """Σ_j r^(j) = Σ_i x̂_i (sum of column sums equals sum of row sums)."""
    return field.sum_arrays(column_sums)


# -- pairwise masks ----------------------------------------------------------------------------


def pair_shares(
    stream: np.ndarray, me: int, peer: int, length: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split a pair's 2d-element stream into (my share for peer, peer's share for me).

    The first half of a pair's stream is the lower party's share for the higher one, the second
    half the reverse.
    """
    first, second = stream[:length], stream[length:]
    return (first, second) if me < peer else (second, first)


def pairwise_mask_from_streams(
    field: PrimeField, party: int, peers: tuple[int, ...], streams: np.ndarray, half: int
) -> np.ndarray:
    """Σ_j (r_j^(i) − r_i^(j)) for party i, from its 2·half-element stream with each peer j.

    A pair's stream holds the lower party's share for the higher one in its first half and the
    reverse in its second (:func:`pair_shares`), so peer j contributes
    (second − first) if i < j and (first − second) otherwise.
    """
    plus, minus = [], []
    for peer, row in zip(peers, streams, strict=True):
        first, second = row[:half], row[half : 2 * half]
        plus.append(second if party < peer else first)
        minus.append(first if party < peer else second)
    return field.combine(plus, minus) if plus else field.zeros(half)


def one_stream_mask_from_streams(
    field: PrimeField, party: int, peers: tuple[int, ...], streams: np.ndarray
) -> np.ndarray:
    """Σ_{j>i} s_ij − Σ_{j<i} s_ij for party i, from its stream s_ij with each peer j.

    The one-stream pairwise mask: the lower party of a pair adds the pair's stream, the
    higher one subtracts it, so every pair's contribution cancels in the sum over parties.
    ``streams`` has shape (len(peers), n).
    """
    plus = [row for peer, row in zip(peers, streams, strict=True) if party < peer]
    minus = [row for peer, row in zip(peers, streams, strict=True) if party > peer]
    if not plus and not minus:
        return field.zeros(streams.shape[1] if streams.ndim == 2 else 0)
    if not plus:  # the highest party only subtracts
        return field.neg(field.sum_arrays(minus))
    return field.combine(plus, minus)


# -- Shamir sharing ----------------------------------------------------------------------------


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


def shamir_share(
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
    powers = vandermonde(field, points, len(coefficients) + 1)
    stacked = np.concatenate([secret[None, :].astype(field.dtype, copy=False),
                              coefficients.astype(field.dtype, copy=False)])
    return field.sum(field.mul(powers[:, :, None], stacked[None, :, :]), axis=1)


def vandermonde(field: PrimeField, points: Sequence[int], n_powers: int) -> np.ndarray:
    """The Vandermonde matrix V[i, k] = points[i]^k mod p, k < ``n_powers``, as field elements.

    The powers are Python ints reduced once, so the matrix is exact in any field.
    """
    p = field.p
    return field.elements(np.array([[pow(int(x), k, p) for k in range(n_powers)]
                                    for x in points], dtype=object if p >> 63 else np.int64))


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


def shamir_reconstruct(
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
