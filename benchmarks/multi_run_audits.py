"""Issue 28's closing figures: capeAGN's two CAPE stages and a multi-run experiment's arm,
honest and with planted leaks, under every audit method.

The runs are the ``cape_otd`` and ``ksdp`` scenarios of ``tests/sim/drivers/mpi_catalog.py``
(capeAGN: S = 3 sites of 20 MOG rows in D = 6, K = 2, one trial; KSDP: the one-bit sum at
n_v = 4 among 3 parties). The planted programs are the tests' (``tests/parties/
planted_cape_otd.py``: a site that also sends its raw stage-2 moment, a noise generator whose
stage-2 shares do not cancel; ``tests/parties/planted_leaks.py``: ``raw_input_prg``). Each
audit is the arm's ``[[audit]]`` (:func:`sim.privacy.run_audit`) at 200 trials; for the
leaky KSDP arm the field program the other methods re-run is the leaky one too.

Prints JSON lines ``{"bench": "multi_run_audits", "program", "coalition", "method",
"verdict", "call", "message", "seconds"}``. Run from the repository root:
``python benchmarks/multi_run_audits.py``.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sim" / "drivers"))
sys.path.insert(0, str(ROOT / "tests" / "parties"))

METHODS = ("simulation", "statistical", "exact", "linear")
S = 3  # capeAGN: sites 0..2, aggregator 3, noise generator 4


def _arm(name: str, arm: str) -> tuple[Any, Any]:
    from mpi_catalog import SCENARIOS

    from sim.runner import plan_scenario

    spec = copy.deepcopy(SCENARIOS[name])
    if name == "cape_otd":
        spec["algorithm"]["trials"] = 1
    plan = plan_scenario(spec)
    return plan, plan.run().run.audit_runs[arm]


def _replaced(target: Any, **programs: Any) -> Any:
    roles = {"site": lambda p: p.role == "site", "aggregator": lambda p: p.id == S,
             "generator": lambda p: p.id == S + 1}
    return dataclasses.replace(target, parties=tuple(
        next((dataclasses.replace(p, program=prog) for who, prog in programs.items()
              if roles[who](p)), p) for p in target.parties))


def _cell(plan: Any, target: Any, program: str, coalition: tuple[int, ...],
          method: str) -> None:
    from sim.privacy import run_audit
    from sim.scenario import AuditSpec

    start = time.perf_counter()
    r = run_audit(AuditSpec(coalition, method=method, trials=200), target,
                  prime=plan.scenario.prime, frac_bits=plan.scenario.frac_bits, seed=plan.seed)
    print(json.dumps({"bench": "multi_run_audits", "program": program,
                      "coalition": list(coalition), "method": method, "verdict": r.verdict,
                      "call": r.call, "message": r.message,
                      "seconds": round(time.perf_counter() - start, 1)}), flush=True)


def main() -> None:
    import planted_cape_otd as planted
    import planted_leaks

    plan, cape = _arm("cape_otd", "cape")
    cases = {
        "honest": cape,
        "raw_moment (stage 2)": _replaced(cape, site=planted.leaky_site,
                                          aggregator=planted.leaky_aggregator),
        "no_cancel (stage-2 NG)": _replaced(cape, generator=planted.no_cancel_generator),
    }
    for name, target in cases.items():
        for coalition in ((S,), (0,), (0, S), (S + 1,)):
            for method in METHODS if coalition == (S,) else METHODS[:1]:
                _cell(plan, target, f"cape_otd {name}", coalition, method)
    plan, arm = _arm("ksdp", "one_bit_sum n_v=4")
    leaky = dataclasses.replace(arm, field_program=planted_leaks.raw_input_prg, parties=tuple(
        dataclasses.replace(p, program=planted_leaks.raw_input_prg) for p in arm.parties))
    for name, target in (("honest", arm), ("raw_input_prg", leaky)):
        for method in METHODS:
            _cell(plan, target, f"ksdp one_bit_sum n_v=4 {name}", (0,), method)


if __name__ == "__main__":
    main()
