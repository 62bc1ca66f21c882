"""The exact linear audit and coalition studies: cost against the number of parties.

Prints JSON lines ``{"bench": "linear_study", "variant", "parties", "d", "coalitions",
"variables", "probe_runs", "probe_s", "decide_s", "per_coalition_ms", "one_run_ms",
"probe_over_runs"}``: the probes (one run per input or drawn element, plus 3 random checks)
and the rank decisions of every coalition of SecureSum, M = 2..8, d = 8, at 2^61 − 1.
Each figure is the minimum over ``--repeats`` interleaved repetitions (the median is printed
too); ``probe_over_runs`` is the probe time over (probe_runs × one plain run): the audit's
overhead beyond running the program. Also one line ``{"bench": "simulation_vs_linear"}``:
all coalitions by the linear method against one coalition by the simulation method (40
trials), M = 4.

BLAS runs single-threaded (threadpoolctl). ``--quick`` stops at M = 5.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import time

from threadpoolctl import threadpool_limits

from parties.audit import ConditionedRandomness
from parties.audit.linear import decide, probe
from parties.party import site_parties
from protocols.field import prime_field
from sim.privacy import SimPyRunner, audit, field_builder, secure_sum_program

F61 = prime_field(2**61 - 1)
D = 8


def emit(record: dict) -> None:
    print(json.dumps(record), flush=True)


def one_run_s(runner: SimPyRunner, variant: str, m: int) -> float:
    parties = site_parties(secure_sum_program(variant), [{"x": F61.zeros(D)}] * m)
    start = time.perf_counter()
    runner(parties, ConditionedRandomness(range(m), (), 0, 0))
    return time.perf_counter() - start


def study(variant: str, m: int) -> dict:
    runner = SimPyRunner(F61.p, seed=1)
    make = field_builder(secure_sum_program(variant))
    t0 = time.perf_counter()
    affine_map = probe(runner, make, [D] * m)
    t1 = time.perf_counter()
    chosen = [c for t in range(1, m) for c in itertools.combinations(range(m), t)]
    verdicts = {decide(affine_map, c, F61).verdict for c in chosen}
    t2 = time.perf_counter()
    if verdicts != {"private"}:
        raise SystemExit(f"honest SecureSum ({variant}, M = {m}) not private: {verdicts}")
    run = min(one_run_s(runner, variant, m) for _ in range(3))
    runs = affine_map.variables.size + 1 + affine_map.probes
    return {"coalitions": len(chosen), "variables": affine_map.variables.size,
            "probe_runs": runs, "probe_s": t1 - t0, "decide_s": t2 - t1,
            "one_run_ms": 1e3 * run, "probe_over_runs": (t1 - t0) / (runs * run)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    top = 5 if args.quick else 8
    cases = [(v, m) for m in range(2, top + 1) for v in ("prg", "explicit")]
    samples: dict[tuple[str, int], list[dict]] = {c: [] for c in cases}
    with threadpool_limits(1):
        for _ in range(args.repeats):  # interleaved: every case once per repetition
            for case in cases:
                samples[case].append(study(*case))
        for (variant, m), got in samples.items():
            fixed = {k: got[0][k] for k in ("coalitions", "variables", "probe_runs")}
            out = {"bench": "linear_study", "variant": variant, "parties": m, "d": D, **fixed,
                   "blas_threads": 1}
            for key in ("probe_s", "decide_s", "one_run_ms", "probe_over_runs"):
                values = [g[key] for g in got]
                out[key] = round(min(values), 4)
                out[f"{key}_median"] = round(statistics.median(values), 4)
            out["per_coalition_ms"] = round(1e3 * out["decide_s"] / fixed["coalitions"], 3)
            emit(out)
        inputs = [F61.zeros(D)] * 4
        start = time.perf_counter()
        audit(secure_sum_program("prg"), inputs, [0, 1], prime=F61.p, method="simulation",
              trials=40)
        sim_s = time.perf_counter() - start
        start = time.perf_counter()
        runner = SimPyRunner(F61.p, seed=1)
        affine_map = probe(runner, field_builder(secure_sum_program("prg")), [D] * 4)
        for c in (c for t in range(1, 4) for c in itertools.combinations(range(4), t)):
            decide(affine_map, c, F61)
        linear_s = time.perf_counter() - start
        emit({"bench": "simulation_vs_linear", "parties": 4, "d": D,
              "simulation_one_coalition_s": round(sim_s, 3),
              "linear_all_14_coalitions_s": round(linear_s, 3),
              "ratio": round(sim_s / linear_s, 2), "blas_threads": 1})


if __name__ == "__main__":
    main()
