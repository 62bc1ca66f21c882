"""Auditing the ring All-Reduce (:class:`protocols.ring_all_reduce.RingAllReduceSimulator`).

The planted leak is the ring itself with two or more honest parties: the member after an
honest party receives that party's own chunk in step ``reduce0``. The whole-run audit must
answer "leak" there (and "private" with one honest party, whose input the declared sum
determines), and the test recovers the honest chunk from the member's view; the A/B method,
which knows nothing of the declaration, must flag it too; so must the linear and exact methods.
"""

from __future__ import annotations

import numpy as np
import pytest
from auditing import F61, P, coalitions, field_inputs, run_views

from protocols.all_reduce import all_reduce, all_reduce_field
from sim.privacy import audit


def ring(ctx, x):
    return all_reduce_field(ctx, x, "ring")


@pytest.mark.parametrize("n_parties", [3, 4])
def test_the_ring_leaks_exactly_when_two_parties_are_honest(n_parties: int) -> None:
    inputs = field_inputs(F61, n_parties, 7, seed=4)
    views = run_views(ring, inputs)
    chunks = [np.array_split(np.arange(7), n_parties)[c] for c in range(n_parties)]
    for coalition in coalitions(n_parties):
        result = audit(ring, inputs, coalition, prime=P, trials=12, seed=1)
        honest = [h for h in range(n_parties) if h not in coalition]
        if len(honest) == 1:
            assert result.verdict == "private", (coalition, result.details)
            continue
        assert result.verdict == "leak" and result.call == 1, (coalition, result.details)
        # the attack: a member whose predecessor h is honest reads h's own chunk h off its
        # view (step reduce0), exactly
        for h in honest:
            after = (h + 1) % n_parties
            if after not in coalition:
                continue
            (payload,) = [m.payload for m in views[after].received
                          if m.sender == h and m.step == "reduce0"]
            assert [int(v) for v in payload] == [int(v) for v in inputs[h][chunks[h]]]


def test_the_ab_method_flags_the_ring_without_the_declaration() -> None:
    inputs = field_inputs(F61, 4, 6, seed=5)
    result = audit(ring, inputs, (1, 3), prime=P, method="statistical", trials=48, seed=2)
    assert result.verdict == "leak", result.details


def test_a_ring_all_reduce_of_real_numbers_is_audited_too() -> None:
    rng = np.random.default_rng(3)
    shards = [{"x": rng.random(5)} for _ in range(3)]

    def program(ctx, x):
        return all_reduce(ctx, x, method="ring", average=True, output="mean")

    leak = audit(program, shards, (0,), prime=P, frac_bits=20, trials=12)
    # party 0's predecessor on the ring is party 2: the flagged message comes from it
    assert leak.verdict == "leak" and leak.message.startswith("ring_all_reduce#1.")
    assert leak.message.endswith(" from 2 to 0")
    determined = audit(program, shards, (0, 2), prime=P, frac_bits=20, trials=12)
    assert determined.verdict == "private", determined.details


@pytest.mark.parametrize("method", ["simulation", "statistical", "linear", "exact"])
def test_every_audit_method_catches_the_ring_and_clears_one_honest_party(method: str) -> None:
    """The same planted leak for each method: coalition {1, 3} of 4 (two honest) must be a
    leak, {0, 1, 2} (one honest, determined by the sum) private. The exact method enumerates
    GF(5)."""
    if method == "exact":
        prime, inputs = 5, [np.array([m % 5, (m + 1) % 5], dtype=np.int64) for m in range(4)]
    else:
        prime, inputs = P, field_inputs(F61, 4, 6, seed=5)
    leak = audit(ring, inputs, (1, 3), prime=prime, method=method, trials=48, seed=2)
    assert leak.verdict == "leak", leak.details
    clear = audit(ring, inputs, (0, 1, 2), prime=prime, method=method, trials=48, seed=2)
    assert clear.verdict == "private", clear.details
