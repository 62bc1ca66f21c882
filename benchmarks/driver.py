"""The SimPy driver's cost per message, apart from the protocols' own arithmetic.

Prints one JSON line per figure; BLAS pinned to one thread (``benchmarks/timing.py``). The
programs here do no work of their own beyond what the message pattern needs, so what is timed
is the driver: SimPy scheduling, effect interpretation, wire encoding and decoding, ledger rows
and views.

1. ``driver_per_message`` — M parties each broadcast to every peer and receive from every
   peer, ``rounds`` times: one-element messages (``d = 1``, views kept), and SecureSum's
   message pattern
   with d = 1000 (``Input``, one broadcast, receive M − 1 vectors, add them up in the field,
   ``Output``; the masks left out). M = 10, 100, 400; µs per message, min and median of the
   interleaved repeats, with the whole-run ratio of M = 400 to M = 10 per message (a driver
   whose per-message work grew with M would show it).
2. ``driver_small_calls`` — PD-NMF's pattern: M = 4 parties, many sequential SecureSum calls
   of 2,001 elements (PD-NMF's d + 1 for d = 2,000), sealing off and on: µs per party-call of
   the message pattern alone, of the real :func:`protocols.secure_sum.secure_sum` (masks
   included), and of its driver side — the run's wall time minus the time the parties spent
   inside their programs (:class:`timing.PartyClock`): SimPy, effects, wire, sealing, ledger,
   views.

Usage: ``python benchmarks/driver.py [--quick] [--repeats N] [--profile M]`` (``--profile``
prints a cProfile of the d = 1000 pattern at M parties to stderr instead).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import sys
import time
from typing import Any

import numpy as np
from timing import PartyClock, emit, interleaved, pinned, ratio

from parties.party import site_parties
from protocols.context import PartyContext
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import Simulation


def broadcast(ctx: PartyContext, rounds: int, d: int) -> Any:
    """SecureSum's message pattern without the masks: send x to all, add up what comes.

    With ``d = 1`` only the messages: no ``Input``/``Output`` and no sum.
    """
    field = ctx.field
    x = field.from_words(np.arange(d, dtype=np.uint64) + np.uint64(ctx.party))
    total = x
    for _ in range(rounds):
        call = ctx.new_call("broadcast")
        if d > 1:
            yield Input("x", x, call)
        yield SendEach(dict.fromkeys(ctx.peers, x), call, "x")
        got = yield RecvEach(ctx.peers, call, "x")
        if d > 1:
            total = field.sum_arrays([x, *(got[p] for p in ctx.peers)])
            yield Output("sum", total, call)
    return total


def pattern_run(m: int, d: int, rounds: int, *, sealing: bool = False,
                record_views: bool = True) -> float:
    """Seconds one run of :func:`broadcast` takes (setup excluded)."""
    keys = "preshared" if sealing else "none"
    sim = Simulation(Network.build(m), seed=1, sealing=sealing, keys=keys,
                     record_views=record_views)
    parties = site_parties(lambda ctx: broadcast(ctx, rounds, d), [{} for _ in range(m)])
    start = time.perf_counter()
    sim.run(parties)
    return time.perf_counter() - start


def secure_sum_calls(m: int, d: int, calls: int, *, sealing: bool,
                     clock: PartyClock | None = None) -> float:
    """Seconds ``calls`` sequential SecureSum calls of ``d`` elements take among ``m``.

    With ``clock``, the time each party spends inside its program is added to it (so that
    the run's wall time minus the parties' total is the driver's side)."""
    rng = np.random.default_rng(1)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]

    def program(ctx: PartyContext, x: np.ndarray) -> Any:
        for _ in range(calls):
            yield from secure_sum(ctx, x)

    sim = Simulation(Network.build(m), seed=1, sealing=sealing, keys="preshared")
    parties = site_parties(clock.wrap(program) if clock is not None else program, inputs)
    start = time.perf_counter()
    sim.run(parties)
    return time.perf_counter() - start


def driver_side(m: int, d: int, calls: int, *, sealing: bool) -> float:
    """Seconds of a :func:`secure_sum_calls` run spent outside the parties' programs: SimPy,
    effect interpretation, wire encoding, sealing, ledger and views."""
    clock = PartyClock()
    wall = secure_sum_calls(m, d, calls, sealing=sealing, clock=clock)
    return wall - sum(clock.seconds.values())


def per_message(m: int, budget: int) -> int:
    """Rounds so that a run carries about ``budget`` messages (at least one round)."""
    return max(1, budget // (m * (m - 1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repetitions")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke test)")
    parser.add_argument("--profile", type=int, default=None, metavar="M",
                        help="profile the d = 1000 pattern at M parties instead")
    args = parser.parse_args()
    repeats = args.repeats or (3 if args.quick else 5)
    sizes = (10, 40) if args.quick else (10, 100, 400)
    with pinned() as note:
        if args.profile is not None:
            m = args.profile
            profile = cProfile.Profile()
            profile.enable()
            pattern_run(m, 1000, 1, record_views=False)
            profile.disable()
            pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(35)
            return
        for d, budget in ((1, 40_000), (1000, 160_000)):
            if args.quick:
                budget //= 10
            fns = {f"m{m}": (lambda m=m, d=d, budget=budget: pattern_run(
                m, d, per_message(m, budget), record_views=d == 1)) for m in sizes}
            runs = interleaved(repeats, **fns)
            per = {}
            for m in sizes:
                messages = m * (m - 1) * per_message(m, budget)
                us = [1e6 * t / messages for t in runs[f"m{m}"]]
                per[m] = us
                emit(benchmark="driver_per_message", parties=m, d=d, messages=messages,
                     sealing=False, views_kept=d == 1, repeats=repeats, **note,
                     us_per_message_min=round(min(us), 2),
                     us_per_message_median=round(statistics.median(us), 2))
            big, small = per[sizes[-1]], per[sizes[0]]
            emit(benchmark="driver_per_message_growth", d=d, **note,
                 ratio_of_minima=round(min(big) / min(small), 3),
                 ratio_median_of_pairs=round(statistics.median(
                     a / b for a, b in zip(big, small, strict=True)), 3),
                 us_per_message_runs={str(sizes[-1]): [round(u, 2) for u in big],
                                      str(sizes[0]): [round(u, 2) for u in small]},
                 note=f"µs per message at M = {sizes[-1]} over M = {sizes[0]}, from the "
                      "same interleaved runs")

        m, d, calls = 4, 2001, 60 if args.quick else 600
        runs = interleaved(
            repeats,
            pattern_off=lambda: pattern_run(m, d, calls),
            pattern_on=lambda: pattern_run(m, d, calls, sealing=True),
            secure_sum_off=lambda: secure_sum_calls(m, d, calls, sealing=False),
            secure_sum_on=lambda: secure_sum_calls(m, d, calls, sealing=True),
            driver_side_off=lambda: driver_side(m, d, calls, sealing=False),
            driver_side_on=lambda: driver_side(m, d, calls, sealing=True),
        )
        party_calls = m * calls
        figures = {name: {"us_per_party_call_min": round(1e6 * min(t) / party_calls, 1),
                          "us_per_party_call_median":
                              round(1e6 * statistics.median(t) / party_calls, 1)}
                   for name, t in runs.items()}
        emit(benchmark="driver_small_calls", parties=m, d=d, calls=calls, repeats=repeats,
             **note, **figures,
             sealing_on_to_off=ratio(runs["secure_sum_on"], runs["secure_sum_off"]))


if __name__ == "__main__":
    main()
