"""Synthetic images shaped like MNIST (seed 004's sparse data set for Figs. 6–7).

Qian et al. (seed 004, Table 1) factor MNIST as a 70,000 × 784 matrix with 10,505,375 non-zero
values (80.86 % zeros) and partition its **784 columns** — the pixels — among the nodes
(§5.3: "node 0 is assigned with 50 % of the columns"). MNIST is not shipped here, so
:func:`synthetic_mnist` draws a matrix with the features that decide how NMF behaves on it:

* **non-negative and bounded**: intensities in [0, 1], as MNIST's 0..255 scaled;
* **sparse with structured support**: each image is a non-negative mixture of k "stroke"
  prototypes — each the sum of three Gaussian bumps of width ``side/10`` whose centres lie in
  the central 70 % of a ``side × side`` grid (``side = ⌈√n_pixels⌉``; 28 for 784) — plus
  Gaussian noise of standard deviation ``noise`` times the signal's, and only the part above
  the ``1 − density`` quantile is kept (shifted down to 0), so exactly a ``density`` share of
  the cells is non-zero (default 0.1914, MNIST's) and border pixels are nearly always 0, as in
  MNIST;
* **saturated strokes**: the kept excess is divided by its median and clipped at 1, so half of
  the non-zero pixels are 1 (MNIST's strokes are mostly at or near 255).

Image weights are ``Dirichlet(0.3·1_k)`` (an image is dominated by one or two prototypes, as a
digit by its class) and prototype intensities ``U[0.5, 1]`` per bump. The result is close to,
but not exactly, non-negative rank k (the threshold and the clip are not linear).

The matrix is returned **pixels × images** (``n_pixels`` rows): a scenario's data rows are
the samples that DSANLS partitions, M's columns (``M = Xᵀ``), and seed 004 partitions MNIST's
pixel columns. The caller picks the number of images; the scenarios use 7,000 (a tenth of
MNIST) so that one method runs for seconds, not minutes, with U = 7,000 × k still the large
factor that every synchronisation sends.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from algorithms.data.checks import check_rng, int_arg, real_arg

__all__ = ["MNIST_DENSITY", "MnistLike", "synthetic_mnist"]

MNIST_DENSITY = 10_505_375 / (70_000 * 784)
"""MNIST's share of non-zero cells, from seed 004's Table 1 (≈ 0.1914)."""
WEIGHT_CONCENTRATION = 0.3
BUMPS_PER_PROTOTYPE = 3
CENTRAL_SHARE = 0.7


@dataclass(frozen=True)
class MnistLike:
    """A synthetic MNIST-shaped matrix and its planted factors.

    Attributes
    ----------
    X : ndarray of float64, shape (n_pixels, n_images)
        Intensities in [0, 1]; a ``density`` share of them non-zero.
    prototypes : ndarray of float64, shape (n_pixels, k)
        The non-negative stroke prototypes.
    weights : ndarray of float64, shape (n_images, k)
        Each image's mixture of the prototypes (rows on the simplex Δ_k).
    """

    X: np.ndarray
    prototypes: np.ndarray
    weights: np.ndarray


def synthetic_mnist(n_pixels: int, n_images: int, k: int = 10, *,
                    density: float = MNIST_DENSITY, noise: float = 0.1,
                    rng: np.random.Generator) -> MnistLike:
    """Draw an MNIST-shaped pixels × images matrix (see the module docstring).

    Raises
    ------
    ScenarioError
        A size below 1, ``density`` outside (0, 1] or a negative ``noise``.
    """
    n_pixels, n_images, k = (int_arg(n_pixels, "n_pixels"), int_arg(n_images, "n_images"),
                             int_arg(k, "k"))
    density = real_arg(density, "density", low=0.0, high=1.0, low_open=True)
    noise = real_arg(noise, "noise", low=0.0)
    rng = check_rng(rng)
    side = math.ceil(math.sqrt(n_pixels))
    grid = np.arange(side * side)[:n_pixels]
    rows, cols = (grid // side).astype(float), (grid % side).astype(float)
    margin = (1.0 - CENTRAL_SHARE) / 2 * (side - 1)
    width = max(side / 10.0, 0.5)
    prototypes = np.zeros((n_pixels, k))
    for t in range(k):
        centres = rng.uniform(margin, side - 1 - margin, size=(BUMPS_PER_PROTOTYPE, 2))
        heights = rng.uniform(0.5, 1.0, size=BUMPS_PER_PROTOTYPE)
        for (r, c), h in zip(centres, heights, strict=True):
            prototypes[:, t] += h * np.exp(-((rows - r) ** 2 + (cols - c) ** 2)
                                           / (2 * width**2))
    weights = rng.dirichlet(np.full(k, WEIGHT_CONCENTRATION), size=n_images)
    signal = prototypes @ weights.T
    level = signal + rng.normal(0.0, noise * float(signal.std()), size=signal.shape)
    if density < 1.0:
        level -= np.quantile(level, 1.0 - density)
    else:
        level -= level.min()
    excess = np.maximum(level, 0.0)
    positive = excess[excess > 0]
    scale = float(np.median(positive)) if positive.size else 1.0
    X = np.minimum(excess / scale, 1.0)
    return MnistLike(X=X, prototypes=prototypes, weights=weights)
