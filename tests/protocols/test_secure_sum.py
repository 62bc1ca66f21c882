"""SecureSum against the shared protocol contract (DESIGN.md, "Conventions"), and on its own.

The contract, for 2, 3 and 5 parties, for a tiny field, 2^31 − 1 and 2^61 − 1, and for both
variants: the result equals the plaintext sum; the ledger equals the declared cost; the same
seed gives an identical ledger and identical views; every received message lies in exactly one
view; an abort reaches every waiting peer.

Expected values are computed independently: sums with Python integers (mod p) or
:class:`fractions.Fraction` (exact dyadic rationals), message counts and sizes from the
closed forms of issue 2 (2(M−1)d elements per party for ``explicit``, (M−1)d for ``prg``) and
the documented wire layout.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Generator
from fractions import Fraction
from functools import partial
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from parties.party import site_parties
from parties.view import View
from protocols.context import AesRandomness, MaskReuseError, PartyContext
from protocols.crypto.sealing import SEAL_OVERHEAD_BYTES
from protocols.effects import Call, Send, SendEach
from protocols.errors import FieldOverflowError, InputError, MpcsimError, ProtocolAbort
from protocols.field import FixedPoint, prime_field
from protocols.secure_sum import (
    ALL_VARIANTS,
    COST_FORMULAS,
    PROTOCOL,
    declared_cost,
    secure_sum,
    secure_sum_field,
)
from protocols.sharing import (
    additive_reconstruct,
    additive_split,
    column_sum,
    own_share,
    pair_shares,
)
from sim.network import Network
from sim.simulation import Result, Simulation

P7, P31, P61 = 7, (1 << 31) - 1, (1 << 61) - 1

# (name, prime, frac_bits): the tiny field runs on field elements, the others on reals
CONTRACT_FIELDS = [("GF7", P7, 0), ("GF(2^31-1)", P31, 8), ("GF(2^61-1)", P61, 24)]
CONTRACT_PARTIES = [2, 3, 5]
D = 4  # vector length in the contract runs


def expected_elements_sent(variant: str, m: int, d: int) -> int:
    """Issue 2: explicit sends 2(M−1)d elements per party, prg (M−1)d."""
    return (2 if variant == "explicit" else 1) * (m - 1) * d


def expected_messages_sent(variant: str, m: int) -> int:
    return (2 if variant == "explicit" else 1) * (m - 1)


def expected_rounds(variant: str) -> int:
    return 2 if variant == "explicit" else 1


def field_program(variant: str) -> Callable[..., Generator[Any, Any, Any]]:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secure_sum_field(ctx, x, variant))  # type: ignore[arg-type]

    return program


def real_program(variant: str) -> Callable[..., Generator[Any, Any, Any]]:
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secure_sum(ctx, x, variant))  # type: ignore[arg-type]

    return program


class Case:
    """One contract case: its inputs, the program that sums them and the exact answer."""

    def __init__(self, prime: int, frac_bits: int, m: int, variant: str, seed: int = 0) -> None:
        self.prime, self.frac_bits, self.m, self.variant = prime, frac_bits, m, variant
        rng = np.random.default_rng([prime % 1000, frac_bits, m, seed])
        if prime == P7:
            ints = [rng.integers(0, P7, D).tolist() for _ in range(m)]
            ints[0][0] = P7 - 1  # make the plaintext sum wrap around p
            ints[1][0] = P7 - 1
            self.inputs = [np.array(v, dtype=np.int64) for v in ints]
            self.expected = [sum(col) % P7 for col in zip(*ints, strict=True)]
            self.program = field_program(variant)
        else:
            # dyadic reals k / 2^f with |k| up to the M-fold headroom: exact in floating point
            shift = max(0, ((prime - 1) // 2 // m).bit_length() - 53)  # keep 53 bits
            top = ((prime - 1) // 2 // m) >> shift << shift
            ks = [[int(v) >> shift << shift for v in rng.integers(-top, top, D, endpoint=True)]
                  for _ in range(m)]
            ks[0][0], ks[1][0] = top, top  # at the bound, both positive
            ks[0][1], ks[1][1] = -top, -top  # at the bound, both negative
            scale = 1 << frac_bits
            self.inputs = [np.array([float(Fraction(k, scale)) for k in row]) for row in ks]
            assert all(Fraction(float(Fraction(k, scale))) == Fraction(k, scale)
                       for row in ks for k in row)
            self.expected = [float(Fraction(sum(col), scale)) for col in zip(*ks, strict=True)]
            self.program = real_program(variant)

    def simulation(self, seed: int = 1, **kwargs: Any) -> Simulation:
        return Simulation(Network.build(self.m), prime=self.prime, frac_bits=self.frac_bits,
                          seed=seed, **kwargs)

    def run(self, seed: int = 1, **kwargs: Any) -> Result:
        parties = site_parties(self.program, [{"x": x} for x in self.inputs])
        return self.simulation(seed, **kwargs).run(parties)


CONTRACT = [
    pytest.param(prime, f, m, variant, id=f"{name}-M{m}-{variant}")
    for name, prime, f in CONTRACT_FIELDS
    for m in CONTRACT_PARTIES
    for variant in ALL_VARIANTS
]


def message_key(m: Any) -> tuple:
    return (m.sender, m.protocol, m.call, m.step, m.round)


def view_signature(view: View) -> tuple:
    """Everything in a view, as comparable plain values."""

    def plain(v: Any) -> Any:
        if isinstance(v, np.ndarray | np.generic):
            a = np.asarray(v)
            return (str(a.dtype), a.shape, a.tolist())
        if isinstance(v, dict):
            return tuple(sorted((k, plain(x)) for k, x in v.items()))
        if isinstance(v, list | tuple):
            return tuple(plain(x) for x in v)
        return v

    return (
        view.party, view.role, plain(view.inputs), plain(view.seeds),
        tuple((message_key(m), plain(m.payload)) for m in view.received),
        tuple((c, label, plain(v)) for c, label, v in view.protocol_inputs),
        tuple((c, label, plain(v)) for c, label, v in view.outputs),
        tuple((key, plain(v)) for key, v in view.draws),
    )


# -- the contract ------------------------------------------------------------------------------


@pytest.mark.parametrize(("prime", "frac_bits", "m", "variant"), CONTRACT)
def test_contract_result_equals_plaintext_sum(prime: int, frac_bits: int, m: int,
                                              variant: str) -> None:
    case = Case(prime, frac_bits, m, variant)
    result = case.run()
    assert sorted(result.outputs) == list(range(m))
    for party in range(m):
        out = np.asarray(result.outputs[party])
        assert out.shape == (D,)
        assert [int(v) if prime == P7 else float(v) for v in out] == case.expected


@pytest.mark.parametrize(("prime", "frac_bits", "m", "variant"), CONTRACT)
def test_contract_ledger_equals_declared_cost(prime: int, frac_bits: int, m: int,
                                              variant: str) -> None:
    case = Case(prime, frac_bits, m, variant)
    result = case.run()
    cost = declared_cost(variant, m, D)
    # the declaration itself against issue 2's closed forms
    assert (cost.rounds, cost.messages_sent, cost.elements_sent) == (
        expected_rounds(variant), expected_messages_sent(variant, m),
        expected_elements_sent(variant, m, D))
    rows = [r for r in result.ledger if r.protocol == PROTOCOL]
    bytes_per_message = 4 + 8 + 8 * D + SEAL_OVERHEAD_BYTES  # header, 1-D shape, body, GCM
    for party in range(m):
        sent = [r for r in rows if r.sender == party]
        received = [r for r in rows if r.receiver == party]
        for side in (sent, received):
            assert len(side) == cost.messages_sent
            assert sum(r.elements for r in side) == cost.elements_sent
            assert all(r.bytes == bytes_per_message for r in side)
        assert Counter(r.receiver for r in sent) == Counter(
            {p: cost.messages_sent // (m - 1) for p in range(m) if p != party})
    rounds = sorted({r.round for r in rows})
    assert len(rounds) == cost.rounds
    assert rounds == list(range(rounds[0], rounds[0] + cost.rounds))
    assert rounds[0] == 2  # key agreement occupies round 1
    summary = result.ledger.summary("protocol")[PROTOCOL]
    assert summary == {"calls": 1, "messages": m * cost.messages_sent,
                       "elements": m * cost.elements_sent,
                       "bytes": m * cost.messages_sent * bytes_per_message,
                       "rounds": cost.rounds}


@pytest.mark.parametrize(("prime", "frac_bits", "m", "variant"), CONTRACT)
def test_contract_same_seed_same_ledger_and_views(prime: int, frac_bits: int, m: int,
                                                  variant: str) -> None:
    case = Case(prime, frac_bits, m, variant)
    a, b = case.run(seed=42), case.run(seed=42)
    assert list(a.ledger) == list(b.ledger)
    assert a.ledger.to_csv() == b.ledger.to_csv()
    for party in range(m):
        assert view_signature(a.views[party]) == view_signature(b.views[party])
    c = case.run(seed=43)
    assert [int(v) if prime == P7 else float(v) for v in c.outputs[0]] == case.expected
    # another seed draws other masks: the column sums received differ (p = 7 has only 7^4
    # possible vectors, so compare every received message at once)
    def masked(result: Result) -> list:
        return [msg.payload.tolist() for p in range(m) for msg in result.views[p].received
                if msg.protocol == PROTOCOL]
    assert masked(a) != masked(c)


@pytest.mark.parametrize(("prime", "frac_bits", "m", "variant"), CONTRACT)
def test_contract_every_received_message_lies_in_exactly_one_view(
    prime: int, frac_bits: int, m: int, variant: str
) -> None:
    case = Case(prime, frac_bits, m, variant)
    result = case.run()
    from_ledger = Counter(
        (r.receiver, r.sender, r.protocol, r.call, r.step, r.round) for r in result.ledger
    )
    from_views = Counter(
        (party, *message_key(msg)) for party, view in result.views.items()
        for msg in view.received
    )
    assert from_views == from_ledger
    assert all(count == 1 for count in from_ledger.values())  # each message is unique
    # the payloads in the views carry as many elements as the ledger says
    elements = {(r.receiver, r.sender, r.protocol, r.call, r.step): r.elements
                for r in result.ledger}
    for party, view in result.views.items():
        for msg in view.received:
            size = 0 if msg.payload.dtype == np.uint8 else msg.payload.size
            assert elements[(party, msg.sender, msg.protocol, msg.call, msg.step)] == size


def failing_program(variant: str, bad: int, step: str, seen: dict[int, ProtocolAbort]):
    """SecureSum in which party ``bad`` raises instead of sending ``step``; every party
    records the abort it receives before passing it on."""

    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        inner = secure_sum_field(ctx, ctx.field.elements(x), variant)  # type: ignore[arg-type]
        value: Any = None
        while True:
            try:
                effect = inner.send(value)
            except StopIteration as stop:
                return stop.value
            if ctx.party == bad and isinstance(effect, SendEach | Send) and effect.step == step:
                raise RuntimeError(f"planted failure before {step}")
            try:
                value = yield effect
            except ProtocolAbort as abort:
                seen[ctx.party] = abort
                raise

    return program


ABORT_CASES = [
    pytest.param(prime, f, m, variant, step, id=f"{name}-M{m}-{variant}-{step}")
    for name, prime, f in CONTRACT_FIELDS
    for m in CONTRACT_PARTIES
    for variant in ALL_VARIANTS
    for step in (("share", "column_sum") if variant == "explicit" else ("column_sum",))
]


@pytest.mark.parametrize(("prime", "frac_bits", "m", "variant", "step"), ABORT_CASES)
def test_contract_abort_reaches_every_waiting_peer(prime: int, frac_bits: int, m: int,
                                                  variant: str, step: str) -> None:
    bad = m - 1
    seen: dict[int, ProtocolAbort] = {}
    parties = site_parties(failing_program(variant, bad, step, seen),
                           [{"x": np.arange(D) + i} for i in range(m)])
    sim = Simulation(Network.build(m), prime=prime, frac_bits=frac_bits, seed=3)
    with pytest.raises(ProtocolAbort) as info:
        sim.run(parties)
    abort = info.value
    assert abort.party == bad
    # the party had received key agreement (round 1) and, before 'column_sum' in the
    # explicit variant, the shares (round 2)
    assert abort.round == (2 if (variant, step) == ("explicit", "column_sum") else 1)
    assert "planted failure" in abort.reason
    assert isinstance(abort.__cause__, RuntimeError)
    assert sorted(seen) == [p for p in range(m) if p != bad]
    assert abort.call == "secure_sum#1"  # key agreement was call 0
    for peer_abort in seen.values():  # a notice: who aborted in which call, no reason
        assert (peer_abort.party, peer_abort.round, peer_abort.reason, peer_abort.call) == (
            abort.party, None, "", abort.call)


# -- issue 2 "Done when": M = 2..8 ---------------------------------------------------------


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize("m", range(2, 9))
def test_elements_per_party_and_accuracy_for_2_to_8_parties(m: int, variant: str) -> None:
    d, f = 10, 24
    rng = np.random.default_rng([m, len(variant)])
    xs = [rng.normal(0, 100, d) for _ in range(m)]
    sim = Simulation(Network.build(m), prime="2^61-1", frac_bits=f, seed=m)
    result = sim.run(site_parties(real_program(variant), [{"x": x} for x in xs]))
    rows = [r for r in result.ledger if r.protocol == PROTOCOL]
    for party in range(m):
        assert sum(r.elements for r in rows if r.sender == party) == expected_elements_sent(
            variant, m, d)
        assert sum(r.elements for r in rows if r.receiver == party) == expected_elements_sent(
            variant, m, d)
    total = np.sum(xs, axis=0)
    for party in range(m):
        assert np.max(np.abs(result.outputs[party] - total)) <= m * 2.0**-f


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_a_party_holds_one_batch_of_peers_vectors_and_nothing_else_changes(
        variant: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Issue 32, item 3: past RECEIVE_BATCH peers a party adds each batch up before reading
    the next. At M = 40 the sum is numpy's, and every view file (byte for byte) and ledger row
    is the one of a run that reads all 39 vectors at once (the batch patched above M)."""
    import protocols.secure_sum as secure_sum_module
    from sim.view_store import write_view

    m, d, f = 40, 7, 24
    rng = np.random.default_rng(32)
    xs = [rng.normal(0, 100, d) for _ in range(m)]
    held: list[int] = []
    summed = secure_sum_module._receive_summed

    def counting(ctx: PartyContext, *args: Any) -> Generator[Any, Any, list[np.ndarray]]:
        got = yield from summed(ctx, *args)
        held.append(len(got))
        return got

    def run() -> Result:
        sim = Simulation(Network.build(m), prime="2^61-1", frac_bits=f, seed=5)
        return sim.run(site_parties(real_program(variant), [{"x": x} for x in xs]))

    monkeypatch.setattr(secure_sum_module, "_receive_summed", counting)
    batched = run()
    assert secure_sum_module.RECEIVE_BATCH < m - 1
    # one partial sum and the last batch's vectors: 39 = 2 · 16 + 7
    assert set(held) == {1 + (m - 1) % secure_sum_module.RECEIVE_BATCH}
    held.clear()
    monkeypatch.setattr(secure_sum_module, "RECEIVE_BATCH", m)
    at_once = run()
    assert set(held) == {m}  # its own vector and the 39 peers'
    total = np.sum(xs, axis=0)
    for party in range(m):
        assert np.max(np.abs(batched.outputs[party] - total)) <= m * 2.0**-f
        assert np.array_equal(batched.outputs[party], at_once.outputs[party])
        files = [write_view(tmp_path / f"{name}-{party}.view", run.views[party])
                 for name, run in (("batched", batched), ("at_once", at_once))]
        assert files[0].read_bytes() == files[1].read_bytes()
    assert batched.ledger.to_csv() == at_once.ledger.to_csv()


