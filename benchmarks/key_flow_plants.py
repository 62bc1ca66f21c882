"""Key-flow plants (issue 27, item 5) × audit method: verdict and seconds, as JSON lines.

Plants from tests/parties/planted_keyflow.py and planted_keys.py (SecAgg); 200 trials for the
value methods, GF(5) and max_runs = 20000 for the exact one. Run from the repository root:
``PYTHONPATH=$PWD python benchmarks/key_flow_plants.py``.
"""

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "parties"))
import planted_keyflow as pkf
import planted_keys as pk

from parties.audit import statistical_audit
from protocols.field import prime_field
from sim.network import Network
from sim.privacy import SimPyRunner, audit

P61 = (1 << 61) - 1
F61, F5 = prime_field(P61), prime_field(5)


def emit(program: str, method: str, verdict: str, start: float) -> None:
    print(json.dumps({"program": program, "method": method, "verdict": verdict,
                      "seconds": round(time.perf_counter() - start, 2)}), flush=True)


def main() -> None:
    rng = np.random.default_rng(np.random.SeedSequence(27, spawn_key=(5,)))
    inputs = {n: [F61.random(rng, 2) for _ in range(n)] for n in (3, 4)}
    cases: list[tuple[str, Any, int, list[int]]] = [(k, *v) for k, v in pkf.LEAKS.items()]
    cases += [("seed_to_partner {0}", pkf.seed_to_partner, 3, [0]),
              ("seed_to_partner {2}", pkf.seed_to_partner, 3, [2])]
    for name, program, n, coalition in cases:
        for method in ("simulation", "statistical", "linear", "exact"):
            start = time.perf_counter()
            try:
                if method == "exact":
                    xs = [F5.elements([v]) for v in (1, 3, 2, 4)[:n]]
                    r = audit(program, xs, coalition, prime=5, method=method, max_runs=20000)
                else:
                    r = audit(program, inputs[n], coalition, prime="2^61-1", method=method,
                              trials=200)
                verdict = r.verdict
            except Exception as exc:  # the table reports what the audit does
                verdict = f"error: {type(exc).__name__}"
            emit(name, method, verdict, start)
    sums = [F61.elements([5, 6]), F61.elements([7, 8]), F61.elements([9, 10]),
            F61.elements([11, 12])]
    for name, build in (("secagg_key_to_aggregator", pk.secagg_key_to_aggregator),
                        ("secagg_key_later", pkf.secagg_key_later)):
        start = time.perf_counter()
        runner = SimPyRunner(P61, 0, 0, Network.build(5))
        r = statistical_audit(runner, lambda xs, b=build: b(list(xs)), sums, (4,), trials=200,
                              seed=0, pairs=2)
        emit(name, "statistical", r.verdict, start)


if __name__ == "__main__":
    main()
