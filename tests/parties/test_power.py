"""Failure class 3 — "private without power": verdicts that never claim more than the trials.

With too few trials an audit must answer ``inconclusive`` — not ``private`` — and say how many
trials would do; with that many it must answer ``private`` and state the deviation it would
have caught. The honest protocols pass for every coalition of 1..M−1 parties at M = 2..6
(M = 5, 6 and the A/B sweeps are slow) and are inconclusive with too few trials.
"""

from __future__ import annotations

import pytest
from auditing import F5, F61, P, coalitions, field_inputs, verdicts

from protocols.secure_sum import VARIANTS
from sim.privacy import audit, secure_sum_program


@pytest.mark.parametrize("method", ["simulation", "statistical"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_too_few_trials_are_inconclusive_and_the_suggested_number_suffices(
    method: str, variant: str
) -> None:
    program = secure_sum_program(variant)
    inputs = field_inputs(F61, 3, 4, 1)
    few = audit(program, inputs, (0,), prime=P, method=method, trials=10, pairs=2)
    assert few.verdict == "inconclusive"
    assert "too few trials" in few.details["reason"]
    assert few.power["sup_cdf_distance"] >= 1.0  # no deviation of value / p is sure to show
    needed = few.details["trials_needed"]
    enough = audit(program, inputs, (0,), prime=P, method=method, trials=needed, pairs=2)
    assert enough.verdict == "private", enough.details
    assert enough.power["sup_cdf_distance"] < 1.0
    assert enough.power["linear"]["undetermined"] == 0


def _sum_and_pad(ctx, x):
    """PRG SecureSum plus a fresh one-time pad of d + 1 elements from party 1 to party 0.

    Private (the pad is uniform and used nowhere), but the call's messages have co-prime
    lengths d and d + 1, so its elements form one linear group of 3d + 1 dimensions."""
    import planted_leaks as pl

    from protocols.effects import Recv, SendEach
    from protocols.sharing import pair_shares

    call = yield from pl._start(ctx, x)
    d = len(x)
    if ctx.party == 1:
        yield SendEach({0: ctx.randomness.private(call, d + 1, sub=1)}, call, "pad")
    if ctx.party == 0:
        yield Recv(1, call, "pad")
    streams = ctx.randomness.pairwise_many(ctx.peers, call, 2 * d)
    pairs = [pair_shares(s, ctx.party, p, d) for p, s in zip(ctx.peers, streams, strict=True)]
    return (yield from pl._exchange_column_sums(ctx, call, pl._prg_colsum(ctx.field, x, pairs)))


def test_an_undetermined_linear_group_makes_the_verdict_inconclusive() -> None:
    """40 trials give the element tests power, but cannot saturate the call's hull: 61
    elements, of dimension 41 (the pad, and one honest column sum — the other is the sum's
    remainder)."""
    inputs = field_inputs(F61, 3, 20, 2)
    result = audit(_sum_and_pad, inputs, (0,), prime=P, trials=40)
    assert result.verdict == "inconclusive"
    assert result.details["reason"].startswith("1 linear group(s) undetermined")
    assert result.power["sup_cdf_distance"] < 1.0 and result.power["linear"]["undetermined"]
    needed = result.details["trials_needed"]
    assert needed > 41 + 1
    assert audit(_sum_and_pad, inputs, (0,), prime=P, trials=needed).verdict == "private"


def test_a_tiny_field_needs_enough_trials_per_value() -> None:
    inputs = field_inputs(F5, 3, 2, 3)
    few = audit(secure_sum_program("prg"), inputs, (0,), prime=5, trials=8)
    assert few.verdict == "inconclusive"
    assert few.power["cells_l1"]["value"] >= 2.0
    enough = audit(secure_sum_program("prg"), inputs, (0,), prime=5,
                   trials=few.details["trials_needed"])
    assert enough.verdict == "private" and enough.power["cells_l1"]["value"] < 2.0


def _honest_cases(method: str) -> list:
    fast = {"simulation": (2, 3, 4), "statistical": (2, 3)}[method]
    return [pytest.param(m, v, marks=[] if m in fast else [pytest.mark.slow], id=f"M{m}-{v}")
            for m in range(2, 7) for v in VARIANTS]


@pytest.mark.parametrize(("n_parties", "variant"), _honest_cases("simulation"))
def test_honest_secure_sum_passes_the_simulation_audit_for_every_coalition(
    n_parties: int, variant: str
) -> None:
    trials = 48 if n_parties <= 4 else 96  # wide coalitions of 6 parties need more
    results = verdicts(secure_sum_program(variant), n_parties, "simulation", trials=trials,
                       d=3, seed=n_parties)
    assert set(results) == set(coalitions(n_parties))
    for c, r in results.items():
        assert r.verdict == "private", (c, r.details)
        if n_parties - len(c) >= 2 or variant == "explicit":
            # explicit: the one honest party's shares to the members are fresh and uniform,
            # compared like any message of a determined call (issue 27, item 4)
            assert r.power["sup_cdf_distance"] < 1.0 and r.power["linear"]["undetermined"] == 0
        else:  # prg: every element is reproduced exactly from the sum
            assert r.power == {"determined": True}


@pytest.mark.parametrize(("n_parties", "variant"), _honest_cases("statistical"))
def test_honest_secure_sum_passes_the_statistical_audit_for_every_coalition(
    n_parties: int, variant: str
) -> None:
    trials = 48 if n_parties <= 4 else 96
    results = verdicts(secure_sum_program(variant), n_parties, "statistical", trials=trials,
                       d=3, seed=n_parties, pairs=3)
    for c, r in results.items():
        assert r.verdict == "private", (c, r.details)


@pytest.mark.parametrize("variant", VARIANTS)
def test_honest_secure_sum_is_inconclusive_with_too_few_trials_for_every_coalition(
    variant: str
) -> None:
    results = verdicts(secure_sum_program(variant), 4, "simulation", trials=6, d=3)
    for c, r in results.items():
        # |H| = 1: prg is reproduced exactly; explicit still has the honest shares to compare
        expected = "inconclusive" if 4 - len(c) >= 2 or variant == "explicit" else "private"
        assert r.verdict == expected, c
