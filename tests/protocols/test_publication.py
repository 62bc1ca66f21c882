"""Publication (:mod:`protocols.publication`): calls whose messages carry published values.

DP robust NMF's exchange with the analyst is declared so (the released statistics, N, W_t).
Here a SecureSum whose sum party 0 then publishes to party 1: honest, ``private``; planted,
party 0 appends its raw input to the published message (``leak``, property ``size``) or sends
the sum offset by its input while declaring the sum (``leak`` at the message); an attack
recovers x_0 from party 1's view. (DP robust NMF's multi-curator run, judged by SecureSum and
the release declaration, is walked by ``tests/sim/test_every_scenario_audits.py``.)
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pytest

from parties.party import site_parties
from protocols.effects import Output, Recv, Send
from protocols.field import prime_field
from protocols.publication import Publication, PublicationSimulator, label
from protocols.registry import declare_protocol
from protocols.secure_sum import secure_sum_field
from sim.network import Network
from sim.privacy import audit
from sim.simulation import Simulation

P = 2**61 - 1
F = prime_field(P)
RELEASE = declare_protocol("release", functionality=Publication(),
                           simulator=PublicationSimulator("release"))
TARGET = ("secure_sum", RELEASE)


def _inputs() -> list[np.ndarray]:
    return [F.elements([3, 5]), F.elements([7, 11]), F.elements([13, 17])]


def _publish(how: str):
    def program(ctx: Any, x: np.ndarray) -> Generator[Any, Any, Any]:
        total = yield from secure_sum_field(ctx, x, "prg")
        call = ctx.new_call("release")
        if ctx.party == 0:
            yield Output(label("sum"), total, call)
            sent = np.asarray(total)
            if how == "appended":  # BUG: the raw input rides along
                sent = np.concatenate([sent, np.asarray(x)])
            elif how == "offset":  # BUG: the message is not the published value
                sent = ctx.field.add(sent, np.asarray(x))
            yield Send(1, sent, call, "sum")
        elif ctx.party == 1:
            got = yield Recv(0, call, "sum")
            yield Output(label("sum"), np.asarray(got)[:2] if how != "offset" else total,
                         call)
        return total
    return program


@pytest.mark.parametrize("coalition", [(1,), (0,), (1, 2)])
def test_an_honest_publication_is_private(coalition) -> None:
    result = audit(_publish("honest"), _inputs(), coalition, prime=P, method="simulation",
                   trials=200, seed=5, protocol=TARGET)
    assert result.verdict == "private", result.details


@pytest.mark.parametrize(("how", "prop"), [("appended", "size"), ("offset", None)])
def test_a_message_beyond_the_published_value_is_a_leak(how: str, prop: str | None) -> None:
    inputs = _inputs()
    result = audit(_publish(how), inputs, (1,), prime=P, method="simulation", trials=200,
                   seed=5, protocol=TARGET)
    assert result.verdict == "leak", result.details
    assert result.call == 2 and result.message == "release#2.sum from 0 to 1"
    assert result.details.get("property") == prop
    # the attack: party 1 recovers x_0 from the message and the published sum
    run = Simulation(Network.build(3), seed=1, sealing=False).run(
        site_parties(_publish(how), [{"x": x} for x in inputs]))
    view = run.views[1]
    got = next(np.asarray(m.payload) for m in view.received if m.protocol == "release")
    total = F.sum_arrays(inputs)
    recovered = got[2:] if how == "appended" else F.sub(got, total)
    assert [int(v) for v in recovered] == [int(v) for v in inputs[0]]
