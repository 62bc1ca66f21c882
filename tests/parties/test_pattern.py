"""Issue 27, classes 1 and 2: views record what a party observes, and every audit method checks
the message pattern (counts, sizes, recipients, order, times, RecvAny/RecvWithin, aborts).

Expected values are closed forms of the network model (arrival = sent + size·8/bandwidth +
latency), numpy sums, and the plants' own definitions (tests/parties/planted_metadata.py) —
never a verdict's own figures.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import planted_metadata as pm
import pytest
from auditing import F5, F61, P, coalitions, field_inputs

import protocols.secure_sum as secure_sum_module
import sim.privacy as privacy_module
from parties.audit.alternatives import alternative_parties
from parties.audit.pattern import MemberPattern, check_alternatives, first_difference
from parties.audit.randomness import ConditionedRandomness
from parties.party import Party, site_parties
from parties.view import SIMULATED
from protocols import wire
from protocols.effects import Call, Compute, Recv, RecvAny, RecvWithin, Send
from protocols.errors import ProtocolAbort
from sim.network import Network
from sim.privacy import SimPyRunner, audit
from sim.runner import run_scenario
from sim.simulation import Simulation

LATENCY_S, BANDWIDTH_BPS = 0.010, 100e6  # Network.build's defaults
CALL = Call("probe", 0)


def _run(programs: list[Any], seed: int = 3, **inputs: Any) -> Any:
    sim = Simulation(Network.build(len(programs)), seed=seed, sealing=False, keys="none")
    return sim.run([Party(p, programs[p], {}) for p in range(len(programs))])


# -- item 1: the view records arrival times, what Compute/RecvAny/RecvWithin returned, aborts --


def test_the_view_records_arrival_times_and_compute_clocks() -> None:
    got: dict[str, float] = {}

    def sender(ctx: Any) -> Generator[Any, Any, Any]:
        got["clock"] = yield Compute(0.25)
        yield Send(1, np.arange(3, dtype=np.uint64), CALL, "a")

    def receiver(ctx: Any) -> Generator[Any, Any, Any]:
        yield Recv(0, CALL, "a")

    result = _run([sender, receiver])
    (row,) = list(result.ledger)
    (message,) = result.views[1].received
    assert result.views[1].clock == SIMULATED
    # closed form of the model: sent after 0.25 s of work, then size·8/bandwidth + latency
    assert message.arrived_s == pytest.approx(0.25 + row.bytes * 8 / BANDWIDTH_BPS + LATENCY_S,
                                              rel=1e-12)
    assert result.views[0].observed == [("compute", None, got["clock"])]
    assert got["clock"] == pytest.approx(0.25)


def test_the_view_records_what_recv_any_and_recv_within_returned() -> None:
    def late(delay: float, to: int = 0) -> Any:
        def program(ctx: Any) -> Generator[Any, Any, Any]:
            yield Compute(delay)
            yield Send(to, np.zeros(1, dtype=np.uint64), CALL, "x")
            yield Send(to, np.zeros(1, dtype=np.uint64), CALL, "y")
        return program

    def server(ctx: Any) -> Generator[Any, Any, Any]:
        first, _ = yield RecvAny(((1, CALL, "x"), (2, CALL, "x")))
        within = yield RecvWithin((1, 2), CALL, "y", 0.05)
        return first, sorted(within)

    result = _run([server, late(0.3), late(0.1)])
    first, within = result.outputs[0]
    assert (first, within) == (1, [2])  # party 2 computed less: first, and alone in time
    kinds = [o[0] for o in result.views[0].observed]
    assert kinds == ["recv_any", "recv_within"]
    recv_any, recv_within = result.views[0].observed
    assert recv_any[1:4] == (CALL, 1, 2)  # index 1 in the list: party 2
    assert recv_within[1:3] == (CALL, (2,))


def test_an_abort_notice_is_in_the_view_of_the_peer_it_reached() -> None:
    def failing(ctx: Any) -> Generator[Any, Any, Any]:
        ctx.new_call("secure_sum")
        yield Compute(0.0)
        raise ValueError("a private value")

    def waiting(ctx: Any) -> Generator[Any, Any, Any]:
        yield Recv(1, Call("secure_sum", 0), "s")

    with pytest.raises(ProtocolAbort) as info:
        _run([waiting, failing])
    views = info.value.views  # type: ignore[attr-defined]
    assert views[0].aborts == [(1, "")]  # no effect with a call yet: "before its first call"
    assert views[1].aborts == []


def test_replays_keep_times_and_observations_byte_identical() -> None:
    inputs = field_inputs(F61, 3, 4, 1)
    program = pm.recv_any_order()

    def once() -> Any:
        sim = Simulation(Network.build(3), prime=P, seed=9)
        return sim.run(site_parties(program, [{"x": x} for x in inputs])).views

    a, b = once(), once()
    for p in range(3):
        assert [m.arrived_s for m in a[p].received] == [m.arrived_s for m in b[p].received]
        assert a[p].observed == b[p].observed and a[p].aborts == b[p].aborts


# -- the comparison of two patterns ---------------------------------------------------------------


def _member(messages: list[tuple[tuple, int, float]], observed: tuple = (), aborts: tuple = (),
            member: int = 0, timed: bool = True) -> MemberPattern:
    return MemberPattern(member, tuple(messages), observed, aborts, timed)


KEY = (0, 1, "secure_sum", 2, "share", 0)


@pytest.mark.parametrize(("b", "prop"), [
    ([_member([(KEY, 4, 1.0)], aborts=((1, "secure_sum#2"),))], "abort"),
    ([_member([])], "count"),
    ([_member([(KEY, 5, 1.0)])], "size"),
    ([_member([(KEY, 4, 1.5)])], "time"),
    ([_member([(KEY, 4, 1.0)], observed=(("compute", None, 2.0),))], "count"),
])
def test_first_difference_names_the_property(b: list[MemberPattern], prop: str) -> None:
    a = (_member([(KEY, 4, 1.0)]),)
    diff = first_difference(a, tuple(b))
    assert diff is not None and diff.property == prop
    assert first_difference(a, a) is None


def test_first_difference_tells_a_recipient_from_a_count_and_reads_order_and_choices() -> None:
    to_0, to_2 = KEY, (2, *KEY[1:])
    a = (_member([(to_0, 1, 1.0)]), _member([], member=2))
    b = (_member([]), _member([(to_2, 1, 1.0)], member=2))
    assert first_difference(a, b).property == "recipient"  # type: ignore[union-attr]
    other = (0, 2, "secure_sum", 2, "share", 0)
    assert first_difference((_member([(KEY, 1, 1.0), (other, 1, 1.0)]),),
                            (_member([(other, 1, 1.0), (KEY, 1, 1.0)]),)).property == "order"
    call = Call("s", 1)
    pick = (_member([], observed=(("recv_any", call, 0, 1, 1.0),)),)
    other_pick = (_member([], observed=(("recv_any", call, 1, 2, 1.0),)),)
    diff = first_difference(pick, other_pick)
    assert diff is not None and (diff.property, diff.call) == ("recv_any", 1)
    # wall-clock times (MPI) are left out; simulated ones are compared
    assert first_difference((_member([(KEY, 1, 1.0)], timed=False),),
                            (_member([(KEY, 1, 2.0)], timed=False),)) is None


# -- item 2: every method catches the plants ----------------------------------------------------

PLANTS = {
    "extra_message": (pm.extra_message(), {"count"}),
    "data_length": (pm.data_length(), {"size"}),
    "compute_time": (pm.compute_time(), {"time"}),
    "recv_any_order": (pm.recv_any_order(), {"recv_any", "order", "time"}),
    "recv_within_late": (pm.recv_within_late(), {"recv_within", "order", "time"}),
    "abort_over": (pm.abort_over(), {"abort"}),
    "abort_checksum": (pm.abort_checksum(), {"abort"}),
}
# inputs with every honest side channel's value both ways across the alternatives: party 0
# (the coalition) holds a value that passes every check; x_1[0] = 5 (odd, below the threshold,
# not ≡ 0 mod 3)
INPUTS = [F61.elements([7, 1, 2, 3]), F61.elements([5, 4, 5, 6]), F61.elements([10, 7, 8, 9])]


def test_the_plants_compute_the_sum() -> None:
    expected = [int(v) % P for v in np.sum([np.asarray(x, dtype=object) for x in INPUTS], 0)]
    for name, (program, _) in PLANTS.items():
        if name.startswith("abort"):
            continue
        sim = Simulation(Network.build(3), prime=P, seed=1)
        result = sim.run(site_parties(program, [{"x": x} for x in INPUTS]))
        assert [int(v) for v in result.outputs[1]] == expected, name


@pytest.mark.parametrize("name", sorted(PLANTS))
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_simulation_and_statistical_methods_catch_every_plant(name: str, method: str) -> None:
    program, properties = PLANTS[name]
    result = audit(program, INPUTS, (0,), prime=P, method=method, trials=16, seed=4)
    assert result.verdict == "leak", (name, result)
    assert result.details["property"] in properties
    assert result.message  # names the message (or the abort)


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_the_linear_method_catches_or_steps_aside(name: str) -> None:
    program, properties = PLANTS[name]
    result = audit(program, INPUTS, (0,), prime=P, method="linear", seed=4)
    assert result.verdict in ("leak", "not applicable"), (name, result)
    if name in ("extra_message", "compute_time", "recv_any_order"):
        assert result.verdict == "leak" and result.details["property"] in properties


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_the_exact_method_catches_every_plant(name: str) -> None:
    program = pm.abort_over(2) if name == "abort_over" else PLANTS[name][0]  # p = 5: 3, 4 fail
    inputs = [F5.elements([1]), F5.elements([1]), F5.elements([2])]  # all pass the checks
    result = audit(program, inputs, (0,), prime=5, method="exact", max_runs=20_000, seed=4)
    assert result.verdict == "leak", (name, result)
    assert result.details["property"] in PLANTS[name][1] | {"time", "count"}


def test_a_recipient_chosen_by_the_input_is_named_as_such() -> None:
    inputs = [F61.elements([7, 1]), F61.elements([5, 4]), F61.elements([10, 7]),
              F61.elements([3, 3])]
    result = audit(pm.recipient(), inputs, (0, 2), prime=P, trials=16, seed=4)
    assert result.verdict == "leak" and result.details["property"] == "recipient"
    assert result.message == "status#0.ack from 1 to 2" or result.message.endswith("to 0")
    for method in ("statistical", "linear"):
        other = audit(pm.recipient(), inputs, (0, 2), prime=P, method=method, trials=16,
                      seed=4)
        assert other.verdict == "leak" and other.details["property"] == "recipient"


# -- attacks: the leaks are real ------------------------------------------------------------------


def test_attack_reads_a_parity_from_the_presence_of_a_message() -> None:
    rng = np.random.default_rng(8)
    for _ in range(6):
        inputs = [F61.random(rng, 2) for _ in range(3)]
        sim = Simulation(Network.build(3), prime=P, seed=2)
        views = sim.run(site_parties(pm.extra_message(), [{"x": x} for x in inputs])).views
        for h in (1, 2):
            assert pm.recover_parity(views[0], h) == int(inputs[h][0]) % 2


def test_attack_reads_an_input_mod_16_from_an_arrival_time() -> None:
    """Party 0 knows the network model and the size of what it received: party h's first
    share was sent after (x_h mod 16) ms of work and arrives size·8/bandwidth + latency
    later; party 0 solves for x_h mod 16."""
    rng = np.random.default_rng(3)
    inputs = [F61.random(rng, 4) for _ in range(3)]
    parties = site_parties(pm.compute_time(), [{"x": x} for x in inputs])
    views = SimPyRunner(P)(parties, ConditionedRandomness([0, 1, 2], (0,), 0, 0))
    firsts = {}
    for m in views[0].received:
        firsts.setdefault(m.sender, m)
    for h in (1, 2):
        m = firsts[h]
        wire_s = len(wire.encode(np.asarray(m.payload))) * 8 / BANDWIDTH_BPS + LATENCY_S
        assert round((m.arrived_s - wire_s) / 1e-3) == int(inputs[h][0]) % 16


# -- honest programs keep one pattern -------------------------------------------------------------


@pytest.mark.parametrize("variant", ["prg", "explicit"])
def test_honest_secure_sum_has_one_pattern_under_every_alternative(variant: str) -> None:
    runner = SimPyRunner(P)
    inputs = field_inputs(F61, 4, 3, 5)
    parties = site_parties(lambda ctx, x: secure_sum_module.secure_sum_field(ctx, x, variant),
                           [{"x": x} for x in inputs])
    for members in coalitions(4):
        ids = [p.id for p in parties]
        leak, ran = check_alternatives(
            lambda ps, ids=ids, members=members: runner(
                ps, ConditionedRandomness(ids, members, 0, 0)),
            parties, members, "simulation", np.random.default_rng(1), 4, P)
        assert leak is None and ran >= 3


def test_alternatives_keep_the_coalition_and_redraw_the_honest_arrays() -> None:
    x = [np.array([1.5, 2.0]), np.array([3.0, 4.0]), np.array([0.5, 9.0])]
    parties = site_parties(pm.honest_sum, [{"x": v, "k": 2} for v in x])
    for kind, variant in alternative_parties(parties, (0,), np.random.default_rng(0), 4):
        assert np.array_equal(variant[0].inputs["x"], x[0])
        assert all(variant[h].inputs["k"] == 2 for h in (1, 2))
        assert all(variant[h].inputs["x"].shape == (2,) for h in (1, 2))
        assert not all(np.array_equal(variant[h].inputs["x"], x[h]) for h in (1, 2)), kind


# -- through a scenario's [[audit]] --------------------------------------------------------------


def _scenario(audits: list[dict]) -> dict:
    return {"name": "pattern", "seed": 5, "network": {"parties": 3},
            "data": {"source": "synthetic", "kind": "uniform", "rows": 24, "cols": 4},
            "algorithm": {"name": "secure_sum"}, "audit": audits}


@pytest.mark.parametrize("plant", ["extra_message", "compute_time"])
def test_a_scenario_audit_reports_the_planted_metadata_leak(
        plant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    real_sum, field_sum = secure_sum_module.secure_sum, privacy_module.secure_sum_field
    make = getattr(pm, plant)
    # the entry imports it by name: patched first, so its import binds the real program
    monkeypatch.setattr("sim.experiments.secure_sum.secure_sum", make(real_sum))
    monkeypatch.setattr(secure_sum_module, "secure_sum", make(real_sum))
    monkeypatch.setattr(privacy_module, "secure_sum_field", make(field_sum))
    run = run_scenario(_scenario([
        {"coalition": [0], "method": "simulation", "trials": 16},
        {"coalition": [0], "method": "statistical", "trials": 10},
        {"coalition": [0], "method": "linear"}]))
    for entry in run.report["privacy"]:
        assert entry["verdict"] == "leak", entry
        assert entry["details"]["property"] == PLANTS[plant][1].copy().pop()


def test_a_scenario_audit_of_honest_secure_sum_stays_private() -> None:
    run = run_scenario(_scenario([{"coalition": list(c), "method": "simulation", "trials": 32}
                                  for c in coalitions(3)]))
    assert [e["verdict"] for e in run.report["privacy"]] == ["private"] * 6
