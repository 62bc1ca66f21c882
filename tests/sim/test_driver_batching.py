"""The SimPy driver's lighter path for messages records exactly what the straightforward one does.

The driver batches the arrivals of one instant into one SimPy event
(:attr:`sim.drivers.simpy.SimPyDriver.batch_arrivals`). Two kinds of evidence that this changes
nothing a user sees:

* the same runs with one event per message (``batch_arrivals = False``) give byte-identical
  ledgers, views, outputs, fault logs and aborts — for broadcasts on complete, star and
  multi-hop topologies, sealing, faults, ``RecvAny``, ``RecvWithin`` and ``Compute``; and
  the batched runs do schedule fewer events, so the comparison is not vacuous;
* delivery times and delivery order against an expectation computed here from the documented
  model (store-and-forward, FIFO links served in order of arrival, messages reaching a node
  at the same instant handled in the order they were sent);
* runs that exercise every part of the per-message path record, batched and unbatched, what
  the driver recorded before that path was reworked for speed (digests of ledger, views,
  outputs and faults taken with the earlier driver).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pytest
import simpy

from parties.party import Party, site_parties
from protocols.context import PartyContext
from protocols.effects import Call, Compute, Recv, RecvAny, RecvEach, Send, SendEach
from protocols.errors import ProtocolAbort
from protocols.secure_sum import secure_sum
from sim.drivers.simpy import SimPyDriver
from sim.faults import parse_faults
from sim.network import Link, Network
from sim.runner import run_scenario
from sim.simulation import Result, Simulation

INPUTS = [np.array([1.0, 2.0, -0.5]), np.array([3.0, -1.0, 0.25]), np.array([0.5, 0.5, 0.5]),
          np.array([2.0, 2.0, 1.0]), np.array([-4.0, 0.0, 8.0]), np.array([0.0, 1.5, 1.5])]


# -- both ways ------------------------------------------------------------------------------


def canonical(value: Any) -> Any:
    """A comparable, exact form of a value (arrays by dtype, shape and bytes)."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return ("object", value.shape, tuple(map(canonical, value.ravel().tolist())))
        return (value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, dict):
        return tuple(sorted((repr(k), canonical(v)) for k, v in value.items()))
    if hasattr(value, "items") and hasattr(value, "keys"):  # read-only mappings
        return canonical(dict(value.items()))
    if isinstance(value, list | tuple):
        return tuple(canonical(v) for v in value)
    return repr(value)


def fingerprint(result: Result) -> Any:
    """Everything a run records: ledger, fault log, views, outputs, simulated time."""
    views = {
        pid: (tuple((m.sender, m.protocol, m.call, m.step, m.round, canonical(m.payload))
                    for m in view.received),
              canonical(view.protocol_inputs), canonical(view.outputs), canonical(view.seeds))
        for pid, view in sorted(result.views.items())
    }
    return (result.ledger.to_csv(), canonical(list(result.ledger.faults)), views,
            canonical(result.outputs), repr(result.simulated_s), canonical(result.faults))


def both_ways(monkeypatch: pytest.MonkeyPatch, run: Callable[[], Any], batches: bool = True
              ) -> tuple[Any, Any]:
    """``run()`` batched and with one event per message (checking that the batched run used
    fewer events when ``batches``: on a star every uplink serialises a party's messages, and
    links of different speeds time them apart, so no two reach a node at one instant)."""
    counted = simpy.Environment.timeout
    outcomes = []
    for batched in (True, False):
        calls = [0]

        def timeout(env: simpy.Environment, *args: Any, calls: list[int] = calls,
                    **kwargs: Any) -> simpy.Timeout:
            calls[0] += 1
            return counted(env, *args, **kwargs)

        monkeypatch.setattr(simpy.Environment, "timeout", timeout)
        monkeypatch.setattr(SimPyDriver, "batch_arrivals", batched)
        outcomes.append((run(), calls[0]))
    (batched_out, batched_events), (plain_out, plain_events) = outcomes
    if batches:
        assert batched_events < plain_events  # the batched path was taken
    else:
        assert batched_events == plain_events
    return batched_out, plain_out


