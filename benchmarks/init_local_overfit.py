"""Why WR-NMF's start loses at k = 50 on ratings (thesis §2.4, Fig. 2.5; claim C12).

PD-NMF-Init (thesis Algorithm 8) starts from each party's local rank-k model. On the ratings
scenario at k = 50 (``scenarios/pd_nmf_init_comparison_ratings_k50.toml``: 815 users × 500
items at 33 %, M = 9, ≈ 90 users a party) this prints one JSON line per rank (5 and 50), per
party's local model fitted on 80 % of its observed ratings as PD-NMF-Init fits it: parameters
against ratings fitted, RMSE on the fitted and on the held-out 20 %
(:func:`sim.experiments.nmf.init_comparison.local_model_fit`); and the same for one model of
all parties' rows pooled. With ``--parties M`` it also runs the scenario's comparison of
``random``, ``random_2x`` and ``pd_nmf_init`` at M parties (≈ 815 / M users each: more ratings
per local model), a line with the final objectives (about 2 CPU-minutes a run).

Usage: ``python benchmarks/init_local_overfit.py [--parties M [M ...]]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tomllib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "scenarios" / "pd_nmf_init_comparison_ratings_k50.toml"


def main() -> None:
    from sim.experiments.nmf.init_comparison import local_model_fit
    from sim.runner import plan_scenario

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, nargs="*", default=[],
                        help="also run the comparison at these numbers of parties")
    args = parser.parse_args()
    raw = tomllib.loads(SCENARIO.read_text())
    plan = plan_scenario(raw)
    pooled = [np.vstack([np.asarray(s, dtype=np.float64) for s in plan.shards])]
    for k in (5, 50):
        for scope, shards in (("local", plan.shards), ("pooled", pooled)):
            fits = local_model_fit(shards, k, holdout=0.2, seed=0)
            print(json.dumps({
                "benchmark": "init_local_overfit", "k": k, "models": scope,
                "parties": len(shards),
                "parameters": [f["parameters"] for f in fits],
                "ratings_fitted": [f["observed"] for f in fits],
                "train_rmse": [round(f["train_rmse"], 4) for f in fits],
                "heldout_rmse": [round(f["heldout_rmse"], 4) for f in fits],
                "heldout_rmse_median": round(statistics.median(f["heldout_rmse"]
                                                               for f in fits), 4)}),
                flush=True)
    for m in args.parties:
        raw = tomllib.loads(SCENARIO.read_text())
        raw["network"]["parties"] = m
        raw["algorithm"]["inits"] = ["random", "random_2x", "pd_nmf_init"]
        metrics = plan_scenario(raw).run().report["metrics"]
        print(json.dumps({"benchmark": "init_comparison_parties", "parties": m, **{
            key: round(value, 1) for key, value in metrics.items()
            if key.startswith("final_objective")}}), flush=True)


if __name__ == "__main__":
    main()
