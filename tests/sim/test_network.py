"""Tests of :mod:`sim.network` and of the driver's timing model on it.

Delivery times are computed by hand from the documented model: store-and-forward along the
route; each directed link is a FIFO that transmits one message at a time in size·8/bandwidth
seconds, after which the message arrives ``latency`` seconds later at the next node. A payload
of n uint64 elements sent unsealed is 4 + 8 + 8n bytes on the wire (header, 1-D shape, body).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import networkx as nx
import numpy as np
import pytest

from parties.party import Party
from protocols.context import PartyContext
from protocols.effects import Recv, Send
from protocols.errors import InputError
from sim.network import HUB, Link, Network
from sim.simulation import Simulation


def wire_bytes(n: int) -> int:
    """Unsealed bytes of a 1-D uint64 payload of n elements."""
    return 4 + 8 + 8 * n


# -- topologies ------------------------------------------------------------------------------


def test_complete_topology_links_every_pair_directly() -> None:
    net = Network.build(5, "complete", latency_ms=3.0, bandwidth_mbps=50.0)
    assert net.participants == (0, 1, 2, 3, 4)
    assert net.graph.number_of_edges() == 10
    for a in range(5):
        for b in range(5):
            if a != b:
                assert net.route(a, b) == ((a, b),)
    assert net.link(1, 3) == Link(latency_s=0.003, bandwidth_bps=50e6)
    assert net.topology == "complete"


def test_star_topology_goes_through_the_hub() -> None:
    net = Network.build(4, "star")
    assert HUB in net.graph and net.participants == (0, 1, 2, 3)
    assert net.graph.number_of_edges() == 4
    assert set(net.graph.neighbors(HUB)) == {0, 1, 2, 3}
    assert net.route(0, 3) == ((0, HUB), (HUB, 3))
    assert net.route(3, 0) == ((3, HUB), (HUB, 0))


def test_ring_topology_routes_the_short_way_round() -> None:
    net = Network.build(6, "ring")
    assert net.graph.number_of_edges() == 6
    assert all(net.graph.degree(a) == 2 for a in range(6))
    assert net.route(0, 1) == ((0, 1),)
    assert net.route(0, 2) == ((0, 1), (1, 2))
    assert net.route(0, 4) == ((0, 5), (5, 4))
    assert len(net.route(0, 3)) == 3  # either way round
    assert len(net.route(2, 5)) == 3


def test_ring_of_two_and_network_of_one() -> None:
    assert Network.build(2, "ring").graph.number_of_edges() == 1
    lone = Network.build(1)
    assert lone.participants == (0,) and lone.graph.number_of_edges() == 0


def test_explicit_links_with_per_link_parameters_and_defaults() -> None:
    links = [
        {"a": 0, "b": 1, "latency_ms": 5.0},
        {"a": 1, "b": 2, "bandwidth_mbps": 10},
        {"a": 2, "b": 3, "latency_ms": 0, "bandwidth_mbps": 1000.0},
    ]
    net = Network.build(4, latency_ms=20.0, bandwidth_mbps=100.0, links=links)
    assert net.topology == "links"
    assert net.graph.number_of_edges() == 3
    assert net.link(0, 1) == Link(0.005, 100e6)
    assert net.link(2, 1) == Link(0.020, 10e6)
    assert net.link(3, 2) == Link(0.0, 1e9)
    assert net.route(0, 3) == ((0, 1), (1, 2), (2, 3))


def test_route_takes_the_lowest_latency_path() -> None:
    slow_direct = [
        {"a": 0, "b": 1, "latency_ms": 100.0},
        {"a": 0, "b": 2, "latency_ms": 1.0},
        {"a": 2, "b": 1, "latency_ms": 1.0},
    ]
    net = Network.build(3, links=slow_direct)
    assert net.route(0, 1) == ((0, 2), (2, 1))
    fast_direct = [
        {"a": 0, "b": 1, "latency_ms": 1.5},
        {"a": 0, "b": 2, "latency_ms": 1.0},
        {"a": 2, "b": 1, "latency_ms": 1.0},
    ]
    assert Network.build(3, links=fast_direct).route(0, 1) == ((0, 1),)
    # and networkx agrees on a larger weighted graph
    rng = np.random.default_rng(4)
    links = [{"a": a, "b": b, "latency_ms": float(rng.integers(1, 50))}
             for a in range(7) for b in range(a + 1, 7) if rng.random() < 0.6]
    net = Network.build(7, links=links)
    for a in range(7):
        for b in range(7):
            if a != b:
                hops = net.route(a, b)
                got = sum(net.link(u, v).latency_s for u, v in hops)
                best = nx.shortest_path_length(
                    net.graph, a, b, weight=lambda u, v, d: d["link"].latency_s)
                assert got == pytest.approx(best)
                assert hops[0][0] == a and hops[-1][1] == b


def test_hops_count_the_links_of_the_lowest_latency_path() -> None:
    """``hops`` (the ledger's column under MPI) is the number of links on the path networkx
    finds, whichever of the network's caches answers first."""
    rng = np.random.default_rng(11)
    links = [{"a": a, "b": b, "latency_ms": float(rng.integers(1, 50))}
             for a in range(7) for b in range(a + 1, 7) if rng.random() < 0.6]
    builds = [lambda: Network.build(7, links=links), lambda: Network.build(6, topology="star"),
              lambda: Network.build(6, topology="ring"), lambda: Network.build(5)]
    for build in builds:
        net, graph = build(), build().graph  # (a complete network's own graph is implicit)
        for first in (False, True):  # before any route is cached, then from the caches
            for a in net.participants:
                for b in net.participants:
                    if a == b:
                        continue
                    path = nx.shortest_path(graph, a, b,
                                            weight=lambda u, v, d: d["link"].latency_s)
                    assert net.hops(a, b) == len(path) - 1, (net.topology, a, b, first)
                    if first:
                        net.route_links(a, b)
    with pytest.raises(KeyError):
        Network.build(3).hops(0, 0)
    with pytest.raises(KeyError):
        Network.build(3).hops(0, 3)


def test_disconnected_graphs_are_rejected() -> None:
    with pytest.raises(InputError, match="not connected"):
        Network.build(3, links=[{"a": 0, "b": 1}])
    with pytest.raises(InputError, match="not connected"):
        Network.build(4, links=[{"a": 0, "b": 1}, {"a": 2, "b": 3}])


@pytest.mark.parametrize(
    "link",
    [
        {"a": 0, "b": 1, "latency_ms": -1.0},
        {"a": 0, "b": 1, "latency_ms": float("nan")},
        {"a": 0, "b": 1, "bandwidth_mbps": 0},
        {"a": 0, "b": 1, "bandwidth_mbps": -5.0},
        {"a": 0, "b": 1, "latency_ms": "10"},
        {"a": 0, "b": 1, "bandwidth_mbps": True},
        {"a": 0, "b": 3},
        {"a": -1, "b": 1},
        {"a": 0.0, "b": 1},
        {"a": 1, "b": 1},
        {"b": 1},
        {"a": 0, "b": 1, "delay": 3},
    ],
)
def test_bad_link_values_are_rejected(link: dict[str, Any]) -> None:
    links = [link, {"a": 1, "b": 2}, {"a": 0, "b": 2}]
    with pytest.raises(InputError, match=r"network\.links\[0\]"):
        Network.build(3, links=links)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n": 0}, "positive"),
        ({"n": -2}, "positive"),
        ({"n": True}, "positive"),
        ({"n": 3.0}, "positive"),
        ({"n": 3, "topology": "mesh"}, "unknown"),
        ({"n": 3, "latency_ms": -0.5}, "latency_ms"),
        ({"n": 3, "bandwidth_mbps": 0.0}, "bandwidth_mbps"),
    ],
)
def test_bad_network_parameters_are_rejected(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        Network.build(**kwargs)


def test_added_participant_joins_like_the_topology() -> None:
    star = Network.build(3, "star")
    star.add_participant(3)
    assert set(star.graph.neighbors(3)) == {HUB}
    assert star.route(3, 0) == ((3, HUB), (HUB, 0))
    complete = Network.build(3, "complete", latency_ms=7.0)
    complete.add_participant(3)
    assert set(complete.graph.neighbors(3)) == {0, 1, 2}
    assert complete.link(3, 1).latency_s == pytest.approx(0.007)
    assert complete.route(3, 2) == ((3, 2),)


def test_describe_reports_topology_and_link_parameters() -> None:
    desc = Network.build(4, "ring", latency_ms=2.5, bandwidth_mbps=40.0).describe()
    assert desc == {"topology": "ring", "links": 4, "latency_ms": [2.5],
                    "bandwidth_mbps": [40.0]}


# -- delivery times by hand --------------------------------------------------------------


def sender(plan: list[tuple[int, int]]):
    """Send, in order, ``(to, n_elements)`` uint64 payloads (step 'm<k>')."""

    def program(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("timing")
        for k, (to, n) in enumerate(plan):
            yield Send(to, np.arange(n, dtype=np.uint64), call, f"m{k}")
        return None

    return program


def receiver(expect: list[tuple[int, int]]):
    """Receive ``(from, k)`` messages in the given order."""

    def program(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("timing")
        got = []
        for frm, k in expect:
            got.append((yield Recv(frm, call, f"m{k}")))
        return [g.size for g in got]

    return program


def plain_simulation(net: Network) -> Simulation:
    return Simulation(net, keys="none", sealing=False, seed=0)


def test_one_hop_delivery_time() -> None:
    net = Network.build(2, latency_ms=10.0, bandwidth_mbps=100.0)
    parties = [Party(0, sender([(1, 100)])), Party(1, receiver([(0, 0)]))]
    result = plain_simulation(net).run(parties)
    (row,) = list(result.ledger)
    n_bytes = wire_bytes(100)  # 812
    assert row.bytes == n_bytes == 812
    assert row.hops == 1 and row.sent_s == 0.0
    assert row.delivered_s == pytest.approx(812 * 8 / 100e6 + 0.010, rel=1e-12)
    assert result.simulated_s == pytest.approx(row.delivered_s, rel=1e-12)
    assert result.outputs[1] == [100]


def test_multi_hop_delivery_time_is_store_and_forward() -> None:
    links = [
        {"a": 0, "b": 1, "latency_ms": 2.0, "bandwidth_mbps": 8.0},
        {"a": 1, "b": 2, "latency_ms": 5.0, "bandwidth_mbps": 1.0},
        {"a": 2, "b": 3, "latency_ms": 1.0, "bandwidth_mbps": 16.0},
    ]
    net = Network.build(4, links=links)
    parties = [Party(0, sender([(3, 10)])), Party(1, receiver([])), Party(2, receiver([])),
               Party(3, receiver([(0, 0)]))]
    result = plain_simulation(net).run(parties)
    (row,) = list(result.ledger)
    bits = wire_bytes(10) * 8  # 92 bytes
    expected = (bits / 8e6 + 0.002) + (bits / 1e6 + 0.005) + (bits / 16e6 + 0.001)
    assert row.hops == 3
    assert row.delivered_s == pytest.approx(expected, rel=1e-12)


def test_star_messages_from_one_party_queue_on_its_uplink() -> None:
    lat, bw = 0.004, 2e6
    net = Network.build(3, "star", latency_ms=4.0, bandwidth_mbps=2.0)
    parties = [Party(0, sender([(1, 50), (2, 50)])), Party(1, receiver([(0, 0)])),
               Party(2, receiver([(0, 1)]))]
    result = plain_simulation(net).run(parties)
    first, second = list(result.ledger)
    tx = wire_bytes(50) * 8 / bw
    # first: uplink [0, tx], hub at tx + lat, downlink to 1 [tx + lat, 2tx + lat]
    assert first.delivered_s == pytest.approx(2 * tx + 2 * lat, rel=1e-12)
    # second waits for the uplink: [tx, 2tx], hub at 2tx + lat, downlink to 2 is free
    assert second.delivered_s == pytest.approx(3 * tx + 2 * lat, rel=1e-12)
    assert first.hops == second.hops == 2


def test_fifo_link_serialises_back_to_back_messages() -> None:
    lat, bw = 0.001, 1e6
    net = Network.build(2, latency_ms=1.0, bandwidth_mbps=1.0)
    parties = [Party(0, sender([(1, 1000), (1, 10), (1, 500)])),
               Party(1, receiver([(0, 2), (0, 0), (0, 1)]))]  # taken in another order
    result = plain_simulation(net).run(parties)
    rows = list(result.ledger)
    tx = [wire_bytes(n) * 8 / bw for n in (1000, 10, 500)]
    ends = np.cumsum(tx)
    assert [r.delivered_s for r in rows] == pytest.approx(list(ends + lat), rel=1e-12)
    assert result.outputs[1] == [500, 1000, 10]


def test_opposite_directions_do_not_share_a_queue() -> None:
    net = Network.build(2, latency_ms=1.0, bandwidth_mbps=1.0)

    def both(me: int, other: int):
        def program(ctx: PartyContext) -> Generator[Any, Any, Any]:
            call = ctx.new_call("timing")
            yield Send(other, np.zeros(100, dtype=np.uint64), call, "x")
            return (yield Recv(other, call, "x")).size

        return program

    result = plain_simulation(net).run([Party(0, both(0, 1)), Party(1, both(1, 0))])
    a, b = list(result.ledger)
    expected = wire_bytes(100) * 8 / 1e6 + 0.001
    assert a.delivered_s == pytest.approx(expected, rel=1e-12)
    assert b.delivered_s == pytest.approx(expected, rel=1e-12)


def test_later_message_waits_for_the_link_to_be_free() -> None:
    """A message sent after receiving one is timed from the receive time."""
    net = Network.build(2, latency_ms=3.0, bandwidth_mbps=4.0)

    def ping(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("timing")
        yield Send(1, np.zeros(20, dtype=np.uint64), call, "ping")
        yield Recv(1, call, "pong")

    def pong(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("timing")
        yield Recv(0, call, "ping")
        yield Send(0, np.zeros(5, dtype=np.uint64), call, "pong")

    result = plain_simulation(net).run([Party(0, ping), Party(1, pong)])
    first, second = list(result.ledger)
    t1 = wire_bytes(20) * 8 / 4e6 + 0.003
    t2 = t1 + wire_bytes(5) * 8 / 4e6 + 0.003
    assert first.delivered_s == pytest.approx(t1, rel=1e-12)
    assert second.sent_s == pytest.approx(t1, rel=1e-12)
    assert second.delivered_s == pytest.approx(t2, rel=1e-12)
    assert result.simulated_s == pytest.approx(t2, rel=1e-12)


# -- FIFO order is the order of arrival at the link ------------------------------------------


def test_star_downlink_serves_messages_in_order_of_arrival_at_the_hub() -> None:
    lat, bw = 0.001, 1e6
    net = Network.build(3, "star", latency_ms=1.0, bandwidth_mbps=1.0)
    # party 0 sends a big message, party 1 a small one, both to party 2 at time 0
    parties = [Party(0, sender([(2, 1000)])), Party(1, sender([(2, 10)])),
               Party(2, receiver([(0, 0), (1, 0)]))]
    result = plain_simulation(net).run(parties)
    big, small = sorted(result.ledger, key=lambda r: r.sender)
    tx_big, tx_small = wire_bytes(1000) * 8 / bw, wire_bytes(10) * 8 / bw
    # the small message reaches the hub at tx_small + lat, long before the big one
    # (tx_big + lat), and crosses the idle downlink at once
    assert small.delivered_s == pytest.approx(2 * tx_small + 2 * lat, rel=1e-12)
    assert big.delivered_s == pytest.approx(2 * tx_big + 2 * lat, rel=1e-12)


def test_relayed_message_does_not_block_a_link_before_it_reaches_it() -> None:
    links = [{"a": 1, "b": 2, "latency_ms": 1.0}, {"a": 2, "b": 0, "latency_ms": 1.0},
             {"a": 1, "b": 0, "latency_ms": 50.0}]
    net = Network.build(3, links=links, bandwidth_mbps=1.0)
    assert net.route(1, 0) == ((1, 2), (2, 0))
    parties = [Party(0, receiver([(1, 0), (2, 0)])), Party(1, sender([(0, 100)])),
               Party(2, sender([(0, 100)]))]
    result = plain_simulation(net).run(parties)
    relayed, direct = sorted(result.ledger, key=lambda r: r.sender)
    tx = wire_bytes(100) * 8 / 1e6
    # party 2's own message is on link (2, 0) at time 0; the relayed one arrives at tx + 1 ms
    assert direct.delivered_s == pytest.approx(tx + 0.001, rel=1e-12)
    assert relayed.delivered_s == pytest.approx(2 * tx + 0.002, rel=1e-12)