@settings(max_examples=50, deadline=None, derandomize=True)
@given(
    data=st.data(),
    m=st.integers(min_value=2, max_value=6),
    d=st.integers(min_value=1, max_value=6),
    prime=st.sampled_from([P7, P31, P61]),
    variant=st.sampled_from(ALL_VARIANTS),
)
def test_property_any_parties_length_and_inputs_in_range(
    data: st.DataObject, m: int, d: int, prime: int, variant: str
) -> None:
    if prime == P7:
        ints = [data.draw(st.lists(st.integers(0, P7 - 1), min_size=d, max_size=d))
                for _ in range(m)]
        inputs = [np.array(v, dtype=np.int64) for v in ints]
        program, f = field_program(variant), 0
        expected: list = [sum(col) % P7 for col in zip(*ints, strict=True)]
    else:
        f = 8 if prime == P31 else 24
        shift = max(0, ((prime - 1) // 2 // m).bit_length() - 53)  # exact as floats
        top = (prime - 1) // 2 // m >> shift
        ks = [[k << shift for k in data.draw(st.lists(st.integers(-top, top), min_size=d,
                                                     max_size=d))]
              for _ in range(m)]
        inputs = [np.array([float(Fraction(k, 1 << f)) for k in row]) for row in ks]
        program = real_program(variant)
        expected = [float(Fraction(sum(col), 1 << f)) for col in zip(*ks, strict=True)]
    sim = Simulation(Network.build(m), prime=prime, frac_bits=f, seed=d,
                     keys="preshared")
    result = sim.run(site_parties(program, [{"x": x} for x in inputs]))
    for party in range(m):
        assert [int(v) if prime == P7 else float(v) for v in result.outputs[party]] == expected
    sent = Counter()
    for r in result.ledger:
        sent[r.sender] += r.elements
    assert sent == Counter(dict.fromkeys(range(m), expected_elements_sent(variant, m, d)))


def test_real_input_of_any_shape_comes_back_in_that_shape() -> None:
    xs = [np.arange(6, dtype=float).reshape(2, 3) * (i + 1) / 4 for i in range(3)]
    sim = Simulation(Network.build(3), seed=5)
    result = sim.run(site_parties(real_program("prg"), [{"x": x} for x in xs]))
    assert result.outputs[1].shape == (2, 3)
    assert result.outputs[1].tolist() == (np.arange(6).reshape(2, 3) * 6 / 4).tolist()
    # the ledger counts the flattened vector: 6 elements to each of 2 peers
    assert sum(r.elements for r in result.ledger if r.sender == 0) == 12


# -- the pure share functions ---------------------------------------------------------------


@pytest.mark.parametrize("p", [P7, P31, P61])
def test_split_gives_shares_that_add_up_to_the_secret(p: int) -> None:
    field = prime_field(p)
    rng = np.random.default_rng(p % 97)
    x_hat = field.random(rng, 5)
    masks = [field.random(rng, 5) for _ in range(4)]
    shares = additive_split(field, x_hat, masks)
    assert len(shares) == 5
    for got, mask in zip(shares[:4], masks, strict=True):
        assert got.tolist() == mask.tolist()
    totals = [sum(int(s[j]) for s in shares) % p for j in range(5)]
    assert totals == [int(v) for v in x_hat]
    kept = own_share(field, x_hat, masks)
    assert [int(v) for v in kept] == [
        (int(x_hat[j]) - sum(int(mk[j]) for mk in masks)) % p for j in range(5)]
    assert own_share(field, x_hat, []).tolist() == x_hat.tolist()  # M = 1: keep everything
    assert additive_split(field, x_hat, [])[0].tolist() == x_hat.tolist()


@pytest.mark.parametrize("p", [P7, P61])
@pytest.mark.parametrize("m", [2, 3, 8])
def test_table_2_1_column_sums_add_up_to_the_row_sums(p: int, m: int) -> None:
    """Party i splits x̂_i into r_i^(j); party j sums column j; the column sums add up."""
    field = prime_field(p)
    rng = np.random.default_rng(m)
    d = 3
    x_hats = [field.random(rng, d) for _ in range(m)]
    table = []  # table[i][j] = r_i^(j)
    for i in range(m):
        masks = [field.random(rng, d) for _ in range(m - 1)]
        row = additive_split(field, x_hats[i], masks)  # shares for j ≠ i, then the kept one
        order = [j for j in range(m) if j != i] + [i]
        table.append({j: row[k] for k, j in enumerate(order)})
    columns = [column_sum(field, table[j][j], [table[i][j] for i in range(m) if i != j])
               for j in range(m)]
    for j in range(m):
        assert [int(v) for v in columns[j]] == [
            sum(int(table[i][j][c]) for i in range(m)) % p for c in range(d)]
    total = additive_reconstruct(field, columns)
    assert [int(v) for v in total] == [sum(int(x[c]) for x in x_hats) % p for c in range(d)]
    assert column_sum(field, x_hats[0], []).tolist() == x_hats[0].tolist()


def test_pair_shares_give_each_end_the_other_half() -> None:
    stream = np.arange(10, dtype=np.uint64)
    lo_mine, lo_theirs = pair_shares(stream, 1, 4, 5)
    hi_mine, hi_theirs = pair_shares(stream, 4, 1, 5)
    assert lo_mine.tolist() == [0, 1, 2, 3, 4] and lo_theirs.tolist() == [5, 6, 7, 8, 9]
    assert hi_mine.tolist() == lo_theirs.tolist() and hi_theirs.tolist() == lo_mine.tolist()


def formula_value(text: str, m: int, d: int) -> int:
    """Evaluate a formula such as ``2(M-1)d`` (implicit multiplication) with Python."""
    expr = re.sub(r"(?<=[0-9A-Za-z)])(?=[(A-Za-z])", "*", text)
    return int(eval(expr, {"__builtins__": {}}, {"M": m, "d": d}))


@pytest.mark.parametrize("variant", ALL_VARIANTS)
@pytest.mark.parametrize(("m", "d"), [(2, 1), (3, 7), (8, 1000), (100, 3)])
def test_declared_cost_formulas(variant: str, m: int, d: int) -> None:
    cost = declared_cost(variant, m, d)
    assert cost.rounds == expected_rounds(variant)
    assert cost.messages_sent == expected_messages_sent(variant, m)
    assert cost.elements_sent == expected_elements_sent(variant, m, d)
    texts = COST_FORMULAS[variant]  # the human-readable formulas say the same
    assert formula_value(texts["rounds"], m, d) == cost.rounds
    assert formula_value(texts["messages_sent"], m, d) == cost.messages_sent
    assert formula_value(texts["elements_sent"], m, d) == cost.elements_sent


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(InputError, match="variant"):
        declared_cost("pairwise", 3, 1)
    ctx = make_context(0, 3)
    with pytest.raises(InputError, match="variant"):
        next(secure_sum_field(ctx, ctx.field.elements([1]), "pairwise"))  # type: ignore[arg-type]


def test_non_flat_field_input_is_refused() -> None:
    ctx = make_context(0, 3)
    with pytest.raises(InputError, match="flat"):
        next(secure_sum_field(ctx, ctx.field.elements([[1, 2]])))


# -- what the messages are: shares and masked column sums --------------------------------


@pytest.mark.parametrize("m", [2, 4])
def test_explicit_shares_are_the_private_draws_and_column_sums_add_up(m: int) -> None:
    case = Case(P61, 24, m, "explicit")
    result = case.run(record_draws=True)
    fixed = FixedPoint(prime_field(P61), 24)
    x_hats = [fixed.encode(x) for x in case.inputs]
    draws = {p: dict(result.views[p].draws) for p in range(m)}
    for i in range(m):
        (masks,) = [v for k, v in draws[i].items() if k[0] == "private"]
        peers = [p for p in range(m) if p != i]
        for k, peer in enumerate(peers):  # share for the k-th peer: the k-th slice
            (msg,) = [g for g in result.views[peer].received
                      if g.sender == i and g.step == "share"]
            assert msg.payload.tolist() == masks[k * D:(k + 1) * D].tolist()
    # each column sum is the sum of the shares its sender held (Python ints)
    for j in range(m):
        held = [[int(v) for v in x_hats[j]]]
        masks_j = draws[j][next(k for k in draws[j] if k[0] == "private")]
        held[0] = [(held[0][c] - sum(int(masks_j[c + k * D]) for k in range(m - 1))) % P61
                   for c in range(D)]
        for msg in result.views[j].received:
            if msg.step == "share":
                held.append([int(v) for v in msg.payload])
        expected = [sum(col) % P61 for col in zip(*held, strict=True)]
        for peer in (p for p in range(m) if p != j):
            (msg,) = [g for g in result.views[peer].received
                      if g.sender == j and g.step == "column_sum"]
            assert [int(v) for v in msg.payload] == expected


def _recorded_pair_streams(result: Any, m: int, length: int) -> dict[tuple[int, int], list[int]]:
    """Every pair's stream as both of its ends recorded it (they must agree)."""
    streams: dict[tuple[int, int], list[int]] = {}
    for p in range(m):
        for key, values in result.views[p].draws:
            kind, lo, hi = key[0], key[1], key[2]
            assert kind == "pair"
            values = [int(v) for v in values]
            assert streams.setdefault((lo, hi), values) == values  # both ends drew the same
            assert len(values) == length
    assert sorted(streams) == [(a, b) for a in range(m) for b in range(a + 1, m)]
    return streams


@pytest.mark.parametrize("m", [2, 3, 5])
def test_one_stream_column_sum_adds_the_lower_partys_stream_and_subtracts_the_higher(
    m: int,
) -> None:
    """prg: r^(j) = x̂_j + Σ_{i>j} s_ji − Σ_{i<j} s_ij, one d-element stream per pair."""
    case = Case(P61, 24, m, "prg")
    result = case.run(record_draws=True)
    fixed = FixedPoint(prime_field(P61), 24)
    streams = _recorded_pair_streams(result, m, D)
    for j in range(m):
        x_hat = [int(v) for v in fixed.encode(case.inputs[j])]
        expected = [
            (x_hat[c] + sum(streams[(j, i)][c] for i in range(j + 1, m))
             - sum(streams[(i, j)][c] for i in range(j))) % P61
            for c in range(D)
        ]
        for peer in (p for p in range(m) if p != j):
            (msg,) = [g for g in result.views[peer].received
                      if g.sender == j and g.protocol == PROTOCOL]
            assert [int(v) for v in msg.payload] == expected


@pytest.mark.parametrize("m", [2, 3, 5])
def test_prg_column_sum_is_input_plus_pairwise_mask_differences(m: int) -> None:
    """prg_two_share: r^(j) = x̂_j + Σ_{i≠j} (r_i^(j) − r_j^(i)), both ends recorded."""
    case = Case(P61, 24, m, "prg_two_share")
    result = case.run(record_draws=True)
    fixed = FixedPoint(prime_field(P61), 24)
    streams = _recorded_pair_streams(result, m, 2 * D)
    for j in range(m):
        x_hat = [int(v) for v in fixed.encode(case.inputs[j])]
        expected = []
        for c in range(D):
            acc = x_hat[c]
            for i in (q for q in range(m) if q != j):
                lo, hi = min(i, j), max(i, j)
                stream = streams[(lo, hi)]
                r_lo_hi, r_hi_lo = stream[c], stream[D + c]  # first d: lo's share for hi
                r_i_j, r_j_i = (r_lo_hi, r_hi_lo) if i == lo else (r_hi_lo, r_lo_hi)
                acc += r_i_j - r_j_i
            expected.append(acc % P61)
        for peer in (p for p in range(m) if p != j):
            (msg,) = [g for g in result.views[peer].received
                      if g.sender == j and g.protocol == PROTOCOL]
            assert [int(v) for v in msg.payload] == expected


# -- masks are never reused --------------------------------------------------------------


def twice_program(variant: str):
    def program(ctx: PartyContext, x: np.ndarray) -> Generator[Any, Any, Any]:
        first = yield from secure_sum(ctx, x, variant)  # type: ignore[arg-type]
        second = yield from secure_sum(ctx, x, variant)  # type: ignore[arg-type]
        return first, second

    return program


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_two_calls_in_one_program_draw_different_masks(variant: str) -> None:
    m = 3
    xs = [np.full(D, 1.5 * (i + 1)) for i in range(m)]
    sim = Simulation(Network.build(m), seed=9, record_draws=True)
    result = sim.run(site_parties(twice_program(variant), [{"x": x} for x in xs]))
    for party in range(m):
        first, second = result.outputs[party]
        assert first.tolist() == second.tolist() == [9.0] * D
        draws = result.views[party].draws
        calls = sorted({key[-2] for key, _ in draws})
        assert len(calls) == 2  # two invocations, each with its own call number
        by_call = {c: [v for key, v in draws if key[-2] == c] for c in calls}
        values_first = {int(v) for arr in by_call[calls[0]] for v in arr}
        values_second = {int(v) for arr in by_call[calls[1]] for v in arr}
        # 2^61-element field: a shared element would be a reused mask, not chance
        assert values_first.isdisjoint(values_second)
        assert len({key for key, _ in draws}) == len(draws)  # no stream drawn twice
        # same inputs twice, yet the masked column sums the party received differ
        received = [msg for msg in result.views[party].received if msg.protocol == PROTOCOL
                    and msg.step == "column_sum"]
        by_sender = {}
        for msg in received:
            by_sender.setdefault(msg.sender, []).append(msg.payload.tolist())
        for payloads in by_sender.values():
            assert len(payloads) == 2 and payloads[0] != payloads[1]


def test_a_signed_sum_of_streams_claims_each_peer_s_stream_once() -> None:
    """The one-pass signed sum claims every listed peer's stream (one bit per owner): a peer
    drawn before, alone or in another tuple, is refused, and so is a tuple naming a peer
    twice; the private stream and peer 0's of one number are different streams."""
    field = prime_field(P61)
    randomness = AesRandomness(field, b"\x01" * 32)
    for peer in range(5):
        randomness.set_pair_seed(peer, bytes([peer + 2]) * 32)
    base = field.elements([1, 2, 3])
    call = Call(PROTOCOL, 7)
    randomness.private(call, 3)  # owner −1 of stream 7: not peer 0's
    randomness.add_pairwise_signed_sum(base, (0, 1, 2), call)
    for peers, first_drawn in (((2, 3), 2), ((1,), 1), ((3, 4, 0), 0)):
        with pytest.raises(MaskReuseError, match=f"shared with {first_drawn}"):
            randomness.add_pairwise_signed_sum(base, peers, call)
    with pytest.raises(MaskReuseError, match="shared with 3"):  # claimed on the way to 0
        randomness.pairwise(3, call, 3)
    randomness.add_pairwise_signed_sum(base, (3, 4), Call(PROTOCOL, 8))  # another number
    with pytest.raises(MaskReuseError, match="shared with 4"):
        randomness.add_pairwise_signed_sum(base, (4, 4), Call(PROTOCOL, 10))
    randomness.add_pairwise_signed_sum(base, tuple([0, 1, 2, 3, 4]), Call(PROTOCOL, 9))


def test_the_record_of_drawn_streams_keeps_a_few_bytes_per_stream_not_per_peer() -> None:
    """100 signed sums over 255 peers each leave under 200 kB allocated (tracemalloc; 82 kB
    measured): the record is one integer per stream, where a (peer, stream) pair per draw
    left 3.6 MB."""
    import tracemalloc

    field = prime_field(P61)
    randomness = AesRandomness(field, b"\x01" * 32)
    peers = tuple(range(1, 256))
    for peer in peers:
        randomness.set_pair_seed(peer, peer.to_bytes(32, "little"))
    base = field.elements([1])
    randomness.add_pairwise_signed_sum(base, peers, Call(PROTOCOL, 0))  # caches warmed up
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    for index in range(1, 101):
        randomness.add_pairwise_signed_sum(base, peers, Call(PROTOCOL, index))
    kept = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert kept < 200_000, kept


def test_asking_for_the_same_mask_stream_twice_is_refused() -> None:
    field = prime_field(P61)
    randomness = AesRandomness(field, b"\x01" * 32)
    randomness.set_pair_seed(1, b"\x02" * 32)
    call = Call(PROTOCOL, 3)
    randomness.private(call, 4)
    randomness.private(call, 4, sub=1)  # another sub-stream is fine
    with pytest.raises(MaskReuseError):
        randomness.private(call, 4)
    randomness.pairwise(1, call, 4)
    with pytest.raises(MaskReuseError):
        randomness.pairwise_many((1,), call, 4)
    randomness.pairwise(1, Call(PROTOCOL, 4), 4)  # the next call is fresh


# -- overflow is caught before any message is sent -----------------------------------------


def make_context(party: int, m: int, prime: int = P61, frac_bits: int = 24) -> PartyContext:
    field = prime_field(prime)
    return PartyContext(
        party=party, role="site", parties=tuple(range(m)), roles=dict.fromkeys(range(m), "site"),
        fixed=FixedPoint(field, frac_bits), rng=np.random.default_rng(0),
        randomness=AesRandomness(field, bytes(32)),
    )


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_overflow_is_raised_before_the_first_effect(variant: str) -> None:
    m = 4
    ctx = make_context(0, m)
    bound_m = Fraction((P61 - 1) // 2 // m, 1 << 24)
    x = [1.0, float(bound_m) * 1.5]  # fits one summand, not the M-fold sum
    gen = secure_sum(ctx, x, variant)  # type: ignore[arg-type]
    with pytest.raises(FieldOverflowError) as info:
        next(gen)
    assert info.value.value == x[1]
    assert ctx.new_call("probe").index == 0  # no protocol call was even started


@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_overflow_in_a_run_sends_nothing_and_aborts_everyone(variant: str) -> None:
    m = 3
    bound_m = float(Fraction((P61 - 1) // 2 // m, 1 << 24))
    xs = [np.ones(D), np.array([0.0, 0.0, bound_m * 2, 0.0]), np.ones(D)]
    sent: list[tuple[int, int, str]] = []

    def spy(sender: int, receiver: int, tag: str, data: bytes) -> bytes:
        sent.append((sender, receiver, tag))
        return data

    sim = Simulation(Network.build(m), seed=1, interceptor=spy)
    with pytest.raises(ProtocolAbort) as info:
        sim.run(site_parties(real_program(variant), [{"x": x} for x in xs]))
    assert info.value.party == 1
    assert isinstance(info.value.__cause__, FieldOverflowError)
    assert not [s for s in sent if s[0] == 1 and s[2].startswith(PROTOCOL)]
    assert [s for s in sent if s[0] == 1]  # it did take part in key agreement


# -- fields wider than 64 bits (galois-backed, object payloads) ----------------------------


@pytest.mark.parametrize(("prime", "frac_bits", "width", "big"),
                         [((1 << 127) - 1, 60, 16, 1e15), ((1 << 64) - 59, 20, 8, 1e9)])
@pytest.mark.parametrize("variant", ALL_VARIANTS)
def test_wide_fields_sum_exactly_and_count_their_width(prime: int, frac_bits: int, width: int,
                                                       big: float, variant: str) -> None:
    m, d = 3, 2
    xs = [np.array([big * (i + 1), -2.5 - i]) for i in range(m)]
    sim = Simulation(Network.build(m), prime=prime, frac_bits=frac_bits, seed=2)
    result = sim.run(site_parties(real_program(variant), [{"x": x} for x in xs]))
    expected = [float(sum(Fraction(x[j]) for x in xs)) for j in range(d)]
    for party in range(m):
        assert result.outputs[party].tolist() == expected
    rows = [r for r in result.ledger if r.protocol == PROTOCOL]
    # the wire writes each element in a fixed width of whole 8-byte words (at least 8)
    assert {r.bytes for r in rows} <= {4 + 8 + w * d + SEAL_OVERHEAD_BYTES for w in (8, width)}
    assert max(r.bytes for r in rows) == 4 + 8 + width * d + SEAL_OVERHEAD_BYTES
    assert sum(r.elements for r in rows if r.sender == 0) == expected_elements_sent(variant, m, d)


def _party_1_randomness(field: Any, peers: tuple[int, ...]) -> AesRandomness:
    """Party 1's AES randomness with fixed pair seeds for ``peers``."""
    r = AesRandomness(field, b"\x02" * 32, party=1)
    for peer in peers:
        r.set_pair_seed(peer, bytes([peer + 1]) * 32)
    return r


def test_fused_pairwise_mask_equals_the_mask_from_the_recorded_streams() -> None:
    """AesRandomness.pairwise_mask (fused, streams never materialised) must equal the net mask
    computed from the streams one by one, which is what recording runs (audits) use."""
    from protocols.effects import Call
    from protocols.sharing import pairwise_mask_from_streams

    field = prime_field("2^61-1")
    peers = (0, 2, 5)
    call = Call("secure_sum", 3)
    source = partial(_party_1_randomness, field, peers)

    fused = source().pairwise_mask(peers, call, 1001)
    streams = source().pairwise_many(peers, call, 2 * 1001)
    expected = [0] * 1001
    for peer, row in zip(peers, streams, strict=True):
        sign = 1 if 1 < peer else -1  # Σ_j (r_j^(1) − r_1^(j)), first half = lower → higher
        for i in range(1001):
            expected[i] += sign * (int(row[1001 + i]) - int(row[i]))
    assert [int(v) for v in fused] == [v % field.p for v in expected]
    assert np.array_equal(fused, pairwise_mask_from_streams(field, 1, peers, streams, 1001))


@pytest.mark.parametrize("n", [1001, 3 * (1 << 13) + 5])  # the batched and the fused path
def test_fused_one_stream_mask_equals_the_mask_from_the_recorded_streams(n: int) -> None:
    """AesRandomness.pairwise_signed_sum (one-stream mask, never materialised) equals
    Σ_{j>i} s_ij − Σ_{j<i} s_ij computed element by element from the streams."""
    from protocols.context import one_stream_mask, one_stream_mask_from_streams
    from protocols.effects import Call

    field = prime_field("2^61-1")
    peers = (0, 2, 5)
    call = Call("secure_sum", 3)
    source = partial(_party_1_randomness, field, peers)

    fused = one_stream_mask(source(), 1, peers, call, n, field)
    streams = source().pairwise_many(peers, call, n)
    expected = [0] * n
    for peer, row in zip(peers, streams, strict=True):
        sign = 1 if 1 < peer else -1
        expected = [e + sign * int(v) for e, v in zip(expected, row, strict=True)]
    assert [int(v) for v in fused] == [v % field.p for v in expected]
    assert np.array_equal(fused, one_stream_mask_from_streams(field, 1, peers, streams))


# -- keys installed all at once (a pre-shared set-up) -----------------------------------------


class _OneSeedAtATime:
    """A randomness that takes seeds only one by one (no ``set_pair_seeds``)."""

    def __init__(self) -> None:
        self.seeds: list[tuple[int, bytes]] = []

    def set_pair_seed(self, peer: int, seed: bytes) -> None:
        self.seeds.append((peer, seed))


@pytest.mark.parametrize("kind", ["aes", "one_at_a_time"])
def test_installing_all_pair_keys_records_what_installing_them_one_by_one_does(
        kind: str) -> None:
    m, party = 5, 2
    peers = [p for p in range(m) if p != party]
    channel = {p: bytes([p]) * 32 for p in peers}
    masks = {p: bytes([100 + p]) * 32 for p in peers}
    one, many = make_context(party, m), make_context(party, m)
    if kind == "one_at_a_time":
        one.randomness, many.randomness = _OneSeedAtATime(), _OneSeedAtATime()  # type: ignore[assignment]
    for p in peers:
        one.install_pair_keys(p, channel[p], masks[p])
    many.install_all_pair_keys(channel, masks)
    assert list(many.channel_keys.items()) == list(one.channel_keys.items())
    assert list(many.mask_seeds.items()) == list(one.mask_seeds.items())
    if kind == "one_at_a_time":
        assert many.randomness.seeds == one.randomness.seeds == list(masks.items())  # type: ignore[attr-defined]
        return
    x = np.arange(2001, dtype=np.uint64)  # the masked column sums agree, seed for seed
    call = Call(PROTOCOL, 0)
    assert np.array_equal(
        many.randomness.add_pairwise_signed_sum(x, tuple(peers), call),  # type: ignore[attr-defined]
        one.randomness.add_pairwise_signed_sum(x, tuple(peers), call))  # type: ignore[attr-defined]
    with pytest.raises(MpcsimError, match="both a channel key and a mask seed"):
        make_context(party, m).install_all_pair_keys(channel, {peers[0]: masks[peers[0]]})
