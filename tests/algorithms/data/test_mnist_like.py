"""Tests of algorithms.data.mnist_like: MNIST-shaped sparse images (seed 004's sparse data).

The references are seed 004's Table 1 (MNIST: 70,000 × 784, 10,505,375 non-zero values) and
numpy statistics of the drawn matrix: its share of non-zeros, its range, the border of the
28 × 28 grid, and a truncated SVD of it.
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.data import synthetic_dataset, synthetic_mnist
from protocols.errors import ScenarioError


def test_images_are_sparse_bounded_and_nonnegative_as_mnist() -> None:
    data = synthetic_mnist(784, 2000, 10, rng=np.random.default_rng(0))
    X = data.X
    assert X.shape == (784, 2000)
    nonzero = X > 0
    assert abs(nonzero.mean() - 10_505_375 / (70_000 * 784)) < 1e-3  # 80.86 % zeros
    assert X.min() == 0.0 and X.max() == 1.0
    assert 0.45 <= (X[nonzero] == 1.0).mean() <= 0.55  # half of the strokes saturate
    # the 28 × 28 grid's outer two-pixel frame is nearly always blank, as MNIST's border
    grid = np.arange(784).reshape(28, 28)
    frame = np.concatenate([grid[:2].ravel(), grid[-2:].ravel(), grid[2:-2, :2].ravel(),
                            grid[2:-2, -2:].ravel()])
    assert nonzero[frame].mean() < 0.02 < nonzero.mean()


def test_the_images_are_near_low_rank_but_not_exactly() -> None:
    data = synthetic_mnist(400, 1500, 8, rng=np.random.default_rng(1))
    s = np.linalg.svd(data.X, compute_uv=False)
    tail = np.sqrt(np.cumsum((s**2)[::-1])[::-1] / np.sum(s**2))  # error of rank r, r = index
    assert tail[8] < 0.45  # a rank-8 fit leaves under 45 % of the norm ...
    assert tail[8] > 0.1  # ... but the threshold, the clip and the noise leave some
    assert np.all(data.prototypes >= 0)
    np.testing.assert_allclose(data.weights.sum(axis=1), 1.0)


def test_density_is_the_requested_share_and_the_kind_is_reachable() -> None:
    ds = synthetic_dataset(64, 300, np.random.default_rng(2), "mnist", k=4, density=0.3,
                           noise=0.0)
    assert ds.kind == "matrix" and ds.X.shape == (64, 300)
    assert abs((ds.X > 0).mean() - 0.3) < 1e-3
    assert set(ds.truth) == {"prototypes", "weights"}
    a = synthetic_dataset(64, 300, np.random.default_rng(3), "mnist")
    b = synthetic_dataset(64, 300, np.random.default_rng(3), "mnist")
    np.testing.assert_array_equal(a.X, b.X)


@pytest.mark.parametrize("change,match", [
    ({"density": 0.0}, "density"), ({"density": 1.5}, "density"), ({"noise": -0.1}, "noise"),
    ({"k": 0}, "k"),
])
def test_bad_arguments_are_scenario_errors(change: dict, match: str) -> None:
    args = {"k": 3, "density": 0.2, "noise": 0.1, **change}
    k = args.pop("k")
    with pytest.raises(ScenarioError, match=match):
        synthetic_mnist(49, 20, k, rng=np.random.default_rng(0), **args)


def test_an_unknown_parameter_names_the_kinds_parameters() -> None:
    with pytest.raises(ScenarioError, match="its parameters are k, density, noise"):
        synthetic_dataset(49, 20, np.random.default_rng(0), "mnist", doc_length=3)
