"""NormedSecureSum's revealing variants, audited relative to the leakage they declare.

``reveal_norm`` declares ‖S‖² (with its dithered opening) and ``secure_sum`` declares S; the
simulation audit simulates each against the functionality extended by that declared value:

* the honest variants are ``private`` for every coalition of data holders below M, with power,
  and the verdict reports the declared leakage (``details["reveals"]``);
* the declared values are the functionality's: Q = ‖Σ_m round(x_m·2^f)‖² and S, exactly
  (numpy / Python integers from the inputs);
* each plant (tests/parties/planted_nss_variants.py) that reveals more than it declares is a
  ``leak`` located at the opening it plants, and the per-party norm and the opened sum are
  shown real: the coalition's view gives the honest party's ‖X_h‖², and S minus its own input.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from planted_nss import PARAMS
from planted_nss_variants import planted_parties

from parties.audit.calls import split_run
from parties.audit.randomness import ConditionedRandomness
from parties.party import site_parties
from protocols.effects import Call
from protocols.field.mersenne127 import mpc_field
from protocols.field.mersenne127 import mpc_field as field_of
from protocols.functionality import CallInstance, beyond
from protocols.mpc.public import signed
from protocols.normed_secure_sum import (
    PROTOCOL,
    REVEALED_NORM,
    REVEALED_SUM,
    encode_inputs,
    normed_secure_sum,
)
from protocols.normed_secure_sum_ideal import functionality
from sim.experiments.svd.normed_secure_sum import with_dealer
from sim.privacy import SimPyRunner, audit

P = 2**61 - 1
TRIALS = 40
MERSENNE61_FIELD = field_of(P)


def _inputs(d: int = 4, m: int = 3) -> list[np.ndarray]:
    rng = np.random.default_rng(1)
    return [rng.normal(size=d) for _ in range(m)]


def _honest(variant: str, inputs: list[np.ndarray]):
    program = lambda ctx, x: normed_secure_sum(ctx, x, variant=variant, params=PARAMS)  # noqa: E731
    return with_dealer(site_parties(program, [{"x": x} for x in inputs]),
                       [(1, inputs[0].size)], variant, PARAMS)


def _encoded_sum(inputs: list[np.ndarray]) -> list[int]:
    return [int(v) for v in sum(encode_inputs(x, PARAMS).astype(object) for x in inputs)]


def _views(parties, members: tuple[int, ...]):
    runner = SimPyRunner("2^61-1")
    views = runner(parties, ConditionedRandomness([p.id for p in parties], members, 3, 0))
    records = split_run(views, members, runner.field, (0, 1, 2))
    return views, next(r for c, r in records.items() if c.protocol == "normed_secure_sum")


@pytest.mark.parametrize("variant,what", [("reveal_norm", "‖S‖²"), ("secure_sum", "S (")])
@pytest.mark.parametrize("coalition", [(0,), (1, 2)])
def test_an_honest_variant_is_private_relative_to_what_it_declares(
        variant: str, what: str, coalition: tuple[int, ...]) -> None:
    result = audit(_honest(variant, _inputs()), None, coalition, prime=P, trials=TRIALS, seed=2)
    assert result.verdict == "private", result.details
    assert result.power is not None
    reveals = result.details["reveals"]
    assert list(reveals) == ["normed_secure_sum#1"]
    assert reveals["normed_secure_sum#1"].startswith(what)
    assert variant in reveals["normed_secure_sum#1"]


def test_the_declared_leakage_is_the_functionality_of_the_inputs() -> None:
    inputs = _inputs()
    total = _encoded_sum(inputs)
    _, norm = _views(_honest("reveal_norm", inputs), (0,))
    assert [int(v) for v in norm.view.output(REVEALED_NORM)] == [sum(t * t for t in total)]
    _, plain = _views(_honest("secure_sum", inputs), (0,))
    assert [int(v) for v in np.ravel(plain.view.output(REVEALED_SUM))] == total
    wrong = [total[0] + 1, *total[1:]]
    inst = CallInstance(Call(PROTOCOL, 0), MERSENNE61_FIELD, (0, 1, 2),
                        inputs={m: (("x", x),) for m, x in enumerate(inputs)},
                        outputs={0: ((REVEALED_SUM, np.array(wrong)),)})
    assert beyond(functionality(inst), inst.outputs[0]) is not None  # not the inputs' sum
    right = replace(inst, outputs={0: ((REVEALED_SUM, np.array(total)),)})
    assert beyond(functionality(right), right.outputs[0]) is None


@pytest.mark.parametrize("leak,coalition,step", [
    ("opens_sum", (0,), "90.output.sum"),
    ("own_norm", (0,), "90.output.own_norm_sq"),
    ("own_norm_sum", (1, 2), "90.output.own_norm_sq"),
])
def test_a_variant_that_opens_more_than_it_declares_is_a_leak_at_that_opening(
        leak: str, coalition: tuple[int, ...], step: str) -> None:
    result = audit(planted_parties(leak, _inputs(), PARAMS), None, coalition, prime=P,
                   trials=TRIALS, seed=2)
    assert result.verdict == "leak", result.details
    assert result.call == 1 and step in result.message, result.message


def test_a_variant_that_does_not_declare_its_leakage_is_reported_revealing_it() -> None:
    result = audit(planted_parties("undeclared", _inputs(), PARAMS), None, (0,), prime=P,
                   trials=8, seed=2)
    assert result.verdict == "leak" and result.call == 1, result.details
    assert "does not declare" in result.details["reason"]


def test_the_planted_openings_give_away_what_the_declaration_hides() -> None:
    """Attacks: party 0 alone reads party 1's ‖X_1‖², and (with party 2) x_1 from the sum."""
    inputs = _inputs()
    field = mpc_field(P)
    _, record = _views(planted_parties("own_norm", inputs, PARAMS), (0,))
    got = int(signed(field, record.received[(0, 1, "90.output.own_norm_sq", 0)])[0])
    assert got == sum(int(v) ** 2 for v in encode_inputs(inputs[1], PARAMS))
    _, record = _views(planted_parties("opens_sum", inputs, PARAMS), (0, 2))
    step = "90.output.sum"
    opened = record.received[(0, 1, step, 0)]
    for m in (0, 2):
        opened = field.add(opened, np.ravel(record.view.sent[(1, m, step)]))
    own = sum(encode_inputs(inputs[m], PARAMS).astype(object) for m in (0, 2))
    x1 = [int(v) - int(o) for v, o in zip(signed(field, opened), own, strict=True)]
    assert x1 == [int(v) for v in encode_inputs(inputs[1], PARAMS)]
