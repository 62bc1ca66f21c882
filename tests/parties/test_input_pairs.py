"""Failure class 2 — "one input pair": a leak of a function that A and B happen to share.

The planted programs (:mod:`planted_functions`) send party 0 a function of x̂_1 — parity,
high bit, residue mod 3, the parity of the last coordinate only, or "is zero". The old audits
compared A with one alternative B, and missed whenever f(A) = f(B). Evidence first: for how
many draws of (A, one uniform B) the function agrees, counted with Python integers. Then: the
exact method enumerates every honest input with A's output and catches each function for
every A; the A/B method's designed pairs (±1, ±(p − 1)/2, uniform) catch every function a
pair can change; the simulation method needs no B at all.
"""

from __future__ import annotations

import numpy as np
import planted_functions as pf
import pytest
from auditing import F5, F61, P, coalitions, field_inputs, ints, verdicts

from parties.audit.statistical import alternative_inputs
from sim.privacy import audit

SIDE = ["parity", "high_bit", "mod_3", "last_parity"]


@pytest.mark.parametrize(("name", "field_"), [("parity", F5), ("high_bit", F5), ("mod_3", F5),
                                              ("parity", F61), ("high_bit", F61)])
def test_one_uniform_pair_often_shares_the_function(name: str, field_) -> None:
    """Why one pair is not enough: f(x̂_1^A) = f(x̂_1^B) for a large share of draws."""
    f = pf.FUNCTIONS[name]
    same = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        a = [field_.random(rng, 1) for _ in range(3)]
        b = alternative_inputs(field_, a, (0,), rng, "uniform")
        same += ints(f(field_, a[1])) == ints(f(field_, b[1]))
    assert 0.15 < same / 200 < 0.7


@pytest.mark.parametrize("name", sorted(pf.FUNCTIONS))
def test_exact_catches_every_function_for_every_input(name: str) -> None:
    """GF(5), M = 3, C = {0}: for 4 draws of A, every function is caught."""
    for seed in range(4):
        inputs = field_inputs(F5, 3, 1, seed)
        result = audit(pf.LEAKS[name], inputs, (0,), prime=5, method="exact", max_runs=200,
                       seed=seed)
        assert result.leaks, (name, seed, ints(inputs[1]))
        assert result.message == "secure_sum#1.hint from 1 to 0"
    private = audit(pf.LEAKS[name], field_inputs(F5, 3, 1, 0), (2,), prime=5, method="exact",
                    max_runs=200)
    assert private.verdict == "private"  # party 2 receives no hint


@pytest.mark.parametrize("name", SIDE)
def test_statistical_designed_pairs_catch_every_function_they_change(name: str) -> None:
    inputs = field_inputs(F61, 3, 12, 3)  # twelve coordinates: the last one matters
    result = audit(pf.LEAKS[name], inputs, (0,), prime=P, method="statistical", trials=24,
                   seed=3)
    assert result.leaks and result.message == "secure_sum#1.hint from 1 to 0"


def test_statistical_cannot_see_a_function_no_pair_changes() -> None:
    """"is zero" is 0 for every input the pairs try: the A/B method cannot see it, and does
    not claim more than it tested (the simulation and exact methods catch it)."""
    inputs = field_inputs(F61, 3, 4, 3)
    result = audit(pf.LEAKS["is_zero"], inputs, (0,), prime=P, method="statistical",
                   trials=24, seed=3)
    assert not result.leaks
    sim = audit(pf.LEAKS["is_zero"], inputs, (0,), prime=P, method="simulation", trials=24)
    assert sim.leaks and sim.message == "secure_sum#1.hint from 1 to 0"


@pytest.mark.parametrize("name", sorted(pf.FUNCTIONS))
def test_simulation_flags_every_coalition_that_receives_the_hint(name: str) -> None:
    results = verdicts(pf.LEAKS[name], 3, "simulation", trials=24, d=6)
    assert {c for c, r in results.items() if r.leaks} == pf.receiving(coalitions(3))
    assert all(r.message == "secure_sum#1.hint from 1 to 0"
               for r in results.values() if r.leaks)


@pytest.mark.slow
@pytest.mark.parametrize("name", SIDE)
def test_statistical_flags_exactly_the_leaking_coalitions_at_four_parties(name: str) -> None:
    results = verdicts(pf.LEAKS[name], 4, "statistical", trials=48, d=6)
    assert {c for c, r in results.items() if r.leaks} == pf.leaking(4, coalitions(4))
