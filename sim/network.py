"""The simulated network: a networkx graph of parties with per-link latency and bandwidth.

Topologies:

``complete``
    A direct link between every pair of parties.
``star``
    Every party has one link to a central switch (node ``"hub"``, not a party); a message
    crosses two links.
``ring``
    Party i is linked to party i ± 1 (mod n); messages are routed along the shortest path
    (by latency) and relayed by the parties in between, which see only the sealed bytes.
explicit links
    ``[{a, b, latency_ms, bandwidth_mbps}, ...]``; the graph must be connected.

A complete network is implicit (:class:`CompleteNeighbours`): its M(M − 1)/2 links all share
one :class:`Link`, so the networkx graph — O(M²) edges, ≈ 130 MB at M = 1,000, built whole by
every MPI rank — is made only when something asks for :attr:`Network.graph` (the SimPy driver
never does; adding a participant does). Neighbours, routes, links and :meth:`Network.describe`
answer from the party count and the one link, the same as the graph would (issue 32, item 3).

Timing model (used by the driver): store-and-forward along the route; every directed link is a
FIFO that transmits one message at a time, taking size·8 / bandwidth seconds, after which the
message arrives ``latency`` seconds later at the next node. Local computation takes no
simulated time.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from protocols.errors import InputError
from sim.checks import check_number

HUB = "hub"
TOPOLOGIES = ("complete", "star", "ring")

LATENCY_MS_RANGE = (0.0, 60_000.0)
"""One-way link latency in ms: from 0 up to one minute (a geostationary hop is ~270 ms)."""
BANDWIDTH_MBPS_RANGE = (0.001, 10_000_000.0)
"""Link bandwidth in Mbit/s: from 1 kbit/s up to 10 Tbit/s."""


@dataclass(frozen=True)
class Link:
    """One network link: one-way latency (s) and bandwidth (bits per second)."""

    latency_s: float
    bandwidth_bps: float

    def transmit_s(self, n_bytes: int) -> float:
        return n_bytes * 8.0 / self.bandwidth_bps


def _check_link(latency_ms: float, bandwidth_mbps: float, where: str) -> Link:
    """A Link from the scenario's units, each value within its documented range."""
    low, high = LATENCY_MS_RANGE
    latency = check_number(f"{where}.latency_ms", latency_ms, low, high=high)
    low, high = BANDWIDTH_MBPS_RANGE
    bandwidth = check_number(f"{where}.bandwidth_mbps", bandwidth_mbps, low, high=high)
    return Link(latency_s=latency / 1000.0, bandwidth_bps=bandwidth * 1e6)


