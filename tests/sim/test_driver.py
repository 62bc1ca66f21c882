"""Tests of :mod:`sim.drivers.simpy` through small hand-written party programs.

Rounds follow DESIGN.md: a message's round is one more than the highest round its sender had
received before sending. Failures never hang a run: every test below simply returns (no
timeouts are involved), with a :class:`ProtocolAbort` where a party failed or deadlocked.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import pytest

from parties.party import Party, site_parties
from protocols import wire
from protocols.context import PartyContext
from protocols.crypto.channel import SealedChannel, encode_header
from protocols.crypto.sealing import SEAL_OVERHEAD_BYTES, open_message, seal_message
from protocols.effects import Call, Input, Output, Recv, RecvEach, Send, SendEach
from protocols.errors import (
    AuthenticationError,
    FieldOverflowError,
    InputError,
    MpcsimError,
    ProtocolAbort,
)
from protocols.secure_sum import secure_sum
from sim.drivers.envelopes import RunChannels
from sim.faults import parse_faults
from sim.network import Network
from sim.simulation import Simulation, preshared_keys

Program = Callable[[PartyContext], Generator[Any, Any, Any]]


def plain(n: int, **kwargs: Any) -> Simulation:
    """No keys, no sealing: message bytes are exactly the wire encoding."""
    return Simulation(Network.build(n, **kwargs), keys="none", sealing=False, seed=0)


def run(programs: list[Program], sim: Simulation | None = None):
    sim = sim if sim is not None else plain(len(programs))
    return sim.run([Party(i, p) for i, p in enumerate(programs)])


def value(v: int) -> np.ndarray:
    return np.array([v], dtype=np.uint64)


# -- rounds ----------------------------------------------------------------------------------


def test_round_is_one_more_than_the_highest_round_received_before_sending() -> None:
    def p0(ctx: PartyContext):
        call = ctx.new_call("chain")
        yield Send(1, value(1), call, "a")  # round 1
        yield Send(2, value(2), call, "b")  # round 1
        yield Recv(2, call, "c")  # round 3
        yield Send(1, value(3), call, "d")  # round 4

    def p1(ctx: PartyContext):
        call = ctx.new_call("chain")
        yield Recv(0, call, "a")  # round 1
        yield Send(2, value(4), call, "e")  # round 2
        yield Recv(0, call, "d")
        yield Recv(2, call, "early")

    def p2(ctx: PartyContext):
        call = ctx.new_call("chain")
        yield Send(1, value(5), call, "early")  # nothing received yet: round 1
        yield Recv(1, call, "e")  # round 2
        yield Recv(0, call, "b")  # round 1: the maximum stays 2
        yield Send(0, value(6), call, "c")  # round 3

    result = run([p0, p1, p2])
    rounds = {(r.sender, r.receiver, r.step): r.round for r in result.ledger}
    assert rounds == {
        (0, 1, "a"): 1, (0, 2, "b"): 1, (2, 1, "early"): 1, (1, 2, "e"): 2,
        (2, 0, "c"): 3, (0, 1, "d"): 4,
    }
    assert result.ledger.rounds() == 4
    # views carry the same rounds as the ledger
    for party, view in result.views.items():
        for msg in view.received:
            assert rounds[(msg.sender, party, msg.step)] == msg.round


# -- receiving in any order ---------------------------------------------------------------


def test_recv_matches_sender_and_step_in_any_arrival_order() -> None:
    # party 1's link to 0 is slow, so 2's message arrives first; 0 asks for 1's first
    links = [{"a": 0, "b": 1, "latency_ms": 10.0}, {"a": 0, "b": 2, "latency_ms": 1.0},
             {"a": 1, "b": 2, "latency_ms": 10.0}]
    sim = Simulation(Network.build(3, links=links), keys="none", sealing=False, seed=0)

    def p0(ctx: PartyContext):
        call = ctx.new_call("order")
        from_1 = yield Recv(1, call, "x")
        both = yield RecvEach((2, 1), call, "y")  # senders in either order
        from_2 = yield Recv(2, call, "x")
        return [int(from_1[0]), int(both[2][0]), int(both[1][0]), int(from_2[0])]

    def other(me: int):
        def program(ctx: PartyContext):
            call = ctx.new_call("order")
            yield Send(0, value(10 * me + 2), call, "y")  # 'y' before 'x'
            yield Send(0, value(10 * me + 1), call, "x")

        return program

    result = run([p0, other(1), other(2)], sim)
    assert result.outputs[0] == [11, 22, 12, 21]
    arrivals = sorted(result.ledger, key=lambda r: r.delivered_s)
    assert [r.sender for r in arrivals][:2] == [2, 2]  # 2's messages did arrive first
    # the view lists messages in the order the party consumed them
    assert [(m.sender, m.step) for m in result.views[0].received] == [
        (1, "x"), (2, "y"), (1, "y"), (2, "x")]


def test_two_messages_with_the_same_tag_are_received_in_sending_order() -> None:
    def p0(ctx: PartyContext):
        call = ctx.new_call("dup")
        yield Send(1, value(1), call, "x")
        yield Send(1, value(2), call, "x")

    def p1(ctx: PartyContext):
        call = ctx.new_call("dup")
        a = yield Recv(0, call, "x")
        b = yield Recv(0, call, "x")
        return [int(a[0]), int(b[0])]

    assert run([p0, p1]).outputs[1] == [1, 2]


def test_input_and_output_effects_are_recorded_in_the_view() -> None:
    def p(ctx: PartyContext):
        call = ctx.new_call("io")
        yield Input("x", 5, call)
        yield Output("y", 7, call)
        yield Output("z", 8)
        return "done"

    result = run([p, p])
    view = result.views[1]
    assert [(c.protocol if c else None, label, v) for c, label, v in view.protocol_inputs] == [
        ("io", "x", 5)]
    assert [(label, v) for _, label, v in view.outputs] == [("y", 7), ("z", 8)]
    assert result.outputs == {0: "done", 1: "done"}
    assert len(result.ledger) == 0


# -- failures: abort, deadlock, unknown parties -----------------------------------------


def recording(seen: dict[int, ProtocolAbort], program: Program) -> Program:
    """Wrap a program so that it records the abort thrown into it, then passes it on."""

    def wrapped(ctx: PartyContext):
        gen = program(ctx)
        reply: Any = None
        while True:
            try:
                effect = gen.send(reply)
            except StopIteration as stop:
                return stop.value
            try:
                reply = yield effect
            except ProtocolAbort as abort:
                seen[ctx.party] = abort
                raise

    return wrapped


def test_a_party_that_raises_aborts_the_run_and_releases_every_waiting_peer() -> None:
    seen: dict[int, ProtocolAbort] = {}

    def failing(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Send(1, value(1), call, "warmup")  # round 1
        got = yield Recv(1, call, "warmup")  # round 1 received
        raise ValueError(f"bad value {int(got[0])}")

    def waiting(me: int):
        def program(ctx: PartyContext):
            call = ctx.new_call("t")
            if me == 1:
                yield Send(0, value(9), call, "warmup")
                yield Recv(0, call, "warmup")
            yield Recv(0, call, "never")  # blocks until the abort

        return program

    programs = [failing] + [recording(seen, waiting(m)) for m in (1, 2, 3)]
    with pytest.raises(ProtocolAbort) as info:
        run(programs)
    abort = info.value
    assert (abort.party, abort.round) == (0, 1)
    assert abort.reason == "ValueError: bad value 9"
    assert isinstance(abort.__cause__, ValueError)
    assert abort.call == "t#0"
    assert str(abort) == "party 0 aborted in round 1 in call t#0: ValueError: bad value 9"
    assert sorted(seen) == [1, 2, 3]
    # peers are told who aborted in which call, nothing more: the reason (here a value the
    # failing party received) could be private
    assert {(a.party, a.round, a.reason, a.call) for a in seen.values()} == {
        (0, None, "", "t#0")}
    assert {str(a) for a in seen.values()} == {"party 0 aborted in call t#0"}
    assert all(a.__cause__ is None and a.__context__ is None for a in seen.values())
    assert len({id(a) for a in seen.values()}) == 3  # each peer its own notice


def test_a_peer_that_waits_only_after_the_failure_is_told_too() -> None:
    seen: dict[int, ProtocolAbort] = {}

    def failing(ctx: PartyContext):
        ctx.new_call("t")
        raise RuntimeError("at once")
        yield  # pragma: no cover

    def late(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Send(2, value(1), call, "x")  # busy first, then waits on the failed party
        yield Recv(0, call, "x")

    def sink(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Recv(1, call, "x")
        yield Recv(0, call, "x")

    with pytest.raises(ProtocolAbort) as info:
        run([failing, recording(seen, late), recording(seen, sink)])
    assert (info.value.party, info.value.round) == (0, 0)
    assert sorted(seen) == [1, 2]


def test_a_program_that_catches_the_abort_cannot_hide_it() -> None:
    def failing(ctx: PartyContext):
        ctx.new_call("t")
        raise RuntimeError("boom")
        yield  # pragma: no cover

    def stubborn(ctx: PartyContext):
        call = ctx.new_call("t")
        try:
            yield Recv(0, call, "x")
        except ProtocolAbort:
            return "swallowed"

    with pytest.raises(ProtocolAbort, match="boom"):
        run([failing, stubborn])


def test_deadlock_ends_in_an_abort_naming_the_wait() -> None:
    def waits_for(other: int):
        def program(ctx: PartyContext):
            call = ctx.new_call("dl")
            yield Recv(other, call, "hello")
            yield Send(other, value(1), call, "hello")

        return program

    with pytest.raises(ProtocolAbort) as info:
        run([waits_for(1), waits_for(0)])
    abort = info.value
    assert abort.party == 0 and abort.round == 0
    assert "deadlock" in abort.reason
    assert "'hello'" in abort.reason and "dl#0" in abort.reason and "party 1" in abort.reason


def test_waiting_for_a_party_that_already_finished_is_a_deadlock() -> None:
    def done(ctx: PartyContext):
        ctx.new_call("t")
        return 1
        yield  # pragma: no cover

    def waits(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Recv(0, call, "x")

    with pytest.raises(ProtocolAbort, match="deadlock") as info:
        run([done, waits])
    assert info.value.party == 1


@pytest.mark.parametrize("to", [5, -1, 0])
def test_sending_to_an_unknown_party_or_oneself_aborts(to: int) -> None:
    def bad(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Send(to, value(1), call, "x")

    def idle(ctx: PartyContext):
        ctx.new_call("t")
        return None
        yield  # pragma: no cover

    with pytest.raises(ProtocolAbort) as info:
        run([bad, idle])
    assert info.value.party == 0
    assert f"unknown party {to}" in info.value.reason


def test_sendeach_to_an_unknown_party_aborts() -> None:
    def bad(ctx: PartyContext):
        call = ctx.new_call("t")
        yield SendEach({1: value(1), 7: value(2)}, call, "x")

    def idle(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Recv(0, call, "x")

    with pytest.raises(ProtocolAbort, match="unknown party 7"):
        run([bad, idle])


def test_receiving_from_an_unknown_party_aborts() -> None:
    def bad(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Recv(9, call, "x")

    with pytest.raises(ProtocolAbort, match="unknown party 9"):
        run([bad, bad])


def test_yielding_something_that_is_not_an_effect_aborts() -> None:
    def bad(ctx: PartyContext):
        yield "send please"

    with pytest.raises(ProtocolAbort, match="not an effect") as info:
        run([bad, bad])
    assert info.value.party == 0  # the first process to run fails first


def test_unencodable_payload_aborts_the_sender() -> None:
    def bad(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Send(1, np.array([1.0], dtype=np.float32), call, "x")

    def idle(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Recv(0, call, "x")

    with pytest.raises(ProtocolAbort, match="WireFormatError") as info:
        run([bad, idle])
    assert info.value.party == 0


# -- sealing -----------------------------------------------------------------------------


def sum_program(variant: str = "explicit") -> Program:
    def program(ctx: PartyContext, x: np.ndarray):
        return (yield from secure_sum(ctx, x, variant))  # type: ignore[arg-type]

    return program


def sum_parties(m: int = 3, d: int = 4, variant: str = "explicit") -> list[Party]:
    return site_parties(sum_program(variant), [{"x": np.arange(d) + i} for i in range(m)])


def test_tampering_in_transit_aborts_with_an_authentication_error() -> None:
    def flip(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
        if (sender, receiver) == (2, 1) and tag.endswith(".column_sum"):
            return data[:5] + bytes([data[5] ^ 1]) + data[6:]
        return data

    sim = Simulation(Network.build(3), seed=1, interceptor=flip)
    with pytest.raises(ProtocolAbort) as info:
        sim.run(sum_parties())
    abort = info.value
    assert abort.party == 1  # the receiver detects the forgery
    assert isinstance(abort.__cause__, AuthenticationError)
    assert "AuthenticationError" in abort.reason


def test_tampering_with_unsealed_traffic_goes_unnoticed_by_the_channel() -> None:
    """Without sealing the same bit flip is delivered (the model has no integrity then)."""

    def flip(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
        if (sender, receiver) == (2, 1) and tag.endswith(".column_sum"):
            return data[:-1] + bytes([data[-1] ^ 1])  # last byte of the last element
        return data

    sim = Simulation(Network.build(3), seed=1, sealing=False, interceptor=flip)
    result = sim.run(sum_parties())
    assert result.outputs[0].tolist() == [3.0, 6.0, 9.0, 12.0]
    assert result.outputs[1].tolist() != result.outputs[0].tolist()


def test_sealed_bytes_are_payload_plus_overhead_and_unsealed_are_the_payload() -> None:
    seen: dict[bool, list[tuple[str, bytes]]] = {True: [], False: []}

    def spy(sealing: bool):
        def intercept(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
            seen[sealing].append((tag, data))
            return data

        return intercept

    d = 5
    results = {}
    for sealing in (True, False):
        sim = Simulation(Network.build(3), seed=4, sealing=sealing, interceptor=spy(sealing))
        results[sealing] = sim.run(sum_parties(d=d))
    payload = 4 + 8 + 8 * d  # a 1-D uint64 vector of d elements
    sealed_rows = [r for r in results[True].ledger if r.protocol == "secure_sum"]
    open_rows = [r for r in results[False].ledger if r.protocol == "secure_sum"]
    assert len(sealed_rows) == len(open_rows) == 12
    assert {r.bytes for r in sealed_rows} == {payload + SEAL_OVERHEAD_BYTES}
    assert {r.bytes for r in open_rows} == {payload}
    assert SEAL_OVERHEAD_BYTES == 28  # 16-byte GCM tag + 12-byte nonce
    # key agreement is never sealed: identical sizes either way
    ka = {s: [r.bytes for r in results[s].ledger if r.protocol == "key_agreement"]
          for s in (True, False)}
    assert ka[True] == ka[False] == [4 + 8 + 32] * 6
    # what travels: nonce ‖ ciphertext ‖ tag vs plaintext
    sealed_data = [data for tag, data in seen[True] if tag.startswith("secure_sum")]
    open_data = [data for tag, data in seen[False] if tag.startswith("secure_sum")]
    assert {len(x) for x in sealed_data} == {payload + SEAL_OVERHEAD_BYTES}  # nonce in front
    assert {len(x) for x in open_data} == {payload}
    decoded = [wire.decode(x) for x in open_data]
    assert all(a.dtype == np.uint64 and a.shape == (d,) for a in decoded)
    # the plaintext header never appears at the start of a sealed message
    header = open_data[0][:12]
    assert all(header not in x for x in sealed_data)


@pytest.mark.parametrize(("variant", "d"), [("prg", 5), ("explicit", 5), ("prg", 9000)])
def test_sealed_wire_bytes_are_seal_message_of_the_payload_under_the_pair_key(
        variant: str, d: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every sealed message on the wire is, byte for byte, the reference
    ``seal_message(pair key, sender, receiver, n, encoding, (protocol, call, step, round))`` of
    the payload its receiver recorded, n counting the channel's messages in sending order —
    what the drivers sent before they kept a SealedChannel per channel (d = 9000: 72 KB
    messages). Without an interceptor nothing observes a message in flight, so the driver
    seals it on delivery, into a scratch buffer: those bytes, caught as they are written, are
    the intercepted run's, message for message, and the run has the same ledger, views and
    outputs — as has a run with a fault plan that never fires (sealed on sending, no
    interceptor)."""
    seen: list[tuple[int, int, str, bytes]] = []

    def record(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
        seen.append((sender, receiver, tag, data))
        return data

    def twice(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        first = yield from secure_sum(ctx, x, variant)
        return first, (yield from secure_sum(ctx, 2 * x, variant))

    m, seed = 4, 11
    parties = site_parties(twice, [{"x": np.linspace(0.0, 5.0, d) + i} for i in range(m)])
    sim = Simulation(Network.build(m), seed=seed, keys="preshared", interceptor=record)
    result = sim.run(parties)
    keys = preshared_keys(seed, list(range(m)))
    rows = list(result.ledger)
    assert len(rows) == len(seen) >= 2 * m * (m - 1)
    sequence: dict[tuple[int, int], int] = {}
    for row, (sender, receiver, tag, data) in zip(rows, seen, strict=True):
        assert (row.sender, row.receiver, f"{row.protocol}#{row.call}.{row.step}") == (
            sender, receiver, tag)
        n = sequence.get((sender, receiver), 0)
        sequence[(sender, receiver)] = n + 1
        key = keys[(min(sender, receiver), max(sender, receiver))][0]
        header = (row.protocol, row.call, row.step, row.round)
        plaintext = open_message(key, sender, receiver, n, data, header)
        assert seal_message(key, sender, receiver, n, plaintext, header) == data
        received = [msg for msg in result.views[receiver].received
                    if (msg.sender, msg.protocol, msg.call, msg.step) == (
                        sender, row.protocol, row.call, row.step)]
        assert len(received) == 1
        assert wire.encode(received[0].payload) == plaintext
    on_delivery: dict[tuple[int, int, int], bytes] = {}
    seal_into = SealedChannel.seal_into

    def caught(channel: SealedChannel, sequence: int, plaintext: bytes, into: Any,
               header: Any) -> None:
        seal_into(channel, sequence, plaintext, into, header)
        on_delivery[(channel.sender, channel.receiver, sequence)] = bytes(into)

    monkeypatch.setattr(SealedChannel, "seal_into", caught)
    plain = Simulation(Network.build(m), seed=seed, keys="preshared").run(parties)
    monkeypatch.undo()
    numbered: dict[tuple[int, int], int] = {}
    intercepted = {}
    for sender, receiver, _, data in seen:
        n = numbered.get((sender, receiver), 0)
        numbered[(sender, receiver)] = n + 1
        intercepted[(sender, receiver, n)] = data
    assert on_delivery == intercepted
    # with a fault plan (one that never fires) messages are sealed on sending and the later
    # receivers of a broadcast authenticate their copies in the run's scratch buffer
    idle_fault = parse_faults([{"kind": "delay", "link": [0, 1], "at_s": 1e9,
                                "duration_s": 1.0, "extra_ms": 1.0}])
    eager = Simulation(Network.build(m), seed=seed, keys="preshared",
                       faults=idle_fault).run(parties)
    for other in (plain, eager):
        assert [r._replace(sent_s=0.0, delivered_s=0.0) for r in other.ledger] == [
            r._replace(sent_s=0.0, delivered_s=0.0) for r in result.ledger]
        for p in range(m):
            assert [(x.sender, x.call, x.step, x.round, x.payload.dtype, x.payload.shape,
                     x.payload.tobytes()) for x in other.views[p].received] == [
                (x.sender, x.call, x.step, x.round, x.payload.dtype, x.payload.shape,
                 x.payload.tobytes()) for x in result.views[p].received]
            for a, b in zip(other.outputs[p], result.outputs[p], strict=True):
                np.testing.assert_array_equal(a, b)


def test_the_runs_header_encodings_are_encode_headers_own() -> None:
    """RunChannels keeps a few encoded headers; each one it hands out is what encode_header
    gives for the same fields — across evictions, and for fields that only compare equal to
    kept ones (a str subclass equal to everything and a bool index, both refused; a numpy
    index, encoded as its integer)."""

    class Anything(str):
        def __eq__(self, other: object) -> bool:
            return True

        __hash__ = str.__hash__

    channels = RunChannels()
    for index in list(range(20)) + list(range(20)):
        for step, round_ in (("share", index + 1), ("column_sum", index + 2)):
            got = channels.header(Call("secure_sum", index), step, round_)
            assert got == encode_header(("secure_sum", index, step, round_))
    channels.header(Call("p", 1), "a", 2)
    # equal to the kept "a", yet not a str: refused as associated_data refuses it
    for encode in (lambda: encode_header(("p", 1, Anything("a"), 2)),
                   lambda: channels.header(Call("p", 1), Anything("a"), 2)):
        with pytest.raises(InputError, match="associated data field must be an integer"):
            encode()
    assert channels.header(Call("p", np.int64(1)), "a", 2) == encode_header(("p", 1, "a", 2))
    with pytest.raises(InputError, match="associated data field"):
        channels.header(Call("p", True), "a", 2)


def test_sealing_needs_keys() -> None:
    with pytest.raises(MpcsimError, match="keys"):
        Simulation(Network.build(2), keys="none", sealing=True)


def test_key_agreement_rows() -> None:
    m = 4
    result = Simulation(Network.build(m), seed=2).run(sum_parties(m=m, variant="prg"))
    ka = [r for r in result.ledger if r.protocol == "key_agreement"]
    assert len(ka) == m * (m - 1)
    assert {(r.sender, r.receiver) for r in ka} == {
        (a, b) for a in range(m) for b in range(m) if a != b}
    assert all(r.elements == 0 and r.bytes == 44 and r.round == 1 and r.call == 0
               and r.step == "public_key" for r in ka)
    # each party holds, per peer, the same channel key and mask seed as that peer
    seeds = {p: result.views[p].seeds["pair_mask_seeds"] for p in range(m)}
    for a in range(m):
        assert sorted(seeds[a]) == [b for b in range(m) if b != a]
        for b in seeds[a]:
            assert seeds[a][b] == seeds[b][a]
    assert len({s for p in seeds.values() for s in p.values()}) == m * (m - 1) // 2


def test_replaying_an_earlier_sealed_message_is_detected() -> None:
    """The nonce and the associated data (sender, receiver, call, step) bind each message."""
    first: dict[tuple[int, int], bytes] = {}

    def replay(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
        if not tag.startswith("secure_sum"):
            return data
        if (sender, receiver) not in first:
            first[(sender, receiver)] = data  # the share
            return data
        return first[(sender, receiver)]  # the column sum replaced by the old share

    sim = Simulation(Network.build(3), seed=1, interceptor=replay)
    with pytest.raises(ProtocolAbort) as info:
        sim.run(sum_parties())
    assert isinstance(info.value.__cause__, AuthenticationError)


# -- views hold every message a party received ------------------------------------------


def test_a_delivered_but_unread_message_is_still_in_the_receivers_view() -> None:
    def talker(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Send(1, value(1), call, "asked")
        yield Send(1, value(42), call, "unasked")  # e.g. a leaky variant's extra message

    def listener(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Recv(0, call, "asked")

    result = run([talker, listener])
    assert len(result.ledger) == 2
    steps = sorted(m.step for m in result.views[1].received)
    assert steps == ["asked", "unasked"]


def test_errors_survive_copy_and_pickle_as_simpy_and_mpi_need() -> None:
    """SimPy hands each waiting process ``type(e)(*e.args)``; pickle rebuilds the same way."""
    abort = ProtocolAbort(3, 2, "RuntimeError: boom")
    for copy in (type(abort)(*abort.args), pickle.loads(pickle.dumps(abort))):
        assert (copy.party, copy.round, copy.reason) == (3, 2, "RuntimeError: boom")
        assert str(copy) == "party 3 aborted in round 2: RuntimeError: boom"
    notice = ProtocolAbort.notice(3, "secure_sum#4")
    for copy in (type(notice)(*notice.args), pickle.loads(pickle.dumps(notice))):
        assert (copy.party, copy.round, copy.reason, copy.call) == (3, None, "", "secure_sum#4")
        assert copy.is_notice and str(copy) == "party 3 aborted in call secure_sum#4"
    overflow = FieldOverflowError(1e20, 2.5, "column 4", "lower frac_bits")
    copy = pickle.loads(pickle.dumps(overflow))
    assert (copy.value, copy.bound, copy.what) == (1e20, 2.5, "column 4")
    assert str(copy) == str(overflow) == (
        "column 4 1e+20 exceeds the field's representable bound 2.5; lower frac_bits")


def test_the_run_restores_the_garbage_collector_even_when_it_aborts() -> None:
    import gc

    def failing(ctx: PartyContext):
        raise RuntimeError("boom")
        yield  # pragma: no cover - makes this a generator

    assert gc.isenabled()
    with pytest.raises(ProtocolAbort):
        run([failing, failing])
    assert gc.isenabled()
    gc.disable()
    try:
        with pytest.raises(ProtocolAbort):
            run([failing, failing])
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


def test_a_sealed_message_may_arrive_before_its_receiver_has_the_key() -> None:
    """Party 0's links are fast, the link 1–2 slow: 0 finishes key agreement and seals its
    share to 1 while 1 still waits for 2's public key. The message waits, unopened, until 1
    asks for it with the key in hand."""
    links = [{"a": 0, "b": 1, "latency_ms": 1.0}, {"a": 0, "b": 2, "latency_ms": 1.0},
             {"a": 1, "b": 2, "latency_ms": 100.0}]
    sim = Simulation(Network.build(3, links=links), seed=1)
    result = sim.run(sum_parties(m=3, d=2))
    assert result.outputs[1].tolist() == [3.0, 6.0]
    first_share = min((r for r in result.ledger if r.protocol == "secure_sum"
                       and (r.sender, r.receiver) == (0, 1)), key=lambda r: r.delivered_s)
    last_key = max(r.delivered_s for r in result.ledger
                   if r.protocol == "key_agreement" and r.receiver == 1)
    assert first_share.delivered_s < last_key  # it did arrive before 1 had every key


@pytest.mark.parametrize("record_views", [True, False])
def test_a_forged_message_nobody_reads_aborts_even_when_views_are_not_kept(
        record_views: bool) -> None:
    def talker(ctx: PartyContext):
        call = ctx.new_call("t")
        yield Send(1, value(1), call, "asked")
        yield Send(1, value(2), call, "unasked")

    def listener(ctx: PartyContext):
        yield Recv(0, ctx.new_call("t"), "asked")

    def forge(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
        return data[:-1] + bytes([data[-1] ^ 1]) if tag.endswith("unasked") else data

    sim = Simulation(Network.build(2), seed=1, keys="preshared", interceptor=forge,
                     record_views=record_views)
    with pytest.raises(ProtocolAbort) as info:
        sim.run([Party(0, talker), Party(1, listener)])
    assert info.value.party == 1 and isinstance(info.value.__cause__, AuthenticationError)
