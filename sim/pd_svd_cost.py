"""The cost of a PD-SVD study over NormedSecureSum, extrapolated as the thesis does (C8).

Thesis seed 001, §2.3 (digest §1.6, claim C8): Table 2.2 gives SPDZ's seconds per
NormedSecureSum call; the thesis multiplies the M = 3 entry by τ = 300 power iterations and
k = 7 calls per iteration (one call per column of V): 300 × 7 × 2.1 s ≈ 1.2 h at d = 100 (PCR)
and 300 × 7 × 168.1 s ≈ 4 days at d = 10⁴ (LRA). What that arithmetic assumes:

* τ = 300 iterations and k = 7 are fixed, not a convergence criterion;
* one NormedSecureSum call per column per iteration, run one after another (no batching of
  the k columns into one call, which runs in the same rounds);
* Table 2.2's times: SPDZ's online phase and fixed-point conversions, the offline phase
  (preprocessing) excluded, on the thesis's machines and network (not stated);
* a call's time is what Table 2.2 measured; nothing else of the iteration (the local products
  X^(m)ᵀX^(m)V, the orthonormalisation) costs anything by comparison.

:func:`thesis_seconds` redoes that arithmetic from Table 2.2. :func:`extrapolate` does the
same with this simulator's own figures: a call's cost is the *declared* online elements sent
per party (:func:`protocols.normed_secure_sum.declared_cost`), timed by a line
seconds = a + b · elements fitted (:func:`fit_line`) to calls measured at small d, and also
the way PD-SVD here runs (:mod:`algorithms.svd.pd_svd`): one call of k columns per iteration.
Two lines are fitted from the same runs (:func:`measure_call_seconds`): CPU time of the whole
simulated call (dealer's offline phase included, so an upper bound on the computation Table 2.2
reports) and the simulated network time (rounds × latency plus bytes over bandwidth), which a
deployment pays on top and which dominates at small d.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from protocols import seeds
from protocols.errors import InputError

TABLE_2_2: dict[tuple[int, int], float] = {  # seconds per call (rows M, columns d)
    (2, 100): 1.4, (2, 1000): 11.5, (2, 10000): 113.9,
    (3, 100): 2.1, (3, 1000): 17.4, (3, 10000): 168.1,
    (4, 100): 3.5, (4, 1000): 29.3, (4, 10000): 293.0,
    (5, 100): 4.6, (5, 1000): 40.3, (5, 10000): 403.9,
}
"""Thesis Table 2.2: SPDZ seconds per NormedSecureSum call."""

THESIS_ITERATIONS = 300
THESIS_K = 7
THESIS_PARTIES = 3
P127 = (1 << 127) - 1


def thesis_seconds(d: int, n_parties: int = THESIS_PARTIES, iterations: int = THESIS_ITERATIONS,
                   k: int = THESIS_K) -> float:
    """The thesis's study time: iterations × k × Table 2.2[M, d] seconds."""
    if (n_parties, d) not in TABLE_2_2:
        raise InputError(f"(M, d) = ({n_parties}, {d}) is not in Table 2.2; choose M in 2..5 "
                         f"and d in 100, 1000, 10000")
    return iterations * k * TABLE_2_2[(n_parties, d)]


def call_elements(n_parties: int, d: int, batch: int = 1) -> int:
    """Declared online elements one party sends in one call of ``batch`` columns of length d."""
    from protocols.normed_secure_sum import PRESETS, check_layout, declared_cost

    layout = check_layout(PRESETS["p127-default"], P127, n_parties, d)
    return int(declared_cost(layout, batch).sent)


@dataclass(frozen=True)
class Line:
    """seconds = intercept + slope · elements, least squares over the measured calls."""

    intercept: float
    slope: float

    def __call__(self, elements: float) -> float:
        return self.intercept + self.slope * elements


def fit_line(elements: Sequence[float], seconds: Sequence[float]) -> Line:
    """Least-squares line through (elements, seconds); needs two distinct element counts."""
    x = np.asarray(elements, dtype=np.float64)
    y = np.asarray(seconds, dtype=np.float64)
    if x.shape != y.shape or np.unique(x).size < 2:
        raise InputError("fit_line needs as many seconds as element counts, and at least two "
                         "distinct element counts")
    slope, intercept = np.polyfit(x, y, 1)
    return Line(float(intercept), float(slope))


def measure_call_seconds(n_parties: int, d: int, batch: int = 1, calls: int = 3,
                         seed: int = 1) -> tuple[float, float]:
    """CPU and simulated seconds per NormedSecureSum call, ``calls`` calls in one run.

    Runs as a study that makes many calls pays: pre-shared keys, no sealing, no views kept.
    CPU time includes the dealer's offline phase; simulated time is the run's clock on the
    default network (complete graph, :class:`sim.network.Network`'s default links), which
    counts the rounds' latency and the bytes over the links.
    """
    from parties.party import Party
    from protocols.normed_secure_sum import normed_secure_sum, nss_dealer
    from sim.network import Network
    from sim.simulation import Simulation

    rng = seeds.rng(seed, "pd_svd_cost.inputs")
    shape = (batch, d) if batch > 1 else (d,)
    xs = [np.rint(rng.normal(size=shape) * 2**16) / 2**16 for _ in range(n_parties)]

    def repeated(ctx, x):  # type: ignore[no-untyped-def]
        y = None
        for j in range(calls):
            y = yield from normed_secure_sum(ctx, x, instance=j)
        return y

    parties = [Party(i, repeated, {"x": xs[i]}) for i in range(n_parties)]
    parties.append(Party(n_parties, nss_dealer, {"calls": [(batch, d)] * calls},
                         role="dealer"))
    sim = Simulation(Network.build(n_parties + 1), prime=P127, seed=seed, sealing=False,
                     keys="preshared", record_views=False)
    start = time.process_time()
    result = sim.run(parties)
    return (time.process_time() - start) / calls, result.simulated_s / calls


@dataclass(frozen=True)
class StudyEstimate:
    """A PD-SVD study's time at one d, three ways (seconds)."""

    d: int
    thesis_s: float  # iterations × k × Table 2.2
    per_column_s: float  # the thesis's arithmetic with this simulator's fitted call time
    batched_s: float  # one call of k columns per iteration, as algorithms.svd.pd_svd runs


def extrapolate(line: Line, d: int, n_parties: int = THESIS_PARTIES,
                iterations: int = THESIS_ITERATIONS, k: int = THESIS_K) -> StudyEstimate:
    """The study's time from the fitted line and the declared elements of its calls."""
    per_call = line(call_elements(n_parties, d))
    batched = line(call_elements(n_parties, d, batch=k))
    return StudyEstimate(d, thesis_seconds(d, n_parties, iterations, k),
                         iterations * k * per_call, iterations * batched)
