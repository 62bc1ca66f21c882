"""An audit names a leak by the call label and number the run's own ledger and views use.

A normal run's key agreement is call 0, so the program's first call is call 1 of its ledger
and views. The audits' runs number their calls the same way
(:func:`parties.audit.numbering.numbered_as_run`), so the location a verdict names — its
``call`` and the ``protocol#call.step from s to r`` of its message — is where the same
message stands in the run the user made. Here the planted leak (party 1 also hands party 0 a
copy of its input, inside the second of three SecureSum calls) is located by each method, and
the location is compared with the one read off party 0's view of a normal run of the same
program — the ledger and the view, not the audit, say where the message is. A small attack
on that view recovers party 1's input.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import planted_leaks as pl
import pytest

from parties.audit.numbering import SETUP_CALLS, numbered_as_run, setup_calls
from parties.audit.randomness import ConditionedRandomness
from parties.party import site_parties
from protocols.context import PartyContext
from protocols.effects import RecvEach, SendEach
from protocols.errors import InputError
from protocols.field import prime_field
from protocols.secure_sum import secure_sum_field
from protocols.sharing import pair_shares
from sim.network import Network
from sim.privacy import SimPyRunner, audit
from sim.simulation import Simulation


def _leaky_sum(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """SecureSum (prg) in which party 1 also sends x̂_1 to party 0 ("check")."""
    call = yield from pl._start(ctx, x)
    if ctx.party == 1:
        yield SendEach({0: x}, call, "check")  # BUG: a leftover debug message
    elif ctx.party == 0:
        yield RecvEach((1,), call, "check")
    streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * len(x))
    pairs = [pair_shares(s, ctx.party, p, len(x))
             for p, s in zip(ctx.peers, streams, strict=True)]
    return (yield from pl._exchange_column_sums(ctx, call, pl._prg_colsum(ctx.field, x, pairs)))


def three_sums(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
    """Three SecureSum calls; the second carries the planted leak."""
    yield from secure_sum_field(ctx, x, "prg")
    yield from _leaky_sum(ctx, x)
    return (yield from secure_sum_field(ctx, x, "prg"))


def _run_location(prime: int, inputs: list[np.ndarray]) -> tuple[str, int, Any]:
    """(protocol, call, payload) of the planted message in party 0's view of a normal run."""
    run = Simulation(Network.build(len(inputs)), prime=prime, seed=3, sealing=False).run(
        site_parties(three_sums, [{"x": v} for v in inputs]))
    (msg,) = [m for m in run.views[0].received if m.step == "check"]
    (row,) = [r for r in run.ledger if r.step == "check"]
    assert (row.protocol, row.call) == (msg.protocol, msg.call)  # the ledger agrees
    first = min(r.call for r in run.ledger if r.protocol == "key_agreement")
    assert first == 0 and msg.call == 2  # key agreement, then calls 1, 2, 3
    return msg.protocol, msg.call, msg.payload


@pytest.mark.parametrize(("method", "prime", "kw"), [
    ("simulation", 2**61 - 1, {"trials": 40}),
    ("statistical", 2**61 - 1, {"trials": 24, "pairs": 2}),
    ("linear", 2**61 - 1, {}),
    ("exact", 5, {"max_runs": 200_000}),
])
def test_each_method_names_the_leak_where_the_run_has_it(method: str, prime: int,
                                                          kw: dict) -> None:
    field = prime_field(prime)
    inputs = [field.elements([1 + m]) for m in range(3)]
    protocol, call, payload = _run_location(prime, inputs)
    verdict = audit(three_sums, inputs, [0], prime=prime, method=method, **kw)
    assert verdict.leaks, verdict.details
    assert verdict.call == call
    assert verdict.message == f"{protocol}#{call}.check from 1 to 0"
    # the attack: party 0 reads party 1's input off that message of its view
    assert [int(v) for v in np.ravel(payload)] == [int(v) for v in inputs[1]]


def test_an_honest_run_stays_private_with_the_same_numbering() -> None:
    field = prime_field(2**61 - 1)
    inputs = [field.elements([1 + m, 7]) for m in range(3)]

    def honest(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, np.ndarray]:
        yield from secure_sum_field(ctx, x, "prg")
        return (yield from secure_sum_field(ctx, x, "prg"))

    verdict = audit(honest, inputs, [0], prime="2^61-1", trials=60)
    assert verdict.verdict == "private" and verdict.details["calls"] == 2
    chosen = audit(honest, inputs, [0], prime="2^61-1", trials=60, calls=[2])
    assert chosen.verdict == "private" and chosen.details["calls"] == 1
    with pytest.raises(InputError, match="not in the run"):
        audit(honest, inputs, [0], prime="2^61-1", trials=60, calls=[0])  # key agreement's


def test_the_runner_numbers_as_the_key_setup_it_stands_for() -> None:
    field = prime_field(2**61 - 1)
    inputs = [field.elements([1 + m]) for m in range(3)]
    parties = site_parties(three_sums, [{"x": v} for v in inputs])
    for keys in ("x25519", "preshared"):
        run = Simulation(Network.build(3), seed=1, keys=keys).run(parties)
        in_run = sorted({m.call for m in run.views[0].received if m.protocol == "secure_sum"})
        views = SimPyRunner(field.p, keys=keys)(parties, ConditionedRandomness(
            (0, 1, 2), (0,), 0, 0))
        in_audit = sorted({m.call for m in views[0].received if m.protocol == "secure_sum"})
        assert in_audit == in_run == [c + SETUP_CALLS[keys] for c in (0, 1, 2)], keys
    assert numbered_as_run(parties, "none") == list(parties)
    with pytest.raises(InputError, match="keys = 'rsa' is unknown"):
        setup_calls("rsa")
