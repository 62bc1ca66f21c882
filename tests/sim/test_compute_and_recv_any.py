"""The driver's ``Compute`` (local work on the simulated clock) and ``RecvAny`` effects.

Expected times are closed forms of the link model: a message of b bytes on one link of
latency L and bandwidth B arrives b·8/B + L seconds after it is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pytest

from parties.party import Party
from protocols.context import PartyContext
from protocols.effects import Call, Compute, Recv, RecvAny, Send
from protocols.errors import InputError, ProtocolAbort
from sim.network import Network
from sim.simulation import Simulation

Program = Callable[[PartyContext], Generator[Any, Any, Any]]
LATENCY_MS, MBPS = 2.0, 8.0  # 1 byte per microsecond


def run(programs: list[Program]):
    sim = Simulation(Network.build(len(programs), latency_ms=LATENCY_MS, bandwidth_mbps=MBPS),
                     keys="none", sealing=False, seed=0)
    return sim.run([Party(i, p) for i, p in enumerate(programs)])


def transit_s(n_bytes: int) -> float:
    return n_bytes * 8 / (MBPS * 1e6) + LATENCY_MS / 1e3


def test_compute_advances_the_party_clock_and_returns_it() -> None:
    clocks: dict[str, float] = {}

    def p0(ctx: PartyContext):
        clocks["start"] = yield Compute(0.0)
        clocks["after"] = yield Compute(0.25)
        yield Send(1, np.zeros(3), Call("t", 0), "x")
        clocks["again"] = yield Compute(0.5)

    def p1(ctx: PartyContext):
        yield Recv(0, Call("t", 0), "x")
        clocks["received"] = yield Compute(0.0)

    result = run([p0, p1])
    row = next(iter(result.ledger))
    assert clocks["start"] == 0.0 and clocks["after"] == 0.25
    assert row.sent_s == 0.25  # the send happens after the computation
    assert clocks["received"] == pytest.approx(0.25 + transit_s(row.bytes))
    assert clocks["again"] == 0.75
    assert result.simulated_s == 0.75


@pytest.mark.parametrize("seconds", [-1.0, float("nan"), float("inf"), "1", True])
def test_compute_refuses_a_bad_duration(seconds: Any) -> None:
    with pytest.raises(InputError, match="seconds must be a finite number"):
        Compute(seconds)


def test_recv_any_takes_messages_in_order_of_arrival() -> None:
    """Clients that finish their work at different times are served as they arrive."""
    order: list[tuple[int, float]] = []

    def server(ctx: PartyContext):
        pending = {1: 0, 2: 0}
        while pending:
            keys = tuple((c, Call("job", i), "result") for c, i in sorted(pending.items()))
            index, payload = yield RecvAny(keys)
            client = keys[index][0]
            order.append((client, float(payload[0])))
            clock = yield Compute(0.0)
            assert float(payload[0]) == client * 10 + pending[client]
            pending[client] += 1
            if pending[client] == 2:
                del pending[client]
            del clock

    def client(delay: float) -> Program:
        def program(ctx: PartyContext):
            for i in range(2):
                yield Compute(delay)
                yield Send(0, np.array([ctx.party * 10.0 + i]), Call("job", i), "result")

        return program

    run([server, client(0.3), client(0.1)])
    # client 2 sends at 0.1 and 0.2, client 1 at 0.3 and 0.6
    assert order == [(2, 20.0), (2, 21.0), (1, 10.0), (1, 11.0)]


def test_recv_any_prefers_the_first_listed_among_messages_already_there() -> None:
    got: list[int] = []

    def server(ctx: PartyContext):
        yield Compute(1.0)  # both messages are in the mailbox by now
        keys = ((2, Call("m", 0), "x"), (1, Call("m", 0), "x"))
        for _ in range(2):
            index, _payload = yield RecvAny(keys if not got else keys[1:])
            got.append(keys[index][0] if not got else keys[1:][index][0])

    def sender(ctx: PartyContext):
        yield Send(0, np.array([1.0]), Call("m", 0), "x")

    run([server, sender, sender])
    assert got == [2, 1]


def test_recv_any_that_nobody_answers_is_a_deadlock_not_a_hang() -> None:
    def waiter(ctx: PartyContext):
        yield RecvAny(((1, Call("m", 0), "x"), (1, Call("m", 0), "y")))

    def idle(ctx: PartyContext):
        yield Compute(0.1)

    with pytest.raises(ProtocolAbort, match="deadlock"):
        run([waiter, idle])
