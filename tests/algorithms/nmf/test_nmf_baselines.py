"""Distributed MU, HALS and ANLS/BPP (seed 004's baselines) against centralized references.

The references are written here from the papers' update rules (Lee & Seung's MU, Cichocki &
Phan's HALS) and from :func:`scipy.optimize.nnls` (Lawson–Hanson active set) for ANLS, whose
subproblems have one solution when the fixed factor has full column rank: the distributed runs,
which all-gather the fixed factor, must equal them to 1e-8 from the same start.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.optimize

from algorithms import data as data_io
from algorithms.nmf.abpp import abpp, nnls_bpp
from algorithms.nmf.gathered_bcd import GatheredConfig
from algorithms.nmf.hals import hals
from algorithms.nmf.mu import mu
from parties.party import site_parties
from protocols.errors import InputError
from sim.network import Network
from sim.simulation import Simulation


def problem(m: int = 24, n: int = 30, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    M = rng.random((m, k)) @ rng.random((k, n)) + 0.05 * rng.random((m, n))
    return M, rng.random((m, k)), rng.random((n, k)) * 0.5


def run(program, M, U0, V0, iterations: int, partition=(8, 12, 10), k: int = 3):
    m, n = M.shape
    N = len(partition)
    columns = tuple(data_io.partition_rows(n, N, list(partition)))
    rows = tuple(data_io.partition_rows(m, N))
    config = GatheredConfig(k=k, iterations=iterations, n_features=m, n_samples=n,
                            columns=columns, rows=rows)
    X = M.T
    inputs = [{"X": X[a:b], "X_features": X[:, ra:rb], "U0": U0[ra:rb], "V0": V0[a:b],
               "config": config}
              for (a, b), (ra, rb) in zip(columns, rows, strict=True)]
    sim = Simulation(Network.build(N), seed=3, sealing=False, keys="preshared")
    result = sim.run(site_parties(program, inputs, column_blocks=("X_features",)))
    nodes = [result.outputs[r] for r in result.sites]
    return result, np.vstack([x.U_rows for x in nodes]), np.vstack([x.V for x in nodes]), config


def textbook_mu(M, U, V, iterations):
    for _ in range(iterations):
        U = U * (M @ V) / np.maximum(U @ (V.T @ V), 1e-16)
        V = V * (M.T @ U) / np.maximum(V @ (U.T @ U), 1e-16)
    return U, V


def textbook_hals(M, U, V, iterations):
    U, V = U.copy(), V.copy()
    for _ in range(iterations):
        for A, X, F in ((M, U, V), (M.T, V, U)):
            AF, FtF = A @ F, F.T @ F
            for j in range(X.shape[1]):  # X is updated in place, column by column
                X[:, j] = np.maximum(X[:, j] + (AF[:, j] - X @ FtF[:, j]) / FtF[j, j], 1e-16)
    return U, V


def lawson_hanson_anls(M, U, V, iterations):
    for _ in range(iterations):
        U = np.array([scipy.optimize.nnls(V, row)[0] for row in M])
        V = np.array([scipy.optimize.nnls(U, col)[0] for col in M.T])
    return U, V


@pytest.mark.parametrize("program,reference,iterations", [
    (mu, textbook_mu, 25), (hals, textbook_hals, 25), (abpp, lawson_hanson_anls, 6)])
def test_distributed_equals_centralized(program, reference, iterations) -> None:
    M, U0, V0 = problem()
    _, U, V, _ = run(program, M, U0, V0, iterations)
    U_ref, V_ref = reference(M, U0, V0, iterations)
    assert np.abs(U - U_ref).max() < 1e-8
    assert np.abs(V - V_ref).max() < 1e-8
    assert (U >= 0).all() and (V >= 0).all()


def objective(M, U, V) -> float:
    return float(np.linalg.norm(M - U @ V.T))


@pytest.mark.parametrize("program", [mu, hals, abpp])
def test_objective_never_increases(program) -> None:
    """Lee & Seung's Theorem 1 for MU; exact block minimization for HALS's columns and ANLS."""
    M, U0, V0 = problem(seed=2)
    result, *_ = run(program, M, U0, V0, 15)
    nodes = [result.outputs[r] for r in result.sites]
    errors = [objective(M, U0, V0)] + [
        objective(M, np.vstack([x.history[t][1] for x in nodes]),
                  np.vstack([x.history[t][2] for x in nodes])) for t in range(15)]
    assert all(b <= a * (1 + 1e-12) for a, b in itertools.pairwise(errors))


@pytest.mark.parametrize("program", [mu, hals, abpp])
def test_each_iteration_all_gathers_both_factors(program) -> None:
    """Per iteration node r sends its V block and its U block to each of the N − 1 others:
    (N − 1)(|J_r| + |I_r|)k numbers — §3.6.1's O(kn) against DSANLS's O(kd)."""
    M, U0, V0 = problem()
    partition, k, T = (8, 12, 10), 3, 4
    result, _, _, config = run(program, M, U0, V0, T, partition=partition, k=k)
    N = len(partition)
    for r, ((a, b), (ra, rb)) in enumerate(zip(config.columns, config.rows, strict=True)):
        sent = sum(x.elements for x in result.ledger if x.sender == r)
        assert sent == T * (N - 1) * ((b - a) + (rb - ra)) * k
    assert {x.protocol for x in result.ledger} == {"all_gather"}


def test_bpp_solves_nnls_with_many_right_hand_sides() -> None:
    rng = np.random.default_rng(5)
    C = rng.random((60, 12))
    B = rng.random((60, 200)) - 0.4  # many active constraints
    X, _ = nnls_bpp(C.T @ C, C.T @ B)
    reference = np.column_stack([scipy.optimize.nnls(C, B[:, j])[0] for j in range(200)])
    assert np.abs(X - reference).max() < 1e-10
    warm, _ = nnls_bpp(C.T @ C, C.T @ B, passive=rng.random((12, 200)) < 0.5)
    assert np.abs(warm - reference).max() < 1e-10


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(InputError, match="iterations"):
        GatheredConfig(k=2, iterations=0, n_features=4, n_samples=4, columns=((0, 4),),
                       rows=((0, 4),))
    with pytest.raises(InputError, match="columns"):
        GatheredConfig(k=2, iterations=1, n_features=4, n_samples=4, columns=((0, 3),),
                       rows=((0, 4),))