def run_or_abort(sim: Simulation, parties: list[Party]) -> Any:
    """The run's fingerprint, or the abort's reason and partial result."""
    try:
        return fingerprint(sim.run(parties))
    except ProtocolAbort as abort:
        partial = getattr(abort, "result", None)
        return ("abort", abort.party, abort.reason, abort.call,
                fingerprint(partial) if partial is not None else None)


def sum_parties(m: int, variant: str = "prg", calls: int = 2) -> list[Party]:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        out = []
        for _ in range(calls):
            out.append((yield from secure_sum(ctx, x, variant)))
        return out

    return site_parties(program, [{"x": x} for x in INPUTS[:m]])


@pytest.mark.parametrize(
    ("network", "variant", "sealing", "keys", "batches"),
    [
        (lambda: Network.build(6), "prg", True, "x25519", True),
        (lambda: Network.build(5, "star", latency_ms=2.0, bandwidth_mbps=1.0), "explicit",
         False, "none", False),
        (lambda: Network.build(6, "ring", latency_ms=1.0, bandwidth_mbps=0.5), "prg", True,
         "preshared", True),
        (lambda: Network.build(4, links=[
            {"a": 0, "b": 1, "latency_ms": 1.0, "bandwidth_mbps": 8.0},
            {"a": 1, "b": 2, "latency_ms": 3.0, "bandwidth_mbps": 1.0},
            {"a": 2, "b": 3, "latency_ms": 0.5},
            {"a": 0, "b": 3, "latency_ms": 40.0},
            {"a": 1, "b": 3, "latency_ms": 2.0, "bandwidth_mbps": 0.25}]), "explicit", True,
         "preshared", False),
    ],
    ids=["complete-x25519", "star-explicit", "ring-sealed", "links-multi-hop"],
)
def test_secure_sum_records_the_same_either_way(
    monkeypatch: pytest.MonkeyPatch, network: Callable[[], Network], variant: str,
    sealing: bool, keys: str, batches: bool,
) -> None:
    def run() -> Any:
        net = network()
        sim = Simulation(net, seed=11, sealing=sealing, keys=keys)
        return run_or_abort(sim, sum_parties(len(net.participants), variant))

    batched, plain = both_ways(monkeypatch, run, batches)
    assert batched[0] != "abort"
    assert batched == plain
    monkeypatch.setattr(SimPyDriver, "batch_arrivals", True)
    assert run() == batched  # and a batched run replays byte for byte from its seed


@pytest.mark.parametrize("faults", [
    [{"kind": "delay", "link": [2, 3], "extra_ms": 40.0}],
    [{"kind": "delay", "link": [0, 1], "extra_ms": 0.0}, {"kind": "delay", "link": [1, 2],
                                                          "extra_ms": 7.5}],
    [{"kind": "crash", "party": 3, "call": "secure_sum", "step": "column_sum",
      "when": "after"}],
    [{"kind": "crash", "party": 1, "at_s": 0.005}],
    [{"kind": "link_down", "link": [0, 1], "at_s": 0.0, "duration_s": 5.0}],
    [{"kind": "tamper", "link": [0, 2]}],
    [{"kind": "replay", "link": [1, 3]}],
], ids=["delay", "delays", "crash-after", "crash-at", "link-down", "tamper", "replay"])
def test_faults_record_the_same_either_way(
    monkeypatch: pytest.MonkeyPatch, faults: list[dict[str, Any]]
) -> None:
    def run() -> Any:
        sim = Simulation(Network.build(4), seed=2, sealing=True, faults=parse_faults(faults))
        return run_or_abort(sim, sum_parties(4, calls=1))

    batched, plain = both_ways(monkeypatch, run)
    assert batched == plain


def test_recv_any_and_compute_record_the_same_either_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A server takes results as they come from clients that work for different times."""

    def run() -> Any:
        sim = Simulation(Network.build(6, latency_ms=1.0, bandwidth_mbps=1.0), seed=0,
                         keys="none", sealing=False)
        return run_or_abort(sim, server_and_clients())

    batched, plain = both_ways(monkeypatch, run)
    assert batched[0] != "abort"
    assert batched == plain


def test_recv_within_scenario_reports_the_same_either_way(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SecAgg with dropouts (``RecvWithin``, crash faults), through the scenario runner."""

    def run() -> Any:
        outcome = run_scenario("scenarios/secagg_dropouts.toml")
        report = dict(outcome.report)
        report.pop("time", None)  # wall time
        return (outcome.ledger_csv, canonical(report), canonical(outcome.outputs))

    batched, plain = both_ways(monkeypatch, run)
    assert batched == plain


