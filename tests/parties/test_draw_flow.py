"""Key flow of honest draws (issue 27, class 5): a party's draw that reaches the coalition.

The audit controls every party's randomness, so it knows every draw. A draw found in the
coalition's view (:func:`parties.audit.key_search.find_draws`) is held fixed as the coalition's
own randomness, by position; the statistical method then tests the residual view, the
simulation method answers ``not applicable`` when a message is a non-affine function of held
draws (a drawn seed or key). Attacks below recover x̂_1 from
party 0's view by field arithmetic (Python integers), so each planted leak is real; honest
controls (a share reaching its addressee, a broadcast nonce, a drawn key that stays home) stay
``private``.
"""

from __future__ import annotations

import numpy as np
import planted_draws as pd
import pytest

from parties.audit import ConditionedRandomness
from parties.audit.key_search import MIN_BITS, carriers, find_draws
from parties.audit.randomness import private_key_id
from parties.party import site_parties
from protocols.effects import Call
from protocols.field import prime_field
from sim.privacy import SimPyRunner, audit

P61 = (1 << 61) - 1
F61 = prime_field(P61)
F5 = prime_field(5)
INPUTS = [F61.elements([11, 12]), F61.elements([21, 22]), F61.elements([31, 32])]
INPUTS5 = [F5.elements([1]), F5.elements([2]), F5.elements([3])]
LEAKS = ["cc_shares", "published_key", "key_in_pieces"]
STEPS = {"cc_shares": ("cc",), "published_key": ("session_id",),
         "key_in_pieces": ("hello", "bye")}
HONEST = ["seeded_shares", "nonce_first"]


def _views(program, inputs=INPUTS, trial=0):
    runner = SimPyRunner(P61, 0, 5)
    parties = site_parties(program, [{"x": x} for x in inputs])
    return runner(parties, ConditionedRandomness([0, 1, 2], [0], 5, trial))


def _received(view, sender: int, step: str) -> list[int]:
    (msg,) = [m for m in view.received if m.sender == sender and m.step == step]
    return [int(v) for v in np.ravel(msg.payload).tolist()]


def test_cc_shares_attack_recovers_the_honest_input() -> None:
    """x̂_1 = r^(1) − r_0^(1) − r_2^(1) + r_1^(0) + r_1^(2), all in party 0's view."""
    for inputs in (INPUTS, [INPUTS[0], F61.elements([5, 6]), F61.elements([47, 48])]):
        view = _views(pd.cc_shares, inputs)[0]
        (own,) = [v for k, v in view.draws if k[0] == "private"]
        mine_to_1 = [int(v) for v in own[:2]]
        colsum_1 = _received(view, 1, "column_sum")
        share_1 = _received(view, 1, "share")
        cc_1, cc_2 = _received(view, 1, "cc"), _received(view, 2, "cc")
        x1 = [(c - a - b + s + t) % P61
              for c, a, b, s, t in zip(colsum_1, mine_to_1, cc_2, share_1, cc_1, strict=True)]
        assert x1 == [int(v) for v in inputs[1]]


def test_published_key_attack_recovers_the_honest_input() -> None:
    """With both honest keys the coalition expands every share and solves for x̂_1."""
    for inputs in (INPUTS, [INPUTS[0], F61.elements([5, 6]), F61.elements([47, 48])]):
        view = _views(pd.published_key, inputs)[0]
        keys = {s: np.array(_received(view, s, "session_id"), dtype=np.uint64) for s in (1, 2)}
        # stream 1: the SecureSum call is the run's call 1 (key agreement is call 0)
        share = {s: [int(v) for v in pd.expand(F61, keys[s], 1, 4)] for s in (1, 2)}
        (own,) = [v for k, v in view.draws if k[0] == "private"]
        own_key = np.array([int(v) for v in own], dtype=np.uint64)
        mine_to_1 = [int(v) for v in pd.expand(F61, own_key, 1, 4)[:2]]
        colsum_1 = _received(view, 1, "column_sum")
        # party 1's peers are (0, 2): its shares are share[1][:2] (to 0), share[1][2:] (to 2);
        # party 2's peers are (0, 1): its share to 1 is share[2][2:]
        x1 = [(c - a - b + s + t) % P61 for c, a, b, s, t in zip(
            colsum_1, mine_to_1, share[2][2:], share[1][:2], share[1][2:], strict=True)]
        assert x1 == [int(v) for v in inputs[1]]


