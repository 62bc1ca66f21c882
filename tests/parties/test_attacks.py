"""Theorem 3 of seed 004 as an attack on logged views (digest §5.3, C20).

The attack must succeed exactly when the theory says: with Gaussian sketches, once the
equations per row, T·d, reach the unknown columns n_u = n − (the coalition's own columns), and
not before; with subsampling sketches, exactly the columns drawn so far (read here from the
sketch seeds with numpy, as the nodes draw them). The truth it is scored against is the data
the simulation started from; the attack itself sees only the coalition's views.
"""

from __future__ import annotations

import hashlib
import hmac

import numpy as np
import pytest

from algorithms import data as data_io
from algorithms.nmf.dsanls.dsanls import DsanlsConfig, dsanls
from parties.attacks import ATTACKS, dsanls_recovery, get_attack
from parties.party import site_parties
from parties.view import Coalition
from protocols.all_reduce import all_reduce
from protocols.errors import InputError
from sim.network import Network
from sim.simulation import Simulation

M_ROWS, N_COLS, NODES = 12, 40, 4  # columns per node: 10


def federated(T: int, d: int, sketch: str = "gaussian", allreduce: str = "secure_sum",
              setting: str = "federated", seed: int = 0):
    rng = np.random.default_rng(seed)
    M = rng.random((M_ROWS, N_COLS))
    columns = tuple(data_io.partition_rows(N_COLS, NODES))
    rows = tuple(data_io.partition_rows(M_ROWS, NODES))
    config = DsanlsConfig(k=2, iterations=T, n_features=M_ROWS, n_samples=N_COLS,
                          columns=columns, rows=rows, sketch=sketch, d=d, d_prime=3,
                          setting=setting, allreduce=allreduce)
    inputs = []
    for (a, b), (ra, rb) in zip(columns, rows, strict=True):
        entry = {"X": M.T[a:b], "U0": rng.random((rb - ra, 2)), "V0": rng.random((b - a, 2)),
                 "config": config}
        if setting == "general":
            entry["X_features"] = M.T[:, ra:rb]
        inputs.append(entry)
    sim = Simulation(Network.build(NODES), seed=seed + 1, sealing=False, keys="preshared")
    return M, sim.run(site_parties(dsanls, inputs))


@pytest.mark.parametrize("coalition,d,threshold", [
    ([0], 7, 5),  # n_u = 30 unknown columns: T·7 ≥ 30 from T = 5
    ([2], 10, 3),  # n_u = 30: T = 3
    ([0, 3], 7, 3),  # n_u = 20: T·7 ≥ 20 from T = 3
])
def test_gaussian_recovery_succeeds_exactly_from_the_theorems_threshold(coalition, d, threshold):
    for T in (threshold - 1, threshold):
        M, result = federated(T, d)
        recovery = dsanls_recovery(result.coalition(coalition))
        error = recovery.relative_error(M)
        unknown = N_COLS - 10 * len(coalition)
        assert recovery.details["equations_per_row"] == T * d
        assert recovery.details["unknown_columns"] == unknown
        if T * d >= unknown:
            assert error < 1e-5  # the fixed-point precision of the All-Reduce
            assert recovery.determined.all()
        else:
            assert error > 0.05
            assert recovery.determined.sum() == 10 * len(coalition)  # its own columns only


def test_with_the_plain_all_reduce_recovery_is_exact_to_machine_precision() -> None:
    M, result = federated(4, 10, allreduce="plain")
    assert dsanls_recovery(result.coalition([1])).relative_error(M) < 1e-12


def sketch_rng(seed: int, purpose: int, t: int) -> np.random.Generator:
    """The nodes' sketch stream (protocols.seeds: HKDF-SHA256 of the shared seed, label
    ``dsanls.sketch``, index (purpose, t)), computed with the standard library's HMAC."""

    def typed(tag: bytes, raw: bytes) -> bytes:
        return tag + len(raw).to_bytes(4, "big") + raw

    info = (typed(b"s", b"call") + typed(b"s", b"dsanls.sketch")
            + typed(b"i", purpose.to_bytes(8, "big")) + typed(b"i", t.to_bytes(8, "big")))
    ikm = seed.to_bytes(max(1, (seed.bit_length() + 7) // 8), "big")
    prk = hmac.digest(b"mpcsim/sim/party-seeds/v1", ikm, hashlib.sha256)
    okm = hmac.digest(prk, info + b"\x01", hashlib.sha256)
    return np.random.default_rng(np.random.SeedSequence(int.from_bytes(okm, "big")))


@pytest.mark.parametrize("T", [1, 3])
def test_subsampling_reveals_exactly_the_sampled_columns_from_the_first_iteration(T) -> None:
    M, result = federated(T, 6, sketch="subsampling")
    recovery = dsanls_recovery(result.coalition([0]))
    seed = next(v for _, lab, v in result.views[0].outputs if lab == "sketch_seed")
    sampled = set()
    for t in range(T):  # how the nodes draw S^t: stream (0, t), d of n without replacement
        rng = sketch_rng(int(seed), 0, t)
        sampled |= {int(i) for i in rng.choice(N_COLS, size=6, replace=False)}
    known = sampled | set(range(10))  # plus node 0's own columns
    assert set(np.flatnonzero(recovery.determined)) == known
    for j in range(N_COLS):
        gap = np.abs(recovery.estimate[:, j] - M[:, j]).max()
        if j in known:
            assert gap < 1e-5
        else:
            assert gap > 1e-3  # a column never drawn is not in the view


def test_the_attack_reads_the_coalitions_views_only() -> None:
    """A coalition built from the members' views alone (no Result) gives the same estimate."""
    M, result = federated(5, 7)
    views = {0: result.views[0]}
    alone = dsanls_recovery(Coalition.of([0], views))
    np.testing.assert_array_equal(alone.estimate, dsanls_recovery(result.coalition([0])).estimate)
    assert alone.relative_error(M) < 1e-5


def test_the_registry_scores_against_the_transposed_data() -> None:
    M, result = federated(5, 7)
    attack = get_attack("dsanls_recovery")
    recovery, error = attack.score(result.coalition([0]), M.T)  # the scenario's X = Mᵀ
    assert error == recovery.relative_error(M) < 1e-5
    assert sorted(ATTACKS) == ["dsanls_recovery"]
    with pytest.raises(InputError, match="attack 'sdp' is unknown"):
        get_attack("sdp")


def test_the_attack_refuses_runs_it_does_not_apply_to() -> None:
    _, general = federated(3, 7, setting="general")
    with pytest.raises(InputError, match="needs setting = 'federated'"):
        dsanls_recovery(general.coalition([0]))
    sim = Simulation(Network.build(2), seed=0, sealing=False, keys="none")
    other = sim.run(site_parties(lambda ctx, x: all_reduce(ctx, x, method="plain"),
                                 [{"x": [1.0]}, {"x": [2.0]}]))
    with pytest.raises(InputError, match="run algorithm 'dsanls' with setting = 'federated'"):
        dsanls_recovery(other.coalition([0]))
