"""Tests of :mod:`parties.view`: a party's view and a coalition's union of views.

The views come from real runs of SecureSum on the simulator; the expectations are read off the
ledger (one row per message) and the inputs, never off the view code itself.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from parties.party import site_parties
from parties.view import Coalition, Message, View
from protocols.effects import Call
from protocols.errors import InputError
from protocols.field import MERSENNE61, prime_field
from protocols.secure_sum import VARIANTS, secure_sum_field
from sim.network import Network
from sim.simulation import Simulation

F61 = prime_field(MERSENNE61)


def run(variant: str, n_parties: int = 4, d: int = 3, record_draws: bool = True):
    sim = Simulation(Network.build(n_parties), prime=MERSENNE61, frac_bits=0, sealing=False,
                     keys="preshared", record_draws=record_draws)
    rng = np.random.default_rng(n_parties)
    inputs = [F61.random(rng, d) for _ in range(n_parties)]
    parties = site_parties(lambda ctx, x: secure_sum_field(ctx, x, variant),
                           [{"x": x} for x in inputs])
    return inputs, sim.run(parties, seed=9)


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_ledger_row_is_received_in_exactly_one_view(variant: str) -> None:
    _, result = run(variant)
    sent = Counter((r.sender, r.receiver, r.call, r.step) for r in result.ledger)
    got = Counter((m.sender, pid, m.call, m.step)
                  for pid, view in result.views.items() for m in view.received)
    assert got == sent
    assert all(isinstance(m, Message) and m.protocol == "secure_sum"
               for v in result.views.values() for m in v.received)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_view_holds_inputs_outputs_and_draws(variant: str) -> None:
    inputs, result = run(variant)
    total = [sum(int(x[i]) for x in inputs) % MERSENNE61 for i in range(3)]
    for pid, view in result.views.items():
        assert view.party == pid and view.role == "site"
        assert np.array_equal(view.inputs["x"], inputs[pid])
        ((call, label, value),) = view.protocol_inputs
        assert call == Call("secure_sum", 0) and label == "x"
        assert np.array_equal(value, inputs[pid])
        ((call, label, value),) = view.outputs
        assert label == "sum" and [int(v) for v in value] == total
        # the party's own derived seeds, never the run seed (tests/isolation)
        assert {"rng", "masks", "pair_mask_seeds"} <= set(view.seeds)
        assert 9 not in view.seeds.values()
        n_draws = 1 if variant == "explicit" else 3  # one private stream, or one per peer
        assert len(view.draws) == n_draws
        # explicit: (M−1)·d private elements; prg: d per pair; prg_two_share: 2d per pair
        assert sum(np.size(v) for _, v in view.draws) == 3 * 3 * (
            2 if variant == "prg_two_share" else 1)
    _, quiet = run(variant, record_draws=False)
    assert all(not v.draws for v in quiet.views.values())


def test_received_from_selects_one_sender() -> None:
    _, result = run("explicit")
    view = result.views[2]
    for sender in (0, 1, 3):
        msgs = view.received_from(sender)
        assert [m.step for m in msgs] == ["share", "column_sum"]
        assert all(m.sender == sender for m in msgs)
    assert view.received_from(2) == []


def test_coalition_is_the_union_of_its_members_views() -> None:
    _, result = run("prg")
    coalition = Coalition.of([3, 1], result.views)
    assert coalition.members == (1, 3)
    assert set(coalition.views) == {1, 3}
    assert coalition.received() == [(m, msg) for m in (1, 3) for msg in result.views[m].received]
    assert coalition.inputs() == {m: result.views[m].inputs for m in (1, 3)}
    assert coalition.outputs() == {m: result.views[m].outputs for m in (1, 3)}
    draws = coalition.draws()
    assert [m for m, _, _ in draws] == [1, 1, 1, 3, 3, 3]
    # the pair {1, 3} is drawn by both members, under one key, with the same elements
    shared = [v for _, key, v in draws if key[:3] == ("pair", 1, 3)]
    assert len(shared) == 2 and np.array_equal(shared[0], shared[1])
    assert result.coalition([1, 3]).members == (1, 3)


def test_a_coalition_must_name_parties_of_the_run() -> None:
    _, result = run("prg", n_parties=3)
    with pytest.raises(InputError, match=r"part(y|ies) \[5\]"):
        Coalition.of([0, 5], result.views)
    with pytest.raises(InputError, match="5"):
        result.coalition([0, 5])


def test_an_empty_view() -> None:
    coalition = Coalition.of([0], {0: View(party=0, role="site")})
    assert coalition.received() == [] and coalition.draws() == []
    assert coalition.inputs() == {0: {}} and coalition.outputs() == {0: []}
