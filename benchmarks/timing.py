"""How the benchmarks time things, so that a ratio means the same on a quiet and a busy machine.

* BLAS threads are pinned (:func:`pinned`, ``threadpoolctl``) for both sides of every ratio —
  one thread unless a figure says otherwise — and every JSON line says how many.
* The runs of A and B are interleaved, their order alternating from one round to the next
  (:func:`interleaved`), so that a burst of load from other processes hits both.
* A ratio is reported with the pair of runs behind it (:func:`ratio`): every sample of both
  sides, their minima and medians, the ratio of the minima (the least disturbed runs) and the
  median of the pair-by-pair ratios.
* :class:`PartyClock` measures each party's local compute (the time spent inside its
  program between two effects); its maximum over the parties is the critical path — what a
  real deployment, one machine per party, would wait for besides the network.

This module is imported by the scripts next to it (``python benchmarks/<name>.py`` puts this
folder on the import path); it is not part of the installed package.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from typing import Any

BLAS_THREADS = 1


def emit(**fields: Any) -> None:
    """Print one JSON line (the benchmarks' only output on stdout)."""
    print(json.dumps(fields), flush=True)


@contextmanager
def pinned(threads: int = BLAS_THREADS) -> Iterator[dict[str, int]]:
    """Limit every BLAS/OpenMP pool to ``threads`` for the duration; yields the figure's note."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=threads):
        yield {"blas_threads": threads}


def interleaved(repeats: int, **fns: Callable[[], float]) -> dict[str, list[float]]:
    """Call every function ``repeats`` times, interleaved, alternating the order each round.

    Each function returns the seconds it measured (so it can leave setup out).
    """
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            samples[name].append(fns[name]())
    return samples


def summary(runs: list[float]) -> dict[str, Any]:
    """Min, median and every run, in seconds (rounded to 0.1 ms)."""
    return {"min_s": round(min(runs), 4), "median_s": round(statistics.median(runs), 4),
            "runs_s": [round(r, 4) for r in runs]}


def ratio(num: list[float], den: list[float]) -> dict[str, Any]:
    """The ratio num/den from paired runs, with both sets of runs behind it."""
    return {
        "ratio_of_minima": round(min(num) / min(den), 3),
        "ratio_median_of_pairs": round(
            statistics.median(a / b for a, b in zip(num, den, strict=True)), 3),
        "numerator": summary(num),
        "denominator": summary(den),
    }


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds ``fn()`` took, and its value."""
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


WAITING_EFFECTS = frozenset({"Recv", "RecvEach", "RecvAny", "RecvWithin", "Compute"})
"""Effects after which a party may wait for its peers: each closes one of its segments."""


class PartyClock:
    """Per-party local compute: wall time spent inside each party's program.

    ``clock.wrap(program)`` returns a program that runs ``program`` and adds, to
    ``clock.seconds[party]``, the time each step of its generator takes (from the value sent
    in to the effect yielded out) — the party's own work, without the driver's.

    It also cuts each party's compute into segments, one per effect after which the party may
    wait for its peers (:data:`WAITING_EFFECTS`): ``clock.segments[party][i]`` is what the
    party computed between its (i − 1)-th and i-th wait. When the parties run one program in
    lock-step (every SecureSum call is a barrier: no party leaves it before all have sent),
    segment i of every party lies between the same two barriers, and a deployment with one
    machine per party waits Σ_i max_p segments[p][i] for compute
    (:meth:`synchronised_critical_path`) — at least the slowest party's total
    (:meth:`critical_path`), more when the slowest party differs from segment to segment.
    """

    def __init__(self) -> None:
        self.seconds: dict[int, float] = {}
        self.segments: dict[int, list[float]] = {}

    def wrap(self, program: Callable[..., Generator[Any, Any, Any]]
             ) -> Callable[..., Generator[Any, Any, Any]]:
        seconds = self.seconds

        segments = self.segments

        def run(ctx: Any, **inputs: Any) -> Generator[Any, Any, Any]:
            party = ctx.party
            seconds.setdefault(party, 0.0)
            mine = segments.setdefault(party, [])
            segment = 0.0
            start = time.perf_counter()
            gen = program(ctx, **inputs)
            value = None
            while True:
                try:
                    effect = gen.send(value)
                except StopIteration as stop:
                    step = time.perf_counter() - start
                    seconds[party] += step
                    mine.append(segment + step)
                    return stop.value
                step = time.perf_counter() - start
                seconds[party] += step
                segment += step
                if type(effect).__name__ in WAITING_EFFECTS:
                    mine.append(segment)
                    segment = 0.0
                value = yield effect
                start = time.perf_counter()

        return run

    def critical_path(self) -> float:
        """The slowest party's local compute, in seconds."""
        return max(self.seconds.values(), default=0.0)

    def synchronised_critical_path(self) -> float:
        """Σ_i max_p segments[p][i]: the compute a deployment of lock-step parties waits for
        (a party with fewer segments counts 0 in the ones it lacks), in seconds."""
        return synchronised_critical_path([self])


def synchronised_critical_path(clocks: list[PartyClock]) -> float:
    """Σ_i max_p min_r segments_r[p][i] over the clocks of repeated runs of one program.

    Each segment is the same work in every run, so its least time over the runs is its time
    without the preemptions a busy machine adds to some of them; the maximum over the parties
    is then taken segment by segment, as :meth:`PartyClock.synchronised_critical_path` does
    for one run (which counts every party's preemptions in the segment where it was slowest).
    """
    parties = sorted({p for clock in clocks for p in clock.segments})
    longest = max((len(s) for clock in clocks for s in clock.segments.values()), default=0)

    def least(p: int, i: int) -> float:
        return min(clock.segments[p][i] if i < len(clock.segments.get(p, ())) else 0.0
                   for clock in clocks)

    return sum(max(least(p, i) for p in parties) for i in range(longest))

    def figures(self) -> dict[str, float]:
        values = list(self.seconds.values()) or [0.0]
        return {"critical_path_s": round(max(values), 4),
                "local_compute_total_s": round(sum(values), 4)}
