"""Syn-SD, Syn-SSD (seed 004, Algorithms 4, 5), Asyn-SD and Asyn-SSD (Algorithms 6, 7).

References are written here from the printed algorithms: a loop over the nodes with the
same solver step (tested on its own in ``test_sanls.py``) and a numpy average. The privacy
checks use the audits of :mod:`parties.audit` (A/B and simulation): with N = 2 the declared
average determines the other node's local copy (checked directly), so the All-Reduce reveals
nothing beyond it and the audit answers "private"; with N = 3 the copy is hidden behind
SecureSum (only the sum of the two honest copies is determined) and the audit answers
"private", while the plain All-Reduce hands node 0 every copy and the audit answers "leak".
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from algorithms import data as data_io
from algorithms.nmf.dsanls.asyn_sd import asyn_client, asyn_server, relaxation
from algorithms.nmf.dsanls.sanls import StepSchedule, subproblem_step
from algorithms.nmf.dsanls.secure_nmf import SecureNmfConfig
from algorithms.nmf.dsanls.sketches import SKETCH_S1, SKETCH_S_PRIME, SketchStream
from algorithms.nmf.dsanls.syn_sd import syn_sd
from algorithms.nmf.dsanls.syn_ssd import syn_ssd
from parties.party import Party, site_parties
from protocols.all_reduce import all_reduce_field
from protocols.errors import InputError, ProtocolAbort
from sim.network import Network
from sim.privacy import audit, first_call_inputs
from sim.simulation import Simulation

SCHEDULE = StepSchedule(0.5, 0.5)


def data(m: int = 20, n: int = 24, k: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    M = rng.random((m, k)) @ rng.random((k, n)) + 0.05 * rng.random((m, n))
    return M, rng.random((m, k)), rng.random((n, k)) * 0.5


def config(columns, m: int = 20, **kw) -> SecureNmfConfig:
    base = {"k": 3, "outer": 3, "inner": 2, "n_features": m, "columns": columns,
            "schedule": SCHEDULE, "allreduce": "plain"}
    return SecureNmfConfig(**{**base, **kw})


def run_sync(program, M, U0, V0, cfg, seed: int = 5, network: Network | None = None):
    X = M.T
    sim = Simulation(network or Network.build(cfg.n_nodes), seed=seed, sealing=False,
                     keys="preshared")
    return sim.run(site_parties(program, [{"X": X[a:b], "U0": U0, "V0": V0[a:b], "config": cfg}
                                          for a, b in cfg.columns]))


def reference_syn(M, U0, V0, cfg, seed: int | None = None) -> tuple[np.ndarray, list]:
    """Algorithms 4/5 for all nodes at once, in numpy, from the printed pseudo-code."""
    N = cfg.n_nodes
    blocks = [M[:, a:b] for a, b in cfg.columns]
    U = [U0.copy() for _ in range(N)]
    V = [V0[a:b].copy() for a, b in cfg.columns]
    stream = SketchStream(seed, cfg.sketch) if seed is not None else None
    t = 0
    for _ in range(cfg.outer):
        for _ in range(cfg.inner):
            t += 1
            mu = cfg.schedule.mu(t)
            for r in range(N):
                A, B = blocks[r], V[r].T
                if "v" in cfg.sketch_on:
                    S1 = stream.draw(SKETCH_S1, t, blocks[r].shape[1], cfg.d_for(r), node=r)
                    A, B = S1.apply(A), S1.apply(B)
                U[r], _ = subproblem_step(cfg.solver, U[r], A, B, mu)
            if "u" in cfg.sketch_on:
                S2 = stream.draw(SKETCH_S_PRIME, t, M.shape[0], cfg.sketch_d_prime)
                SU = np.mean([S2.apply(U[r].T).T for r in range(N)], axis=0)  # d' × k
                for r in range(N):
                    V[r], _ = subproblem_step(cfg.solver, V[r], S2.apply(blocks[r].T), SU.T, mu)
            else:
                for r in range(N):
                    V[r], _ = subproblem_step(cfg.solver, V[r], blocks[r].T, U[r].T, mu)
        average = np.mean(U, axis=0)
        U = [average.copy() for _ in range(N)]
    return U[0], V


def test_syn_sd_is_algorithm_4() -> None:
    M, U0, V0 = data()
    cfg = config(tuple(data_io.partition_rows(24, 3, [6, 10, 8])))
    result = run_sync(syn_sd, M, U0, V0, cfg)
    U_ref, V_ref = reference_syn(M, U0, V0, cfg)
    for r in result.sites:
        node = result.outputs[r]
        np.testing.assert_allclose(node.U, U_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(node.V, V_ref[r], rtol=1e-10, atol=1e-12)
        assert len(node.history) == cfg.outer
        averages = [v for _, lab, v in result.views[r].outputs if lab == "U_average"]
        assert len(averages) == cfg.outer  # one declared average per outer iteration


@pytest.mark.parametrize("sketch_on", ["u", "v", "uv"])
@pytest.mark.parametrize("sketch", ["gaussian", "subsampling"])
def test_syn_ssd_is_algorithm_5_and_its_variants(sketch_on: str, sketch: str) -> None:
    M, U0, V0 = data(seed=1)
    cfg = config(tuple(data_io.partition_rows(24, 3)), sketch=sketch, sketch_on=sketch_on,
                 d=0.5, d_prime=6)
    result = run_sync(syn_ssd, M, U0, V0, cfg)
    seed = next(v for _, lab, v in result.views[0].outputs if lab == "sketch_seed")
    U_ref, V_ref = reference_syn(M, U0, V0, cfg, seed)
    for r in result.sites:
        np.testing.assert_allclose(result.outputs[r].U, U_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(result.outputs[r].V, V_ref[r], rtol=1e-10, atol=1e-12)
        labels = [lab for _, lab, _ in result.views[r].outputs]
        inner_averages = cfg.outer * cfg.inner if "u" in sketch_on else 0
        assert labels.count("SU_average") == inner_averages
        assert labels.count("U_average") == cfg.outer


def test_syn_ssd_communicates_d_prime_k_per_inner_iteration() -> None:
    M, U0, V0 = data()
    cfg = config(tuple(data_io.partition_rows(24, 3)), sketch_on="uv", d=0.5, d_prime=6)
    result = run_sync(syn_ssd, M, U0, V0, cfg)
    per_node = [sum(row.elements for row in result.ledger
                    if row.sender == r and row.protocol == "all_reduce") for r in range(3)]
    expected = 2 * (cfg.outer * cfg.inner * 6 * 3 + cfg.outer * 20 * 3)  # (N−1)(d'k, mk)
    assert per_node == [expected] * 3


def test_with_two_nodes_the_declared_average_is_the_other_nodes_copy() -> None:
    """Digest §7.4 item 66: 2·average − own copy = the other copy, from node 0's view alone."""
    M, U0, V0 = data()
    cfg = config(tuple(data_io.partition_rows(24, 2)), allreduce="secure_sum")
    result = run_sync(syn_sd, M, U0, V0, cfg)
    fixed = Simulation(seed=0).fixed
    mine = [fixed.decode(v) for c, _, v in result.views[0].protocol_inputs
            if c is not None and c.protocol == "secure_sum"]
    theirs = [fixed.decode(v) for c, _, v in result.views[1].protocol_inputs
              if c is not None and c.protocol == "secure_sum"]
    averages = [np.ravel(v) for _, lab, v in result.views[0].outputs if lab == "U_average"]
    assert len(mine) == len(averages) == cfg.outer
    for own, avg, other in zip(mine, averages, theirs, strict=True):
        np.testing.assert_allclose(2 * avg - own, other, atol=2 * 2.0**-24)


