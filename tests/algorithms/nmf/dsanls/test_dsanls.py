"""DSANLS (seed 004, Algorithm 2 and §4.1) on the simulator.

The contract: from the same start and seed, DSANLS in either setting computes centralized
SANLS's iterates (row-separable steps, Eq. 8) — exactly up to float summation order with the
plain All-Reduce, within the fixed-point precision with SecureSum. Communication per node per
iteration is (N − 1) times the All-Reduced lengths k·d + k·d' (+ m·d federated), independent of
the data's n (§3.6.1, digest C21).
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms import data as data_io
from algorithms.nmf.dsanls.dsanls import DsanlsConfig, dsanls
from algorithms.nmf.dsanls.sanls import StepSchedule, sanls
from parties.party import site_parties
from protocols.errors import InputError, ProtocolAbort
from sim.network import Network
from sim.simulation import Simulation


def dsanls_problem(m: int = 24, n: int = 30, k: int = 3, N: int = 3, seed: int = 0,
                   partition: list[int] | None = None):
    rng = np.random.default_rng(seed)
    M = rng.random((m, k)) @ rng.random((k, n)) + 0.05 * rng.random((m, n))
    U0, V0 = rng.random((m, k)), rng.random((n, k)) * 0.5
    columns = tuple(data_io.partition_rows(n, N, partition or "equal"))
    rows = tuple(data_io.partition_rows(m, N))
    return M, U0, V0, columns, rows


def run(M, U0, V0, config: DsanlsConfig, sim_seed: int = 7):
    X = M.T
    inputs = []
    for (a, b), (ra, rb) in zip(config.columns, config.rows, strict=True):
        entry = {"X": X[a:b], "U0": U0[ra:rb], "V0": V0[a:b], "config": config}
        if config.setting == "general":
            entry["X_features"] = X[:, ra:rb]
        inputs.append(entry)
    sim = Simulation(Network.build(len(inputs)), seed=sim_seed, sealing=False, keys="preshared")
    result = sim.run(site_parties(dsanls, inputs))
    nodes = [result.outputs[r] for r in result.sites]
    U = np.vstack([node.U_rows for node in nodes])
    V = np.vstack([node.V for node in nodes])
    return result, U, V, nodes[0].seed


@pytest.mark.parametrize("setting", ["general", "federated"])
@pytest.mark.parametrize("allreduce,tol", [("plain", 1e-10), ("secure_sum", 1e-5)])
@pytest.mark.parametrize("sketch,solver", [("gaussian", "rcd"), ("subsampling", "pgd")])
def test_dsanls_equals_centralized_sanls(setting, allreduce, tol, sketch, solver) -> None:
    M, U0, V0, columns, rows = dsanls_problem(partition=[8, 12, 10])
    config = DsanlsConfig(k=3, iterations=12, n_features=24, n_samples=30, columns=columns,
                          rows=rows, sketch=sketch, d=7, d_prime=0.25, solver=solver,
                          schedule=StepSchedule(0.5, 0.5), setting=setting,
                          allreduce=allreduce)
    _, U, V, seed = run(M, U0, V0, config)
    U_c, V_c = sanls(M, U0, V0, iterations=12, seed=seed, sketch=sketch, d=7, d_prime=0.25,
                     solver=solver, schedule=StepSchedule(0.5, 0.5))
    assert np.abs(U - U_c).max() < tol * max(1.0, np.abs(U_c).max())
    assert np.abs(V - V_c).max() < tol * max(1.0, np.abs(V_c).max())


@pytest.mark.parametrize("setting,extra", [("general", 0), ("federated", 1)])
@pytest.mark.parametrize("n", [30, 60])
def test_communication_is_o_kd_per_subproblem_independent_of_n(setting, extra, n) -> None:
    m, k, N, d, d_prime, T = 24, 3, 3, 5, 4, 4
    M, U0, V0, columns, rows = dsanls_problem(n=n, k=k)
    config = DsanlsConfig(k=k, iterations=T, n_features=m, n_samples=n, columns=columns,
                          rows=rows, d=d, d_prime=d_prime, setting=setting)
    result, *_ = run(M, U0, V0, config)
    per_iteration = (N - 1) * (k * d + k * d_prime + extra * m * d)
    for r in range(N):
        sent = sum(row.elements for row in result.ledger
                   if row.sender == r and row.protocol == "secure_sum")
        assert sent == T * per_iteration  # no n anywhere
    seeds = [row for row in result.ledger if row.protocol == "sketch_seed"]
    assert [(row.sender, row.elements) for row in seeds] == [(0, 1)] * (N - 1)


def test_every_node_declares_what_theorem_3_says_it_learns() -> None:
    M, U0, V0, columns, rows = dsanls_problem()
    config = DsanlsConfig(k=3, iterations=5, n_features=24, n_samples=30, columns=columns,
                          rows=rows, d=6, d_prime=4, setting="federated", sketch="gaussian")
    result, *_ = run(M, U0, V0, config)
    S_seed = None
    for r in result.sites:
        labels = [label for _, label, _ in result.views[r].outputs if label != "sum"]
        assert labels.count("MS") == labels.count("B") == labels.count("B_prime") == 5
        assert labels[0] == "sketch_seed"
        seed = next(v for _, lab, v in result.views[r].outputs if lab == "sketch_seed")
        assert S_seed in (None, seed)
        S_seed = seed
        ms = [v for _, lab, v in result.views[r].outputs if lab == "MS"]
        assert ms[0].shape == (24, 6)  # the whole sketched matrix MS^t, m × d


def test_a_seeded_run_replays_exactly() -> None:
    M, U0, V0, columns, rows = dsanls_problem()
    config = DsanlsConfig(k=3, iterations=4, n_features=24, n_samples=30, columns=columns,
                          rows=rows, d=6, d_prime=4, setting="federated")
    first, U1, V1, s1 = run(M, U0, V0, config, sim_seed=3)
    second, U2, V2, s2 = run(M, U0, V0, config, sim_seed=3)
    assert s1 == s2
    np.testing.assert_array_equal(U1, U2)
    np.testing.assert_array_equal(V1, V2)
    assert first.ledger.to_csv() == second.ledger.to_csv()
    _, U3, _, s3 = run(M, U0, V0, config, sim_seed=4)
    assert s3 != s1 and not np.array_equal(U3, U1)


def test_bad_configurations_are_refused() -> None:
    _, _, _, columns, rows = dsanls_problem()
    base = {"k": 3, "iterations": 2, "n_features": 24, "n_samples": 30, "columns": columns,
            "rows": rows}
    with pytest.raises(InputError, match=r"sketch_size_v .* must be between 1 and the "
                                         r"dimension it sketches, 30"):
        DsanlsConfig(**base, d=31)
    with pytest.raises(InputError, match=r"sketch_size_u .* 24"):
        DsanlsConfig(**base, d_prime=25)
    with pytest.raises(InputError, match="setting = 'cloud' is unknown"):
        DsanlsConfig(**base, setting="cloud")
    with pytest.raises(InputError, match=r"columns = .* consecutive"):
        DsanlsConfig(**{**base, "columns": ((0, 10), (12, 30))})
    M, U0, V0, columns, rows = dsanls_problem()
    config = DsanlsConfig(**base, setting="general")
    with pytest.raises(ProtocolAbort, match="needs X_features"):
        sim = Simulation(Network.build(3), seed=0, sealing=False, keys="preshared")
        sim.run(site_parties(dsanls, [{"X": M.T[a:b], "U0": U0[ra:rb], "V0": V0[a:b],
                                       "config": config}
                                      for (a, b), (ra, rb) in zip(columns, rows, strict=True)]))
