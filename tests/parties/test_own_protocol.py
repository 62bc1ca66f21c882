"""A user's own protocol, declared with :func:`protocols.registry.declare_protocol` (issue 30).

The weighted average of ``own_protocol`` is written from the public API only. Its honest form
must be ``private`` under every audit method; its planted bug (masks only between neighbours,
which still cancel) must be a ``leak`` under every method, and a small attack recovers an
honest party's value and weight from the coalition's view. Expected values come from numpy.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Generator
from typing import Any

import numpy as np
import pytest
from own_protocol import (
    DECLARATION,
    NAME,
    chained_masked_sum,
    chained_weighted_average,
    masked_sum,
    weighted_average,
)

from parties.audit import SIMULATORS
from parties.party import site_parties
from protocols import secure_sum
from protocols.context import PartyContext, add_one_stream_mask
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.errors import InputError
from protocols.field import prime_field
from protocols.registry import (
    REGISTRY,
    Declaration,
    declare_protocol,
    installed_declarations,
    resolve,
    with_declaration,
)
from sim.contract import CostMismatch, check_declared_cost
from sim.network import Network
from sim.privacy import audit
from sim.simulation import Simulation

VALUES = [{"value": 2.0 + m, "weight": 0.25 * (m + 1)} for m in range(3)]


def field_inputs(prime: int | str) -> list[np.ndarray]:
    F = prime_field(prime)
    return [F.elements([3 + m, 1 + m]) for m in range(3)] if F.p > 7 else [
        F.elements([m + 1]) for m in range(3)]


@pytest.mark.parametrize(("method", "prime"), [("simulation", "2^61-1"), ("statistical", "2^61-1"),
                                               ("linear", "2^61-1"), ("exact", 7)])
def test_the_declared_protocol_is_private_and_its_planted_bug_a_leak(method, prime) -> None:
    inputs = field_inputs(prime)
    honest = audit(masked_sum, inputs, [1], prime=prime, method=method, trials=200,
                   protocol=DECLARATION)
    assert honest.verdict == "private", honest.details
    planted = audit(chained_masked_sum, inputs, [1], prime=prime, method=method, trials=200,
                    protocol=DECLARATION)
    assert planted.verdict == "leak"
    assert planted.message.startswith(f"{NAME}#1.column_sum from ")


def test_real_valued_program_with_named_inputs_is_audited_by_the_simulation_method() -> None:
    honest = audit(weighted_average, VALUES, [1], prime="2^61-1", trials=200,
                   protocol=DECLARATION)
    assert honest.verdict == "private"
    planted = audit(chained_weighted_average, VALUES, [1], prime="2^61-1", trials=200,
                    protocol=DECLARATION)
    assert planted.verdict == "leak"
    run = Simulation(Network.build(3), seed=3).run(site_parties(weighted_average, VALUES))
    v = np.array([x["value"] for x in VALUES])
    w = np.array([x["weight"] for x in VALUES])
    for m in range(3):
        assert run.outputs[m] == pytest.approx(float(w @ v / w.sum()), abs=1e-6)


def _curious_one(chain: bool):
    """Party 1 runs the protocol and also computes the mask s_01 it shares with party 0."""

    def program(ctx: PartyContext, value: float, weight: float) -> Generator[Any, Any, Any]:
        if ctx.party != 1:
            return (yield from (chained_weighted_average if chain else weighted_average)(
                ctx, value, weight))
        pair = ctx.fixed.encode(np.array([weight * value, weight]), n_summands=ctx.n_parties)
        call = ctx.new_call(NAME)
        yield Input("x", pair, call)
        zero = ctx.field.zeros(2)
        # party 1's mask with party 0 alone is −s_01 (the higher party subtracts), drawn once
        # and used both ways; party 0 sent x̂_0 + s_01 (+ s_02 unless the chain dropped it)
        minus_s01 = add_one_stream_mask(ctx.randomness, 1, [0], call, zero, ctx.field)
        with_2 = add_one_stream_mask(ctx.randomness, 1, [2], call, pair, ctx.field)
        masked = ctx.field.add(with_2, minus_s01)
        yield SendEach(dict.fromkeys(ctx.peers, masked), call, "column_sum")
        got = yield RecvEach(ctx.peers, call, "column_sum")
        guess = ctx.fixed.decode(ctx.field.add(got[0], minus_s01))
        yield Output("sum", ctx.field.sum_arrays([masked, *got.values()]), call)
        return guess

    return program


def test_an_attack_recovers_party_0s_value_and_weight_only_under_the_planted_bug() -> None:
    # the curious party 1 masks as the chain does (with 0 and 2), which is its honest role
    # there; in the honest protocol it would mask with 0 and 2 too, so both runs differ only
    # in party 0's masks
    w0v0, w0 = VALUES[0]["weight"] * VALUES[0]["value"], VALUES[0]["weight"]
    leaky = Simulation(Network.build(3), seed=9).run(
        site_parties(_curious_one(chain=True), VALUES))
    guess = np.asarray(leaky.outputs[1])
    assert guess == pytest.approx([w0v0, w0], abs=2.0 ** -24)
    assert guess[0] / guess[1] == pytest.approx(VALUES[0]["value"], rel=1e-6)
    honest = Simulation(Network.build(3), seed=9).run(
        site_parties(_curious_one(chain=False), VALUES))
    assert np.abs(np.asarray(honest.outputs[1]) - [w0v0, w0]).max() > 1.0


def test_the_ledger_meets_the_declared_cost_and_a_wrong_declaration_is_named() -> None:
    for m in (2, 3, 5):
        run = Simulation(Network.build(m), seed=m).run(
            site_parties(weighted_average, VALUES[:2] + [VALUES[2]] * (m - 2)))
        assert check_declared_cost(run, DECLARATION, length=2) == 1
        wrong = declare_protocol(NAME, functionality=secure_sum.functionality,
                                 simulator=secure_sum.SecureSumSimulator,
                                 cost=lambda n, length: secure_sum.Cost(1, 2 * (n - 1),
                                                                        2 * (n - 1) * length))
        with pytest.raises(CostMismatch, match=r"weighted_average#1: party 0 has messages_sent"):
            check_declared_cost(run, wrong, length=2)
    # the built-in SecureSum declares its cost through the same field
    inputs = [{"x": np.arange(4.0) + m} for m in range(4)]
    run = Simulation(Network.build(4), seed=1).run(
        site_parties(lambda ctx, x: secure_sum.secure_sum(ctx, x, "explicit"), inputs))
    assert check_declared_cost(run, REGISTRY["secure_sum"], length=4, variant="explicit") == 1
    with pytest.raises(InputError, match="does not take"):
        check_declared_cost(run, REGISTRY["secure_sum"], d=4)


def test_declare_protocol_refuses_bad_arguments_by_name() -> None:
    good = {"functionality": secure_sum.functionality, "simulator": secure_sum.SecureSumSimulator}
    for bad, pattern in [({"name": "two words"}, "name = "),
                         ({"functionality": 3}, "functionality = 3"),
                         ({"simulator": 3}, "simulator = 3"),
                         ({"cost": "1"}, "cost = '1'"),
                         ({"uses": "secure_sum"}, "uses = ")]:
        args = {"name": "mine", **good, **bad}
        name = args.pop("name")
        with pytest.raises(InputError, match=pattern):
            declare_protocol(name, **args)
    sim = secure_sum.SecureSumSimulator("prg")
    assert declare_protocol("mine", functionality=good["functionality"],
                            simulator=sim).simulator(None) is sim


def test_simulators_stay_read_only_and_a_declaration_reaches_the_audit_explicitly() -> None:
    with pytest.raises(TypeError):
        SIMULATORS[NAME] = DECLARATION.simulator  # type: ignore[index]
    assert resolve(None).judge(NAME) is None  # nothing global was written by declaring it
    assert resolve(None, with_declaration(DECLARATION)).judge(NAME) is DECLARATION
    assert resolve(DECLARATION).judge(NAME) is DECLARATION


def test_installed_entry_points_add_declarations_and_may_not_replace_built_ins() -> None:
    def point(name: str, value: str) -> importlib.metadata.EntryPoint:
        return importlib.metadata.EntryPoint(name, value, "mpcsim.protocols")

    found = installed_declarations([point(NAME, "own_protocol:DECLARATION")])
    assert found[NAME] is DECLARATION
    for bad, pattern in [(point("secure_sum", "own_protocol:DECLARATION"), "must name a"),
                         (point(NAME, "own_protocol:NAME"), "must name a Declaration"),
                         (point(NAME, "no_such_module_xyz:D"), "does not load")]:
        with pytest.raises(InputError, match=pattern):
            installed_declarations([bad])
    renamed = Declaration("secure_sum", DECLARATION.functionality, DECLARATION.simulator)
    import own_protocol

    own_protocol.RENAMED = renamed  # a module attribute the entry point can name
    try:
        with pytest.raises(InputError, match="would replace the built-in"):
            installed_declarations([point("secure_sum", "own_protocol:RENAMED")])
    finally:
        del own_protocol.RENAMED


def test_a_program_takes_its_input_under_any_name() -> None:
    F = prime_field("2^61-1")
    inputs = [F.elements([1 + m, 2]) for m in range(3)]

    def named(ctx: PartyContext, gradient: np.ndarray) -> Generator[Any, Any, Any]:
        return (yield from secure_sum.secure_sum_field(ctx, gradient))

    for method in ("simulation", "linear"):
        r = audit(named, inputs, [0], prime="2^61-1", method=method, trials=100)
        assert r.verdict == "private", (method, r.details)
    with pytest.raises(InputError, match=r"takes the inputs value, weight"):
        audit(weighted_average, [1.0, 2.0, 3.0], [0], prime="2^61-1")
