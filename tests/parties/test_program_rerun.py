"""The program-rerun simulator interface reproduces the per-call form's verdicts.

:class:`protocols.simulator.ProgramForm` runs SecureSum's per-call simulator through the
program-rerun path (:mod:`parties.audit.rerun`: the members' own programs against honest
stand-ins). SecureSum's members' messages depend only on their inputs and tape, so both forms
give one law: on the honest program and on planted leaks (tests/parties/planted_leaks.py) the
verdict of every coalition must be the same in both, and the leaking coalitions the ones
derived by hand there.
"""

from __future__ import annotations

import pytest
from auditing import F61, P, coalitions, field_inputs
from planted_leaks import LEAKS, honest_explicit, simulation_flagged

from parties.audit.rerun import scripts
from protocols import secure_sum
from protocols.registry import Declaration
from protocols.simulator import ProgramForm
from sim.privacy import audit

RERUN = Declaration("secure_sum", secure_sum.functionality,
                    lambda variant: ProgramForm(secure_sum.SecureSumSimulator(variant)),
                    secure_sum.honest_inputs)


def _both(program, inputs, coalition, trials=24):
    per_call = audit(program, inputs, coalition, prime=P, trials=trials, seed=3,
                     protocol="secure_sum", variant="explicit")
    rerun = audit(program, inputs, coalition, prime=P, trials=trials, seed=3,
                  protocol=RERUN, variant="explicit")
    return per_call, rerun


@pytest.mark.parametrize("n_parties", [3, pytest.param(4, marks=pytest.mark.slow)])
def test_the_rerun_form_keeps_the_honest_secure_sum_private(n_parties: int) -> None:
    inputs = field_inputs(F61, n_parties, 3, seed=2)
    for coalition in coalitions(n_parties):
        per_call, rerun = _both(honest_explicit, inputs, coalition)
        assert per_call.verdict == rerun.verdict == "private", (coalition, rerun.details)
        assert rerun.details["simulated_runs"] == 24 * 8
        assert rerun.power is not None


@pytest.mark.parametrize("leak", ["raw_input", "reused_mask", "small_range"])
def test_the_rerun_form_flags_what_the_per_call_form_flags(leak: str) -> None:
    n_parties = 3
    inputs = field_inputs(F61, n_parties, 3, seed=2)
    program = LEAKS[leak]["explicit"]
    expected = simulation_flagged(leak, "explicit", n_parties)
    for coalition in coalitions(n_parties):
        per_call, rerun = _both(program, inputs, coalition)
        assert per_call.verdict == rerun.verdict, (coalition, per_call.details, rerun.details)
        assert rerun.leaks == (coalition in expected), (coalition, rerun.details)
        if rerun.leaks:
            assert (rerun.call, rerun.message) == (per_call.call, per_call.message)


def test_the_honest_script_follows_rounds() -> None:
    """An honest party's script receives the members' round-r messages before sending its own."""
    from auditing import run_views
    inputs = field_inputs(F61, 3, 2, seed=1)
    views = run_views(honest_explicit, inputs)
    plan = scripts(views, (0,))
    for h in (1, 2):
        kinds = [(e.kind, e.step) for e in plan[h]]
        steps = list(dict.fromkeys(s for _, s in kinds))
        for step in steps:
            here = [k for k, s in kinds if s == step]
            assert here == sorted(here, key=lambda k: k != "recv"), kinds
        assert all(set(e.shapes.values()) == {(2,)}
                   for e in plan[h] if e.kind == "send")