@pytest.mark.parametrize("audit_method", ["statistical", "simulation"])
@pytest.mark.parametrize("n_nodes,method,verdict", [
    (2, "secure_sum", "private"),  # the average reveals node 1's copy, the protocol no more
    (3, "secure_sum", "private"),  # only the sum of nodes 1 and 2 is revealed
    (3, "plain", "leak"),  # the clear All-Reduce hands node 0 every copy
])
def test_the_audit_of_node_1s_copy(n_nodes: int, method: str, verdict: str,
                                   audit_method: str) -> None:
    M, U0, V0 = data(m=6, n=12, k=2)
    cfg = config(tuple(data_io.partition_rows(12, n_nodes)), m=6, k=2, outer=1,
                 allreduce="secure_sum")
    result = run_sync(syn_sd, M, U0, V0, cfg)
    inputs = list(first_call_inputs(result.views, result.sites, "secure_sum"))  # U_(r) encoded
    outcome = audit(lambda ctx, x: all_reduce_field(ctx, x, method), inputs, [0],
                    prime=2**61 - 1, method=audit_method, trials=60, seed=1)
    assert outcome.verdict == verdict, outcome.details
    if verdict == "leak":
        assert outcome.call == 1 and outcome.message.startswith("all_reduce#1.value from ")


def asyn_run(M, V0, U0, cfg, network=None, seed: int = 5):
    X = M.T
    N = cfg.n_nodes
    parties = [Party(r, asyn_client, {"X": X[a:b], "V0": V0[a:b], "config": cfg, "server": N})
               for r, (a, b) in enumerate(cfg.columns)]
    parties.append(Party(N, asyn_server, {"U0": U0, "config": cfg}, role="server"))
    sim = Simulation(network or Network.build(N), seed=seed, sealing=False, keys="preshared")
    return sim.run(parties)


