"""Data sets shipped inside a dependency: scikit-learn's 8×8 digits (``[data] source =
"digits"``), the bundled stand-in for seed 003's MNIST experiments (spec cape.md §7.3).

scikit-learn is an optional dependency (extra ``datasets``): this module imports it only when
the data is asked for, and says how to install it when it is missing.
"""

from __future__ import annotations

import numpy as np

from algorithms.data.dataset import Dataset
from protocols.errors import DataError, ScenarioError

BUNDLED = ("digits",)


def load_digits() -> np.ndarray:
    """scikit-learn's bundled 8×8 digits (1,797 samples, D = 64, values 0..16), as float64.

    scikit-learn is an optional dependency (extra ``datasets``); without it, a DataError says
    how to install it.
    """
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as exc:
        raise DataError(
            "data.source = 'digits' needs scikit-learn, which is not installed; install it "
            "with `pip install 'mpcsim[datasets]'` (or use synthetic or file data)"
        ) from exc
    return np.asarray(sklearn_digits().data, dtype=np.float64)


def bundled_dataset(name: str) -> Dataset:
    """A data set shipped with a dependency: ``"digits"`` (1,797 × 64, values 0..16)."""
    if name not in BUNDLED:
        raise ScenarioError(f"bundled data set {name!r} is unknown; use one of {BUNDLED}")
    return Dataset(load_digits(), "matrix", name)
