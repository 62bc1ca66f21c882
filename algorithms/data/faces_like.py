"""Synthetic grey-scale images shaped like the face sets of seed 000 (YaleB, CBCL; §4.3).

Saha & Imtiaz (seed 000, Table 2) factorise two face-image sets: YaleB (2,414 images of 32 × 32
pixels, 38 subjects under varying light, K = 38) and CBCL (2,429 images of 19 × 19 pixels,
K = 50; every image's grey levels linearly adjusted to mean and standard deviation 0.25, then
clipped to [0, 1]). Neither is shipped here, so :func:`synthetic_faces` draws dense images with
the features that decide how NMF and its DP noise behave on them — unlike a text corpus, every
pixel of every sample is non-zero and the samples are strongly correlated:

* **a shared face**: an ellipse of skin-level grey (0.6) over a darker background (0.15),
  the same for every image, so that every sample has a large common component;
* **parts**: ``k`` non-negative parts, each a 2-D Gaussian bump (centre uniform in the face's
  box, width 6–20 % of the side) — the localized "features" NMF learns from faces — added with
  Gamma(2, 0.15) weights per image;
* **lighting**: a linear gradient in a random direction across the image (YaleB's varying
  light), of strength U[0, 0.4];
* **pixel noise**: N(0, 0.03²); then each image is standardised to mean and standard
  deviation 0.25 and clipped to [0, 1] (CBCL's preprocessing, applied to both sets).

The sizes are the caller's (``side × side`` pixels, ``n`` images).
"""

from __future__ import annotations

import numpy as np

from algorithms.data.checks import check_rng, int_arg

__all__ = ["FACE_LEVEL", "synthetic_faces"]

FACE_LEVEL = 0.25
"""CBCL's preprocessing: every image's mean and standard deviation before clipping to [0, 1]."""


def _grid(side: int) -> tuple[np.ndarray, np.ndarray]:
    axis = (np.arange(side) + 0.5) / side
    return np.meshgrid(axis, axis, indexing="ij")


def synthetic_faces(n: int, side: int, k: int, *, rng: np.random.Generator) -> np.ndarray:
    """``n`` face-like images of ``side × side`` pixels from ``k`` parts, as rows of an
    (n, side²) matrix with entries in [0, 1] (see the module docstring).

    Raises
    ------
    ScenarioError
        If a size is not a whole number ≥ 1 (``side`` ≥ 2).
    """
    rng = check_rng(rng)
    n = int_arg(n, "n")
    side = int_arg(side, "side", minimum=2)
    k = int_arg(k, "k")
    y, x = _grid(side)
    face = np.where(((y - 0.5) / 0.42) ** 2 + ((x - 0.5) / 0.32) ** 2 <= 1.0, 0.6, 0.15)
    centres = rng.uniform([0.15, 0.2], [0.85, 0.8], size=(k, 2))
    widths = rng.uniform(0.06, 0.2, size=k)
    parts = np.exp(-((y[None] - centres[:, 0, None, None]) ** 2
                     + (x[None] - centres[:, 1, None, None]) ** 2)
                   / (2 * widths[:, None, None] ** 2)).reshape(k, -1)
    weights = rng.gamma(2.0, 0.15, size=(n, k))
    angle = rng.uniform(0.0, 2 * np.pi, size=n)
    strength = rng.uniform(0.0, 0.4, size=n)
    gradient = (np.cos(angle)[:, None] * (x.ravel() - 0.5)[None]
                + np.sin(angle)[:, None] * (y.ravel() - 0.5)[None])
    images = (face.ravel()[None] + weights @ parts) * (1.0 + strength[:, None] * gradient)
    images += rng.normal(0.0, 0.03, size=images.shape)
    images -= images.mean(axis=1, keepdims=True)
    images /= np.maximum(images.std(axis=1, keepdims=True), 1e-12)
    return np.clip(FACE_LEVEL + FACE_LEVEL * images, 0.0, 1.0)