def test_the_relaxation_weight_starts_at_one_and_vanishes() -> None:
    """C24: ω_t = ρ/(ρ + t) → 0, so the server's U settles."""
    assert relaxation(2.0, 0) == 1.0
    weights = [relaxation(2.0, t) for t in range(1000)]
    assert all(a > b for a, b in itertools.pairwise(weights))
    assert weights[-1] == pytest.approx(2 / 1001)


@pytest.mark.parametrize("sketch_on", ["", "v"])
def test_the_server_merges_exactly_the_copies_in_its_view(sketch_on: str) -> None:
    M, U0, V0 = data(seed=2)
    cfg = config(tuple(data_io.partition_rows(24, 3, [12, 6, 6])), sketch_on=sketch_on,
                 rho=3.0, seconds_per_flop=1e-8)
    result = asyn_run(M, V0, U0, cfg)
    server = result.outputs[3]
    received = [msg for msg in result.views[3].received if msg.step == "local_U"]
    assert server.updates == cfg.outer * 3
    U = U0.copy()
    for t, msg in enumerate(received[: server.updates]):
        omega = 3.0 / (3.0 + t)
        U = (1 - omega) * U + omega * np.asarray(msg.payload)
    np.testing.assert_allclose(server.U, U, rtol=1e-12)
    # the server sees every client's copy individually: declared as its outputs
    declared = [v for _, lab, v in result.views[3].outputs if lab == "U_client"]
    # the copy that makes the last update is answered "stop"; the other two clients' next
    # copies are answered "stop" without being merged
    assert len(declared) == len(received) == server.updates + 2
    # each client saw only the server's U
    for r in range(3):
        assert {msg.sender for msg in result.views[r].received if msg.step != "public_key"} == {3}


def test_clients_with_less_data_make_more_rounds() -> None:
    """No barrier: with compute charged per flop, the small clients do not wait for node 0."""
    M, U0, V0 = data(m=20, n=60)
    cfg = config(tuple(data_io.partition_rows(60, 3, [40, 10, 10])), outer=6,
                 seconds_per_flop=1e-7)
    result = asyn_run(M, V0, U0, cfg, Network.build(3, latency_ms=0.01, bandwidth_mbps=1e4))
    rounds = [result.outputs[r].updates for r in range(3)]
    assert rounds[1] > 2 * rounds[0] and rounds[2] > 2 * rounds[0]
    assert sum(rounds) == 6 * 3 + 2  # every update, and a last unmerged copy of two clients


def test_the_server_stops_at_its_time_budget() -> None:
    M, U0, V0 = data()
    cfg = config(tuple(data_io.partition_rows(24, 3)), outer=1000, seconds_per_flop=1e-7,
                 time_budget_s=0.05)
    result = asyn_run(M, V0, U0, cfg)
    history = result.outputs[3].history
    assert 3 < len(history) < 1000 * 3
    assert history[-2][0] < 0.05 <= history[-1][0]


def test_bad_secure_configurations_are_refused() -> None:
    columns = tuple(data_io.partition_rows(24, 3, [4, 10, 10]))
    with pytest.raises(InputError, match="party 0's 4 samples"):
        config(columns, sketch_on="v", d=5)
    with pytest.raises(InputError, match=r"sketch_size_u .* 20"):
        config(columns, sketch_on="u", d_prime=21)
    with pytest.raises(InputError, match="rho = 0 must be a finite number > 0"):
        config(columns, rho=0)
    with pytest.raises(InputError, match=r"rho = -1\.0 must be"):
        config(columns, rho=-1.0)
    M, U0, V0 = data()
    with pytest.raises(ProtocolAbort, match="cannot sketch U"):
        asyn_run(M, V0, U0, config(columns, sketch_on="uv", d=2, d_prime=4))
    with pytest.raises(ProtocolAbort, match="Syn-SSD sketches U, V or both"):
        run_sync(syn_ssd, M, U0, V0, config(columns))


def test_secure_and_plain_all_reduce_take_the_same_simulated_time() -> None:
    """Same messages, same sizes (8-byte field elements or floats): timing studies may use the
    plain All-Reduce to save wall time; the results differ only by the fixed point."""
    M, U0, V0 = data()
    runs = {}
    for method in ("plain", "secure_sum"):
        cfg = config(tuple(data_io.partition_rows(24, 3)), sketch_on="uv", d=0.5, d_prime=6,
                     allreduce=method, seconds_per_flop=1e-8)
        runs[method] = run_sync(syn_ssd, M, U0, V0, cfg,
                                network=Network.build(3, latency_ms=0.5, bandwidth_mbps=10))
    plain, secure = runs["plain"], runs["secure_sum"]
    assert [r.sent_s for r in plain.ledger] == [r.sent_s for r in secure.ledger]
    assert plain.simulated_s == secure.simulated_s
    np.testing.assert_allclose(plain.outputs[0].U, secure.outputs[0].U, atol=1e-5)