class Network:
    """Participants and the links between them.

    Parameters
    ----------
    graph : networkx.Graph
        Nodes are participant ids (and possibly ``"hub"``); every edge has a ``link``
        attribute of type :class:`Link`.
    topology : str
        A name for reports.
    """

    def __init__(self, graph: nx.Graph, topology: str = "custom") -> None:
        self._graph: nx.Graph | None = graph
        self._complete: tuple[int, Link] | None = None  # (n, link) of an implicit complete one
        self.topology = topology
        self._routes: dict[tuple[int, int], tuple[tuple[object, object], ...]] = {}
        self._route_links: dict[tuple[int, int], tuple[tuple[tuple[object, object], Link], ...]]
        self._route_links = {}
        self._min_latency: float | None = None
        self._direct: dict[object, dict[object, Link]] = {}

    @classmethod
    def complete(cls, n: int, link: Link) -> Network:
        """The complete network of participants 0..n−1, every link ``link``, kept implicit:
        its graph is built only if :attr:`graph` is asked for (see the module docstring)."""
        network = cls.__new__(cls)
        Network.__init__(network, None, "complete")  # type: ignore[arg-type]
        network._complete = (n, link)
        return network

    @property
    def graph(self) -> nx.Graph:
        """The networkx graph (an implicit complete network's is built now, once)."""
        if self._graph is None:
            n, link = self._complete  # type: ignore[misc]
            graph = nx.Graph(link=link)
            graph.add_nodes_from(range(n))
            for a in range(n):
                for b in range(a + 1, n):
                    graph.add_edge(a, b, link=link)
            self._graph = graph
            self._complete = None
        return self._graph

    def __contains__(self, node: object) -> bool:
        """Whether ``node`` is a node of the network (a participant, or the hub)."""
        if self._complete is not None:
            return _is_party(node, self._complete[0])
        return node in self.graph

    @property
    def participants(self) -> tuple[int, ...]:
        if self._complete is not None:
            return tuple(range(self._complete[0]))
        return tuple(sorted(n for n in self.graph.nodes if n != HUB))

    @classmethod
    def build(
        cls,
        n: int,
        topology: str = "complete",
        latency_ms: float = 10.0,
        bandwidth_mbps: float = 100.0,
        links: Iterable[Mapping[str, object]] | None = None,
    ) -> Network:
        """Build a network of participants 0..n−1 (see the module docstring)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InputError(f"network size {n!r} must be a positive integer")
        default = _check_link(latency_ms, bandwidth_mbps, "network")
        if links is None and topology == "complete":
            return cls.complete(n, default)  # connected; its graph is made only if asked for
        graph = nx.Graph(link=default)  # the link a participant added later gets if no edge exists
        graph.add_nodes_from(range(n))
        if links is not None:
            for i, spec in enumerate(links):
                where = f"network.links[{i}]"
                a, b = spec.get("a"), spec.get("b")
                for name, end in (("a", a), ("b", b)):
                    if isinstance(end, bool) or not isinstance(end, int) or not 0 <= end < n:
                        raise InputError(
                            f"{where}: {name} = {end!r} is not a party id in 0..{n - 1}"
                        )
                if a == b:
                    raise InputError(f"{where}: a link joins two different parties, got {a}–{b}")
                unknown = set(spec) - {"a", "b", "latency_ms", "bandwidth_mbps"}
                if unknown:
                    raise InputError(f"{where}: unknown key(s) {sorted(unknown)}")
                link = _check_link(
                    spec.get("latency_ms", latency_ms),  # type: ignore[arg-type]
                    spec.get("bandwidth_mbps", bandwidth_mbps),  # type: ignore[arg-type]
                    where,
                )
                if graph.has_edge(a, b):
                    raise InputError(f"{where}: the link {a}–{b} is given twice")
                graph.add_edge(a, b, link=link)
            topology = "links"
        elif topology == "star":
            graph.add_node(HUB)
            for a in range(n):
                graph.add_edge(a, HUB, link=default)
        elif topology == "ring":
            for a in range(n):
                if n > 1 and (a + 1) % n != a:
                    graph.add_edge(a, (a + 1) % n, link=default)
        else:
            raise InputError(
                f"network.topology = {topology!r} is unknown; use one of {TOPOLOGIES} "
                "or give [[network.links]]"
            )
        if n > 1 and not nx.is_connected(graph):
            parts = [sorted(c, key=str) for c in nx.connected_components(graph)]
            raise InputError(f"the network is not connected: components {parts}")
        return cls(graph, topology)

    def add_participant(self, node: int, attach_to: Iterable[int] | None = None) -> None:
        """Add a participant (e.g. an aggregator) linked like the existing topology.

        By default it gets a link to every existing participant (or to the hub in a star),
        with the parameters of an existing link.
        """
        first = next(iter(self.graph.edges(data="link")), None)
        some_link = first[2] if first is not None else self.graph.graph["link"]
        self.graph.add_node(node)
        targets = [HUB] if HUB in self.graph and attach_to is None else list(
            attach_to if attach_to is not None else self.participants
        )
        for t in targets:
            if t != node:
                self.graph.add_edge(node, t, link=some_link)
        self._routes.clear()
        self._route_links.clear()
        self._min_latency = None
        self._direct.clear()

    def route(self, sender: int, receiver: int) -> tuple[tuple[object, object], ...]:
        """The directed hops of the lowest-latency path from ``sender`` to ``receiver``.

        A direct link whose latency is at most twice the smallest link latency is the route
        (no path of two or more links is shorter); otherwise the lowest-latency paths from
        the sender are computed once and cached.
        """
        key = (sender, receiver)
        if self._complete is not None:
            self._check_pair(sender, receiver)
            return (key,)
        hops = self._routes.get(key)
        if hops is not None:
            return hops
        if self._fastest_direct_link(sender, receiver) is not None:
            hops = ((sender, receiver),)
            self._routes[key] = hops
            return hops
        paths = nx.single_source_dijkstra_path(
            self.graph, sender, weight=lambda u, v, d: d["link"].latency_s
        )
        for target, path in paths.items():
            if target != sender and target != HUB:
                self._routes.setdefault((sender, target), tuple(itertools.pairwise(path)))
        return self._routes[key]

    def _fastest_direct_link(self, sender: int, receiver: int) -> Link | None:
        """The direct link, if no path of two or more links can be faster (else None)."""
        return self.direct_links(sender).get(receiver)

    def direct_links(self, sender: object) -> Mapping[object, Link]:
        """The sender's links that are routes: by neighbour, those no multi-hop path beats.

        A direct link whose latency is at most twice the smallest link latency is the
        lowest-latency route (any other path crosses at least two links). Computed once per
        sender (the network does not change during a run; :meth:`add_participant` starts
        afresh).
        """
        if self._complete is not None:
            n, link = self._complete
            if not _is_party(sender, n):
                raise KeyError(sender)  # as the graph's adjacency would
            return CompleteNeighbours(n, sender, link)
        links = self._direct.get(sender)
        if links is None:
            if self._min_latency is None:
                self._min_latency = min(
                    (d.latency_s for _, _, d in self.graph.edges(data="link")), default=0.0
                )
            bound = 2 * self._min_latency
            links = {nbr: d["link"] for nbr, d in self.graph.adj[sender].items()
                     if d["link"].latency_s <= bound}
            self._direct[sender] = links
        return links

    def route_links(
        self, sender: int, receiver: int
    ) -> tuple[tuple[tuple[object, object], Link], ...]:
        """The route's hops with their links: ``((a, b), Link)`` per hop.

        A direct link that no multi-hop path can beat (see :meth:`route`) is answered from
        :meth:`direct_links` without caching the hop (a SecureSum among M parties uses each
        of the M(M − 1) directed pairs once); other routes are computed once and cached.
        """
        key = (sender, receiver)
        cached = self._route_links.get(key)
        if cached is not None:
            return cached
        direct = self.direct_links(sender).get(receiver)
        if direct is not None:
            return ((key, direct),)
        cached = tuple((hop, self.link(*hop)) for hop in self.route(sender, receiver))
        self._route_links[key] = cached
        return cached

    def hops(self, sender: int, receiver: int) -> int:
        """The number of links on the route from ``sender`` to ``receiver``
        (``len(route_links(...))`` without building the route of a direct link: a ledger's
        ``hops`` for every message of a transport that only counts them)."""
        if self._complete is not None:
            self._check_pair(sender, receiver)
            return 1
        cached = self._route_links.get((sender, receiver))
        if cached is not None:
            return len(cached)
        if receiver in self.direct_links(sender):
            return 1
        return len(self.route_links(sender, receiver))

    def link(self, a: object, b: object) -> Link:
        if self._complete is not None:
            self._check_pair(a, b)
            return self._complete[1]
        return self.graph.edges[a, b]["link"]

    def _check_pair(self, a: object, b: object) -> None:
        """KeyError, as the graph's edge lookup would, unless a–b is a link of the implicit
        complete network."""
        n = self._complete[0]  # type: ignore[index]
        if a == b or not _is_party(a, n) or not _is_party(b, n):
            raise KeyError((a, b))

    def describe(self) -> dict[str, object]:
        if self._complete is not None:
            n, link = self._complete
            links = [link] if n > 1 else []
            return {
                "topology": self.topology,
                "links": n * (n - 1) // 2,
                "latency_ms": sorted({round(lk.latency_s * 1000, 9) for lk in links}),
                "bandwidth_mbps": sorted({round(lk.bandwidth_bps / 1e6, 9) for lk in links}),
            }
        links = [d for _, _, d in self.graph.edges(data="link")]
        return {
            "topology": self.topology,
            "links": len(links),
            "latency_ms": sorted({round(lk.latency_s * 1000, 9) for lk in links}),
            "bandwidth_mbps": sorted({round(lk.bandwidth_bps / 1e6, 9) for lk in links}),
        }


def _is_party(node: object, n: int) -> bool:
    """Whether ``node`` is one of participants 0..n−1 (as a graph node: ``True`` is 1)."""
    try:
        return node in range(n)  # type: ignore[operator]
    except TypeError:
        return False


class CompleteNeighbours(Mapping[object, Link]):
    """The direct links of ``sender`` in an implicit complete network of ``n`` participants:
    every other participant, each by ``link`` — :meth:`Network.direct_links` of the complete
    graph, in O(1) memory."""

    __slots__ = ("_link", "_n", "_sender")

    def __init__(self, n: int, sender: object, link: Link) -> None:
        self._n, self._sender, self._link = n, sender, link

    def __getitem__(self, node: object) -> Link:
        if node == self._sender or not _is_party(node, self._n):
            raise KeyError(node)
        return self._link

    def get(self, node: object, default: Any = None) -> Any:
        if node == self._sender or not _is_party(node, self._n):
            return default
        return self._link

    def __iter__(self) -> Iterator[object]:
        return (b for b in range(self._n) if b != self._sender)

    def __len__(self) -> int:
        return self._n - 1
