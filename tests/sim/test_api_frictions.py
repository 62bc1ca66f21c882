"""Issue 30's frictions, each reproduced as the issue describes it and answered.

A researcher used the public API on a weighted average of their own: one fixed-point default
everywhere, garbage refused instead of judged, and bad arguments refused by name the way the
CLI refuses them (InputError naming the argument, never a numpy casting error).
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import numpy as np
import pytest

from parties.audit.coalitions import CoalitionStudy
from parties.audit.result import AuditResult
from parties.party import site_parties
from protocols.context import PartyContext
from protocols.effects import Output
from protocols.errors import InputError
from protocols.field import FRAC_BITS, prime_field
from protocols.secure_sum import secure_sum, secure_sum_field
from sim.coalitions import coalition_study, private_t_text
from sim.network import Network
from sim.privacy import SimPyRunner, audit, secure_sum_program
from sim.scenario import load_scenario
from sim.simulation import Simulation

F = prime_field("2^61-1")


def weighted_average(ctx: PartyContext, value: float, weight: float) -> Generator[Any, Any, Any]:
    """The issue's program: SecureSum of (w v, w), then their ratio."""
    s = yield from secure_sum(ctx, np.array([weight * value, weight]))
    return s[0] / s[1]


def test_one_frac_bits_default_everywhere(tmp_path) -> None:
    assert FRAC_BITS == 24
    assert Simulation(Network.build(2)).fixed.frac_bits == FRAC_BITS
    assert SimPyRunner("2^61-1").frac_bits == FRAC_BITS
    path = tmp_path / "s.toml"
    path.write_text('[network]\nparties = 2\n[algorithm]\nname = "secure_sum"\n'
                    '[data]\nsource = "synthetic"\nrows = 4\ncols = 2\n')
    assert load_scenario(path).frac_bits == FRAC_BITS
    # a field too small for 24 bits gets the largest it holds, instead of an error
    assert SimPyRunner(7).frac_bits == 1 and Simulation(prime=7).fixed.frac_bits == 1


def test_a_weight_that_rounds_to_zero_is_an_input_error_not_a_verdict() -> None:
    inputs = [{"value": 1.0 + m, "weight": 0.5} for m in range(3)]
    with pytest.raises(InputError, match=r"inputs\[0\]\['weight'\] holds 0\.5.*frac_bits = 0"):
        audit(weighted_average, inputs, [0], prime="2^61-1", frac_bits=0, trials=50)
    with pytest.raises(InputError, match=r"inputs\[0\]\['weight'\] holds 0\.5"):
        coalition_study(weighted_average, inputs, prime="2^61-1", method="simulation",
                        frac_bits=0, sizes=[1], trials=50)
    # at the default the same audit runs, and the run's average is numpy's
    result = audit(weighted_average, inputs, [0], prime="2^61-1", trials=100)
    assert result.verdict == "private"
    run = Simulation(Network.build(3), seed=1).run(site_parties(weighted_average, inputs))
    assert run.outputs[0] == pytest.approx(np.mean([1.0, 2.0, 3.0]), abs=1e-6)


def test_an_output_that_decodes_to_nan_is_an_input_error_naming_it() -> None:
    inputs = [{"value": 1.0 + m, "weight": 0.0} for m in range(3)]
    with pytest.warns(RuntimeWarning), pytest.raises(InputError, match=r"party 0's output .*nan"):
        audit(weighted_average, inputs, [0], prime="2^61-1", trials=50)


@pytest.mark.parametrize(("coalition", "pattern"), [
    ([0, 0], r"coalition = \[0, 0\] names a party twice"),
    ([3], r"coalition = \[3\] must name 1 to M − 1 of the parties 0..2; 3 is not one"),
    ([-1], r"-1 is not one"),
    (["0"], r"must hold party ids"),
    ([True], r"must hold party ids"),
    (0, r"coalition = 0 must be a list"),
])
def test_a_bad_coalition_is_refused_by_name(coalition, pattern) -> None:
    inputs = [F.elements([1, 2]) for _ in range(3)]
    with pytest.raises(InputError, match=pattern):
        audit(secure_sum_program("prg"), inputs, coalition, prime="2^61-1", trials=50)


def test_a_study_coalition_naming_a_party_twice_is_refused() -> None:
    inputs = [F.elements([1, 2]) for _ in range(3)]
    with pytest.raises(InputError, match=r"names a party twice"):
        coalition_study(secure_sum_program("prg"), inputs, [[0, 0]], prime="2^61-1")


