"""The pattern check redraws honest inputs of every numeric kind (issue 27, class 1).

Planted programs (:mod:`planted_inputs`) leak a private int, a float in a dict or an array in a
tuple through the size of one message; the simulation method must answer ``leak`` naming the
size, and the attack reads the flag from party 0's view. The same programs with the side input
equal at every site (a public parameter) stay ``private``. An input holding text cannot be
redrawn: the verdict is then ``inconclusive`` naming it, never ``private``.
"""

from __future__ import annotations

import numpy as np
import planted_inputs as pi
import pytest

from parties.audit import ConditionedRandomness
from parties.audit.alternatives import alternative_parties, public_inputs, unredrawn_inputs
from parties.party import Party, site_parties
from protocols.field import prime_field
from sim.privacy import SimPyRunner, audit

P61 = 2**61 - 1
F = prime_field(P61)
X = [F.elements([3, 4]), F.elements([5, 6]), F.elements([7, 8])]

PRIVATE_SIDE = {
    "int": (pi.int_ping, [{"x": x, "bias": b} for x, b in zip(X, (2, 4, 6), strict=True)]),
    "dict": (pi.dict_ping, [{"x": x, "meta": {"weight": w}}
                            for x, w in zip(X, (0.1, 0.2, 0.3), strict=True)]),
    "tuple": (pi.tuple_ping, [{"parts": (x, F.elements([b]))}
                              for x, b in zip(X, (2, 4, 6), strict=True)]),
}
PUBLIC_SIDE = {
    "int": (pi.int_ping, [{"x": x, "bias": 3} for x in X]),
    "dict": (pi.dict_ping, [{"x": x, "meta": {"weight": 0.9}} for x in X]),
}


def test_alternatives_redraw_numbers_in_every_container_and_keep_public_ones() -> None:
    inputs = [{"x": x, "n": m + 1, "w": 0.5 * m, "pair": (x, m), "cfg": {"k": 2, "v": [m]},
               "iters": 5, "name": f"site{m}"} for m, x in enumerate(X)]
    parties = [Party(m, pi.int_ping, kw) for m, kw in enumerate(inputs)]
    assert public_inputs(parties) == {"iters"}
    assert unredrawn_inputs(parties, (0,)) == ["party 1: name", "party 2: name"]
    changed = {k: False for k in ("x", "n", "w", "pair", "cfg")}
    for _, variant in alternative_parties(parties, (0,), np.random.default_rng(0), 6, P61):
        assert variant[0].inputs == parties[0].inputs  # the coalition's inputs are kept
        for h in (1, 2):
            new, old = variant[h].inputs, parties[h].inputs
            assert new["iters"] == 5 and new["name"] == old["name"]
            assert type(new["n"]) is int and type(new["w"]) is float
            assert type(new["pair"]) is tuple and type(new["cfg"]["v"]) is list
            changed["x"] |= not np.array_equal(new["x"], old["x"])
            changed["n"] |= new["n"] != old["n"]
            changed["w"] |= new["w"] != old["w"]
            changed["pair"] |= new["pair"][1] != old["pair"][1]
            changed["cfg"] |= new["cfg"]["v"] != old["cfg"]["v"]
    assert all(changed.values()), changed


@pytest.mark.parametrize("kind", PRIVATE_SIDE)
def test_a_pattern_that_follows_a_non_array_input_is_a_leak(kind: str) -> None:
    program, inputs = PRIVATE_SIDE[kind]
    parties = [Party(m, program, kw) for m, kw in enumerate(inputs)]  # tuples: not site_parties
    result = audit(parties, None, [0], prime=P61, method="simulation", trials=40)
    assert result.verdict == "leak", result.details
    assert result.details["property"] == "size"


@pytest.mark.parametrize("kind", PUBLIC_SIDE)
def test_a_pattern_that_follows_a_public_parameter_stays_private(kind: str) -> None:
    program, inputs = PUBLIC_SIDE[kind]
    result = audit(program, inputs, [0], prime=P61, method="simulation", trials=60)
    assert result.verdict == "private", result.details


def test_attack_reads_the_int_flag_from_the_ping_size() -> None:
    runner = SimPyRunner(P61, 0, 3)
    for biases in ((2, 4, 6), (2, 5, 6), (2, 4, 7)):
        inputs = [{"x": x, "bias": b} for x, b in zip(X, biases, strict=True)]
        views = runner(site_parties(pi.int_ping, inputs),
                       ConditionedRandomness([0, 1, 2], [0], 3, 0))
        assert [pi.recover_flag(views[0], h) for h in (1, 2)] == [
            biases[h] % 2 == 1 for h in (1, 2)]


def test_text_inputs_that_cannot_be_redrawn_are_never_private() -> None:
    inputs = [{"x": x, "label": name} for x, name in zip(X, ("al", "bo", "cy"), strict=True)]
    result = audit(pi.label_ping, inputs, [0], prime=P61, method="simulation", trials=60)
    assert result.verdict == "inconclusive"
    assert result.details["not_redrawn"] == ["party 1: label", "party 2: label"]
