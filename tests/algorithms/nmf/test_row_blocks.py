"""FullRows' products X v and Xᵀ w: the same bits as scipy's and numpy's operators.

For a CSR X the row block calls scipy's compiled kernels directly (no operator dispatch);
every product must equal, bit for bit, what ``X @ v`` and ``X.T @ w`` give through scipy's
public interface, for either index width, strided vectors (a column of W), and a dense X
(which keeps numpy's operator).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from algorithms.nmf.row_blocks import FullRows, as_row_block


def _csr(rng: np.random.Generator, n: int, d: int, density: float,
         index_dtype: type) -> sp.csr_matrix:
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=lambda size: rng.uniform(0.0, 5.0, size))
    X = sp.csr_matrix(X)
    X.indices = X.indices.astype(index_dtype)
    X.indptr = X.indptr.astype(index_dtype)
    return X


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (300, 41), (64, 500)])
def test_sparse_products_equal_scipys_operators_bit_for_bit(index_dtype: type,
                                                            shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    n, d = shape
    X = _csr(rng, n, d, 0.2, index_dtype)
    block = FullRows(X)
    assert block._kernels is not None  # the direct path is the one under test
    W = rng.uniform(0.0, 1.0, size=(n, 5))  # row-major: a column is strided
    v = rng.uniform(-1.0, 1.0, size=d)
    assert np.array_equal(block.times(v), X @ v)
    for t in range(W.shape[1]):
        out = np.full(d + 1, np.nan)
        block.transposed_times_into(W[:, t], out[:d])
        assert np.array_equal(out[:d], X.T @ W[:, t])
        assert np.isnan(out[d])  # nothing written past the d entries


def test_dense_rows_keep_numpys_operator() -> None:
    rng = np.random.default_rng(3)
    X = rng.uniform(0.0, 1.0, size=(40, 9))
    block = as_row_block(X, "full")
    assert isinstance(block, FullRows) and block._kernels is None
    v, w = rng.uniform(size=9), rng.uniform(size=40)
    out = np.empty(9)
    block.transposed_times_into(w, out)
    assert np.array_equal(block.times(v), X @ v)
    assert np.array_equal(out, X.T @ w)


def test_products_reuse_no_state_between_calls() -> None:
    """Each product starts from zero: the kernels accumulate into their output."""
    rng = np.random.default_rng(5)
    X = _csr(rng, 50, 20, 0.3, np.int32)
    block = FullRows(X)
    w = rng.uniform(size=50)
    out = np.full(20, 7.0)
    block.transposed_times_into(w, out)
    block.transposed_times_into(w, out)
    assert np.array_equal(out, X.T @ w)
    v = rng.uniform(size=20)
    assert np.array_equal(block.times(v), X @ v)