@pytest.mark.parametrize(("inputs", "method", "pattern"), [
    ([[1, 2], [3, 4], [5, 6]], "simulation", r"inputs\[\d\] is refused by the program: "
                                             r"SecureSum x = .* is not an array of elements"),
    ([[1, 2], [3, 4], [5, 6]], "linear", r"inputs\[\d\]"),
    ([np.array([1.0, 2.0])] * 3, "simulation", r"inputs\[\d\] is refused by the program"),
    ([np.array([1.0, 2.0])] * 3, "statistical", r"inputs\[0\] has dtype float64"),
    ([np.array([np.nan, 2.0])] * 3, "simulation", r"inputs\[0\] holds .*nan.* must be finite"),
    ([np.array([1, -2])] * 3, "exact", r"inputs\[0\] holds a value outside 0..p − 1"),
])
def test_ints_floats_and_nan_handed_to_a_field_program_are_input_errors(inputs, method,
                                                                         pattern) -> None:
    def program(ctx: PartyContext, x: Any) -> Generator[Any, Any, Any]:
        return (yield from secure_sum_field(ctx, x))

    with pytest.raises(InputError, match=pattern):
        audit(program, inputs, [0], prime="2^61-1", method=method, trials=50)


def test_a_network_smaller_than_the_inputs_is_refused() -> None:
    parties = site_parties(lambda ctx, x: secure_sum(ctx, x), [{"x": [1.0]}] * 4)
    with pytest.raises(InputError, match=r"network has parties 0..2 but the run has 4 "):
        Simulation(Network.build(3), seed=1).run(parties)


def test_a_study_of_pairs_only_does_not_claim_t_0() -> None:
    inputs = [F.elements([v]) for v in (1, 2, 3, 4)]
    study = coalition_study(secure_sum_program("prg"), inputs, prime="2^61-1",
                            protocol="secure_sum", sizes=[2])
    assert [r.verdict for r in study.results] == ["private"] * 6  # C(4, 2) pairs
    text = private_t_text(study)
    assert "not determined" in text and "size 1 not audited" in text and "6 of 6" in text
    full = CoalitionStudy("linear", tuple(AuditResult((m,), "linear", "private")
                                          for m in range(4)), (0, 1, 2, 3), (0, 1, 2, 3),
                          dict.fromkeys(range(4), "site"))
    assert private_t_text(full) == "largest private t = 1"


def test_an_output_without_call_is_named_as_such() -> None:
    def program(ctx: PartyContext, x: Any) -> Generator[Any, Any, Any]:
        total = yield from secure_sum_field(ctx, x)
        yield Output("total", total)  # no call=: belongs to no call
        return total

    inputs = [F.elements([1, 2]) for _ in range(3)]
    result = audit(program, inputs, [0], prime="2^61-1", trials=50)
    assert result.verdict == "private"  # a run-level output beside the call's own
    from protocols.simulator import CallView  # the message a simulator gives, when it asks

    assert "without call=" in CallView.output.__code__.co_consts.__repr__()


def test_a_verdicts_call_number_is_the_ledgers() -> None:
    """The issue: call numbers shifted between a normal run and an audit run, by the one
    call key agreement takes. The audit's runs now number their calls as the run does
    (:mod:`parties.audit.numbering`): the audit's call c is the ledger's call c."""
    from protocols.effects import Recv, Send

    def two_sums(ctx: PartyContext, x: Any) -> Generator[Any, Any, Any]:
        yield from secure_sum_field(ctx, x)
        total = yield from secure_sum_field(ctx, x)
        call = ctx.new_call("secure_sum")  # planted: party 1 hands party 0 its input
        if ctx.party == 1:
            yield Send(0, x, call, "debug")
        elif ctx.party == 0:
            yield Recv(1, call, "debug")
        return total

    inputs = [F.elements([1 + m, 2]) for m in range(3)]
    run = Simulation(Network.build(3), seed=2, sealing=False).run(
        site_parties(two_sums, [{"x": v} for v in inputs]))
    (debug,) = [r for r in run.ledger if r.step == "debug"]
    assert (debug.protocol, debug.call) == ("secure_sum", 3)  # key_agreement#0 first
    verdict = audit(two_sums, inputs, [0], prime="2^61-1", trials=50)
    # the planted call records no input, so its simulator cannot judge it: the verdict
    # names it, by the ledger's number
    assert verdict.verdict == "not applicable" and verdict.call == debug.call
    assert f"secure_sum#{debug.call}" in verdict.details["reason"]


def test_a_failure_before_the_first_call_is_not_blamed_on_key_agreement() -> None:
    def refuses(ctx: PartyContext, x: Any) -> Generator[Any, Any, Any]:
        if ctx.party == 2:
            raise ValueError("refused before any call")
        return (yield from secure_sum(ctx, x))

    with pytest.raises(Exception) as info:
        Simulation(Network.build(3), seed=1).run(site_parties(refuses, [{"x": [1.0]}] * 3))
    assert info.value.call == ""  # type: ignore[attr-defined]
    assert "before its first call" in str(info.value.notice(2, info.value.call))  # type: ignore
