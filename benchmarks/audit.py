"""Privacy audits: every planted leak × every method → verdict, and the cost of whole-run audits.

Prints JSON lines:

* ``{"bench": "verdict", "class", "leak", "method", "coalition", "verdict", "call",
  "message", "seconds"}`` — one per planted leak (the programs of ``tests/parties``) and method,
  M = 3, for a coalition the leak reaches; honest controls too. Simulation 48 trials,
  statistical 64 trials × 6 alternative input sets, exact in GF(5) with one value of the
  coalition's own randomness.
  Rows "3 too few trials" run the honest protocol with 10 trials (the verdict must be
  ``inconclusive``); rows "5 declared simulators" audit the All-Reduce, secure and plain.
* ``{"bench": "whole_run", ...}`` — a simulation audit of a PD-NMF run of ``pd_nmf_topics``
  shape (361 SecureSum calls of 301 elements, M = 4, coalition {0, 2}): seconds per trial of the
  audit against seconds of one plain run, and the ratio (min and median over the trials' own
  timings are not separable from the comparison, so the ratio is whole-audit / (trials × run)).

BLAS runs single-threaded (threadpoolctl). ``--quick`` skips the slow rows and shrinks the
whole-run audit to 5 sweeps.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "parties"))

import planted_functions as pf  # noqa: E402
import planted_leaks as pl  # noqa: E402
import planted_runs as pr  # noqa: E402
import planted_structure as ps  # noqa: E402

from algorithms.nmf import pd_nmf as pd_nmf_module  # noqa: E402
from algorithms.nmf.pd_nmf import normalize_rows, pd_nmf  # noqa: E402
from algorithms.nmf.rri_steps import RRIParams  # noqa: E402
from protocols.all_reduce import all_reduce_field  # noqa: E402
from protocols.field import prime_field  # noqa: E402
from sim.privacy import audit, secure_sum_program  # noqa: E402
from sim.runner import run_scenario  # noqa: E402

F61 = prime_field(2**61 - 1)
F5 = prime_field(5)
METHODS = {"simulation": {"trials": 48}, "statistical": {"trials": 64, "pairs": 6},
           "exact": {}}


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def field_case(cls: str, name: str, program, coalition: tuple[int, ...],
               methods: dict | None = None) -> None:
    rng = np.random.default_rng(3)
    big = [F61.random(rng, 6) for _ in range(3)]
    tiny = [F5.random(rng, 1) for _ in range(3)]
    for method, options in (METHODS if methods is None else methods).items():
        start = time.perf_counter()
        if method == "exact":
            result = audit(program, tiny, coalition, prime=5, method="exact",
                           max_runs=5 * 5**4 + 26, seed=3)
        else:
            result = audit(program, big, coalition, prime=F61.p, method=method, seed=3,
                           **options)
        emit({"bench": "verdict", "class": cls, "leak": name, "method": method,
              "coalition": list(coalition), "verdict": result.verdict, "call": result.call,
              "message": result.message, "seconds": round(time.perf_counter() - start, 2)})


def pd_nmf_case(kind: str | None) -> None:
    rng = np.random.default_rng(0)
    shards = [{"X": rng.random((8, 6))} for _ in range(3)]
    t0 = normalize_rows(rng.random((2, 6)))
    original = pd_nmf_module.secure_sum
    if kind is not None:
        pd_nmf_module.secure_sum = pr.LeakySum(kind, 2, 1).secure_sum
    try:
        for method in METHODS:
            start = time.perf_counter()
            result = audit(lambda ctx, X: pd_nmf(ctx, X, 2, sweeps=3, params=RRIParams(),
                                                 variant="prg", T0=t0),
                           shards, (0,), prime=F61.p, frac_bits=24, method=method, seed=2,
                           trials=48)
            emit({"bench": "verdict", "class": "4 whole run (PD-NMF)",
                  "leak": kind or "honest", "method": method, "coalition": [0],
                  "verdict": result.verdict, "call": result.call, "message": result.message,
                  "seconds": round(time.perf_counter() - start, 2)})
    finally:
        pd_nmf_module.secure_sum = original


def whole_run(quick: bool) -> None:
    import tomllib

    scenario = tomllib.loads((ROOT / "scenarios" / "pd_nmf_topics.toml").read_text())
    if quick:
        scenario["algorithm"]["iterations"] = 5
    start = time.perf_counter()
    plain = run_scenario(scenario)
    run_s = time.perf_counter() - start
    trials = 10 if quick else 32
    scenario["audit"] = [{"coalition": [0, 2], "method": "simulation", "trials": trials}]
    start = time.perf_counter()
    audited = run_scenario(scenario)
    audit_s = time.perf_counter() - start - run_s
    entry = audited.report["privacy"][0]
    emit({"bench": "whole_run", "scenario": "pd_nmf_topics", "sweeps": scenario["algorithm"][
        "iterations"], "calls": entry["details"]["calls"],
        "view_elements": entry["details"]["view_elements"], "trials": trials,
        "run_s": round(run_s, 2), "audit_s": round(audit_s, 2),
        "audit_s_per_trial": round(audit_s / trials, 2),
        "ratio_audit_per_trial_to_run": round(audit_s / trials / run_s, 2),
        "verdict": entry["verdict"], "blas_threads": 1,
        "metrics_equal": plain.report["metrics"] == audited.report["metrics"]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    with threadpool_limits(1):
        for variant in ("prg", "explicit"):
            field_case("0 honest", f"secure_sum/{variant}", secure_sum_program(variant), (0,))
        for leak, variants in pl.LEAKS.items():
            for variant, program in variants.items():
                coalition = min(pl.LEAKING_COALITIONS[(leak, variant, 3)])
                field_case("existing", f"{leak}/{variant}", program, coalition)
        for name, variants in ps.LEAKS.items():
            field_case("1 structured masks", f"{name}/prg", variants["prg"], (0,))
        field_case("1 structured masks", "hidden_low_byte/prg", ps.HIDDEN, (0,))
        for name, program in pf.LEAKS.items():
            field_case("2 function of an input", name, program, (0,))
        few = {"simulation": {"trials": 10}, "statistical": {"trials": 10, "pairs": 6}}
        for variant in ("prg", "explicit"):
            field_case("3 too few trials", f"secure_sum/{variant} (10 trials)",
                       secure_sum_program(variant), (0,), few)
        field_case("4 whole run", "two_sums (control)", pr.two_sums, (0,))
        field_case("4 whole run", "two_sums_reused_masks", pr.two_sums_reused_masks, (0,))
        for kind in (None, *pr.KINDS):
            pd_nmf_case(kind)
        for method in ("secure_sum", "plain"):
            field_case("5 declared simulators", f"all_reduce/{method}"
                       + (" (control)" if method == "secure_sum" else ""),
                       lambda ctx, x, m=method: all_reduce_field(ctx, x, m), (0,))
        whole_run(args.quick)


if __name__ == "__main__":
    main()
