"""Red team: hostile party programs, each trying one route to what it must not learn.

The simulator's promise (README, "Trust boundary"): a party program learns only what reaches it
through a ``Recv``; nothing the simulator hands it — its context, its inputs, the payloads and
values effects return, the exceptions thrown into it — leads to another party's state or to
the run seed. Each test below is one escape route, tried by a program as an attacker would
write it, and asserts that the attempt gains nothing. Where Python in one process cannot close
a route (the garbage collector, frame walking), the test shows the route for what it is and
checks that the trust boundary names it.

Every "gains nothing" rests on :func:`reachability.reachable`, whose power is shown first: it
finds each of a set of planted routes.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import operator
import re
import sys
import types
from collections.abc import Callable, Generator
from dataclasses import FrozenInstanceError
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import simpy
from reachability import reachable

from parties.party import Party, site_parties
from parties.view import View
from protocols.context import AesRandomness, PartyContext, one_stream_mask
from protocols.crypto.channel import SealedChannel
from protocols.crypto.key_agreement import agree, keypair
from protocols.effects import Call, Input, Output, Recv, Send
from protocols.errors import FieldOverflowError, ProtocolAbort
from protocols.field import prime_field
from protocols.secure_sum import secure_sum
from sim.drivers.envelopes import RunChannels
from sim.drivers.simpy import SimPyDriver
from sim.drivers.simpy_run import SimPyRun
from sim.ledger import Ledger, Row
from sim.network import Network
from sim.simulation import SEED_SALT, Result, Simulation, party_seed

RUN_SEED = 0x5EED_0DD5_EC12_3457  # distinctive: an equal integer anywhere is the seed
README = Path(__file__).resolve().parents[2] / "README.md"
RUN_STATE = (View, Ledger, Row, Result, Simulation, SimPyDriver, SimPyRun, simpy.Environment,
             simpy.Event, RunChannels, SealedChannel)

Program = Callable[..., Generator[Any, Any, Any]]


# -- the harness ------------------------------------------------------------------------------


def observed(program: Program, handed: list[Any]) -> Program:
    """``program`` unchanged, except that everything the simulator hands it is kept in
    ``handed``: its context, its inputs, every value an effect returns, every exception
    thrown into it."""

    def wrapped(ctx: PartyContext, **inputs: Any) -> Generator[Any, Any, Any]:
        handed.extend([ctx, inputs])
        gen = program(ctx, **inputs)
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = gen.send(value) if error is None else gen.throw(error)
            except StopIteration as stop:
                return stop.value
            value, error = None, None
            try:
                value = yield effect
                handed.append(value)
            except Exception as exc:
                handed.append(exc)
                error = exc

    return wrapped


def sum_program(variant: str = "prg") -> Program:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secure_sum(ctx, x, variant))  # type: ignore[arg-type]

    return program


def secrets_of(ctx: PartyContext, me: int) -> set[bytes]:
    """Key material of ``ctx`` that party ``me`` must not hold (pairs with ``me`` excluded)."""
    out = {ctx.key_seed} - {b""}
    randomness = getattr(ctx.randomness, "inner", ctx.randomness)
    out.add(getattr(randomness, "_private_key", b""))
    out |= {k for peer, k in ctx.channel_keys.items() if peer != me}
    out |= {k for peer, k in ctx.mask_seeds.items() if peer != me}
    return out - {b""}


def prk_of(run_seed: int) -> bytes:
    """HKDF-Extract of the run seed (RFC 5869 §2.2), computed here with the standard library:
    the key every party's seeds are expanded from."""
    ikm = run_seed.to_bytes(max(1, (run_seed.bit_length() + 7) // 8), "big")
    return hmac.digest(SEED_SALT, ikm, hashlib.sha256)


def findings(roots: list[Any], me: PartyContext, others: list[PartyContext],
             other_inputs: list[np.ndarray], run_seed: int = RUN_SEED) -> list[str]:
    """What of other parties' state, or of the run, is reachable from ``roots``."""
    secrets = set().union(*(secrets_of(o, me.party) for o in others)) | {prk_of(run_seed)}
    hexes = {s.hex() for s in secrets}
    found = []
    for obj in reachable(roots).values():
        if isinstance(obj, PartyContext) and obj is not me:
            found.append(f"the context of party {obj.party}")
        elif isinstance(obj, RUN_STATE):
            found.append(f"a {type(obj).__name__}")
        elif isinstance(obj, int | np.integer) and not isinstance(obj, bool) and (
                int(obj) == run_seed):
            found.append("the run seed")
        elif isinstance(obj, bytes) and obj in secrets:
            found.append("another party's key material")
        elif isinstance(obj, str) and obj in hexes:
            found.append("another party's key material, as hex")
        elif isinstance(obj, np.ndarray) and obj.dtype == np.float64 and any(
                obj.shape == x.shape and np.array_equal(obj, x) for x in other_inputs):
            found.append("another party's input")
    return sorted(set(found))


def spy(program: Program, contexts: dict[int, PartyContext]) -> Program:
    """``program`` with its context recorded by the test (not by anything a party can reach)."""

    def wrapped(ctx: PartyContext, **inputs: Any) -> Generator[Any, Any, Any]:
        contexts[ctx.party] = ctx
        return (yield from program(ctx, **inputs))

    return wrapped


def distinct_inputs(m: int, d: int = 4) -> list[np.ndarray]:
    rng = np.random.default_rng(2024)
    return [rng.uniform(-50.0, 50.0, d) for _ in range(m)]


# -- the walk has the power to find a route -------------------------------------------------


def _frame_holding(secret: Any) -> BaseException:
    def driver_like(state: Any) -> None:
        raise RuntimeError("thrown from inside")

    try:
        driver_like(secret)
    except RuntimeError as exc:
        return exc
    raise AssertionError("unreachable")


def test_the_walk_finds_every_planted_route() -> None:
    """Each root hides another party's context (or the seed) one way; the walk finds each."""
    sim = Simulation(Network.build(2), seed=RUN_SEED, keys="none", sealing=False)
    contexts: dict[int, PartyContext] = {}

    def idle(ctx: PartyContext) -> Generator[Any, Any, Any]:
        return None
        yield  # pragma: no cover

    sim.run([Party(p, spy(idle, contexts)) for p in range(2)])
    me, other = contexts[0], contexts[1]
    holder = types.SimpleNamespace(peer=other)
    chained = ValueError("a wrapper")
    chained.__cause__ = _frame_holding(other)
    planted = {
        "attribute": holder,
        "dict value": {"x": other},
        "read-only mapping": types.MappingProxyType({"x": [other]}),
        "closure": (lambda: other),
        "bound method of a list": [other].append,
        "object array": np.array([other], dtype=object),
        "exception cause": chained,
        "traceback locals": _frame_holding(other),
        "a generator seeded with the run seed": np.random.default_rng(
            np.random.SeedSequence(RUN_SEED, spawn_key=(0, 0))),
        "partial": __import__("functools").partial(print, other),
    }
    for route, root in planted.items():
        assert findings([root], me, [other], []), f"the walk missed a route through {route}"
    assert findings([me], me, [other], []) == []  # and the context itself is clean


# -- routes 1 and 7: everything handed over, the run seed, the SimPy environment, the ledger --


@pytest.mark.parametrize("keys", ["x25519", "preshared"])
@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_nothing_handed_to_a_party_leads_to_another_party_or_the_run(keys: str,
                                                                     variant: str) -> None:
    """The context, the inputs, every received payload and returned value: none leads to
    another party's context, keys or inputs, to the run seed, or to the driver, its SimPy
    environment, the ledger or any view."""
    m = 3
    inputs = distinct_inputs(m)
    handed: list[Any] = []
    contexts: dict[int, PartyContext] = {}
    programs = [observed(sum_program(variant), handed)] + [
        spy(sum_program(variant), contexts) for _ in range(m - 1)]
    sim = Simulation(Network.build(m), seed=RUN_SEED, keys=keys, record_draws=True)
    result = sim.run([Party(p, programs[p], {"x": inputs[p]}) for p in range(m)])
    assert np.allclose(result.outputs[0], sum(inputs))
    me = handed[0]
    assert isinstance(me, PartyContext) and me.party == 0 and len(handed) > 4
    assert findings(handed, me, list(contexts.values()), inputs[1:]) == []


def test_the_run_seed_attack_of_the_review_now_recovers_nothing() -> None:
    """Party 0 of a 3-party PRG SecureSum reads the entropy of its generator, takes it for
    the run seed, derives parties 1 and 2's X25519 keys and their pair's mask seed, removes
    party 1's net mask from its column sum and reads party 1's input. With the run seed the
    attack works (so the test can fail); with what the context hands out it does not."""
    m, d = 3, 4
    inputs = distinct_inputs(m, d)

    def attack(ctx: PartyContext, column_sum_1: np.ndarray, seed_guess: int) -> np.ndarray:
        private_1 = keypair(party_seed(seed_guess, 1, "x25519")).private
        public_2 = keypair(party_seed(seed_guess, 2, "x25519")).public
        mask_seed_12 = agree(private_1, public_2, 1, 2).mask_seed
        as_party_1 = AesRandomness(ctx.field, bytes(32), party=1)
        as_party_1.set_pair_seed(0, ctx.mask_seeds[1])
        as_party_1.set_pair_seed(2, mask_seed_12)
        net_mask = one_stream_mask(as_party_1, 1, (0, 2), Call("secure_sum", 1), d, ctx.field)
        return ctx.fixed.decode(ctx.field.sub(column_sum_1, net_mask))

    def curious(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        total = yield from secure_sum(ctx, x, "prg")
        entropy = int(ctx.rng.bit_generator.seed_seq.entropy)
        return total, entropy

    handed: list[Any] = []
    programs = [observed(curious, handed), sum_program(), sum_program()]
    sim = Simulation(Network.build(m), seed=RUN_SEED)
    result = sim.run([Party(p, programs[p], {"x": inputs[p]}) for p in range(m)])
    _, entropy = result.outputs[0]
    column_sum_1 = next(v[1] for v in handed if isinstance(v, dict) and 1 in v)
    ctx = handed[0]
    assert entropy != RUN_SEED
    assert not np.allclose(attack(ctx, column_sum_1, entropy), inputs[1])
    # the same attack, handed the run seed, reads party 1's input to the last fixed-point bit
    recovered = attack(ctx, column_sum_1, RUN_SEED)
    assert np.max(np.abs(recovered - inputs[1])) <= 2.0 ** -24


# -- route 2: shared mutable objects ----------------------------------------------------------


def test_a_write_into_its_context_reaches_no_other_party() -> None:
    """Party 0 writes into its roles, field and fixed point, then messages party 1, which reads
    its own: unchanged. Writes that cannot be refused (a __dict__) land in party 0's copy."""

    def writer(ctx: PartyContext) -> Generator[Any, Any, Any]:
        refused = []
        for attempt in (lambda: operator.setitem(ctx.roles, 1, "dealer"),
                        lambda: setattr(ctx.field, "p", 5),
                        lambda: setattr(ctx.fixed, "frac_bits", 3)):
            try:
                attempt()
            except (TypeError, AttributeError, FrozenInstanceError) as exc:
                refused.append(type(exc).__name__)
        ctx.field.__dict__["p"] = 5  # forced past the guard: its own object only
        call = ctx.new_call("t")
        yield Send(1, np.array([1], dtype=np.uint64), call, "after_writing")
        return refused

    def reader(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("t")
        yield Recv(0, call, "after_writing")
        return dict(ctx.roles), ctx.field.p, ctx.fixed.frac_bits

    sim = Simulation(Network.build(2), seed=1, keys="none", sealing=False)
    result = sim.run([Party(0, writer), Party(1, reader)])
    assert result.outputs[0] == ["TypeError", "AttributeError", "FrozenInstanceError"]
    assert result.outputs[1] == ({0: "site", 1: "site"}, (1 << 61) - 1, 24)
    assert sim.field.p == (1 << 61) - 1  # the simulation's own field is untouched too


@pytest.mark.parametrize("d", [4, 2001])
def test_contexts_share_no_mutable_object(d: int) -> None:
    """The objects reachable from two contexts overlap only in immutable values — with
    short vectors (numpy paths) and with 2,001 elements (compiled paths, each party's kept
    keystream buffer and counter blocks)."""
    contexts: dict[int, PartyContext] = {}
    m = 3
    sim = Simulation(Network.build(m), seed=RUN_SEED, record_draws=d < 1024)
    sim.run([Party(p, spy(sum_program(), contexts), {"x": x})
             for p, x in enumerate(distinct_inputs(m, d))])
    if d >= 1024:  # the attack reaches what it means to: every party kept its own buffers
        kept = [ctx.randomness.ciphers._group for ctx in contexts.values()]
        assert all(g is not None for g in kept) and len({id(g) for g in kept}) == m
    reach = {p: reachable([ctx]) for p, ctx in contexts.items()}
    immutable = (type(None), bool, int, float, complex, str, bytes, np.generic, np.dtype,
                 tuple, frozenset, Call, types.FunctionType, types.BuiltinFunctionType)
    for a in range(m):
        for b in range(a + 1, m):
            shared = [reach[a][i] for i in reach[a].keys() & reach[b].keys()]
            mutable = [type(o).__name__ for o in shared if not isinstance(o, immutable)]
            assert mutable == [], f"parties {a} and {b} share {mutable}"


def cipher_contexts(roots: list[Any]) -> dict[int, Any]:
    """The OpenSSL cipher contexts reachable from ``roots`` (by id)."""
    return {i: o for i, o in reachable(roots).items() if type(o).__name__ == "CipherContext"}


def test_each_party_builds_its_own_cipher_contexts() -> None:
    """A party keeps one AES encryptor per key it draws under again
    (protocols.crypto.keystream.StreamCiphers):
    its own key material, built by its own randomness, reachable from no other party. The
    check has the power to see a shared one: two sources handed one StreamCiphers fail it."""
    m = 4
    contexts: dict[int, PartyContext] = {}

    def twice(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        yield from secure_sum(ctx, x, "prg")
        return (yield from secure_sum(ctx, x, "prg"))  # its keys' second use: kept

    sim = Simulation(Network.build(m), seed=RUN_SEED)
    sim.run([Party(p, spy(twice, contexts), {"x": x})
             for p, x in enumerate(distinct_inputs(m))])
    found = {p: cipher_contexts([ctx]) for p, ctx in contexts.items()}
    for p, ctx in contexts.items():
        assert len(found[p]) == m - 1 == ctx.randomness.ciphers.kept  # one per pair key
        assert findings([ctx], ctx, [o for o in contexts.values() if o is not ctx], []) == []
        for q in range(p + 1, m):
            assert found[p].keys().isdisjoint(found[q].keys())
    field = prime_field("2^61-1")
    first, second = AesRandomness(field, bytes(32), 0), AesRandomness(field, bytes(32), 1)
    second._ciphers = first.ciphers  # planted: one cache for two parties
    for source, peer in ((first, 1), (second, 0)):
        source.set_pair_seed(peer, bytes(range(32)))
        source.pairwise(peer, Call("t", 0), 3)
        source.pairwise(peer, Call("t", 1), 3)
    assert cipher_contexts([first]).keys() & cipher_contexts([second]).keys()


def test_the_drivers_sealed_channels_are_reachable_from_no_party() -> None:
    """The driver keeps a SealedChannel per channel end (each holds its key's AES-GCM
    schedule, which opens and forges that channel's messages). Party 0 collects everything it
    is handed in a sealed run with x25519 keys: no channel, and not the run's collection of
    them. The walk has the power to see one: planted in a context's ``__dict__``, in a
    received payload's object array, or behind a closure, each is found."""
    m = 3
    handed: list[Any] = []
    contexts: dict[int, PartyContext] = {}
    programs = [observed(sum_program(), handed)] + [spy(sum_program(), contexts)
                                                    for _ in range(m - 1)]
    sim = Simulation(Network.build(m), seed=RUN_SEED, keys="x25519", sealing=True)
    sim.run([Party(p, programs[p], {"x": x}) for p, x in enumerate(distinct_inputs(m))])
    me = handed[0]
    assert isinstance(me, PartyContext) and me.channel_keys  # a sealed run with agreed keys
    channel_types = (SealedChannel, RunChannels)
    assert [type(o).__name__ for o in reachable(handed).values()
            if isinstance(o, channel_types)] == []
    assert findings(handed, me, list(contexts.values()), []) == []
    # the power to find one: a channel of party 1's, planted three ways
    theirs = SealedChannel(contexts[1].channel_keys[2], 2, 1)
    run = RunChannels()
    run.receiving(contexts[1], 2)
    for planted in (types.SimpleNamespace(ctx=me, leak=theirs),
                    np.array([run], dtype=object),
                    (lambda: theirs)):
        assert findings([planted], me, list(contexts.values()), []) != []


# -- route 3: view records by reference -------------------------------------------------------


@pytest.mark.parametrize("prime", ["2^61-1", "2^31-1", "2^64-59", "2^127-1"])
def test_nothing_a_program_or_its_caller_holds_is_a_record_of_its_view(prime: str) -> None:
    """The receiver rewrites the payload it got, the values it put into Input and Output and
    the masks it drew; the caller rewrites the input array it passed. The view keeps what
    was recorded. (For primes ≥ 2^31 other than 2^61 − 1 payloads are object arrays, whose
    write protection a program can lift: it then writes into its own copy.)"""
    field = prime_field(prime)
    sent = field.elements(np.arange(1, 5))
    caller_input = np.arange(3.0)

    def force_write(arr: np.ndarray) -> str:
        try:
            arr.flags.writeable = True
        except ValueError:
            return "refused"
        arr[...] = arr.flat[0]
        return "written"

    def sender(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        call = ctx.new_call("t")
        yield Send(1, sent, call, "values")

    def receiver(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        call = ctx.new_call("t")
        got = yield Recv(0, call, "values")
        outcome = {"payload": force_write(got), "input": force_write(x)}
        mine = field.elements(np.arange(10, 14))
        yield Input("mine", mine, call)
        yield Output("out", mine, call)
        mine[...] = 0
        drawn = ctx.randomness.private(call, 4)
        drawn[...] = 0
        return outcome

    sim = Simulation(Network.build(2), prime=prime, frac_bits=0, seed=3, keys="none",
                     sealing=False, record_draws=True)
    result = sim.run([Party(0, sender, {"x": np.zeros(1)}),
                      Party(1, receiver, {"x": caller_input})])
    caller_input[...] = -1.0
    view = result.views[1]
    assert result.outputs[1]["input"] == "refused"
    assert [int(v) for v in view.received[0].payload] == [int(v) for v in sent]
    assert view.inputs["x"].tolist() == [0.0, 1.0, 2.0]
    assert [int(v) for v in view.protocol_inputs[0][2]] == [10, 11, 12, 13]
    assert [int(v) for v in view.outputs[0][2]] == [10, 11, 12, 13]
    ((_, drawn),) = view.draws
    assert any(int(v) != 0 for v in drawn)
    records = [view.received[0].payload, view.inputs["x"], view.protocol_inputs[0][2],
               view.outputs[0][2], drawn]
    assert all(not r.flags.writeable for r in records)
    if field.dtype != np.dtype(object):  # numeric records cannot be made writeable at all
        assert result.outputs[1]["payload"] == "refused"
        for record in records:
            with pytest.raises(ValueError):
                record.flags.writeable = True


@pytest.mark.parametrize("fmt", ["csr", "csc", "bsr"])
def test_a_sparse_input_the_program_rewrites_leaves_its_view_record_as_given(fmt: str) -> None:
    """The program gets a matrix object of its own over the record's immutable arrays: it can
    neither write them nor, by rebinding or reshaping its arrays, change the record's; the
    caller's writes into the matrix it passed reach neither."""
    import scipy.sparse as sp

    given = sp.random(6, 4, density=0.5, format=fmt, random_state=2, dtype=np.float64)
    expected = given.toarray().copy()

    def rewrite(arr: np.ndarray) -> str:
        try:
            arr.flags.writeable = True
        except ValueError:
            return "refused"
        arr[...] = -9.0
        return "written"

    def program(ctx: PartyContext, X: Any) -> Generator[Any, Any, Any]:
        outcome = {name: rewrite(getattr(X, name)) for name in ("data", "indices", "indptr")}
        held = (X, X.data, X.indices, X.indptr)
        X.data = np.full_like(X.data, 7.0)  # rebinding: the program's own object only
        held[1].shape = (1, held[1].size)  # reshaping its array object in place
        yield from ()
        return outcome, held

    def idle(ctx: PartyContext, X: Any) -> Generator[Any, Any, Any]:
        yield from ()

    sim = Simulation(Network.build(2), seed=4, keys="none", sealing=False)
    result = sim.run([Party(0, program, {"X": given}), Party(1, idle, {"X": given})])
    given.data[...] = -1.0  # the caller writes into the matrix it passed
    outcome, held = result.outputs[0]
    record = result.views[0].inputs["X"]
    assert {outcome[n] for n in ("data", "indices", "indptr")} == {"refused"}
    assert record.toarray().tolist() == expected.tolist()
    assert held[0] is not record
    assert all(h is not getattr(record, n) for h, n in zip(held[1:], ("data", "indices",
                                                                     "indptr"), strict=True))
    for name in ("data", "indices", "indptr"):
        with pytest.raises(ValueError):
            getattr(record, name).flags.writeable = True


# -- route 4: abort texts ---------------------------------------------------------------------


def test_peers_learn_only_who_aborted_in_which_call() -> None:
    """Party 2's input overflows the field; the FieldOverflowError names the value. Its
    peers are told "party 2 aborted in call c" — no value, no reason, no cause — while the
    run's caller gets the full error."""
    secret = 7.25e13  # beyond the bound of 2^61 − 1 with 24 fractional bits and 3 summands
    handed = {0: [], 1: []}
    programs = [observed(sum_program(), handed[0]), observed(sum_program(), handed[1]),
                sum_program()]
    inputs = [np.ones(2), np.ones(2), np.array([1.0, secret])]
    sim = Simulation(Network.build(3), seed=RUN_SEED)
    with pytest.raises(ProtocolAbort) as info:
        sim.run([Party(p, programs[p], {"x": inputs[p]}) for p in range(3)])
    full = info.value
    assert isinstance(full.__cause__, FieldOverflowError) and full.__cause__.value == secret
    assert repr(secret) in str(full)
    for peer in (0, 1):
        notices = [v for v in handed[peer] if isinstance(v, ProtocolAbort)]
        assert len(notices) == 1
        (notice,) = notices
        # it failed encoding its input, before its first call: not in key agreement
        assert str(notice) == "party 2 aborted before its first call"
        assert notice.__cause__ is None and notice.__context__ is None
        everything = reachable([notice]).values()
        assert not [o for o in everything if isinstance(o, float) and o == secret]
        texts = " ".join(o for o in everything if isinstance(o, str))
        assert not re.search(r"7\.25|72500000000000|e\+13", texts)


def test_a_forged_abort_is_the_forgers_own_failure() -> None:
    """A program that raises a ProtocolAbort blaming party 1 aborts the run as party 0."""

    def forger(ctx: PartyContext) -> Generator[Any, Any, Any]:
        raise ProtocolAbort(1, 7, "party 1 cheated", "secure_sum#9")
        yield  # pragma: no cover

    def honest(ctx: PartyContext) -> Generator[Any, Any, Any]:
        yield Recv(0, ctx.new_call("t"), "x")

    with pytest.raises(ProtocolAbort) as info:
        Simulation(Network.build(2), seed=1, keys="none", sealing=False).run(
            [Party(0, forger), Party(1, honest)])
    assert info.value.party == 0 and "party 1 cheated" in info.value.reason


# -- route 10: exceptions ---------------------------------------------------------------------


def test_exceptions_thrown_into_a_program_carry_no_driver_state() -> None:
    """The program provokes every error the driver throws into a program — an unknown
    receiver, an unencodable payload, a thing that is not an effect, a peer's abort — catches
    each and walks its traceback (every frame's locals), cause and context."""
    caught: list[BaseException] = []

    def provoker(ctx: PartyContext) -> Generator[Any, Any, Any]:
        call = ctx.new_call("t")
        for bad in (Send(99, np.zeros(1), call, "x"), Send(1, np.zeros(1, np.float32), call, "x"),
                    "not an effect", Recv(1, call, "never")):
            try:
                yield bad
            except Exception as exc:
                caught.append(exc)
        return None

    def failing(ctx: PartyContext) -> Generator[Any, Any, Any]:
        ctx.new_call("t")
        yield Send(0, np.zeros(1), Call("t", 0), "hello")
        raise RuntimeError("boom")

    contexts: dict[int, PartyContext] = {}
    sim = Simulation(Network.build(2), seed=RUN_SEED, keys="none", sealing=False)
    with pytest.raises(ProtocolAbort):
        sim.run([Party(0, spy(provoker, contexts)), Party(1, spy(failing, contexts))])
    assert [type(e).__name__ for e in caught] == [
        "MpcsimError", "WireFormatError", "MpcsimError", "ProtocolAbort"]
    for exc in caught:
        frames = []
        tb = exc.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame.f_code.co_filename)
            tb = tb.tb_next
        assert frames and set(frames) == {__file__}  # the program's own frames only
        assert exc.__cause__ is None and exc.__context__ is None
    assert findings(caught, contexts[0], [contexts[1]], []) == []


def test_an_exception_a_program_raises_gains_no_driver_frame() -> None:
    """Python appends each frame an exception passes through to its traceback. A program
    that keeps the exception it raises would find the driver's frame there once the
    exception has left it — the driver drops that frame."""
    kept: list[Any] = []  # the raiser's own: its context, then its exception
    contexts: dict[int, PartyContext] = {}

    def raiser(ctx: PartyContext) -> Generator[Any, Any, Any]:
        kept.append(ctx)
        yield Send(1, np.zeros(1), ctx.new_call("t"), "x")
        error = RuntimeError("mine")
        kept.append(error)
        raise error

    with pytest.raises(ProtocolAbort):
        Simulation(Network.build(2), seed=RUN_SEED, keys="none", sealing=False).run(
            [Party(0, raiser), Party(1, spy(holder, contexts), {"x": np.ones(1)})])
    me, error = kept
    modules = []
    tb = error.__traceback__
    while tb is not None:
        modules.append(tb.tb_frame.f_globals["__name__"])
        tb = tb.tb_next
    assert not {"sim.drivers.simpy", "sim.drivers.simpy_run"} & set(modules)
    assert findings([error], me, [contexts[1]], []) == []


# -- route 6: closures of the program factory; routes 5 and 8: the interpreter ------------------


def holder(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
    """Holds its input and does nothing else."""
    yield from ()
    return x


def frame_prober(ctx: PartyContext) -> Generator[Any, Any, Any]:
    """Walks up its own frames: first the simulation's wrapper, then the driver."""
    yield from ()
    frame = sys._getframe(1)
    wrapper_locals, driver_locals = [], []
    while frame is not None:
        module = frame.f_globals.get("__name__")
        if module == "sim.simulation":
            wrapper_locals.append(dict(frame.f_locals))
        elif module in ("sim.drivers.simpy", "sim.drivers.simpy_run"):
            driver_locals.append(dict(frame.f_locals))
            break
        frame = frame.f_back
    return wrapper_locals, driver_locals


def test_the_program_wrapper_closes_over_the_partys_own_program_and_inputs_only() -> None:
    """The generator the simulation wraps around a program holds that program, its inputs,
    whether to run key agreement, and its context — not the simulation (which knows the run
    seed) and nothing of another party. One frame further up is the driver, which holds
    everything: frame walking is outside the model (README, "Trust boundary")."""
    contexts: dict[int, PartyContext] = {}
    inputs = distinct_inputs(2)
    sim = Simulation(Network.build(2), seed=RUN_SEED, keys="preshared")
    result = sim.run([Party(0, frame_prober, {}),
                      Party(1, spy(holder, contexts), {"x": inputs[1]})])
    wrapper_locals, driver_locals = result.outputs[0]
    assert len(wrapper_locals) == 1
    assert set(wrapper_locals[0]) == {"ctx", "program", "inputs", "agree_keys"}
    me = wrapper_locals[0]["ctx"]
    assert findings(list(wrapper_locals[0].values()), me, [contexts[1]], inputs[1:]) == []
    # the route that stays open: the driver's frame reaches every context, the SimPy
    # environment and the ledger (the run's rows)
    beyond = findings(list(driver_locals[0].values()), me, [contexts[1]], [])
    for found in ("the context of party 1", "a Environment", "a SimPyRun", "a View"):
        assert found in beyond
    assert "frame" in trust_boundary() and "sys._getframe" in trust_boundary()


def test_the_garbage_collector_reaches_everything_and_is_outside_the_model() -> None:
    """``gc.get_referrers`` and ``gc.get_objects`` see every object of the process, other
    parties' contexts included. Python cannot prevent it in one process; the trust boundary
    says so, and the MPI driver (one process per party) closes it."""

    def collector(ctx: PartyContext) -> Generator[Any, Any, Any]:
        yield from ()
        # type(), not isinstance(): gc.get_objects() may hold dead weak proxies left by
        # earlier tests, whose __class__ raises ReferenceError
        via_referrers = [o for r in gc.get_referrers(ctx) if type(r) is dict
                         for o in r.values()
                         if issubclass(type(o), PartyContext) and o is not ctx]
        via_objects = [o for o in gc.get_objects()
                       if issubclass(type(o), PartyContext) and o is not ctx]
        return len(via_referrers), len(via_objects)

    result = Simulation(Network.build(2), seed=1, keys="none", sealing=False).run(
        [Party(0, collector), Party(1, collector)])
    assert result.outputs[0][0] >= 1 and result.outputs[0][1] >= 1
    text = trust_boundary()
    assert "gc.get_referrers" in text and "gc.get_objects" in text


# -- route 9: module globals ----------------------------------------------------------------


def module_scanner(ctx: PartyContext) -> Generator[Any, Any, Any]:
    """Looks for run state in the globals of every project module, mid-run."""
    yield from ()
    roots: list[Any] = []
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("protocols", "parties", "sim", "algorithms"):
            namespace = vars(module)
            roots.append(namespace)
            roots += [dict(vars(v)) for v in namespace.values()
                      if isinstance(v, type) and v.__module__ == name]
    return roots


def test_project_modules_hold_no_run_state() -> None:
    """No global of the project (nor a class attribute, closure or default reachable from
    one) holds a context, a view, the driver, the ledger, the run seed or a party's input."""
    contexts: dict[int, PartyContext] = {}
    inputs = distinct_inputs(2)
    sim = Simulation(Network.build(2), seed=RUN_SEED, record_draws=True)
    result = sim.run([Party(0, spy(module_scanner, contexts), {}),
                      Party(1, spy(holder, contexts), {"x": inputs[1]})])
    roots = result.outputs[0]
    assert len(roots) > 20  # the scan did see the project's modules
    assert findings(roots, contexts[0], [contexts[1]], inputs) == []
    assert not [o for o in reachable(roots).values() if o is contexts[0]]


def trust_boundary() -> str:
    """The README's "Trust boundary" section."""
    text = README.read_text()
    match = re.search(r"^## Trust boundary$(.*?)(?=^## )", text, re.M | re.S)
    assert match, "README.md has no '## Trust boundary' section"
    return match.group(1)


def test_the_trust_boundary_is_stated_in_the_readme_and_the_context_docstring() -> None:
    import protocols.context

    text = trust_boundary()
    for term in ("Recv", "gc.get_objects", "sys._getframe", "MPI", "monkeypatch"):
        assert term in text
    assert "Trust boundary" in (protocols.context.__doc__ or "")


# -- route 5: sealing keys and nonces across runs --------------------------------------------


@pytest.mark.parametrize("key_source", ["seed", "os"])
def test_key_and_nonce_pairs_repeat_across_runs_only_when_seeded(key_source: str) -> None:
    """Two runs with one seed and different inputs: a seeded simulation reuses its keys and
    nonces (it must, to replay); key_source="os" never does."""
    nonces: list[set[bytes]] = [set(), set()]
    key_seeds = []
    for run, shift in enumerate((0.0, 1.0)):
        def record(sender: int, receiver: int, tag: str, data: bytes, run: int = run) -> bytes:
            if tag.startswith("secure_sum"):
                nonces[run].add(data[:12])
            return data

        sim = Simulation(Network.build(3), seed=RUN_SEED, interceptor=record,
                         key_source=key_source)
        result = sim.run(site_parties(sum_program(), [{"x": x + shift}
                                                      for x in distinct_inputs(3)]))
        key_seeds.append({p: v.seeds["x25519"] for p, v in result.views.items()})
    assert nonces[0] == nonces[1]  # counters: the same nonces in both runs
    if key_source == "seed":
        assert key_seeds[0] == key_seeds[1]  # same keys, same nonces: fine only in simulation
    else:
        assert all(key_seeds[0][p] != key_seeds[1][p] for p in range(3))


# -- the later effects: RecvAny, RecvWithin and Compute hand back only what arrived ---------


def test_what_recv_any_recv_within_and_compute_return_leads_nowhere_else() -> None:
    """Party 0 serves its peers through ``RecvAny`` (DSANLS's asynchronous server), then
    ``RecvWithin`` (SecAgg's aggregator), and reads its clock with ``Compute``; everything
    those effects return is walked: none of it leads to another party's context, keys or
    inputs, to the run seed or to the driver."""
    from protocols.effects import Compute, RecvAny, RecvWithin

    inputs = distinct_inputs(3)
    handed: list[Any] = []
    contexts: dict[int, PartyContext] = {}

    def server(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        handed.append(ctx)
        call = ctx.new_call("red_team")
        first = yield RecvAny(((1, call, "a"), (2, call, "a")))
        rest = yield RecvWithin((1, 2), call, "b", 1.0)
        clock = yield Compute(1e-3)
        handed.extend([first, rest, clock])
        return first[0]

    def client(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        call = ctx.new_call("red_team")
        yield Send(0, x, call, "a")
        yield Send(0, x, call, "b")
        return None

    sim = Simulation(Network.build(3), seed=RUN_SEED, keys="x25519")
    result = sim.run([Party(0, server, {"x": inputs[0]})]
                     + [Party(p, spy(client, contexts), {"x": inputs[p]}) for p in (1, 2)])
    assert result.outputs[0] in (0, 1) and len(handed) == 4
    # the payloads are the peers' inputs, sent to party 0 on purpose, so they are not
    # counted as found; their keys, contexts and the run are
    assert findings(handed, handed[0], list(contexts.values()), []) == []
    # the walk reaches the received arrays themselves (so it can see what they lead to)
    assert any(isinstance(v, np.ndarray) and np.array_equal(v, inputs[1])
               for v in reachable(handed[1:3]).values())


@pytest.mark.parametrize("shape", [(6,), (2, 3)])
def test_a_program_that_reshapes_what_it_received_leaves_its_view_as_received(
    shape: tuple[int, ...],
) -> None:
    """``a.shape = ...`` and ``a.dtype = ...`` change an array object in place: the array a
    program is handed is not the object its view records."""
    sent = np.arange(6, dtype=np.uint64).reshape(shape)

    def first(ctx: PartyContext) -> Generator[Any, Any, Any]:
        yield Send(1, sent, Call("t", 0), "x")
        yield Send(1, sent, Call("t", 0), "y")

    def second(ctx: PartyContext) -> Generator[Any, Any, Any]:
        x = yield Recv(0, Call("t", 0), "x")
        x.shape = (3, 2)
        y = yield Recv(0, Call("t", 0), "y")
        y.dtype = np.int64
        return x.shape, y.dtype

    sim = Simulation(Network.build(2), seed=RUN_SEED, keys="none", sealing=False)
    result = sim.run([Party(0, first), Party(1, second)])
    assert result.outputs[1] == ((3, 2), np.dtype(np.int64))  # the program's own arrays
    for record in result.views[1].received:
        assert record.payload.shape == shape and record.payload.dtype == np.uint64
        assert np.array_equal(record.payload, sent) and not record.payload.flags.writeable


# -- the view's records of what a party observed (issue 27): arrival times, clocks, notices ---


def test_what_compute_recv_any_and_a_notice_hand_a_program_leads_nowhere() -> None:
    """Party 0 reads the clock (``Compute``), takes its peers' pings with ``RecvAny`` and is
    then told that party 2 aborted. None of what it was handed — clock readings, (index,
    array) pairs, the notice — leads to another party or to the run, and the records its view
    keeps of them (``observed``, ``aborts``, arrival times) are immutable."""
    from parties.view import is_immutable
    from protocols.effects import Compute, RecvAny

    call = Call("probe", 0)

    def server(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        yield Compute(0.01)
        for _ in range(2):
            yield RecvAny(((1, call, "ping"), (2, call, "ping")))
        yield Recv(2, call, "never")

    def pinger(fail: bool) -> Program:
        def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
            yield Compute(0.001 * ctx.party)
            yield Send(0, np.asarray(x, dtype=np.uint64), call, "ping")
            if fail:
                yield Compute(1.0)  # after party 0 has its pings
                raise ValueError("party 2's private reason")
        return program

    handed: list[Any] = []
    contexts: dict[int, PartyContext] = {}
    programs = [observed(server, handed), spy(pinger(False), contexts),
                spy(pinger(True), contexts)]
    sim = Simulation(Network.build(3), seed=RUN_SEED, sealing=False, keys="none")
    inputs = [np.arange(2, dtype=np.uint64) + 10 * p for p in range(3)]
    with pytest.raises(ProtocolAbort) as info:
        sim.run([Party(p, programs[p], {"x": inputs[p]}) for p in range(3)])
    notices = [v for v in handed if isinstance(v, ProtocolAbort)]
    assert notices and all(n.is_notice and n.party == 2 for n in notices)
    assert "private reason" not in str(notices[0])
    assert findings(handed, handed[0], list(contexts.values()), inputs[1:]) == []
    view = info.value.views[0]  # type: ignore[attr-defined]
    assert [o[0] for o in view.observed] == ["compute", "recv_any", "recv_any"]
    assert view.aborts == [(2, "probe#0")]
    assert is_immutable(tuple(view.observed)) and is_immutable(tuple(view.aborts))
    assert all(isinstance(m.arrived_s, float) for m in view.received)


def test_the_coin_streams_and_expansions_a_program_can_make_lead_nowhere() -> None:
    """New routes of this change: the MPC engine's per-call coins (``mpc.coins.call_rng``),
    CAPE's noise generator (``correlated_noise.noise_rng``) and the PRG expansion every
    program may call (``ctx.randomness.expand``). Party 0 builds each and walks it: none leads
    to another party's context or input or to the run seed; its coins are not the run seed's
    generator nor another party's; an expansion depends on the seed it is given only."""
    from protocols.correlated_noise import noise_rng
    from protocols.mpc.coins import call_rng

    m = 3
    inputs = distinct_inputs(m)
    made: dict[int, list[Any]] = {}
    contexts: dict[int, PartyContext] = {}

    def curious(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        call = ctx.new_call("probe")
        coins, noise = call_rng(ctx, call), noise_rng(ctx, ctx.new_call("probe"))
        made[ctx.party] = [coins, noise, coins.random(4), noise.random(4),
                           ctx.randomness.expand(bytes(32), call, 4)]
        return (yield from secure_sum(ctx, x, "prg"))

    programs = [spy(curious, contexts) for _ in range(m)]
    sim = Simulation(Network.build(m), seed=RUN_SEED, record_draws=True)
    sim.run([Party(p, programs[p], {"x": inputs[p]}) for p in range(m)])
    me = contexts[0]
    others = [contexts[p] for p in range(1, m)]
    assert findings(made[0], me, others, inputs[1:]) == []
    for p in range(1, m):  # each party's coins are its own; a seed's expansion is everyone's
        assert not np.array_equal(made[0][2], made[p][2])
        assert not np.array_equal(made[0][3], made[p][3])
        assert np.array_equal(made[0][4], made[p][4])
    run_rng = np.random.default_rng(np.random.SeedSequence(RUN_SEED))
    assert not np.array_equal(made[0][2], run_rng.random(4))


def test_a_party_scribbling_over_its_mask_scratch_reaches_no_one() -> None:
    """New state of this change: the scratch buffers a party's stream ciphers keep between
    mask streams (``protocols.crypto.scratch.StreamScratch``). Party 0 draws a stream through
    them, overwrites every buffer it can reach with ones, and draws again. Each party owns its
    own scratch (none shared, reachable from no other context), and every party's streams,
    party 0's second one included, equal the stream built outside the run by the module
    function, which keeps no scratch: nothing written into one call's buffers reaches a later
    call or another party."""
    from protocols.crypto.keystream import field_stream
    from protocols.crypto.scratch import StreamScratch

    m, n = 3, 5000  # within one kept group: drawn through the owner's scratch buffer
    drawn: dict[int, list[np.ndarray]] = {}
    contexts: dict[int, PartyContext] = {}
    calls: list[Call] = []

    def scribbler(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        call = ctx.new_call("probe")
        calls.append(call)
        first = ctx.randomness.expand(bytes(32), call, n).copy()
        if ctx.party == 0:
            scratch = [o for o in reachable([ctx]).values() if isinstance(o, StreamScratch)]
            assert len(scratch) == 1  # the attack reaches what it means to
            for buffer in (scratch[0]._buffer, scratch[0]._counters):
                if buffer is not None:
                    buffer.view(np.uint8)[...] = 0xFF
        drawn[ctx.party] = [first, ctx.randomness.expand(bytes(32), call, n).copy()]
        return (yield from secure_sum(ctx, x, "prg"))

    sim = Simulation(Network.build(m), seed=RUN_SEED)
    sim.run([Party(p, spy(scribbler, contexts), {"x": x})
             for p, x in enumerate(distinct_inputs(m))])
    reference = field_stream(bytes(32), calls[0].index, n, sim.field)
    for p in range(m):
        for stream in drawn[p]:
            assert np.array_equal(stream, reference), p
    owned = {p: [o for o in reachable([ctx]).values() if isinstance(o, StreamScratch)]
             for p, ctx in contexts.items()}
    assert all(len(s) == 1 for s in owned.values())
    assert len({id(s[0]) for s in owned.values()}) == m


def test_no_party_derives_another_partys_stream_through_the_seed_registry() -> None:
    """Party 0 asks :mod:`protocols.seeds` for parties 1 and 2's registered streams (``rng``,
    ``x25519``, ``masks``) from every root it holds: its generator's entropy, its own seeds
    and keys as integers, and every non-negative integer reachable from what it was handed.
    None is another party's seed (the views hold the true ones). Handed the run seed, the same
    derivation gives every one of them (so the test can fail): the registry is a pure
    function of a root, and no root a party holds leads to another party's."""
    from protocols import seeds

    m = 3
    inputs = distinct_inputs(m)
    per_party = [name for name, label in seeds.LABELS.items() if label.owner == "party"]
    assert set(per_party) == {"rng", "x25519", "masks"}

    def curious(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        total = yield from secure_sum(ctx, x, "prg")
        return total, ctx

    handed: list[Any] = []
    programs = [observed(curious, handed), sum_program(), sum_program()]
    result = Simulation(Network.build(m), seed=RUN_SEED).run(
        [Party(p, programs[p], {"x": inputs[p]}) for p in range(m)])
    ctx = result.outputs[0][1]
    roots = {int(ctx.rng.bit_generator.seed_seq.entropy)}
    roots |= {int.from_bytes(b, "big") for b in (ctx.key_seed, *ctx.mask_seeds.values(),
                                                 *ctx.channel_keys.values()) if b}
    roots |= {int(o) for o in reachable(handed).values()
              if isinstance(o, int | np.integer) and not isinstance(o, bool) and o >= 0}
    assert RUN_SEED not in roots and len(roots) > 10
    theirs = {bytes.fromhex(result.views[p].seeds[name]) for p in (1, 2) for name in per_party}
    assert len(theirs) == 6
    derived = {seeds.derive(root, name, party=p) for root in roots for p in (1, 2)
               for name in per_party}
    assert not derived & theirs
    assert {seeds.derive(RUN_SEED, name, party=p) for p in (1, 2) for name in per_party} == theirs
