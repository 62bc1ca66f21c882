"""``[[audit]]`` on experiments that make many runs (:mod:`sim.audited_runs`).

An experiment audits each distinct run it makes — one per arm, at the scenario's size — and
answers one verdict per run (``details["run"]``); ``run = "<arm>"`` picks one; an arm that is
non-private by design is reported as revealing what it reveals; one that runs a centralized
reference says where the protocol is audited. A leak planted in one arm (KSDP's one-bit sum:
a SecureSum that sends a party's counts to its first peer, ``tests/parties/planted_leaks.py``)
is caught in that arm and read out of the coalition's view; capeAGN's arms are in
``test_cape_otd_audit.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

from parties.audit.randomness import ConditionedRandomness
from parties.audit.result import LEAK, NOT_APPLICABLE, PRIVATE
from protocols.errors import ScenarioError
from sim.privacy import SimPyRunner, run_audit
from sim.runner import plan_scenario, run_scenario
from sim.scenario import AuditSpec

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "sim" / "drivers"))
sys.path.insert(0, str(ROOT / "tests" / "parties"))
import planted_leaks  # noqa: E402
from mpi_catalog import SCENARIOS  # noqa: E402


def _spec(name: str, **audit: object) -> dict:
    spec = copy.deepcopy(SCENARIOS[name])
    spec["audit"] = [{"coalition": [0], "method": "simulation", "trials": 10, **audit}]
    return spec


def test_every_arm_gets_a_verdict_and_the_nndsvd_arm_reveals_its_start() -> None:
    run = run_scenario(_spec("pd_nmf_init_comparison"))
    by_run = {a.details["run"]: a for a in run.audits}
    assert sorted(by_run) == sorted(SCENARIOS["pd_nmf_init_comparison"]["algorithm"].get(
        "inits", ["random", "random_2x", "nndsvd", "pd_nmf_init"]))
    assert by_run["nndsvd"].verdict == LEAK and "NNDSVD" in by_run["nndsvd"].details["reason"]
    assert [e["details"]["run"] for e in run.report["privacy"]] == list(by_run)


def test_run_picks_one_arm() -> None:
    run = run_scenario(_spec("pd_nmf_init_comparison", run="pd_nmf_init", trials=60))
    [audit] = run.audits
    assert audit.details["run"] == "pd_nmf_init" and audit.verdict == PRIVATE


def test_sigma_revealing_arm_is_reported_as_revealing_sigma() -> None:
    spec = _spec("ksdp")
    spec["algorithm"].update(mechanism=["pd_svd", "sigma_revealing_svd"], party_sizes=[2],
                             samples=4, documents=1, adversary_size=5, k=2, iterations=2)
    spec["network"]["parties"] = 2
    spec["data"].update(rows=20, cols=6)
    run = run_scenario(spec)
    by_run = {a.details["run"]: a for a in run.audits}
    assert by_run["sigma_revealing_svd"].verdict == LEAK
    assert "Σ" in by_run["sigma_revealing_svd"].details["reason"]
    assert by_run["pd_svd"].verdict == NOT_APPLICABLE
    assert "pd_svd" in by_run["pd_svd"].details["reason"]


@pytest.mark.parametrize("audit, message", [
    ({"run": "nope"}, "names no run of this experiment; use one of"),
    ({"sizes": [1]}, "pick one with run ="),
])
def test_bad_run_keys_are_named(audit: dict, message: str) -> None:
    spec = _spec("pd_nmf_init_comparison", **audit)
    if "sizes" in audit:
        del spec["audit"][0]["coalition"]
    with pytest.raises(ScenarioError, match=message):
        run_scenario(spec)


def test_run_on_a_single_run_algorithm_is_refused() -> None:
    with pytest.raises(ScenarioError, match="makes one run; remove run"):
        run_scenario(_spec("secure_sum_prg", run="x"))


def test_run_must_be_a_name() -> None:
    with pytest.raises(ScenarioError, match=r"audit\[0\]\.run = 3 must name one run"):
        run_scenario(_spec("ksdp", run=3))


def test_a_leak_planted_in_one_arm_is_caught_there_and_read() -> None:
    """KSDP's one-bit-sum arm at n_v = 4 with party 1's SecureSum sending its counts to its
    first peer (party 0): the audit of that arm is a leak at the message, and party 0 reads
    party 1's per-sample counts straight out of its view."""
    plan = plan_scenario(_spec("ksdp"))
    arms = plan.run().run.audit_runs
    name = "one_bit_sum n_v=4"
    target = arms[name]
    honest = run_audit(AuditSpec((0,), trials=200), target, prime=plan.scenario.prime,
                       frac_bits=plan.scenario.frac_bits, seed=plan.seed)
    assert honest.verdict == PRIVATE, honest
    leaky = dataclasses.replace(target, parties=tuple(
        dataclasses.replace(p, program=planted_leaks.raw_input_prg) for p in target.parties))
    found = run_audit(AuditSpec((0,), trials=200), leaky, prime=plan.scenario.prime,
                      frac_bits=plan.scenario.frac_bits, seed=plan.seed)
    assert found.verdict == LEAK and "check" in found.message and "from 1" in found.message
    runner = SimPyRunner(plan.scenario.prime, plan.scenario.frac_bits, plan.seed)
    views = runner(leaky.parties, ConditionedRandomness([p.id for p in leaky.parties], (0,),
                                                        3, 0))
    read = next(m.payload for m in views[0].received if m.step == "check" and m.sender == 1)
    np.testing.assert_array_equal(read, leaky.parties[1].inputs["x"])
