"""The ring All-Reduce (reduce-scatter + all-gather; Patarasuk & Yuan 2009, MPI's ring).

Expected sums come from numpy on the pooled inputs (within N·ε·Σ|x|: the ring adds in another
order); each party's sent elements from the closed form 2L − |C_{i+1}| − |C_{i+2}| with the
chunk sizes taken from ``numpy.array_split``. Its audit:
tests/parties/test_ring_all_reduce_audit.py.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parties.party import site_parties
from protocols.all_reduce import all_reduce, all_reduce_cost
from sim.network import Network
from sim.simulation import Simulation


def run(inputs: list[np.ndarray], topology: str = "complete", seed: int = 3):
    sim = Simulation(Network.build(len(inputs), topology=topology), seed=seed,
                     keys="preshared", sealing=False)
    return sim.run(site_parties(
        lambda ctx, x: all_reduce(ctx, x, method="ring", output="total"),
        [{"x": x} for x in inputs]))


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 6), shape=st.sampled_from([(1,), (3,), (2, 3), (7,), (4, 5)]),
       data=st.data())
def test_every_party_gets_bitwise_the_same_sum_as_numpy(n, shape, data) -> None:
    floats = st.floats(-1e6, 1e6, allow_nan=False)
    size = int(np.prod(shape))
    inputs = [np.array(data.draw(st.lists(floats, min_size=size, max_size=size)))
              .reshape(shape) for _ in range(n)]
    result = run(inputs)
    expected = np.sum(inputs, axis=0)
    tol = n * np.finfo(np.float64).eps * np.sum(np.abs(inputs), axis=0)
    for m in range(n):
        out = result.outputs[m]
        assert out.shape == shape
        assert np.all(np.abs(out - expected) <= tol)
        np.testing.assert_array_equal(out, result.outputs[0])


@pytest.mark.parametrize("n", [2, 3, 5, 7])
@pytest.mark.parametrize("length", [1, 4, 10, 23])
def test_ledger_matches_the_ring_closed_form(n: int, length: int) -> None:
    inputs = [np.full(length, float(m + 1)) for m in range(n)]
    result = run(inputs)
    sizes = [c.size for c in np.array_split(np.zeros(length), n)]
    messages, elements = Counter(), Counter()
    for r in result.ledger:
        messages[r.sender] += 1
        elements[r.sender] += r.elements
    for i in range(n):
        assert messages[i] == 2 * (n - 1)
        assert elements[i] == 2 * length - sizes[(i + 1) % n] - sizes[(i + 2) % n]
    assert sum(elements.values()) == 2 * (n - 1) * length  # every chunk crosses N − 1 links twice
    cost = all_reduce_cost("ring", "prg", n, length)
    assert (cost.rounds, cost.messages_sent, cost.elements_sent) == (
        2 * (n - 1), 2 * (n - 1), elements[0])
    assert result.ledger.rounds() == 2 * (n - 1)
    for m in range(n):
        np.testing.assert_array_equal(result.outputs[m], np.full(length, n * (n + 1) / 2))


def test_the_ring_sends_about_2d_where_the_plain_all_reduce_sends_n_minus_1_d() -> None:
    n, d = 10, 1000
    assert all_reduce_cost("plain", "prg", n, d).elements_sent == (n - 1) * d
    assert all_reduce_cost("ring", "prg", n, d).elements_sent == 2 * (n - 1) * d // n


def test_on_a_switch_the_ring_is_faster_than_sending_every_peer_the_array() -> None:
    """A star (one link per node to a switch, store-and-forward): a node's N − 1 copies of the
    plain All-Reduce queue on its one link, ≥ (N − 1)·8L bytes; the ring's 2(N − 1) steps each
    cross two links with one L/N chunk, ≤ 2(N − 1)·2·(8L/N bytes + latency)."""
    n, d, latency, bandwidth = 8, 20_000, 0.05e-3, 100e6
    inputs = [np.full(d, float(m)) for m in range(n)]

    def simulated(method: str) -> float:
        sim = Simulation(Network.build(n, topology="star", latency_ms=latency * 1e3,
                                       bandwidth_mbps=bandwidth / 1e6),
                         seed=1, keys="preshared", sealing=False)
        result = sim.run(site_parties(lambda ctx, x: all_reduce(ctx, x, method=method),
                                      [{"x": x} for x in inputs]))
        return max(r.delivered_s for r in result.ledger)

    plain_floor = (n - 1) * 8 * d * 8 / bandwidth
    ring_ceiling = 2 * (n - 1) * 2 * (8 * (d // n + 1) * 8 / bandwidth + latency) * 1.05
    assert simulated("plain") >= plain_floor
    assert simulated("ring") <= ring_ceiling < plain_floor / 1.5
