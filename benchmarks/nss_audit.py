"""The simulation audit of NormedSecureSum (program-rerun simulator): verdicts, seconds, scaling.

Prints JSON lines:

* ``{"bench": "nss_audit", "M", "d", "preset", "coalition", "trials", "ratio", "verdict",
  "sup_cdf_distance", "seconds", "simulated_runs"}`` — one audit of one NormedSecureSum call
  (the ``normed`` variant) for the coalition {0}, the runner on the SimPy driver;
* ``{"bench": "nss_planted", "leak", "coalition", "verdict", "call", "message", "seconds"}`` —
  each planted leak of ``tests/parties/planted_nss.py`` (p61-demo, M = 3, d = 4, 40 trials);
* ``{"bench": "nss_run", "M", "d", "seconds"}`` — one plain run of the call, for the audit's
  cost at other sizes: an audit costs about (trials·(1 + ratio) + 10) runs of the members'
  programs (real trials, simulated runs, the pattern and key-flow checks).

BLAS runs single-threaded. ``--quick`` runs the M = 3, d = 100 audit only. Every timed row gives
wall ``seconds`` and the process's ``cpu_seconds`` (the machine is shared: wall time includes
waiting for a core). ``--before TREE`` also runs the M = 3, d = 100 audit with the library code
of TREE (a checkout of an earlier commit, e.g. ``git archive <commit> | tar -x -C TREE``) in a
subprocess and prints ``{"bench": "nss_audit_speedup", ...}`` with both figures and their
ratios. numba compiles a tree's kernels on its first run: run each tree once before timing.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "parties"))

import planted_nss  # noqa: E402

from parties.audit.randomness import ConditionedRandomness  # noqa: E402
from parties.audit.simulation import simulation_audit  # noqa: E402
from parties.party import site_parties  # noqa: E402
from protocols.normed_secure_sum import normed_secure_sum, preset  # noqa: E402
from sim.experiments.svd.normed_secure_sum import with_dealer  # noqa: E402
from sim.privacy import SimPyRunner  # noqa: E402

PRIMES = {"p127-default": "2^127-1", "p61-demo": "2^61-1"}


def _parties(m: int, d: int, name: str) -> list:
    params = preset(name)
    rng = np.random.default_rng(1)
    xs = [rng.normal(size=d) for _ in range(m)]
    program = lambda ctx, x: normed_secure_sum(ctx, x, params=params)  # noqa: E731
    return with_dealer(site_parties(program, [{"x": x} for x in xs]), [(1, d)], "normed", params)


def audit_row(m: int, d: int, name: str, trials: int, ratio: int) -> dict:
    parties = _parties(m, d, name)
    runner = SimPyRunner(PRIMES[name])
    start, cpu = time.perf_counter(), time.process_time()
    result = simulation_audit(runner, parties, (0,), trials=trials, ratio=ratio, seed=2)
    seconds = time.perf_counter() - start
    return {"bench": "nss_audit", "M": m, "d": d, "preset": name, "coalition": [0],
            "trials": trials, "ratio": ratio, "verdict": result.verdict,
            "sup_cdf_distance": (result.power or {}).get("sup_cdf_distance"),
            "seconds": round(seconds, 1), "cpu_seconds": round(time.process_time() - cpu, 1),
            "simulated_runs": result.details.get("simulated_runs")}


def run_row(m: int, d: int, name: str) -> dict:
    parties = _parties(m, d, name)
    runner = SimPyRunner(PRIMES[name])
    ids = [p.id for p in parties]
    start = time.perf_counter()
    runner(parties, ConditionedRandomness(ids, (0,), 0, 0))
    return {"bench": "nss_run", "M": m, "d": d, "preset": name,
            "seconds": round(time.perf_counter() - start, 3)}


def planted_rows() -> list[dict]:
    rows = []
    rng = np.random.default_rng(1)
    xs = [rng.normal(size=4) for _ in range(3)]
    runner = SimPyRunner("2^61-1")
    cases = [(None, (0,)), ("unmasked_trunc", (0,)), ("open_carry", (1,)),
             ("repeated_triples", (0,)), ("reused_input_mask", (0, 1))]
    for leak, coalition in cases:
        start = time.perf_counter()
        r = simulation_audit(runner, planted_nss.nss_parties(leak, xs), coalition, trials=40,
                             seed=2)
        rows.append({"bench": "nss_planted", "leak": leak or "honest",
                     "coalition": list(coalition), "verdict": r.verdict, "call": r.call,
                     "message": r.message, "seconds": round(time.perf_counter() - start, 1)})
    return rows


def row_in_tree(tree: str) -> dict:
    """The M = 3, d = 100 audit row computed by this script with TREE's library code."""
    env = dict(os.environ, PYTHONPATH=str(Path(tree).resolve()))
    done = subprocess.run([sys.executable, __file__, "--audit-only"], env=env, check=True,
                          capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def speedup_row(before: dict, after: dict) -> dict:
    return {"bench": "nss_audit_speedup", "verdict_before": before["verdict"],
            "verdict_after": after["verdict"], "before_seconds": before["seconds"],
            "after_seconds": after["seconds"],
            "before_cpu_seconds": before.get("cpu_seconds"),
            "after_cpu_seconds": after["cpu_seconds"],
            "ratio": round(before["seconds"] / after["seconds"], 2),
            "cpu_ratio": (round(before["cpu_seconds"] / after["cpu_seconds"], 2)
                          if before.get("cpu_seconds") else None)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--audit-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--before", metavar="TREE")
    args = parser.parse_args(argv)
    with threadpool_limits(1):
        after = audit_row(3, 100, "p127-default", 40, 2)
        print(json.dumps(after), flush=True)
        if args.audit_only:
            return
        if args.before:
            print(json.dumps(speedup_row(row_in_tree(args.before), after)), flush=True)
        if args.quick:
            return
        for row in planted_rows():
            print(json.dumps(row), flush=True)
        for m in (3, 6, 12, 24):
            print(json.dumps(run_row(m, 100, "p127-default")), flush=True)


if __name__ == "__main__":
    main()
