"""The public coin (:mod:`protocols.public_coin`): DSANLS's ``sketch_seed`` is audited.

The honest seed agreement followed by a SecureSum is ``private`` for a coalition with the root
and one without it; planted agreements that send more than the seed (a root that appends its
raw input) or something other than the declared seed (a seed message offset by the root's
input) are ``leak`` at call 1, and an attack recovers the root's input from the coalition's
view (compared with the input itself, numpy).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pytest

from algorithms.nmf.dsanls.sketches import shared_seed
from parties.party import site_parties
from protocols.effects import Call, Output, Recv, SendEach
from protocols.field import prime_field
from protocols.functionality import CallInstance, beyond
from protocols.public_coin import SKETCH_SEED, STEP, PublicCoin
from protocols.secure_sum import secure_sum_field
from sim.network import Network
from sim.privacy import audit
from sim.simulation import Simulation

P = 2**61 - 1
F = prime_field(P)
TARGET = ("secure_sum", SKETCH_SEED)


def _inputs() -> list[np.ndarray]:
    return [F.elements([3, 5]), F.elements([7, 11]), F.elements([13, 17])]


def honest(ctx: Any, x: np.ndarray) -> Generator[Any, Any, Any]:
    yield from shared_seed(ctx)
    return (yield from secure_sum_field(ctx, x, "prg"))


def _appended_seed(ctx: Any, x: np.ndarray) -> Generator[Any, Any, int]:
    """The root sends [s, x_0...]: its raw input rides along with the seed."""
    call = ctx.new_call(SKETCH_SEED)
    if ctx.party == 0:
        seed = int(ctx.rng.integers(0, 2**40))
        payload = np.array([seed, *(int(v) for v in x)], dtype=np.int64)  # BUG
        yield SendEach(dict.fromkeys(ctx.peers, payload), call, STEP)
    else:
        seed = int(np.asarray((yield Recv(0, call, STEP)))[0])
    yield Output(SKETCH_SEED, seed, call)
    return seed


def appended(ctx: Any, x: np.ndarray) -> Generator[Any, Any, Any]:
    yield from _appended_seed(ctx, x)
    return (yield from secure_sum_field(ctx, x, "prg"))


def offset(ctx: Any, x: np.ndarray) -> Generator[Any, Any, Any]:
    yield from _seed_offset(ctx, x)
    return (yield from secure_sum_field(ctx, x, "prg"))


def _seed_offset(ctx: Any, x: np.ndarray) -> Generator[Any, Any, int]:
    """Every party outputs the root's seed s; the message carries s + x_0[0]."""
    call = ctx.new_call(SKETCH_SEED)
    if ctx.party == 0:
        seed = int(ctx.rng.integers(0, 2**40))
        wrong = np.array([seed + int(x[0])], dtype=np.int64)  # BUG: offset by x_0[0]
        yield SendEach(dict.fromkeys(ctx.peers, wrong), call, STEP)
        yield SendEach(dict.fromkeys(ctx.peers, np.array([seed], dtype=np.int64)), call, "ack")
    else:
        yield Recv(0, call, STEP)
        seed = int(np.asarray((yield Recv(0, call, "ack")))[0])
    yield Output(SKETCH_SEED, seed, call)
    return seed


def test_the_functionality_gives_every_party_the_roots_seed() -> None:
    inst = CallInstance(Call(SKETCH_SEED, 1), F, (0, 1, 2),
                        outputs={0: ((SKETCH_SEED, 42),), 1: ((SKETCH_SEED, 42),),
                                 2: ((SKETCH_SEED, 41),)},
                        senders={(1, STEP): (0,), (2, STEP): (0,)})
    ideal = PublicCoin()(inst)
    assert int(ideal[SKETCH_SEED].value) == 42
    assert beyond(ideal, inst.outputs[1]) is None
    assert beyond(ideal, inst.outputs[2]) is not None  # a party that declares another seed


@pytest.mark.parametrize("coalition", [(0,), (1,), (1, 2)])
def test_an_honest_seed_agreement_is_private(coalition) -> None:
    result = audit(honest, _inputs(), coalition, prime=P, method="simulation", trials=200,
                   seed=4, protocol=TARGET)
    assert result.verdict == "private", result.details
    assert result.power  # the stated power of the comparison


@pytest.mark.parametrize(("program", "message"), [
    (appended, "sketch_seed#1.seed from 0 to 1"),
    (offset, "sketch_seed#1.seed from 0 to 1"),
])
def test_a_seed_message_that_carries_the_roots_input_is_a_leak(program, message) -> None:
    inputs = _inputs()
    result = audit(program, inputs, (1,), prime=P, method="simulation", trials=200, seed=4,
                   protocol=TARGET)
    assert result.verdict == "leak" and result.call == 1, result.details
    assert result.message is not None and result.message.startswith(message)
    # the attack: party 1 recovers x_0[0] from its view of the seed agreement
    run = Simulation(Network.build(3), seed=2, sealing=False).run(
        site_parties(program, [{"x": x} for x in inputs]))
    view = run.views[1]
    got = [np.ravel(m.payload) for m in view.received if m.protocol == SKETCH_SEED]
    seed = next(int(v) for c, lab, v in view.outputs if lab == SKETCH_SEED)
    recovered = int(got[0][1]) if program is appended else int(got[0][0]) - seed
    assert recovered == int(inputs[0][0])
