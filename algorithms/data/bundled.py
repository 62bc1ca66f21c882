"""Data sets shipped inside a dependency: scikit-learn's 8×8 digits.

The DP experiments (seed 000's images, seed 003's PCA) use a small image set; none is shipped
with mpcsim, but scikit-learn bundles the UCI optical digits (1,797 samples, 64 pixels, values
0..16) in its wheel, so no download is needed. scikit-learn is an optional dependency (the
``datasets`` extra, also in ``dev``); this module is the only place that imports it, and it
does so when the data set is asked for.
"""

from __future__ import annotations

import numpy as np

from algorithms.data.dataset import Dataset
from protocols.errors import DataError

__all__ = ["BUNDLED", "bundled_dataset", "load_digits"]

BUNDLED = ("digits",)


def load_digits() -> np.ndarray:
    """scikit-learn's bundled digits as a float64 (1797, 64) matrix, rows are images."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        raise DataError(
            "data.source = 'digits' needs scikit-learn, which is not installed; install it "
            "with `pip install 'mpcsim[datasets]'` (or the dev extra)"
        ) from None
    return np.asarray(sklearn_digits().data, dtype=np.float64)


def bundled_dataset(name: str) -> Dataset:
    """The bundled data set ``name`` (one of :data:`BUNDLED`) as a :class:`Dataset`."""
    if name not in BUNDLED:
        raise DataError(f"bundled data set {name!r} is unknown; use one of {', '.join(BUNDLED)}")
    return Dataset(load_digits(), "matrix", f"bundled:{name}")
