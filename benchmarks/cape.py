"""CAPE on the simulator against the centralized computation of the same quantity (seed 003).

Prints one JSON line per figure. Each ratio is taken within one run: the private and the
centralized computation are repeated interleaved (order alternating between rounds), and the
line gives the median of the pair-by-pair ratios and the ratio of the minima. BLAS is pinned
to one thread (threadpoolctl) so that both sides run on one core of a shared machine; the
``blas`` field says which library that was.

1. ``cape_averaging``: one CAPE averaging call (Algorithm 1's steps 1–4 on a length-D
   statistic: S sites, the aggregator, the noise generator) at a few (S, D), with sealing off
   and on, against the centralized pooled-data Gaussian mechanism on the same statistics
   (Σ_s μ_s f_s + N(0, τ_pool² I)). The statistics are the inputs, so neither side pays for
   computing them. One simulation makes ``calls`` releases, so the per-call time spreads the
   simulation's set-up (pairwise keys are pre-shared; X25519 is timed in
   ``benchmarks/secure_sum.py``) over them. The private side's time is everything the
   simulator does for the call: noise draws, fixed-point encoding, the SimPy driver, the
   ledger and the views, and with sealing AES-GCM on every payload.
2. ``cape_pca``: capePCA at D = 200 (the paper's synthetic setting, §6.1: S = 10 sites of
   N_s = 1000 samples, K = 50) — each site's second-moment matrix, CAPE on its D(D+1)/2 free
   entries, the top-K eigenvectors at the aggregator — against centralized Analyze Gauss on
   the pooled samples (the second-moment matrix, symmetric noise, the top-K eigenvectors).

Usage: ``python benchmarks/cape.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Generator
from typing import Any

import numpy as np
from secure_sum import paired, ratio_figures  # the interleaved timing of every benchmark here
from threadpoolctl import threadpool_info, threadpool_limits

from algorithms.cape.pca import (
    analyze_gauss,
    cape_pca_aggregator,
    cape_pca_noise_generator,
    cape_pca_site,
    pca_plan,
)
from algorithms.cape.symmetric import matrix_size
from algorithms.data.latent import synthetic_spiked
from parties.party import Party
from protocols.cape_noise_plans import NoisePlan, cape_plan
from protocols.context import PartyContext
from protocols.correlated_noise import (
    AGGREGATOR,
    NOISE_GENERATOR,
    cape_aggregator,
    cape_noise_generator,
    cape_site,
)
from sim.network import Network
from sim.simulation import Simulation

EPSILON, DELTA = 1.0, 0.01
TAU = 0.1  # the sites' local noise scale in the averaging benchmark (any value: same cost)


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def sig(x: float) -> float:
    """``x`` to four significant digits."""
    return float(f"{x:.4g}")


def simulate(parties: list[Party], n_sites: int, sealing: bool) -> tuple[float, Any]:
    """Wall time of one simulation with pre-shared pairwise keys (sites are ids 0..S−1)."""
    sim = Simulation(Network.build(n_sites), seed=1, sealing=sealing, keys="preshared")
    start = time.perf_counter()
    result = sim.run(parties)
    return time.perf_counter() - start, result


# -- CAPE averaging ----------------------------------------------------------------------------


def _site(ctx: PartyContext, x: np.ndarray, plan: NoisePlan,
          calls: int) -> Generator[Any, Any, None]:
    for _ in range(calls):
        yield from cape_site(ctx, x, plan)


def _aggregator(ctx: PartyContext, plan: NoisePlan, d: int,
                calls: int) -> Generator[Any, Any, np.ndarray]:
    out = []
    for _ in range(calls):
        out.append((yield from cape_aggregator(ctx, plan, d)))
    return np.array(out)


def _generator(ctx: PartyContext, plan: NoisePlan, d: int,
               calls: int) -> Generator[Any, Any, None]:
    for _ in range(calls):
        yield from cape_noise_generator(ctx, plan, d)


def averaging(stats: np.ndarray, tau: float, calls: int, sealing: bool) -> tuple[float, Any]:
    """``calls`` CAPE releases of the S × D site statistics ``stats`` on the simulator."""
    S, d = stats.shape
    plan = cape_plan(tau, S)
    parties = [Party(s, _site, {"x": stats[s], "plan": plan, "calls": calls}) for s in range(S)]
    parties.append(Party(S, _aggregator, {"plan": plan, "d": d, "calls": calls},
                         role=AGGREGATOR))
    parties.append(Party(S + 1, _generator, {"plan": plan, "d": d, "calls": calls},
                         role=NOISE_GENERATOR))
    wall, result = simulate(parties, S, sealing)
    return wall / calls, result


def pooled_gaussian(stats: np.ndarray, tau: float, calls: int) -> float:
    """The same ``calls`` releases computed centrally: the weighted mean of the statistics plus
    N(0, τ_pool²) per coordinate, τ_pool = τ/S (the pooled-data Gaussian mechanism)."""
    S, d = stats.shape
    weights = np.full(S, 1.0 / S)
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for _ in range(calls):
        weights @ stats + rng.normal(0.0, tau / S, d)
    return (time.perf_counter() - start) / calls


# -- capePCA ---------------------------------------------------------------------------------


def cape_pca(shards: list[np.ndarray], k: int, sealing: bool) -> tuple[float, Any]:
    """One capePCA run on the simulator (sites, aggregator, noise generator)."""
    S, D = len(shards), shards[0].shape[1]
    plan = pca_plan([len(s) for s in shards], EPSILON, DELTA)
    parties = [Party(s, cape_pca_site, {"X": X, "plan": plan}) for s, X in enumerate(shards)]
    parties.append(Party(S, cape_pca_aggregator, {"plan": plan, "dim": D, "k": k},
                         role=AGGREGATOR))
    parties.append(Party(S + 1, cape_pca_noise_generator, {"plan": plan, "dim": D},
                         role=NOISE_GENERATOR))
    return simulate(parties, S, sealing)


def pooled_ag(pooled: np.ndarray, k: int) -> float:
    """Centralized Analyze Gauss on the pooled samples (what capePCA's output equals in law)."""
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    analyze_gauss(pooled, k, EPSILON, DELTA, rng)
    return time.perf_counter() - start


def blas() -> list[dict[str, Any]]:
    return [{"library": i.get("internal_api"), "threads": i.get("num_threads")}
            for i in threadpool_info() if i.get("user_api") == "blas"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    args = parser.parse_args()
    sizes = [(5, 100), (10, 1000)] if args.quick else [(5, 100), (10, 10_000), (50, 1000),
                                                        (10, 100_000)]
    calls, repeats = (5, 3) if args.quick else (20, 5)
    rng = np.random.default_rng(3)
    with threadpool_limits(limits=1, user_api="blas"):
        for S, d in sizes:
            stats = rng.uniform(0.0, 1.0, (S, d))
            central, off, on = paired(
                repeats,
                lambda stats=stats: pooled_gaussian(stats, TAU, calls),
                lambda stats=stats: averaging(stats, TAU, calls, False)[0],
                lambda stats=stats: averaging(stats, TAU, calls, True)[0],
            )
            _, result = averaging(stats, TAU, 1, False)
            totals = result.ledger.select(protocol="cape").totals()
            for sealing, private in ((False, off), (True, on)):
                emit(benchmark="cape_averaging", sites=S, d=d, sealing=sealing, calls=calls,
                     repeats=repeats, centralized_s_per_call=sig(statistics.median(central)),
                     cape_s_per_call=sig(statistics.median(private)),
                     **ratio_figures(private, central), messages_per_call=totals["messages"],
                     elements_per_call=totals["elements"], blas=blas())

        S, n_s, D, k = (10, 200, 50, 10) if args.quick else (10, 1000, 200, 50)
        data = synthetic_spiked(S * n_s, D, k, np.random.default_rng(4)).X
        shards = np.split(data, S)
        central, off, on = paired(
            repeats,
            lambda: pooled_ag(data, k),
            lambda: cape_pca(shards, k, False)[0],
            lambda: cape_pca(shards, k, True)[0],
        )
        _, result = cape_pca(shards, k, False)
        totals = result.ledger.select(protocol="cape").totals()
        for sealing, private in ((False, off), (True, on)):
            emit(benchmark="cape_pca", sites=S, samples_per_site=n_s, d=D, k=k,
                 sealing=sealing, repeats=repeats,
                 pooled_ag_s=sig(statistics.median(central)),
                 cape_pca_s=sig(statistics.median(private)), **ratio_figures(private, central),
                 elements_per_site=matrix_size(D), messages=totals["messages"],
                 elements=totals["elements"], blas=blas())


if __name__ == "__main__":
    main()
