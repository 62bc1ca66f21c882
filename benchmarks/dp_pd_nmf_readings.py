"""DP-PD-NMF at ε = 1 (thesis seed 001, §3.3, Fig. 3.7c) under each reading of the budget and
the clipping bound: one JSON line per (reading, seed).

The thesis leaves unspecified (digest §7 item 27) whether ε is per release or the total of a
run, how releases compose, and the sensitivity. ``scenarios/pd_nmf_dp_ratings.toml`` (600 × 150
ratings, 4 parties, k = 7, 10 sweeps, δ = 0.01) reads ε and δ per SecureSum release with row
clipping C = 1. A run makes R = k · sweeps releases (one SecureSum per topic per sweep). The
readings:

* ``per_release``: ε = 1, δ = 0.01 for every release (the shipped reading);
* ``total_basic``: ε = 1, δ = 0.01 for the whole run, split by basic composition
  (Dwork & Roth, Thm. 3.16): ε/R and δ/R per release;
* ``total_advanced``: the same total by advanced composition (Dwork & Roth, Thm. 3.20):
  ε_r solves √(2R ln(2/δ))·ε_r + R·ε_r·(e^{ε_r} − 1) = ε, with δ/(2R) per release;
* ``clip_0.1`` … ``clip_30``: per-release ε = 1 with C = 0.1, 0.3, 3, 10, 30;
* ``ridge_sigma``, ``ridge_3sigma``, ``ridge_10sigma``: per-release ε = 1, C = 1, and ℓ2 on T
  (``l2_t``) of σ, 3σ or 10σ — post-processing, not in the thesis: each column's curvature
  Σ W² is released with noise of std σ, and a noisy curvature near 0 sends T_tj = numerator /
  curvature far off (the predictions then sit at the ends of the rating range); the ridge
  keeps it away from 0. The local models get the same ℓ2.

Predictions are clipped to the range of the party's training ratings in every reading (the
uplift experiment does so for both models). Each line gives the parties' mean held-out RMSE of
the global model, of the best local model, and of uniform random guessing on the rating range
(closed form), the per-release ε and δ, and the wall seconds.

Usage: ``python benchmarks/dp_pd_nmf_readings.py [READING ...] [--seeds 21 22 23]``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EPSILON, DELTA = 1.0, 0.01
SIGMA = math.sqrt(2 * math.log(1.25 / DELTA)) / EPSILON
"""σ of the summed noise at C = 1 (the classical Gaussian mechanism, Dwork & Roth Thm. A.1)."""


def advanced_epsilon(total: float, delta: float, releases: int) -> float:
    """ε per release whose R-fold advanced composition (δ' = δ/2) is ``total``, by bisection."""
    def composed(e: float) -> float:
        return math.sqrt(2 * releases * math.log(2 / delta)) * e + releases * e * math.expm1(e)

    lo, hi = 0.0, total
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if composed(mid) < total else (lo, mid)
    return lo


def readings(releases: int) -> dict[str, dict[str, float]]:
    return {
        "per_release": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 1.0},
        "total_basic": {"dp_epsilon": EPSILON / releases, "dp_delta": DELTA / releases,
                        "dp_clip": 1.0},
        "total_advanced": {"dp_epsilon": advanced_epsilon(EPSILON, DELTA, releases),
                           "dp_delta": DELTA / (2 * releases), "dp_clip": 1.0},
        "clip_0.1": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 0.1},
        "clip_0.3": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 0.3},
        "clip_3": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 3.0},
        "clip_10": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 10.0},
        "clip_30": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 30.0},
        "ridge_sigma": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 1.0,
                        "l2_t": SIGMA},
        "ridge_3sigma": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 1.0,
                         "l2_t": 3 * SIGMA},
        "ridge_10sigma": {"dp_epsilon": EPSILON, "dp_delta": DELTA, "dp_clip": 1.0,
                          "l2_t": 10 * SIGMA},
    }


def main(argv: list[str] | None = None) -> int:
    from sim.runner import run_scenario

    spec = tomllib.loads((ROOT / "scenarios" / "pd_nmf_dp_ratings.toml").read_text())
    releases = spec["algorithm"]["k"] * spec["algorithm"]["iterations"]
    cases = readings(releases)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("readings", nargs="*", help=f"any of {', '.join(cases)} (all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[21])
    args = parser.parse_args(argv)
    unknown = [r for r in args.readings if r not in cases]
    if unknown:
        parser.error(f"unknown readings {unknown}; choose among {', '.join(cases)}")
    for name in args.readings or list(cases):
        for seed in args.seeds:
            run_spec = tomllib.loads((ROOT / "scenarios" / "pd_nmf_dp_ratings.toml").read_text())
            run_spec.pop("audit", None)
            run_spec["seed"] = seed
            run_spec["algorithm"].update(cases[name])
            start = time.perf_counter()
            metrics = run_scenario(run_spec).report["metrics"]
            parties = metrics["parties"]
            line = {"reading": name, "seed": seed, "releases": releases, **cases[name],
                    **{key: sum(p[key] for p in parties) / len(parties)
                       for key in ("error_global", "error_local", "error_random")},
                    "wall_s": round(time.perf_counter() - start, 1)}
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
