"""``[[audit]]`` on capeAGN (``cape_otd``): each CAPE stage judged by its own noise plan.

capeAGN runs CAPE twice (seed 003, Algorithm 2): stage 1 on M2 with plan τ_s2, then — after the
aggregator broadcasts the whitening W — stage 2 on the projected third moment with plan τ_s3,
whose site noise is D-space noise projected into K-space (covariance τ²·P Pᵀ, recorded by the
parties). The experiment's ``cape`` run is audited with a plan (and budget) per CAPE call
(:func:`protocols.registry.cape_declaration` with a mapping): the honest run is ``private``
for the aggregator, a site and both together... below the paper's threshold; two stage-2 leaks
of our own design (``tests/parties/planted_cape_otd.py``) are caught at stage 2's call, and
the raw-moment leak is shown real by reading site 1's statistic out of the aggregator's view.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from parties.audit.result import LEAK, PRIVATE
from protocols.field import FixedPoint, prime_field
from sim.privacy import AuditTarget, SimPyRunner, run_audit
from sim.runner import plan_scenario
from sim.scenario import AuditSpec

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sim" / "drivers"))
sys.path.insert(0, str(ROOT / "tests" / "parties"))
import planted_cape_otd as planted  # noqa: E402
from mpi_catalog import SCENARIOS  # noqa: E402

S = 3  # sites 0..2, aggregator 3, noise generator 4
STAGE1, STAGE2 = 1, 3  # the ledger's call numbers, which the audit's are: key_agreement#0,
# cape#1 (M2), cape_agn#2 (W), cape#3 (M3(W,W,W))


@pytest.fixture(scope="module")
def otd() -> tuple[object, AuditTarget, object]:
    spec = copy.deepcopy(SCENARIOS["cape_otd"])
    spec["algorithm"]["trials"] = 1
    plan = plan_scenario(spec)
    run = plan.run()
    return plan, run.run.audit_runs["cape"], run


def _audit(otd: tuple[object, AuditTarget, object], target: AuditTarget,
           coalition: tuple[int, ...], trials: int = 200):
    plan = otd[0]
    return run_audit(AuditSpec(coalition, trials=trials), target,
                     prime=plan.scenario.prime, frac_bits=plan.scenario.frac_bits,
                     seed=plan.seed)


def _planted(target: AuditTarget, **programs: object) -> AuditTarget:
    roles = {"site": lambda p: p.role == "site", "aggregator": lambda p: p.id == S,
             "generator": lambda p: p.id == S + 1}
    parties = tuple(
        next((dataclasses.replace(p, program=prog) for who, prog in programs.items()
              if roles[who](p)), p) for p in target.parties)
    return dataclasses.replace(target, parties=parties)


def test_the_run_names_its_arms_and_declares_a_plan_per_stage(otd) -> None:
    _, target, run = otd
    assert set(run.run.audit_runs) == {"cape", "conventional", "nonprivate"}
    cape = next(d for d in target.protocol if getattr(d, "name", "") == "cape")
    stages = cape.simulator(None).stages
    assert sorted(stages) == [STAGE1, STAGE2]
    assert stages[STAGE1].plan is not stages[STAGE2].plan  # τ_s2 and τ_s3: two plans


@pytest.mark.parametrize("coalition", [(S,), (0,), (0, S)])
def test_honest_capeagn_is_private_with_power(otd, coalition) -> None:
    result = _audit(otd, otd[1], coalition)
    assert result.verdict == PRIVATE, result
    assert result.power  # a private verdict states what it could have seen
    assert result.details["calls"] == 3


def test_a_site_sending_its_raw_stage2_moment_is_caught_and_read(otd) -> None:
    target = _planted(otd[1], site=planted.leaky_site, aggregator=planted.leaky_aggregator)
    result = _audit(otd, target, (S,))
    assert result.verdict == LEAK, result
    assert result.call == STAGE2 and "raw" in result.message and "from 1" in result.message
    # the attack: the aggregator decodes the message and has site 1's statistic, exactly
    plan = otd[0]
    fld = prime_field(plan.scenario.prime)
    runner = SimPyRunner(fld.p, plan.scenario.frac_bits, plan.seed)
    from parties.audit.randomness import ConditionedRandomness

    ids = [p.id for p in target.parties]
    views = runner(target.parties, ConditionedRandomness(ids, (S,), 7, 0))
    raw = next(m.payload for m in views[S].received if m.step == "raw")
    truth = next(v for c, label, v in views[1].protocol_inputs if label == "M3(W,W,W)")
    fixed = FixedPoint(fld, plan.scenario.frac_bits)
    np.testing.assert_allclose(fixed.decode(raw), truth, rtol=0, atol=2.0 ** -20)


def test_stage2_generator_noise_that_does_not_cancel_is_caught(otd) -> None:
    target = _planted(otd[1], generator=planted.no_cancel_generator)
    result = _audit(otd, target, (S,))
    assert result.verdict == LEAK, result
    assert result.call == STAGE2
