"""Seed 002's Table 2 under each reading of Algorithm 1 and each budget: one JSON line per run.

Runs ``scenarios/corrective_nmf_table2.toml`` (1,000 × 500 ML-1M-shaped ratings, k = 20,
10 adversaries) with ``[algorithm]`` overrides and prints, per run, the overrides, the mean
absolute prediction shift of every method for Models 3 and 4 (means over the repetitions and
every repetition's value), the iterations each method ran, and the wall seconds::

    {"overrides": {...}, "model 3": {"ignore-missing": [mean, [rep, ...]], ...},
     "model 4": {...}, "iterations": {...}, "wall_s": ...}

Usage: ``python benchmarks/corrective_readings.py [--repetitions R] [--seed S]
[--target-min-mean STARS] [--target-top-fraction F] [CASE ...]`` with CASE one of
:data:`CASES` (all by default).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = {
    "shipped": {},
    "running": {"replace_base": "running"},
    "once": {"fill": "once"},
    "once_running": {"fill": "once", "replace_base": "running"},
    "time": {"budget": "time"},
    "time_once": {"budget": "time", "fill": "once"},
}


def main(argv: list[str] | None = None) -> int:
    from sim.runner import run_scenario

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="*", default=list(CASES), choices=list(CASES))
    parser.add_argument("--repetitions", type=int, default=None)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--target-min-mean", type=float, default=None)
    parser.add_argument("--target-top-fraction", type=float, default=None)
    args = parser.parse_args(argv)
    for case in args.cases:
        spec = tomllib.loads((ROOT / "scenarios" / "corrective_nmf_table2.toml").read_text())
        spec["algorithm"].update(CASES[case])
        if args.repetitions is not None:
            spec["algorithm"]["repetitions"] = args.repetitions
        if args.seed is not None:
            spec["seed"] = args.seed
        if args.target_min_mean is not None:
            spec["attack"]["target_min_mean"] = args.target_min_mean
        if args.target_top_fraction is not None:
            spec["attack"]["target_top_fraction"] = args.target_top_fraction
        start = time.perf_counter()
        m = run_scenario(spec).report["metrics"]
        line: dict[str, object] = {"case": case, "overrides": CASES[case], "seed": spec["seed"],
                                   "target_min_mean": spec["attack"].get("target_min_mean"),
                                   "target_top_fraction": spec["attack"].get(
                                       "target_top_fraction")}
        for model in ("model 3", "model 4"):
            line[model] = {
                label: [round(row["prediction_shift"], 4),
                        [round(r[model][label]["prediction_shift"], 4)
                         for r in m["per_repetition"]]]
                for label, row in m["table2"][model].items()}
        line["iterations"] = m["iterations_by_method"]
        line["wall_s"] = round(time.perf_counter() - start, 1)
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
