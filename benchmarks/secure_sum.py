"""SecureSum wall time against its own mask generation, and the driver's cost per message.

Prints one JSON line per figure. Ratios are taken within one run, from the medians of
interleaved repetitions (these machines are shared and noisy).

1. M = 10, d = 10^6, PRG variant: the SecureSum run with sealing off and on, and the time to
   generate the same masks with the PRG alone (every party's 2d-element stream with each
   peer, materialised). Target: sealing off ≤ 1.5 × masks. Reported as the median of the
   pair-by-pair ratios (order alternating between rounds) and as the ratio of the minima.
2. The SimPy driver's overhead per message: 10 parties exchanging one-element messages in
   50 rounds (the programs do no other work).
3. M = 1000, d = 1000 (target ≤ 60 s): SecureSum with pre-shared pair keys and views not kept
   (they would hold ~10^6 payloads); X25519 key agreement is a one-time setup reported
   separately — measured per pair at M = 40, and for M = 1000 only with ``--full``.

Usage: ``python benchmarks/secure_sum.py [--quick] [--full]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from parties.party import site_parties
from protocols.context import PartyContext
from protocols.effects import Call, RecvEach, SendEach
from protocols.field import prime_field
from protocols.prg import field_streams
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import Simulation, preshared_pair_keys


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def run_secure_sum(m: int, d: int, *, sealing: bool, keys: str = "preshared",
                   record_views: bool = True, seed: int = 1) -> tuple[float, Any]:
    rng = np.random.default_rng(seed)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]
    sim = Simulation(Network.build(m), seed=seed, sealing=sealing, keys=keys,
                     record_views=record_views)
    parties = site_parties(lambda ctx, x: secure_sum(ctx, x, "prg"), inputs)
    start = time.perf_counter()
    result = sim.run(parties)
    return time.perf_counter() - start, result


def time_masks(m: int, d: int, seed: int = 1) -> float:
    """Generate exactly the masks of one PRG SecureSum call at every party."""
    field = prime_field("2^61-1")
    seeds = {(a, b): preshared_pair_keys(seed, a, b)[1] for a in range(m) for b in range(m)
             if a != b}
    start = time.perf_counter()
    for party in range(m):
        keys = [seeds[(party, peer)] for peer in range(m) if peer != party]
        field_streams(keys, 0, 2 * d, field)
    return time.perf_counter() - start


def ping(ctx: PartyContext, rounds: int) -> Any:
    payload = np.zeros(1, dtype=np.uint64)
    for r in range(rounds):
        call = Call("ping", r)
        yield SendEach(dict.fromkeys(ctx.peers, payload), call, "ping")
        yield RecvEach(ctx.peers, call, "ping")


def paired(repeats: int, *fns: Callable[[], float]) -> list[list[float]]:
    """Time every function ``repeats`` times, interleaved, alternating the order each round."""
    samples: list[list[float]] = [[] for _ in fns]
    order = list(range(len(fns)))
    for r in range(repeats):
        for i in order if r % 2 == 0 else reversed(order):
            samples[i].append(fns[i]())
    return samples


def ratio_figures(num: list[float], den: list[float]) -> dict[str, float]:
    """Median of the pair-by-pair ratios, and the ratio of the minima (least disturbed runs)."""
    return {"ratio_median_of_pairs": round(statistics.median(a / b for a, b in zip(num, den,
                                                                               strict=True)), 3),
            "ratio_of_minima": round(min(num) / min(den), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--full", action="store_true", help="also X25519 setup at M = 1000")
    args = parser.parse_args()
    m, d = (10, 10**5) if args.quick else (10, 10**6)
    repeats = 9

    masks, off, on = paired(
        repeats,
        lambda: time_masks(m, d),
        lambda: run_secure_sum(m, d, sealing=False)[0],
        lambda: run_secure_sum(m, d, sealing=True)[0],
    )
    emit(benchmark="secure_sum_vs_masks", parties=m, d=d, variant="prg", repeats=repeats,
         masks_s=round(statistics.median(masks), 4),
         secure_sum_sealing_off_s=round(statistics.median(off), 4),
         secure_sum_sealing_on_s=round(statistics.median(on), 4),
         sealing_off_to_masks=ratio_figures(off, masks),
         sealing_on_to_masks=ratio_figures(on, masks), target_ratio_off=1.5)

    n, rounds = 10, 50
    messages = n * (n - 1) * rounds
    sim = Simulation(Network.build(n), seed=1, sealing=False, keys="none")
    parties = site_parties(lambda ctx: ping(ctx, rounds), [{} for _ in range(n)])
    per_run = []
    for _ in range(repeats):
        start = time.perf_counter()
        sim.run(parties)
        per_run.append(time.perf_counter() - start)
    emit(benchmark="driver_overhead_per_message", parties=n, messages=messages,
         us_per_message=round(1e6 * statistics.median(per_run) / messages, 2))

    m_big, d_big = (200, 1000) if args.quick else (1000, 1000)
    wall, result = run_secure_sum(m_big, d_big, sealing=False, record_views=False)
    totals = result.ledger.totals()
    emit(benchmark="secure_sum_large", parties=m_big, d=d_big, variant="prg", keys="preshared",
         sealing=False, views_kept=False, wall_s=round(wall, 2), messages=totals["messages"],
         elements=totals["elements"], target_s=60)

    m_ka = 40
    with_ka, without = (min(s) for s in paired(
        3,
        lambda: run_secure_sum(m_ka, 10, sealing=False, keys="x25519")[0],
        lambda: run_secure_sum(m_ka, 10, sealing=False, keys="preshared")[0],
    ))
    pairs = m_ka * (m_ka - 1) // 2
    per_pair_ms = 1000 * (with_ka - without) / pairs
    emit(benchmark="x25519_key_agreement", parties=m_ka, pairs=pairs,
         setup_s=round(with_ka - without, 3), ms_per_pair=round(per_pair_ms, 3),
         note="one-time setup: both ends of a pair run X25519 and HKDF")
    if args.full:
        wall_ka, _ = run_secure_sum(m_big, 10, sealing=False, keys="x25519", record_views=False)
        emit(benchmark="x25519_key_agreement", parties=m_big, pairs=m_big * (m_big - 1) // 2,
             wall_s_including_a_d10_secure_sum=round(wall_ka, 1))


if __name__ == "__main__":
    main()
