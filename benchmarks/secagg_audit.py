"""Simulation audits of SecAgg / SecAgg+ (:class:`protocols.secagg.SecAggSimulator`).

Prints JSON lines:

* ``{"bench": "verdict", "leak", "coalition", "calls", "trials", "verdict", "call",
  "message", "seconds"}`` — the planted leaks of ``tests/parties/planted_secagg.py`` and the
  honest protocol (M = 4, t = 3, d = 3, complete graph), simulation method.
* ``{"bench": "size", "m", "graph", "degree", "coalition", "d", "trials", "verdict",
  "trials_needed", "view_elements", "sup_cdf_distance", "seconds", "run_seconds"}`` — one
  SecAgg round at M sites (t = ⌊M/2⌋ + 1), the audit's wall time on one core and one plain
  run's (so that the cost at another M can be read off: trials × runs + the hull ranks).

``--quick`` runs the size rows only, at M = 10.
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


def audit_row(parties, coalition, config, trials, seed=2):
    runner = SimPyRunner(P61, 0, 0, Network.build(len(parties)))
    start = time.perf_counter()
    r = simulation_audit(runner, parties, coalition, trials=trials, seed=seed,
                         protocol="secagg", variant=variant_of(config))
    return r, time.perf_counter() - start


def verdict_rows() -> None:
    config = Config(threshold=3)
    cases = [("both_secrets", (4,), 1), ("share_to_aggregator", (1, 2, 4), 1),
             ("reused_seed", (1,), 2), ("reused_seed", (4,), 2), ("reused_key", (4,), 2),
             (None, (0,), 1), (None, (0, 1), 1), (None, (4,), 1), (None, (0, 4), 1),
             (None, (0, 3, 4), 1)]
    for leak, coalition, calls in cases:
        trials = 300 if 4 in coalition and leak is None else 150
        r, seconds = audit_row(ps.leaky_parties(inputs(4, 3), config, leak, calls),
                               coalition, config, trials)
        print(json.dumps({"bench": "verdict", "leak": leak or "honest",
                          "coalition": list(coalition), "calls": calls, "trials": trials,
                          "verdict": r.verdict, "call": r.call, "message": r.message,
                          "seconds": round(seconds, 1)}), flush=True)


def size_rows(m: int, d: int) -> None:
    for graph, degree, coalition, trials in (
        ("harary", 2, (0,), 120), ("harary", 2, (m,), 200), ("complete", 0, (0,), 200),
        ("complete", 0, (m,), 200),
    ):
        config = Config(threshold=2 if graph == "harary" else m // 2 + 1, graph=graph,
                        degree=degree)
        parties = ps.leaky_parties(inputs(m, d), config, None)
        runner = SimPyRunner(P61, 0, 0, Network.build(m + 1))
        start = time.perf_counter()
        runner(parties, ConditionedRandomness(list(range(m + 1)), coalition, 0, 0))
        run_seconds = time.perf_counter() - start
        r, seconds = audit_row(parties, coalition, config, trials)
        power = r.power or {}
        print(json.dumps({"bench": "size", "m": m, "graph": graph, "degree": degree,
                          "coalition": list(coalition), "d": d, "trials": trials,
                          "verdict": r.verdict, "trials_needed": r.details.get("trials_needed"),
                          "view_elements": r.details.get("view_elements"),
                          "sup_cdf_distance": power.get("sup_cdf_distance"),
                          "seconds": round(seconds, 1), "run_seconds": round(run_seconds, 3)}),
              flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--m", type=int, default=10)
    parser.add_argument("--d", type=int, default=16)
    args = parser.parse_args()
    with threadpool_limits(1):
        if not args.quick:
            verdict_rows()
        size_rows(args.m, args.d)


if __name__ == "__main__":
    main()
