"""Sketching matrices of seed 004 (§3.4): Assumption 1 by Monte Carlo, and their products.

Expected values are closed forms: E[SSᵀ] = I for both kinds (digest C19, with the sqrt(n/d)
scale of subsampling sketches, §7.4 item 57), and the sketched gradient of Eq. 15 has the
expectation of Eq. 16, 2[UVᵀV − MV]. Tolerances are five standard errors of the Monte Carlo
mean, from the entries' variances: Gaussian (SSᵀ)_ij has variance (1 + δ_ij)/d; a subsampling
diagonal entry is n/d with probability d/n, else 0.
"""

from __future__ import annotations

import hashlib
import hmac
import math

import numpy as np
import pytest

from algorithms.nmf.dsanls.sketches import (
    SKETCH_S,
    SKETCH_S_PRIME,
    SketchStream,
    check_sketch_size,
    draw_sketch,
    sketch_columns,
)
from protocols.errors import InputError

DRAWS = 20_000


def mean_outer(kind: str, n: int, d: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    total = np.zeros((n, n))
    for _ in range(DRAWS):
        S = draw_sketch(kind, n, d, rng).dense()
        total += S @ S.T
    return total / DRAWS


def test_gaussian_sketch_is_normalised_by_monte_carlo() -> None:
    n, d = 6, 3
    mean = mean_outer("gaussian", n, d)
    sd = np.sqrt((1 + np.eye(n)) / d / DRAWS)
    assert np.all(np.abs(mean - np.eye(n)) < 5 * sd)


def test_scaled_subsampling_sketch_is_normalised_by_monte_carlo() -> None:
    n, d = 6, 2
    mean = mean_outer("subsampling", n, d, seed=1)
    p = d / n
    sd_diag = (n / d) * math.sqrt(p * (1 - p) / DRAWS)
    np.testing.assert_array_equal(mean - np.diag(np.diag(mean)), 0)  # distinct columns
    assert np.all(np.abs(np.diag(mean) - 1) < 5 * sd_diag)


def test_unscaled_subsampling_would_give_d_over_n() -> None:
    """The paper's printed construction (basis vectors, no scale) has E[SSᵀ] = (d/n)·I."""
    n, d = 10, 2
    rng = np.random.default_rng(2)
    S = draw_sketch("subsampling", n, d, rng)
    unscaled = S.dense() / S.scale
    assert set(np.unique(unscaled)) == {0.0, 1.0}
    assert S.scale == math.sqrt(n / d)


@pytest.mark.parametrize("kind", ["gaussian", "subsampling"])
def test_the_sketched_gradient_is_unbiased(kind: str) -> None:
    """Eq. 15–16: E[2(UBBᵀ − ABᵀ)] = 2(UVᵀV − MV) for A = MS, B = VᵀS."""
    rng = np.random.default_rng(3)
    m, n, k, d = 4, 7, 2, 3
    M, U, V = rng.random((m, n)), rng.random((m, k)), rng.random((n, k))
    true = 2 * (U @ V.T @ V - M @ V)
    draws = np.empty((DRAWS, m, k))
    for i in range(DRAWS):
        S = draw_sketch(kind, n, d, rng)
        A, B = S.apply(M), S.apply(V.T)
        draws[i] = 2 * (U @ B @ B.T - A @ B.T)
    se = draws.std(axis=0) / math.sqrt(DRAWS)
    assert np.all(np.abs(draws.mean(axis=0) - true) < 5 * se)


@pytest.mark.parametrize("kind", ["gaussian", "subsampling"])
def test_apply_on_a_block_of_rows_equals_the_dense_product(kind: str) -> None:
    rng = np.random.default_rng(4)
    S = draw_sketch(kind, 12, 5, rng)
    A = rng.random((3, 12))
    np.testing.assert_allclose(S.apply(A), A @ S.dense(), rtol=1e-12, atol=1e-12)
    # a node holding columns 4..8 computes its summand of AS (Eq. 11)
    parts = S.apply(A[:, :4], 0) + S.apply(A[:, 4:9], 4) + S.apply(A[:, 9:], 9)
    np.testing.assert_allclose(parts, A @ S.dense(), rtol=1e-12, atol=1e-12)
    with pytest.raises(InputError, match="outside the sketch"):
        S.apply(A[:, :5], 9)


def test_flop_counts_follow_the_papers_costs() -> None:
    rng = np.random.default_rng(5)
    gauss = draw_sketch("gaussian", 20, 4, rng)
    assert gauss.apply_flops(3, 20) == 2 * 3 * 20 * 4  # O(|I_r| n d)
    sub = draw_sketch("subsampling", 20, 4, rng)
    assert sub.apply_flops(3, 20) == 3 * 4  # O(|I_r| d): copies
    inside = int(np.sum((sub.indices >= 5) & (sub.indices < 10)))
    assert sub.apply_flops(3, 5, start=5) == 3 * inside
    assert gauss.draw_flops == 80 and sub.draw_flops == 4


def test_shared_streams_give_every_node_the_same_sketch() -> None:
    a = SketchStream(99, "gaussian").draw(SKETCH_S, 7, 10, 3)
    b = SketchStream(99, "gaussian").draw(SKETCH_S, 7, 10, 3)
    np.testing.assert_array_equal(a.dense(), b.dense())
    other_t = SketchStream(99, "gaussian").draw(SKETCH_S, 8, 10, 3)
    other_purpose = SketchStream(99, "gaussian").draw(SKETCH_S_PRIME, 7, 10, 3)
    assert not np.array_equal(a.dense(), other_t.dense())
    assert not np.array_equal(a.dense(), other_purpose.dense())
    # the stream is HKDF(seed, "dsanls.sketch", (purpose, t)) (protocols.seeds), computed here
    # with the standard library's HMAC (RFC 5869, one block), independently of draw order
    def typed(tag: bytes, raw: bytes) -> bytes:
        return tag + len(raw).to_bytes(4, "big") + raw

    info = (typed(b"s", b"call") + typed(b"s", b"dsanls.sketch")
            + typed(b"i", SKETCH_S.to_bytes(8, "big")) + typed(b"i", (7).to_bytes(8, "big")))
    prk = hmac.digest(b"mpcsim/sim/party-seeds/v1", bytes([99]), hashlib.sha256)
    okm = hmac.digest(prk, info + b"\x01", hashlib.sha256)
    rng = np.random.default_rng(np.random.SeedSequence(int.from_bytes(okm, "big")))
    np.testing.assert_array_equal(a.dense(), rng.standard_normal((10, 3)) / math.sqrt(3))


def test_sketch_sizes_are_columns_or_fractions_and_never_exceed_the_dimension() -> None:
    assert sketch_columns(3, 10) == 3
    assert sketch_columns(0.1, 300) == 30
    assert sketch_columns(0.1, 25) == 3  # rounded up
    assert sketch_columns(1.0, 7) == 7
    assert sketch_columns(0.01, 7) == 1
    with pytest.raises(InputError, match="between 1 and the dimension it sketches, 10"):
        sketch_columns(11, 10, "sketch_size")
    with pytest.raises(InputError, match=r"fraction in \(0, 1\]"):
        sketch_columns(1.5, 10)
    with pytest.raises(InputError, match="must be ≥ 1"):
        sketch_columns(0, 10)
    with pytest.raises(InputError, match="integer"):
        check_sketch_size(2.0, 10)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="sketch = 'srht' is unknown"):
        draw_sketch("srht", 5, 2, np.random.default_rng(0))
