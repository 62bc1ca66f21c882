"""All-Gather's declaration (:mod:`protocols.all_gather`): functionality, simulator, audits.

The ideal output is checked against ``np.concatenate`` of the blocks; an honest All-Gather is
``private`` relative to that functionality, with ``details["reveals"]`` naming what it reveals
(every block); planted All-Gathers that send more than the declared block are ``leak`` at the
call and message, and a small attack reads the extra rows back from the coalition's view.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pytest

from parties.party import site_parties
from protocols.all_gather import ROWS, all_gather, functionality
from protocols.effects import Call, Input, Output, RecvEach, SendEach
from protocols.field import prime_field
from protocols.functionality import CallInstance
from protocols.registry import REGISTRY
from sim.network import Network
from sim.privacy import audit
from sim.simulation import Simulation

P = 2**61 - 1
ROWS_PER_PARTY = (2, 3, 1)


def _blocks(seed: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(r, 2)) for r in ROWS_PER_PARTY]


def honest(ctx: Any, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    return (yield from all_gather(ctx, x, output="V"))


def _gather_first_row(ctx: Any, x: np.ndarray, extra_step: str | None
                      ) -> Generator[Any, Any, np.ndarray]:
    """An All-Gather of the party's first row whose party 1 sends more than that row."""
    call = ctx.new_call("all_gather")
    block = np.asarray(x[:1], dtype=np.float64)
    yield Input("V", block, call)
    sent = np.asarray(x, dtype=np.float64) if ctx.party == 1 and extra_step is None else block
    yield SendEach(dict.fromkeys(ctx.peers, sent), call, "block")
    if ctx.party == 1 and extra_step is not None:  # BUG: the other rows on the side
        yield SendEach(dict.fromkeys(ctx.peers, np.asarray(x[1:], dtype=np.float64)), call,
                       extra_step)
    got = yield RecvEach(ctx.peers, call, "block")
    if extra_step is not None and ctx.party != 1:
        yield RecvEach((1,), call, extra_step)
    parts = [block if p == ctx.party else np.asarray(got[p])[:1] for p in ctx.parties]
    gathered = np.concatenate(parts)
    yield Output("V", gathered, call)
    yield Output("V" + ROWS, np.ones(len(parts), dtype=np.int64), call)
    return gathered


def whole_block(ctx: Any, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Party 1 sends every row of x as its ``block``; only the first is gathered."""
    return (yield from _gather_first_row(ctx, x, None))


def rows_on_the_side(ctx: Any, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Party 1 sends its first row as ``block`` and the others as an undeclared ``rest``."""
    return (yield from _gather_first_row(ctx, x, "rest"))


def test_the_functionality_is_the_stack_and_its_partition() -> None:
    blocks = _blocks()
    inst = CallInstance(Call("all_gather", 1), prime_field(P), (0, 1, 2),
                        inputs={p: (("V", b),) for p, b in enumerate(blocks)},
                        outputs={0: (("V", None), ("V" + ROWS, None))})
    ideal = functionality(inst)
    np.testing.assert_array_equal(ideal["V"].value, np.concatenate(blocks))
    assert ideal["V" + ROWS].value.tolist() == list(ROWS_PER_PARTY)
    assert REGISTRY["all_gather"].functionality is functionality


def test_a_run_declares_the_partition_every_party_agrees_on() -> None:
    blocks = _blocks()
    sim = Simulation(Network.build(3), seed=2, keys="preshared", sealing=False)
    result = sim.run(site_parties(honest, [{"x": b} for b in blocks]))
    for party in result.sites:
        outs = {lab: v for _, lab, v in result.views[party].outputs}
        np.testing.assert_array_equal(outs["V"], np.concatenate(blocks))
        assert outs["V" + ROWS].tolist() == list(ROWS_PER_PARTY)


@pytest.mark.parametrize("coalition", [(0,), (1,), (0, 2)])
def test_an_honest_all_gather_is_private_relative_to_its_functionality(coalition) -> None:
    result = audit(honest, _blocks(), coalition, prime=P, method="simulation", trials=50,
                   seed=1, protocol="all_gather")
    assert result.verdict == "private", result.details
    assert "every party's block" in result.details["reveals"]["all_gather#1"]


@pytest.mark.parametrize(("program", "message"), [
    (whole_block, "all_gather#1.block from 1 to 0"),
    (rows_on_the_side, "all_gather#1.rest from 1 to 0"),
])
def test_an_all_gather_that_sends_more_than_its_block_is_a_leak(program, message) -> None:
    blocks = _blocks()
    # the parties' declared blocks are their first rows (their Input records); the other
    # rows are private: given as parties, the audit judges the call on the recorded inputs
    parties = site_parties(program, [{"x": b} for b in blocks])
    result = audit(parties, None, (0,), prime=P, method="simulation", trials=50, seed=1,
                   protocol="all_gather")
    assert result.verdict == "leak" and result.call == 1, result.details
    assert result.message == message
    # the attack: party 0 reads party 1's second row from what it received
    sim = Simulation(Network.build(3), seed=2, keys="preshared", sealing=False)
    run = sim.run(site_parties(program, [{"x": b} for b in blocks]))
    got = np.concatenate([np.ravel(m.payload) for m in run.views[0].received if m.sender == 1])
    np.testing.assert_array_equal(got[-blocks[1][1:].size:], np.ravel(blocks[1][1:]))
