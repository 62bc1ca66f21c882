"""Agreement of a topic model with human class labels: soft ARI and VI.

Thesis seed 001, §1.3.3 (classifier-based measures, Figs. 1.13–1.14; Tables 1.4 rows "ARI IS /
oos" and "VI IS / oos"). Both compare the n × k document-topic distributions ``W`` (rows on
Δ_k) with the n × C class distributions ``Y`` (rows on Δ_C; one-hot for hard labels) through the
topic-class matrix ``A = Wᵀ Y``, whose entry ``A_tc`` counts (softly) the documents assigned to
topic t and class c. Both are invariant under permutations of the topics.

* **Adjusted Rand index** (Hubert & Arabie 1985, the thesis's [38]): with ``comb(x) = x(x−1)/2``
  (the thesis's approximation of the binomial for non-integer ``A``), row sums ``a``, column
  sums ``b`` and ``E = Σ comb(a) Σ comb(b) / comb(n)``, ``ARI = (Σ comb(A) − E) /
  (½(Σ comb(a) + Σ comb(b)) − E)``; 1 for identical partitions, about 0 for independent ones;
  higher is better. Departure: Fig. 1.13 prints the denominator as ``comb(n) − E``, which is
  not Hubert & Arabie's and does not give 1 for a perfect match; the published one is used
  (on hard labels it equals scikit-learn's ``adjusted_rand_score``).
* **Variation of information** (Meilă 2007, the thesis's [39]): ``VI = H(W|Y) + H(Y|W)`` for
  the joint distribution ``P(t, c) = A_tc / n``, i.e. ``2 H(T, C) − H(T) − H(C)`` in nats;
  0 for identical partitions; lower is better.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from protocols.errors import InputError

__all__ = ["adjusted_rand_index", "contingency", "one_hot", "variation_of_information"]


def _distributions(M: ArrayLike, name: str) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] < 2 or M.shape[1] < 1:
        raise InputError(f"{name} must be an (n ≥ 2, k ≥ 1) matrix; got shape {M.shape}")
    if not np.all(np.isfinite(M)) or M.min() < 0:
        raise InputError(f"{name} must hold finite, non-negative entries")
    if not np.allclose(M.sum(axis=1), 1.0, atol=1e-6):
        raise InputError(f"every row of {name} must sum to 1 (a distribution)")
    return M


def one_hot(labels: ArrayLike, n_classes: int | None = None) -> np.ndarray:
    """The n × C indicator matrix of integer labels in ``0 … C−1``."""
    y = np.asarray(labels)
    if y.ndim != 1 or y.size < 1 or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise InputError("labels must be a non-empty vector of non-negative integers")
    c = int(y.max()) + 1 if n_classes is None else n_classes
    if c <= y.max():
        raise InputError(f"a label is {int(y.max())}, outside 0 … {c - 1}")
    out = np.zeros((y.size, c))
    out[np.arange(y.size), y] = 1.0
    return out


def contingency(W: ArrayLike, Y: ArrayLike) -> np.ndarray:
    """``A = Wᵀ Y`` (k × C): soft counts of documents per (topic, class)."""
    W = _distributions(W, "W")
    Y = _distributions(Y, "Y")
    if W.shape[0] != Y.shape[0]:
        raise InputError(f"W has {W.shape[0]} documents, Y {Y.shape[0]}")
    return W.T @ Y


def _comb2(x: np.ndarray) -> float:
    return float(np.sum(x * (x - 1.0)) / 2.0)


def adjusted_rand_index(W: ArrayLike, Y: ArrayLike) -> float:
    """Soft adjusted Rand index of the topics ``W`` against the classes ``Y``; higher is better."""
    A = contingency(W, Y)
    n = float(A.sum())
    pairs = _comb2(A)
    rows, cols = _comb2(A.sum(axis=1)), _comb2(A.sum(axis=0))
    expected = rows * cols / (n * (n - 1.0) / 2.0)
    top = (rows + cols) / 2.0
    if top == expected:
        return 1.0 if pairs == expected else 0.0
    return (pairs - expected) / (top - expected)


def _entropy(p: np.ndarray) -> float:
    p = p[p > 0]
    return float(-np.sum(p * np.log(p)))


def variation_of_information(W: ArrayLike, Y: ArrayLike) -> float:
    """``H(W|Y) + H(Y|W)`` in nats for the joint ``Wᵀ Y / n``; lower is better."""
    A = contingency(W, Y)
    P = A / A.sum()
    return 2.0 * _entropy(P.ravel()) - _entropy(P.sum(axis=1)) - _entropy(P.sum(axis=0))
