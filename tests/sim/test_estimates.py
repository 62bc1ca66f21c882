"""Entries' declared workloads agree with the protocols' own cost declarations."""

from __future__ import annotations

import pytest

from protocols.field import prime_field
from protocols.secagg import declared_cost
from sim.experiments.secagg import secagg_workload


@pytest.mark.parametrize("prime", [2**61 - 1, 2**127 - 1, 101])
@pytest.mark.parametrize(("n_parties", "graph", "degree"), [
    (2, "complete", 0), (5, "complete", 0), (9, "complete", 3),
    (5, "harary", 1), (7, "harary", 2), (8, "harary", 3), (9, "harary", 4), (6, "harary", 5),
])
def test_secagg_workload_sums_the_declared_cost_of_every_party(prime, n_parties, graph, degree):
    """The closed form the estimate uses equals :func:`protocols.secagg.declared_cost` summed
    over the sites and the aggregator, step by step."""
    length, calls = 7, 3
    steps = [step for party in declared_cost(n_parties, length, prime_field(prime), graph,
                                             degree).values() for step in party]
    work = secagg_workload(n_parties, length, prime, graph, degree, calls=calls)
    assert work.messages == calls * sum(step.messages for step in steps)
    assert work.elements == calls * sum(step.elements for step in steps)
