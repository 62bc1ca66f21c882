"""DPdisPCA (Imtiaz & Sarwate 2018; seed 003's "existing" baseline, spec cape.md §4.3) as party
programs on the simulator. Expected values from numpy alone: the partial square root against
numpy's SVD of the symmetric matrix, the aggregate against the pooled second moment when the
noise is off, the site's noise law against χ² bounds, the ledger against D·R per site."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from algorithms.cape.dpdispca import (
    check_partial_rank,
    dpdispca_aggregator,
    dpdispca_site,
    partial_square_root,
)
from parties.party import Party
from protocols.correlated_noise import AGGREGATOR
from protocols.errors import InputError
from sim.network import Network
from sim.simulation import Simulation


def run(shards, tau, rank, k, seed=1):
    S, D = len(shards), shards[0].shape[1]
    parties = [Party(s, dpdispca_site, {"X": x, "tau": tau, "rank": rank})
               for s, x in enumerate(shards)]
    parties.append(Party(S, dpdispca_aggregator, {"n_sites": S, "dim": D, "k": k},
                         role=AGGREGATOR))
    return Simulation(Network.build(S), seed=seed, keys="preshared", sealing=False).run(parties)


def shards_of(S: int, n: int, D: int, seed: int = 0) -> list[np.ndarray]:
    X = np.random.default_rng(seed).normal(size=(S * n, D)) * np.linspace(2, 0.2, D)
    return np.split(X / np.linalg.norm(X, axis=1).max(), S)


@pytest.mark.parametrize("rank", [1, 3, 6])
def test_the_partial_root_is_the_svds_rank_r_part(rank: int) -> None:
    rng = np.random.default_rng(rank)
    B = rng.normal(size=(6, 6))
    A = B + B.T  # symmetric, indefinite
    P = partial_square_root(A, rank)
    U, s, _ = np.linalg.svd(A)
    assert P.shape == (6, rank)
    np.testing.assert_allclose(P @ P.T, U[:, :rank] @ np.diag(s[:rank]) @ U[:, :rank].T,
                               atol=1e-10)
    C = B @ B.T  # positive semi-definite: the full root gives C back
    np.testing.assert_allclose(partial_square_root(C, 6) @ partial_square_root(C, 6).T, C,
                               atol=1e-10)


def test_without_noise_the_aggregate_is_the_pooled_second_moment() -> None:
    S, n, D, k = 4, 30, 6, 2
    shards = shards_of(S, n, D)
    result = run(shards, 0.0, D, k)
    V = result.outputs[S]
    pooled = np.vstack(shards)
    values, vectors = np.linalg.eigh(pooled.T @ pooled / len(pooled))
    top = vectors[:, np.argsort(-values)[:k]]
    np.testing.assert_allclose(V @ V.T, top @ top.T, atol=1e-8)  # the same subspace


def test_each_site_sends_d_times_r_numbers_once() -> None:
    S, n, D, rank = 3, 20, 7, 4
    result = run(shards_of(S, n, D), 0.1, rank, 2)
    rows = list(result.ledger)
    assert sorted(r.sender for r in rows) == list(range(S))
    assert all(r.receiver == S and r.elements == D * rank for r in rows)


def test_a_site_adds_analyze_gauss_noise_of_the_declared_scale() -> None:
    """With R = D and A_s ≈ 0, P Pᵀ = |Â_s| has the Frobenius norm of Â_s ≈ Sym_D(τ), read from
    the aggregator's view over 30 runs: its mean square against the closed form, within the
    99.9 % normal band."""
    S, D, tau = 2, 5, 0.3
    shards = [np.full((10, D), 1e-6), np.full((10, D), 1e-6)]
    total, count = 0.0, 0
    for seed in range(30):
        result = run(shards, tau, D, 1, seed=seed)
        for m in result.views[S].received:
            P = np.asarray(m.payload)
            total += float(np.sum((P @ P.T) ** 2))  # ‖|Â|‖_F² = ‖Â‖_F² = Σ λ²
            count += 1
    # ‖Sym_D(τ)‖_F² = τ²(Σ_diag χ²_1 + 2 Σ_off χ²_1): mean τ²·D², variance τ⁴(2D + 8·D(D−1)/2)
    mean, var = tau**2 * D**2, tau**4 * (2 * D + 8 * D * (D - 1) / 2)
    z = (total / count - mean) / np.sqrt(var / count)
    assert abs(z) < stats.norm.ppf(0.9995)


def test_a_rank_outside_one_to_d_is_refused() -> None:
    with pytest.raises(InputError, match=r"rank R = 9 must be an integer in \[1, D = 8\]"):
        check_partial_rank(9, 8)