# -- against the model, computed here -------------------------------------------------------


def payload_bits(n: int) -> int:
    """Bits on the wire of an unsealed 1-D uint64 payload of n elements."""
    return 8 * (4 + 8 + 8 * n)


def all_to_all(n: int) -> Callable[[PartyContext], Generator[Any, Any, Any]]:
    def program(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = Call("all", 0)
        yield SendEach(dict.fromkeys(ctx.peers, np.zeros(n, dtype=np.uint64)), call, "x")
        got = yield RecvEach(ctx.peers, call, "x")
        return len(got)

    return program


@pytest.mark.parametrize("m", [3, 4, 6])
def test_star_all_to_all_delivery_times_follow_the_fifo_model(m: int) -> None:
    """Every party broadcasts at once through the hub: uplinks and downlinks queue.

    Party i's uplink sends its messages in order of receiver; the k-th reaches the hub at
    (k + 1)·tx + lat. The downlink to j serves the messages in order of arrival at the hub,
    those of one instant in order of sending (sender order: all sent at time 0, party by
    party); each leaves after the one before and arrives lat later.
    """
    lat, bps, n = 0.002, 1e6, 30
    net = Network.build(m, "star", latency_ms=lat * 1e3, bandwidth_mbps=bps / 1e6)
    sim = Simulation(net, seed=0, keys="none", sealing=False)
    result = sim.run([Party(i, all_to_all(n)) for i in range(m)])
    tx = payload_bits(n) / bps
    at_hub = {}
    for i in range(m):
        for k, j in enumerate(p for p in range(m) if p != i):
            at_hub[(i, j)] = (k + 1) * tx + lat
    expected = {}
    for j in range(m):
        free = 0.0
        for (i, _), arrival in sorted(((key, t) for key, t in at_hub.items() if key[1] == j),
                                      key=lambda item: (item[1], item[0][0])):
            free = max(arrival, free) + tx
            expected[(i, j)] = free + lat
    rows = list(result.ledger)
    assert len(rows) == m * (m - 1)
    assert [(r.sender, r.receiver) for r in rows] == [
        (i, j) for i in range(m) for j in range(m) if j != i]  # sent party by party
    for r in rows:
        assert r.hops == 2 and r.sent_s == 0.0
        assert r.delivered_s == pytest.approx(expected[(r.sender, r.receiver)], rel=1e-12)


def test_messages_arriving_at_one_instant_are_delivered_in_the_order_they_were_sent() -> None:
    """Party 0 sends to 1..4 at once; each replies to party 5 the moment it is woken.

    All four arrive at the same instant, so the order of the replies in the ledger is the
    order in which the receivers were woken: the order party 0 sent in — ascending for a
    ``SendEach``, the order of the ``Send`` effects otherwise.
    """
    lat, bps = 0.25, 2.0**20  # exact binary fractions: equal sums are equal floats
    order_sent = [3, 1, 4, 2]

    def first(each: bool) -> Callable[[PartyContext], Generator[Any, Any, Any]]:
        def program(ctx: PartyContext) -> Generator[Any, Any, Any]:
            if each:
                yield SendEach(dict.fromkeys(order_sent, np.zeros(1, dtype=np.uint64)),
                               Call("go", 0), "go")
            else:
                for to in order_sent:
                    yield Send(to, np.zeros(1, dtype=np.uint64), Call("go", 0), "go")

        return program

    def middle(ctx: PartyContext) -> Generator[Any, Any, Any]:
        yield Recv(0, Call("go", 0), "go")
        yield Send(5, np.array([ctx.party], dtype=np.uint64), Call("reply", 0), "reply")

    def last(ctx: PartyContext) -> Generator[Any, Any, Any]:
        keys = tuple((p, Call("reply", 0), "reply") for p in (4, 3, 2, 1))
        firsts = []
        while keys:
            index, payload = yield RecvAny(keys)
            firsts.append(int(payload[0]))
            keys = keys[:index] + keys[index + 1:]
        return firsts

    for each, expected in ((True, sorted(order_sent)), (False, order_sent)):
        graph_net = Network.build(6, latency_ms=lat * 1e3, bandwidth_mbps=bps / 1e6)
        sim = Simulation(graph_net, seed=0, keys="none", sealing=False)
        parties = [Party(0, first(each)), *(Party(i, middle) for i in range(1, 5)),
                   Party(5, last)]
        result = sim.run(parties)
        rows = list(result.ledger)
        go, replies = rows[:4], rows[4:]
        tx = payload_bits(1) / bps
        # over separate links, all sent at 0: every "go" arrives at tx + lat
        assert {r.delivered_s for r in go} == {tx + lat}
        assert [r.sender for r in replies] == expected
        assert {r.sent_s for r in replies} == {tx + lat}
        assert {r.delivered_s for r in replies} == {2 * (tx + lat)}
        # party 5 was waiting: the first reply delivered wakes it; the others are then in its
        # mailbox, where RecvAny takes the first listed (4, 3, 2, 1)
        assert result.outputs[5] == [expected[0], *(p for p in (4, 3, 2, 1) if p != expected[0])]


def test_a_network_link_is_looked_up_once_per_sender() -> None:
    """The driver's direct routes come from the network's per-sender table, which matches the
    graph (the fastest direct links) and is rebuilt when a participant joins."""
    links = [{"a": 0, "b": 1, "latency_ms": 1.0}, {"a": 1, "b": 2, "latency_ms": 1.0},
             {"a": 0, "b": 2, "latency_ms": 5.0}]
    net = Network.build(3, links=links)
    assert set(net.direct_links(0)) == {1}  # 0–2 (5 ms) loses to 0–1–2 (2 ms)
    assert net.route_links(0, 2) == (((0, 1), net.link(0, 1)), ((1, 2), net.link(1, 2)))
    assert net.direct_links(2) == {1: net.link(1, 2)}
    net.add_participant(3)
    assert set(net.direct_links(0)) == {1, 3}
    assert isinstance(net.direct_links(3)[0], Link)


# -- against the driver before its per-message rework ----------------------------------------
#
# The SimPy driver's per-message path (envelopes, mailboxes, view records, ledger rows) was
# rebuilt for speed. These runs cover what it touches — broadcasts and relays, sealing on and
# off (sealed on sending, on delivery, and in the presence of an interceptor), faults, a
# message delivered twice, unread messages queued under one key, RecvAny, RecvWithin and
# Compute users, views kept and not — and compare everything each records (ledger CSV, fault
# log, views byte for byte, outputs, simulated time; :func:`fingerprint`) with the SHA-256
# digest the driver gave before the rework (commit 3bbe1bd), batched and unbatched alike.
# A protocol change that alters a run's bytes on purpose changes its digest here too.


def digest(value: Any) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


def server_and_clients() -> list[Party]:
    """A server takes results as they come from clients that work for different times
    (``RecvAny``, ``Compute``), acknowledging each to every client."""

    def server(ctx: PartyContext) -> Generator[Any, Any, Any]:
        pending = {c: 0 for c in ctx.peers}
        order = []
        while pending:
            keys = tuple((c, Call("job", i), "result") for c, i in sorted(pending.items()))
            index, payload = yield RecvAny(keys)
            client = keys[index][0]
            order.append((client, float(payload[0])))
            yield SendEach(dict.fromkeys(ctx.peers, np.array([client])), Call("ack", len(order)),
                           "ack")
            pending[client] += 1
            if pending[client] == 3:
                del pending[client]
        return order

    def client(ctx: PartyContext) -> Generator[Any, Any, Any]:
        acks = 0
        for i in range(3):
            yield Compute(0.001 * (ctx.party % 3))
            yield Send(0, np.array([ctx.party * 10.0 + i]), Call("job", i), "result")
            while acks < 3 * (len(ctx.peers) + 1) and acks < 3 * i + 3:
                acks += 1
                yield Recv(0, Call("ack", acks), "ack")
        return acks

    return [Party(0, server), *(Party(i, client) for i in range(1, 6))]


def same_tag_unread() -> list[Party]:
    """Party 0 sends three messages under one tag to party 1, which reads one, and one to
    party 2, which reads none: the rest stay queued and enter the views unread."""

    def sender(ctx: PartyContext) -> Generator[Any, Any, Any]:
        for value in (7, 8, 9):
            yield Send(1, np.array([value], dtype=np.uint64), Call("t", 0), "same")
        yield Send(2, np.array([[1, 2], [3, 4]], dtype=np.uint64), Call("t", 0), "same")
        yield Send(1, np.array([0.5, -1.5]), Call("t", 1), "other")

    def reader(ctx: PartyContext) -> Generator[Any, Any, Any]:
        got = yield Recv(0, Call("t", 0), "same")
        return int(got[0])

    def idle(ctx: PartyContext) -> Generator[Any, Any, Any]:
        yield Compute(1.0)

    return [Party(0, sender), Party(1, reader), Party(2, idle)]


def asyn_sd_parties() -> list[Party]:
    """Asyn-SD (seed 004, Algorithm 6): clients and a server that merges copies as they
    come (``RecvAny``)."""
    from algorithms.nmf.dsanls.asyn_sd import asyn_client, asyn_server
    from algorithms.nmf.dsanls.sanls import StepSchedule
    from algorithms.nmf.dsanls.secure_nmf import SecureNmfConfig

    rng = np.random.default_rng(2)
    m, n, k = 12, 9, 2
    M = rng.random((m, k)) @ rng.random((k, n))
    U0, V0 = rng.random((m, k)), rng.random((n, k)) * 0.5
    columns = ((0, 4), (4, 6), (6, 9))
    cfg = SecureNmfConfig(k=k, outer=2, inner=2, n_features=m, columns=columns,
                          schedule=StepSchedule(0.5, 0.5), allreduce="plain", rho=3.0,
                          seconds_per_flop=1e-8)
    X = M.T
    parties = [Party(r, asyn_client, {"X": X[a:b], "V0": V0[a:b], "config": cfg, "server": 3})
               for r, (a, b) in enumerate(columns)]
    return [*parties, Party(3, asyn_server, {"U0": U0, "config": cfg}, role="server")]


def pass_through(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
    return bytes(data)


def flip_first(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
    if (sender, receiver) != (2, 0):
        return data
    out = bytearray(data)
    out[len(out) // 2] ^= 0x10
    return bytes(out)


def sum_run(network: Network, variant: str = "prg", calls: int = 2, seed: int = 11,
            **kwargs: Any) -> Any:
    sim = Simulation(network, seed=seed, **kwargs)
    return run_or_abort(sim, sum_parties(len(network.participants), variant, calls))


def fault_run(faults: list[dict[str, Any]]) -> Any:
    sim = Simulation(Network.build(4), seed=2, sealing=True, faults=parse_faults(faults))
    return run_or_abort(sim, sum_parties(4, calls=1))


def scenario_run(path: str) -> Any:
    outcome = run_scenario(path)
    report = dict(outcome.report)
    report.pop("time", None)  # wall time
    report.pop("numerics", None)  # the pinned thread count, recorded since issue 29
    return (outcome.ledger_csv, canonical(report), canonical(outcome.outputs))


REPLAYS: dict[str, Callable[[], Any]] = {
    "secure-sum-prg-x25519": lambda: sum_run(Network.build(6), sealing=True, keys="x25519"),
    "secure-sum-explicit-star-unsealed": lambda: sum_run(
        Network.build(5, "star", latency_ms=2.0, bandwidth_mbps=1.0), "explicit",
        sealing=False, keys="none"),
    "secure-sum-prg-ring-preshared": lambda: sum_run(
        Network.build(6, "ring", latency_ms=1.0, bandwidth_mbps=0.5), sealing=True,
        keys="preshared"),
    "secure-sum-explicit-views-off": lambda: sum_run(
        Network.build(7), "explicit", sealing=True, keys="preshared", record_views=False),
    "secure-sum-interceptor-sealed": lambda: sum_run(
        Network.build(4), "explicit", sealing=True, keys="preshared", interceptor=pass_through),
    "secure-sum-interceptor-tampers": lambda: sum_run(
        Network.build(4), sealing=True, keys="preshared", interceptor=flip_first),
    "secure-sum-interceptor-unsealed": lambda: sum_run(
        Network.build(4), "explicit", sealing=False, keys="none", interceptor=flip_first),
    "fault-delay": lambda: fault_run([{"kind": "delay", "link": [2, 3], "extra_ms": 40.0}]),
    "fault-crash-after": lambda: fault_run([{"kind": "crash", "party": 3, "call": "secure_sum",
                                             "step": "column_sum", "when": "after"}]),
    "fault-crash-at": lambda: fault_run([{"kind": "crash", "party": 1, "at_s": 0.005}]),
    "fault-link-down": lambda: fault_run([{"kind": "link_down", "link": [0, 1], "at_s": 0.0,
                                           "duration_s": 5.0}]),
    "fault-tamper": lambda: fault_run([{"kind": "tamper", "link": [0, 2]}]),
    "fault-replay": lambda: fault_run([{"kind": "replay", "link": [1, 3]}]),
    "recv-any-compute": lambda: run_or_abort(
        Simulation(Network.build(6, latency_ms=1.0, bandwidth_mbps=1.0), seed=0, keys="none",
                   sealing=False), server_and_clients()),
    "same-tag-unread": lambda: run_or_abort(
        Simulation(Network.build(3), seed=3, keys="preshared", sealing=True), same_tag_unread()),
    "asyn-sd": lambda: run_or_abort(
        Simulation(Network.build(3), seed=5, sealing=False, keys="preshared"), asyn_sd_parties()),
    "secagg-dropouts": lambda: scenario_run("scenarios/secagg_dropouts.toml"),
}

BEFORE_THE_REWORK: dict[str, str] = {
    "asyn-sd":
        "9e7e06f0b70ee743e062be678f0e1cf998511d278bd11d67c327e6bed40bb749",
    "fault-crash-after":
        "f88836a5bf38f062ac9e0439b107c75179963ed47d4b1907677bf117aa33df8f",
    "fault-crash-at":
        "a3aaf1c7d6d59ff87df286f2d8f1ecf26063af3b808a2efe1ad1262c59f8ebe4",
    "fault-delay":
        "0e59a01e9acfe7ec838f0ad06eb5b7e9a67c1701af1c45470e179b28ae24e140",
    "fault-link-down":
        "bc553a551471997b897d12ec7c726a1671957a1aba0d9156b19bcf6228c2652f",
    "fault-replay":
        "17018afa3d510524f544d4527e78c945c6b5c980c781e24a252a4bc6fc887c04",
    "fault-tamper":
        "d1bd0b215054bddee6e10b658952829c01254439072350a4ee57c8f8a1b61a8e",
    "recv-any-compute":
        "a1e2197f57be962c104e1d0fd39e8d80ea6b50b8730f5895a23a3fe1af335763",
    "same-tag-unread":
        "124b2ec9369db84a76ffac47b803d9ec35b16845eaae5c3240c0f2fd503b11be",
    "secagg-dropouts":
        "18273e9c21637eae214a5a78c78de13f38f926cb4a9714603a354f8b12af68b1",
    "secure-sum-explicit-star-unsealed":
        "baa832ccd545c4b2b48aba46386c77191c4473724063316222da8b455186eb54",
    "secure-sum-explicit-views-off":
        "44abf1d12ce81631889c74afb3fead566e822ce220e5935de3dd2b6eeb60773f",
    "secure-sum-interceptor-sealed":
        "3c4b94bf10a505975ff7186eacb16666593e649b7b8174f2fe765874ca894d38",
    "secure-sum-interceptor-tampers":
        "2f6b413ce64895cd71b68ee27ec9ee4daf88c8f2c71e573baaa00d5715307bc4",
    "secure-sum-interceptor-unsealed":
        "c4d852debb80348f200441bf31f4920556ff6a3819358ce7e8209f9e5565cc89",
    "secure-sum-prg-ring-preshared":
        "53e32ced168fc051f9917b11bfb7b70a19d9da0ddcf40e858916e2cb1a66629c",
    "secure-sum-prg-x25519":
        "acd289598808d56ff053af50dc80e195c6dbfa2a1770c63ba0d48e371f70c7cc",
}


@pytest.mark.parametrize("name", sorted(REPLAYS))
def test_runs_record_what_the_driver_recorded_before_its_per_message_rework(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    for batched in (True, False):
        monkeypatch.setattr(SimPyDriver, "batch_arrivals", batched)
        assert digest(REPLAYS[name]()) == BEFORE_THE_REWORK[name], (name, batched)