@pytest.mark.parametrize("name", LEAKS)
def test_statistical_catches_draws_that_reach_the_wrong_party(name: str) -> None:
    result = audit(getattr(pd, name), INPUTS, [0], prime=P61, method="statistical",
                   trials=200, seed=3)
    assert result.verdict == "leak"
    held = result.details["draws_held"]
    assert {h["received_by"] for h in held} == {0}
    assert {h["message"] for h in held} >= {f"secure_sum#1.{step} from {p} to 0"
                                            for step in STEPS[name] for p in (1, 2)}
    assert all(h["key"].startswith("draw of party ") for h in held)


@pytest.mark.parametrize("name", LEAKS)
def test_simulation_never_answers_private_on_them(name: str) -> None:
    result = audit(getattr(pd, name), INPUTS, [0], prime=P61, method="simulation",
                   trials=200, seed=3)
    assert result.verdict in ("leak", "not applicable")
    if name == "published_key":  # the shares are AES expansions of the held keys
        assert result.verdict == "not applicable"
        assert result.details["derived_message"].startswith("secure_sum#1.share from")
        assert "not an affine function" in result.details["reason"]


@pytest.mark.parametrize("name", HONEST)
@pytest.mark.parametrize("method", ["simulation", "statistical"])
def test_honest_draws_stay_private(name: str, method: str) -> None:
    for coalition in ([0], [1, 2]):
        result = audit(getattr(pd, name), INPUTS, coalition, prime=P61, method=method,
                       trials=200, seed=3)
        assert result.verdict == "private", (coalition, result.details)


def test_a_share_reaching_its_addressee_is_named_and_stays_private() -> None:
    result = audit(pd.nonce_first, INPUTS, [0], prime=P61, method="statistical", trials=200,
                   seed=3)
    assert result.verdict == "private"
    assert "key_flow" not in result.details  # no key, only draws
    held = {h["message"] for h in result.details["draws_held"]}
    assert held == {f"secure_sum#1.{s} from {p} to 0" for s in ("nonce", "share")
                    for p in (1, 2)}


def test_exact_still_catches_a_linear_draw_leak() -> None:
    result = audit(pd.cc_shares, INPUTS5, [0], prime=5, method="exact", seed=3)
    assert result.verdict == "leak"


def test_held_positions_are_fixed_and_the_rest_fresh() -> None:
    key = private_key_id(1)
    call = Call("secure_sum", 0)
    rows = []
    for trial in (0, 1):
        r = ConditionedRandomness([0, 1, 2], [0], 9, trial).knowing(
            (), {}, {(key, 0): frozenset({1, 3})})
        rows.append([int(v) for v in r(1, F61).private(call, 5)])
    assert [rows[0][i] == rows[1][i] for i in range(5)] == [False, True, False, True, False]


def test_tiny_field_draws_are_not_found() -> None:
    """A GF(5) element carries log2(5) bits: no run of a few matches by chance counts."""
    runner = SimPyRunner(5, 0, 5)
    parties = site_parties(pd.nonce_first, [{"x": x} for x in INPUTS5])
    randomness = ConditionedRandomness([0, 1, 2], [0], 5, 0)
    views = runner(parties, randomness)
    honest = {private_key_id(1), private_key_id(2)}
    assert 2 * np.log2(5) < MIN_BITS
    assert find_draws(carriers(views, [0]), views, F5, honest) == []
