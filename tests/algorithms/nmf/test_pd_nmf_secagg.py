"""PD-NMF-Iter summing through SecAgg: a party that drops between sweeps leaves the others'
model equal to centralized RRI-NMF on the survivors' rows from the same state.

The reference is centralized RRI-NMF (Algorithm 2): all rows for the sweeps before the drop,
then the survivors' rows (their W rows and the common T carried over) for the rest.
"""

from __future__ import annotations

import numpy as np

from algorithms.nmf.pd_nmf import pd_nmf_iter, pd_nmf_iter_aggregator
from algorithms.nmf.row_blocks import as_row_block
from algorithms.nmf.rri import rri_sweep
from algorithms.nmf.rri_steps import RRIParams
from parties.party import Party
from protocols.secagg import Config
from sim.faults import parse_faults
from sim.network import Network
from sim.simulation import Simulation

N, D, K, SWEEPS, DROP_AT = 60, 12, 3, 5, 3  # party 2 leaves before sweep 3 (1-based)
PARTS = [15, 10, 20, 15]
RTOL = 1e-6


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 1, (N, K)) @ rng.uniform(0, 1, (K, D)) + 0.05 * rng.uniform(0, 1, (N, D))
    T0 = rng.uniform(0, 1, (K, D))
    return X, T0 / T0.sum(axis=1, keepdims=True)


def run(X: np.ndarray, T0: np.ndarray, faults: list) -> object:
    config = Config(threshold=3, timeout_s=0.5)
    params = RRIParams(form="plain")
    bounds = np.cumsum([0, *PARTS])
    shards = [X[bounds[i]:bounds[i + 1]] for i in range(len(PARTS))]

    def site(ctx, X):
        return pd_nmf_iter(ctx, X, T0, sweeps=SWEEPS, params=params, secagg_config=config)

    def aggregator(ctx):
        return pd_nmf_iter_aggregator(ctx, n_features=D, k=K, sweeps=SWEEPS, loss="full",
                                      secagg_config=config)

    parties = [Party(m, site, {"X": s}) for m, s in enumerate(shards)]
    parties.append(Party(len(shards), aggregator, role="aggregator"))
    sim = Simulation(Network.build(len(shards) + 1), seed=5, faults=parse_faults(faults))
    return sim.run(parties)


def test_a_party_dropping_between_sweeps_leaves_the_survivors_model() -> None:
    X, T0 = data()
    params = RRIParams(form="plain")
    first_call = 1 + (DROP_AT - 1) * K  # key agreement is call 0; one SecAgg per topic
    result = run(X, T0, [{"kind": "crash", "party": 2, "call": f"secagg#{first_call}",
                          "step": "public_key"}])
    survivors = [0, 1, 3]
    assert sorted(result.outputs) == [0, 1, 3, 4]
    history = result.outputs[4]
    assert history[:(DROP_AT - 1) * K] == [(0, 1, 2, 3)] * ((DROP_AT - 1) * K)
    assert set(history[(DROP_AT - 1) * K:]) == {tuple(survivors)}
    # the reference: all rows until the drop, then the survivors' rows from the same state
    W = np.zeros((N, K))
    T = T0.copy()
    for _ in range(DROP_AT - 1):
        W, T = rri_sweep(as_row_block(X, "full"), W, T, params)
    bounds = np.cumsum([0, *PARTS])
    rows = np.concatenate([np.arange(bounds[m], bounds[m + 1]) for m in survivors])
    W_s, X_s = W[rows], X[rows]
    for _ in range(SWEEPS - DROP_AT + 1):
        W_s, T = rri_sweep(as_row_block(X_s, "full"), W_s, T, params)
    scale = np.max(np.abs(T))
    for m in survivors:
        assert np.max(np.abs(result.outputs[m].T - T)) <= RTOL * scale
    W_private = np.vstack([result.outputs[m].W for m in survivors])
    assert np.max(np.abs(W_private - W_s)) <= RTOL * np.max(np.abs(W_s))
    # not vacuous: the survivors' model differs from the model of all rows
    W_all, T_all = np.zeros((N, K)), T0.copy()
    for _ in range(SWEEPS):
        W_all, T_all = rri_sweep(as_row_block(X, "full"), W_all, T_all, params)
    assert np.max(np.abs(T_all - T)) > 100 * RTOL * scale


def test_without_dropouts_secagg_gives_the_centralized_model() -> None:
    X, T0 = data()
    result = run(X, T0, [])
    W, T = np.zeros((N, K)), T0.copy()
    for _ in range(SWEEPS):
        W, T = rri_sweep(as_row_block(X, "full"), W, T, RRIParams(form="plain"))
    for m in range(len(PARTS)):
        assert np.max(np.abs(result.outputs[m].T - T)) <= RTOL * np.max(np.abs(T))
