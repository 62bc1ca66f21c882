"""SecAgg against the thesis's SecureSum, with dropouts, and SecAgg+'s per-party cost in M.

Prints one JSON line per figure; BLAS is pinned to one thread (threadpoolctl). Ratios are taken
within one run from interleaved repetitions (min and median over the repetitions).

1. M = 100, d = 10^4: SecAgg (complete graph, t = ⌊M/2⌋ + 1) with 0 %, 10 % and 30 % of the
   sites crashing before they send their masked input, against SecureSum (PRG variant) on the
   same inputs without faults. Both run with pre-shared pair keys and sealed channels; SecAgg's
   per-call X25519 mask keys are part of its time. Figures: wall time, bytes sent per site
   (largest) and by the aggregator, and the ratios SecAgg / SecureSum (per site). Target:
   no-dropout overhead ≤ 3×.
2. SecAgg+ (``graph = "harary"``, k = 2⌈log2 M⌉, t = k/2 + 1) for M ∈ {50, 100, 200, 400} at
   d = 10^3: bytes and elements sent per site (largest) and wall time, with the complete graph
   alongside for M ≤ 100. Target: per-site cost grows as O(log M), not O(M).

Usage: ``python benchmarks/secagg.py [--quick]`` (``--quick``: M = 30, d = 10^3, one repetition,
M ∈ {50, 100} for part 2).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import time
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from parties.party import site_parties
from protocols.secagg import Config
from protocols.secure_sum import secure_sum
from sim.experiments.secagg import secagg_parties
from sim.faults import parse_faults
from sim.network import Network
from sim.simulation import Result, Simulation


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def per_site(result: Result, m: int, column: str) -> int:
    totals = dict.fromkeys(range(m), 0)
    for row in result.ledger:
        if row.sender < m:
            totals[row.sender] += getattr(row, column)
    return max(totals.values())


def inputs_for(m: int, d: int, seed: int = 1) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.0, 1.0, d) for _ in range(m)]


def run_secagg(inputs: list[np.ndarray], config: Config, dropped: int) -> tuple[float, Result]:
    m = len(inputs)
    faults = [{"kind": "crash", "party": u, "call": "secagg", "step": "masked_input"}
              for u in range(dropped)]
    sim = Simulation(Network.build(m + 1), seed=1, keys="preshared", record_views=False,
                     faults=parse_faults(faults))
    start = time.perf_counter()
    result = sim.run(secagg_parties(inputs, config))
    return time.perf_counter() - start, result


def run_secure_sum(inputs: list[np.ndarray]) -> tuple[float, Result]:
    sim = Simulation(Network.build(len(inputs)), seed=1, keys="preshared", record_views=False)
    parties = site_parties(lambda ctx, x: secure_sum(ctx, x, "prg"), [{"x": x} for x in inputs])
    start = time.perf_counter()
    result = sim.run(parties)
    return time.perf_counter() - start, result


def dropouts(m: int, d: int, repeats: int) -> None:
    inputs = inputs_for(m, d)
    config = Config(threshold=m // 2 + 1)
    fractions = (0.0, 0.1, 0.3)
    times: dict[str, list[float]] = {"secure_sum": [], **{f"secagg_{f:g}": [] for f in fractions}}
    bytes_: dict[str, int] = {}
    for _ in range(repeats):  # interleaved: every configuration once per repetition
        seconds, result = run_secure_sum(inputs)
        times["secure_sum"].append(seconds)
        bytes_["secure_sum"] = per_site(result, m, "bytes")
        for f in fractions:
            dropped = round(f * m)
            seconds, result = run_secagg(inputs, config, dropped)
            total, survivors = result.outputs[m]
            expected = np.sum([inputs[u] for u in survivors], axis=0)
            if len(survivors) != m - dropped or np.max(np.abs(total - expected)) > 1e-5:
                raise RuntimeError(f"SecAgg gave a wrong sum with {dropped} dropouts")
            times[f"secagg_{f:g}"].append(seconds)
            bytes_[f"secagg_{f:g}"] = per_site(result, m, "bytes")
            bytes_[f"aggregator_{f:g}"] = sum(r.bytes for r in result.ledger if r.sender == m)
    base_min, base_med = min(times["secure_sum"]), statistics.median(times["secure_sum"])
    emit(figure="secure_sum_prg", M=m, d=d, wall_s_min=base_min, wall_s_median=base_med,
         bytes_per_site=bytes_["secure_sum"], repeats=repeats)
    for f in fractions:
        key = f"secagg_{f:g}"
        emit(figure="secagg_vs_secure_sum", M=m, d=d, dropout_fraction=f,
             dropped=round(f * m), threshold=config.threshold,
             wall_s_min=min(times[key]), wall_s_median=statistics.median(times[key]),
             wall_ratio_min=min(times[key]) / base_min,
             wall_ratio_median=statistics.median(times[key]) / base_med,
             bytes_per_site=bytes_[key], aggregator_bytes=bytes_[f"aggregator_{f:g}"],
             bytes_ratio=bytes_[key] / bytes_["secure_sum"], repeats=repeats)


def scaling(ms: tuple[int, ...], d: int) -> None:
    for m in ms:
        k = 2 * math.ceil(math.log2(m))
        graphs = [("harary", Config(threshold=k // 2 + 1, graph="harary", degree=k))]
        if m <= 100:
            graphs.append(("complete", Config(threshold=m // 2 + 1)))
        for name, config in graphs:
            seconds, result = run_secagg(inputs_for(m, d), config, 0)
            emit(figure="secagg_per_site_cost", graph=name, M=m, d=d, degree=config.degree
                 if name == "harary" else m - 1, threshold=config.threshold,
                 bytes_per_site=per_site(result, m, "bytes"),
                 elements_per_site=per_site(result, m, "elements"), wall_s=seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    args = parser.parse_args()
    with threadpool_limits(limits=1):
        emit(note="BLAS pinned to 1 thread (threadpoolctl); keys pre-shared, channels sealed")
        if args.quick:
            dropouts(30, 1000, 1)
            scaling((50, 100), 1000)
        else:
            dropouts(100, 10_000, 3)
            scaling((50, 100, 200, 400), 1000)


if __name__ == "__main__":
    main()
