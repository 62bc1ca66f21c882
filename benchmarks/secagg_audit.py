"""Simulation audits of SecAgg / SecAgg+ (:class:`protocols.secagg_simulator.SecAggSimulator`).

Prints JSON lines:

* ``{"bench": "verdict", "leak", "coalition", "calls", "trials", "verdict", "call",
  "message", "seconds"}`` — the planted leaks of ``tests/parties/planted_secagg.py`` and the
  honest protocol (M = 4, t = 3, d = 3, complete graph), simulation method.
* ``{"bench": "size", "m", "graph", "degree", "coalition", "d", "trials", "verdict",
  "trials_needed", "view_elements", "sup_cdf_distance", "seconds", "run_seconds"}`` — one
  SecAgg round at M sites (t = ⌊M/2⌋ + 1), the audit's wall time on one core and one plain
  run's (so that the cost at another M can be read off: trials × runs + the hull ranks).

* ``{"bench": "run", "m", "graph", "degree", "run_seconds"}`` — one audited run (injected
  randomness) at M = 100: the unit of an audit's cost there.

Timed rows give wall ``seconds`` and the process's ``cpu_seconds`` (the machine is shared: wall
time includes waiting for a core). ``--before TREE`` runs the aggregator row (M = 10, complete
graph, coalition {M}) with this tree's library code and with TREE's (a checkout of an earlier
commit) in a subprocess, and prints ``{"bench": "secagg_audit_speedup", ...}`` with both figures
and their ratios; ``--aggregator-only`` runs that row alone.

The verdict rows run with the real AES expansion and with the audit's programmed oracle
(``oracle = "affine"``); the size rows with the programmed one (the scenarios' default).
``--quick`` runs the size and run rows only.
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

import planted_secagg as ps  # noqa: E402

from parties.audit.randomness import ConditionedRandomness  # noqa: E402
from parties.audit.simulation import simulation_audit  # noqa: E402
from protocols.field import prime_field  # noqa: E402
from protocols.secagg import Config, variant_of  # noqa: E402
from sim.network import Network  # noqa: E402
from sim.privacy import SimPyRunner  # noqa: E402

P61 = 2**61 - 1
F = prime_field(P61)


def inputs(m: int, d: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [F.elements(rng.integers(0, 1000, d)) for _ in range(m)]


def audit_row(parties, coalition, config, trials, seed=2, oracle="aes"):
    r, seconds, _ = timed_audit(parties, coalition, config, trials, seed, oracle)
    return r, seconds


def timed_audit(parties, coalition, config, trials, seed=2, oracle="aes"):
    """The audit's result, wall seconds and CPU seconds."""
    runner = SimPyRunner(P61, 0, 0, Network.build(len(parties)), None, oracle)
    start, cpu = time.perf_counter(), time.process_time()
    r = simulation_audit(runner, parties, coalition, trials=trials, seed=seed,
                         protocol="secagg", variant=variant_of(config, oracle))
    return r, time.perf_counter() - start, time.process_time() - cpu


def verdict_rows() -> None:
    config = Config(threshold=3)
    cases = [("both_secrets", (4,), 1), ("share_to_aggregator", (1, 2, 4), 1),
             ("reused_seed", (1,), 2), ("reused_seed", (4,), 2), ("reused_key", (4,), 2),
             ("omitted_pair", (0,), 1), ("omitted_pairs_both_sides", (4,), 1),
             (None, (0,), 1), (None, (0, 1), 1), (None, (4,), 1), (None, (0, 4), 1),
             (None, (0, 3, 4), 1)]
    for oracle in ("aes", "affine"):
        for leak, coalition, calls in cases:
            trials = 300 if 4 in coalition and leak in (None, "omitted_pairs_both_sides") else 150
            r, seconds = audit_row(ps.leaky_parties(inputs(4, 3), config, leak, calls),
                                   coalition, config, trials, oracle=oracle)
            print(json.dumps({"bench": "verdict", "oracle": oracle, "leak": leak or "honest",
                              "coalition": list(coalition), "calls": calls, "trials": trials,
                              "verdict": r.verdict, "call": r.call, "message": r.message,
                              "seconds": round(seconds, 1)}), flush=True)


