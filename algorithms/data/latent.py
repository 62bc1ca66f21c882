"""Seed 003's synthetic data (Imtiaz & Sarwate: capePCA and capeAGN; spec cape.md §7).

* :func:`synthetic_spiked` — Gaussian samples with a spiked diagonal covariance (§6.1);
* :func:`synthetic_mog` — a spherical mixture of Gaussians with orthonormal means (§6.2);
* :func:`synthetic_stm` — documents of a single topic model (§6.2).

Rows are samples; ``spiked`` and ``mog`` rows are scaled into the unit ball by one public bound
(the largest norm), ``stm`` rows are word counts. Mixing weights are evenly spaced from 1 to 10k
and normalised, as in the paper. :mod:`algorithms.data.synthetic` exposes them as the kinds
``spiked``, ``mog`` and ``stm``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.data.checks import check_rng, int_arg, real_arg
from protocols.errors import ScenarioError

__all__ = ["SyntheticLatent", "synthetic_mog", "synthetic_spiked", "synthetic_stm"]


@dataclass(frozen=True)
class SyntheticLatent:
    """Samples of a latent-variable model with its planted parameters.

    Attributes
    ----------
    X : ndarray, shape (n, D)
        The samples (rows): unit-ball vectors (``spiked``, ``mog``) or word counts (``stm``).
    covariance : ndarray, shape (D, D), optional
        The covariance of the scaled samples (``spiked``).
    means : ndarray, shape (k, D), optional
        The components μ_k as rows: unit vectors (``mog``) or word distributions (``stm``).
    weights : ndarray, shape (k,), optional
        The mixing weights w_k.
    sigma2 : float
        The spherical noise variance of the scaled samples (``mog``).
    """

    X: np.ndarray
    covariance: np.ndarray | None = None
    means: np.ndarray | None = None
    weights: np.ndarray | None = None
    sigma2: float = 0.0


def _mixing_weights(k: int) -> np.ndarray:
    """Weights evenly spaced from 1 to 10k, normalised (seed 003 §6.2)."""
    w = np.linspace(1.0, 10.0 * k, k)
    return w / w.sum()


def synthetic_spiked(n: int, dim: int, rank: int, rng: np.random.Generator) -> SyntheticLatent:
    """Seed 003's synthetic PCA data: x ~ N(0, A), A = diag(linspace(10, 1, r), 0.5·U(0,1)^{D−r}),
    every sample divided by the largest norm so that ‖x‖₂ ≤ 1 (§6.1; spec §7.1: D = 200, r = 50).
    """
    rng = check_rng(rng)
    n, dim, rank = int_arg(n, "rows"), int_arg(dim, "cols"), int_arg(rank, "k")
    if rank > dim:
        raise ScenarioError(f"k = {rank} (the signal rank) must be ≤ cols = {dim}")
    spectrum = np.concatenate([np.linspace(10.0, 1.0, rank), 0.5 * rng.random(dim - rank)])
    X = rng.normal(size=(n, dim)) * np.sqrt(spectrum)
    scale = float(np.linalg.norm(X, axis=1).max())
    return SyntheticLatent(X / scale, covariance=np.diag(spectrum) / scale**2)


def synthetic_mog(n: int, dim: int, k: int, rng: np.random.Generator,
                  variance: float = 0.05) -> SyntheticLatent:
    """Seed 003's spherical mixture: μ_k the first k columns of a random orthogonal matrix,
    weights from 1 to 10k, x = μ_h + z with z ~ N(0, variance·I), all samples divided by the
    largest norm (one public bound for every site; the authors' code scales per site, spec §10
    Q2). ``means`` stay unit vectors; ``sigma2`` is the variance after scaling.
    """
    rng = check_rng(rng)
    n, dim, k = int_arg(n, "rows"), int_arg(dim, "cols"), int_arg(k, "k")
    var = real_arg(variance, "noise", low=0.0, low_open=True)
    if k >= dim:
        raise ScenarioError(f"k = {k} components need k < cols = {dim} for a mixture")
    means = np.linalg.qr(rng.normal(size=(dim, dim)))[0][:, :k].T
    weights = _mixing_weights(k)
    h = rng.choice(k, size=n, p=weights)
    X = means[h] + rng.normal(0.0, math.sqrt(var), size=(n, dim))
    scale = float(np.linalg.norm(X, axis=1).max())
    return SyntheticLatent(X / scale, means=means, weights=weights, sigma2=var / scale**2)


def synthetic_stm(n: int, dim: int, k: int, rng: np.random.Generator,
                  doc_length: int = 3) -> SyntheticLatent:
    """Seed 003's single topic model: topics are the first k columns of a random orthogonal
    matrix with negatives set to 0, normalised to sum 1; weights from 1 to 10k; each document
    has ``doc_length`` words (3 in the paper) from one topic. ``X`` holds word counts.
    """
    rng = check_rng(rng)
    n, dim, k = int_arg(n, "rows"), int_arg(dim, "cols"), int_arg(k, "k")
    length = int_arg(doc_length, "doc_length", minimum=3)
    if k > dim:
        raise ScenarioError(f"k = {k} topics need k ≤ cols = {dim}")
    basis = np.maximum(np.linalg.qr(rng.normal(size=(dim, dim)))[0][:, :k], 0.0)
    empty = basis.sum(axis=0) == 0
    basis[:, empty] = 1.0  # a column with no positive entry becomes uniform
    topics = (basis / basis.sum(axis=0)).T
    weights = _mixing_weights(k)
    h = rng.choice(k, size=n, p=weights)
    X = np.zeros((n, dim))
    for t in range(k):
        rows = np.nonzero(h == t)[0]
        X[rows] = rng.multinomial(length, topics[t], size=len(rows))
    return SyntheticLatent(X, means=topics, weights=weights)
