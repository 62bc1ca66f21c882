"""All-Gather (MPI's Allgatherv in the clear), the collective of seed 004's baselines.

Expected arrays come from ``np.concatenate`` of the inputs; message counts from the closed form
(N − 1 messages and (N − 1)·b_r elements per party per call, :func:`all_gather_cost`).
"""

from __future__ import annotations

import numpy as np
import pytest

from parties.party import site_parties
from protocols.all_gather import all_gather, all_gather_cost
from protocols.errors import InputError, ProtocolAbort
from sim.network import Network
from sim.simulation import Simulation


def run(blocks: list[np.ndarray], column_blocks: tuple[str, ...] = ()):
    sim = Simulation(Network.build(len(blocks)), seed=2, keys="preshared", sealing=False)
    return sim.run(site_parties(lambda ctx, x: all_gather(ctx, x, output="V"),
                                [{"x": b} for b in blocks], column_blocks=column_blocks))


@pytest.mark.parametrize("rows", [(1, 1), (3, 1, 2), (2, 5, 1, 4)])
def test_every_party_gets_the_blocks_stacked_in_party_order(rows) -> None:
    rng = np.random.default_rng(len(rows))
    blocks = [rng.normal(size=(r, 3)) for r in rows]
    result = run(blocks)
    expected = np.concatenate(blocks)
    for party in result.sites:
        np.testing.assert_array_equal(result.outputs[party], expected)  # bitwise: no arithmetic
    N = len(rows)
    for party, r in zip(result.sites, rows, strict=True):
        mine = [x for x in result.ledger if x.sender == party]
        cost = all_gather_cost(N, r * 3)
        assert len(mine) == cost.messages_sent == N - 1
        assert sum(x.elements for x in mine) == cost.elements_sent == (N - 1) * r * 3


def test_blocks_of_different_widths_are_refused() -> None:
    with pytest.raises((InputError, ProtocolAbort), match="trailing dimensions"):
        run([np.ones((2, 3)), np.ones((2, 4))], column_blocks=("x",))