def size_rows(m: int, d: int, aggregator_trials: int, aggregator_only: bool = False) -> None:
    rows = [("harary", 2, (0,), 120), ("complete", 0, (0,), 200),
            ("complete", 0, (m,), aggregator_trials)]
    for graph, degree, coalition, trials in rows[-1:] if aggregator_only else rows:
        config = Config(threshold=2 if graph == "harary" else m // 2 + 1, graph=graph,
                        degree=degree)
        parties = ps.leaky_parties(inputs(m, d), config, None)
        runner = SimPyRunner(P61, 0, 0, Network.build(m + 1))
        start = time.perf_counter()
        runner(parties, ConditionedRandomness(list(range(m + 1)), coalition, 0, 0))
        run_seconds = time.perf_counter() - start
        r, seconds, cpu = timed_audit(parties, coalition, config, trials, oracle="affine")
        power = r.power or {}
        print(json.dumps({"bench": "size", "m": m, "graph": graph, "degree": degree,
                          "coalition": list(coalition), "d": d, "trials": trials,
                          "verdict": r.verdict, "trials_needed": r.details.get("trials_needed"),
                          "view_elements": r.details.get("view_elements"),
                          "sup_cdf_distance": power.get("sup_cdf_distance"),
                          "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1),
                          "run_seconds": round(run_seconds, 3)}),
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--d", type=int, default=16)
    parser.add_argument("--aggregator-trials", type=int, default=420)
    parser.add_argument("--runs-only", type=int, nargs="*", default=[100],
                        help="sizes M at which only one plain run is timed")
    parser.add_argument("--aggregator-only", action="store_true")
    parser.add_argument("--before", metavar="TREE")
    args = parser.parse_args()
    if args.before:
        speedup(args.before, args.m, args.d, args.aggregator_trials)
        return
    with threadpool_limits(1):
        if args.aggregator_only:
            size_rows(args.m, args.d, args.aggregator_trials, aggregator_only=True)
            return
        if not args.quick:
            verdict_rows()
        size_rows(args.m, args.d, args.aggregator_trials)
        for m in args.runs_only:
            run_row(m, args.d)


def speedup(tree: str, m: int, d: int, trials: int) -> None:
    """The aggregator row with TREE's library code and with this tree's, and their ratios."""
    rows = {}
    for name, path in (("before", Path(tree).resolve()), ("after", ROOT)):
        env = dict(os.environ, PYTHONPATH=str(path))
        done = subprocess.run([sys.executable, __file__, "--aggregator-only", "--m", str(m),
                               "--d", str(d), "--aggregator-trials", str(trials)], env=env,
                              check=True, capture_output=True, text=True)
        rows[name] = json.loads(done.stdout.strip().splitlines()[-1])
        print(json.dumps({**rows[name], "tree": name}), flush=True)
    b, a = rows["before"], rows["after"]
    print(json.dumps({"bench": "secagg_audit_speedup", "m": m, "trials": trials,
                      "verdict_before": b["verdict"], "verdict_after": a["verdict"],
                      "before_seconds": b["seconds"], "after_seconds": a["seconds"],
                      "before_cpu_seconds": b["cpu_seconds"], "after_cpu_seconds": a["cpu_seconds"],
                      "ratio": round(b["seconds"] / a["seconds"], 2),
                      "cpu_ratio": round(b["cpu_seconds"] / a["cpu_seconds"], 2)}), flush=True)


def run_row(m: int, d: int) -> None:
    """One plain audited-style run (injected randomness, no sealing) at M sites."""
    for graph, degree in (("complete", 0), ("harary", 2 * int(np.ceil(np.log2(m))))):
        config = Config(threshold=m // 2 + 1 if graph == "complete" else degree // 2 + 1,
                        graph=graph, degree=degree)
        parties = ps.leaky_parties(inputs(m, d), config, None)
        runner = SimPyRunner(P61, 0, 0, Network.build(m + 1), None, "affine")
        start = time.perf_counter()
        runner(parties, ConditionedRandomness(list(range(m + 1)), (0,), 0, 0))
        print(json.dumps({"bench": "run", "m": m, "graph": graph, "degree": degree, "d": d,
                          "run_seconds": round(time.perf_counter() - start, 2)}), flush=True)


if __name__ == "__main__":
    main()
