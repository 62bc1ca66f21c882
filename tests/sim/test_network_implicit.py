"""A complete network is implicit: no networkx graph unless asked for (issue 32, item 3).

Every MPI rank built the whole graph, O(M²) edges (≈ 8 MB at M = 256, ≈ 130 MB at
M = 1,000). ``Network.build(n)`` now answers neighbours, routes, links and ``describe()`` from
the party count and the one link. Each answer is compared here with networkx's own complete
graph (``nx.complete_graph``) carrying the same link, wrapped in an explicit ``Network``; the
graph is counted as never built by a run, through a counting ``nx.Graph`` (not the code's own
bookkeeping), and its memory bounded with tracemalloc.
"""

from __future__ import annotations

import tracemalloc

import networkx as nx
import numpy as np
import pytest

import sim.network as network_module
from parties.party import site_parties
from protocols.secure_sum import secure_sum
from sim.network import Link, Network
from sim.simulation import Simulation


def explicit(n: int, latency_ms: float = 10.0, bandwidth_mbps: float = 100.0) -> Network:
    link = Link(latency_ms / 1000.0, bandwidth_mbps * 1e6)
    graph = nx.complete_graph(n)
    graph.graph["link"] = link
    nx.set_edge_attributes(graph, link, "link")
    return Network(graph, "complete")


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_implicit_complete_answers_as_its_graph(n: int) -> None:
    implicit, graph = Network.build(n, latency_ms=4.0, bandwidth_mbps=25.0), explicit(n, 4.0, 25.0)
    assert implicit.participants == graph.participants == tuple(range(n))
    assert implicit.describe() == graph.describe()
    for a in range(n):
        assert dict(implicit.direct_links(a)) == dict(graph.direct_links(a))
        assert len(implicit.direct_links(a)) == n - 1
        assert a in implicit and a in graph.graph
        for b in range(n):
            if a == b:
                with pytest.raises(KeyError):
                    implicit.link(a, b)
                assert implicit.direct_links(a).get(b) is None
                continue
            assert implicit.route(a, b) == graph.route(a, b) == ((a, b),)
            assert implicit.route_links(a, b) == graph.route_links(a, b)
            assert implicit.link(a, b) == graph.link(a, b)
    for outside in (n, -1, "hub", None, 1.5):
        assert outside not in implicit
        assert (outside in implicit) == (outside in graph.graph)
    with pytest.raises(KeyError):
        implicit.link(0, n)
    # asked for, the graph is networkx's complete graph with the link on every edge
    built = implicit.graph
    assert nx.utils.graphs_equal(built, graph.graph)
    assert implicit.describe() == graph.describe()


def test_add_participant_builds_the_graph_and_links_like_before() -> None:
    implicit, graph = Network.build(4), explicit(4)
    implicit.add_participant(4)
    graph.add_participant(4)
    assert nx.utils.graphs_equal(implicit.graph, graph.graph)
    assert implicit.route_links(4, 0) == graph.route_links(4, 0)
    assert implicit.describe() == graph.describe()


def test_a_run_on_a_complete_network_never_builds_the_graph(monkeypatch) -> None:
    built: list[int] = []

    class CountingGraph(nx.Graph):
        def __init__(self, *args, **kwargs) -> None:
            built.append(1)
            super().__init__(*args, **kwargs)

    monkeypatch.setattr(network_module.nx, "Graph", CountingGraph)
    rng = np.random.default_rng(3)
    inputs = [{"x": rng.uniform(0.0, 1.0, 3)} for _ in range(6)]

    def program(ctx, x):
        return (yield from secure_sum(ctx, x))

    result = Simulation(Network.build(6), seed=2, sealing=True).run(
        site_parties(program, inputs))
    total = np.sum([i["x"] for i in inputs], axis=0)
    for out in result.outputs.values():
        assert np.max(np.abs(np.asarray(out) - total)) < 6 * 2.0 ** -20
    assert built == []  # neither the build nor the run made a graph


def test_an_implicit_network_of_a_thousand_takes_no_quadratic_memory() -> None:
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        network = Network.build(1000)
        for a in (0, 500, 999):
            assert len(network.direct_links(a)) == 999
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # the graph's 499,500 edges take > 100 MB; the implicit network a few hundred bytes
    assert held < 64 * 1024
    assert network.describe()["links"] == 1000 * 999 // 2
