"""PD-NMF (M = 4, PRG SecureSum) against centralized RRI-NMF, and scikit-learn's NMF.

Prints JSON lines. On the same 20,000 × 2,000 sparse document matrix (a synthetic topic
corpus, ~5% non-zero, CSR), with k = 20 and 30 sweeps from the same random T0, both in the
plain form (the objective scikit-learn minimises):

* ``pd_nmf_vs_centralized``: wall time of the PD-NMF simulation (every party's local work,
  20 × 30 SecureSum calls of d + 1 elements among 4 parties), with sealing off and on,
  against centralized RRI-NMF, BLAS pinned to one thread on both sides; the runs of the three
  are interleaved, and each ratio comes with both sets of runs (``benchmarks/timing.py``).
  Targets: ≤ 1.25 sealing off, ≤ 1.5 sealing on. Beside it, the critical path: the slowest
  party's own compute (time inside its program), against centralized — what a deployment with
  one machine per party would wait for besides the network. Timing every step of the programs
  adds a generator and two clock reads to each effect, so the critical path comes from two more
  arms in the same rounds (``clocked_off``, ``clocked_on``), the timed PD-NMF arms run without
  the clock, and each line prints what the clock costs (``clocked_to_timed``). Every SecureSum
  call is a barrier, so ``synchronised_critical_path_to_centralized`` adds up, barrier to
  barrier, the slowest party's compute (``timing.PartyClock.synchronised_critical_path``), and
  ``per_sweep`` sets what a deployment waits for per sweep — that compute plus the simulated
  network's time (10 ms, 100 Mbit/s links) — beside the one-core simulation's total and the
  centralized sweep.
* ``pd_nmf_local_floor``: the floor of any one-core simulation of the M parties, timed in the
  same interleaved rounds: the parties' own per-topic steps (the very functions PD-NMF-Iter
  calls on each row block, in lock-step) with the SecureSum replaced by a plain float sum — no
  protocol, no driver, no messages. Its ratio to centralized is what splitting X into M row
  blocks costs by itself (smaller blocks per call, each step's fixed cost paid M times, the
  T-row update repeated at every party); the PD-NMF run's ratio to it is the protocol's and the
  driver's share.
* ``pd_nmf_simpy_floor``: the floor of any SimPy simulation of the run, timed in the same
  rounds: PD-NMF-Iter's per-party loop (the same steps as the party program, residual and
  all) as one SimPy process per party, each topic's statistics summed in the clear behind one
  SimPy event that the last party to arrive triggers — the least a SimPy simulation of M
  parties that wait for each other can do: no protocol, no messages, no ledger, no views.
  Its ratio to the local floor is what scheduling the parties as SimPy processes costs by
  itself (their switches between steps included); the PD-NMF run's ratio to it is what the
  protocol and the driver add.
* ``pd_nmf_protocol_floor``: the floor of any implementation of the protocol on one core,
  timed in the same rounds: the local floor's loop with each sum taken by SecureSum's own
  arithmetic in line (``_InlineSecureSum``) — every party encodes its statistic, adds its
  AES pair masks and puts the column sum on the wire as bytes right after its local steps,
  each encoding is decoded once with its elements checked, and every party adds up and
  decodes the M column sums — without a driver, effects, views or a ledger. Its ratio to
  the local floor is what the protocol's arithmetic costs between the parties' steps (its
  data comes back from memory after each party has streamed its shard); the PD-NMF run's
  ratio to it is the simulator's share: SimPy, the driver, the ledger and the views.
* ``pd_nmf_logging_floor``: the floor of any simulator that keeps what this one keeps, timed
  in the same rounds: the protocol floor's arithmetic inside the SimPy floor (one process per
  party, one event per topic), plus the run's records — a ledger row per message and, in each
  party's view, an immutable copy of its input x̂ and of the field total, and a record of each
  column sum it received (the arrays over the checked bytes, shared, not copied) — as many as
  the run keeps (checked) — and, for each party's program, array objects of its own over those
  bytes. No driver, effects, mailboxes or network timing. The PD-NMF run's
  ratio to it is the share of the driver's generic machinery.
* ``pd_nmf_driver_floor``: a driver's floor for these party programs, timed in the
  same rounds: the run's own programs (PD-NMF-Iter calling SecureSum, unchanged) on the least
  driver of the four effects they yield (:mod:`driver_floor`) — one SimPy process per party,
  each send effect's payload encoded once, every message timed over its direct link and
  delivered at its instant, a mailbox per party, each encoding decoded and checked once, the
  logging floor's records (the same number of rows and records as the run, and the same
  messages, checked) — with pre-shared keys and nothing the SimPy driver adds for
  generality: faults, interceptors, relays, other effects, abort handling. Its ratio to the
  logging floor is what interpreting effects costs at the least; the PD-NMF run's ratio to it
  is what the SimPy driver's generality costs. A second arm (``driver_floor_sealed``) seals
  every message with AES-GCM and authenticates it at its receiver, as the run does with
  sealing on; the sealed PD-NMF run is compared with it.
* ``pd_nmf_breakdown``: where the PD-NMF run's time over the local floor goes, from two more
  arms timed in the same rounds — the run's SecureSum calls alone (the same 20 × 30 calls of
  d + 1 elements among the 4 parties, each party summing a fixed statistic: protocol and
  driver, no local steps), and the same calls with each party reading its own shard's
  arrays between calls (the memory traffic of its local steps, without their arithmetic;
  that read is timed and taken out). PD-NMF − local floor − calls alone is what interleaving
  the parties' steps with the protocol costs on one core; the cold arm shows how much of it
  is the protocol's own code and data falling out of the caches.
* ``sklearn_nmf_cd_to_same_objective``: the time scikit-learn's ``NMF(solver="cd")`` (its
  default initialisation) takes to reach the objective RRI-NMF reached; max_iter is doubled
  until it gets there, and the run that first reaches it is reported.

Usage: ``python benchmarks/pd_nmf.py [--quick] [--variant prg|prg_two_share|explicit]
[--no-sklearn]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import time
from collections.abc import Callable, Generator
from typing import Any

import numpy as np
import scipy.sparse as sp
import simpy
from driver_floor import least_driver_run, paused_gc
from timing import (
    PartyClock,
    emit,
    interleaved,
    pinned,
    ratio,
    summary,
    synchronised_critical_path,
)

from algorithms.data import partition_rows, split_rows, synthetic_topic_corpus
from algorithms.nmf.objective import objective
from algorithms.nmf.pd_nmf import pd_nmf_iter
from algorithms.nmf.row_blocks import as_row_block, check_factors
from algorithms.nmf.rri import sweep_in_place
from algorithms.nmf.rri_steps import (
    RRIParams,
    end_of_sweep,
    initial_residual,
    next_residual,
    t_side_statistics,
    update_t_row,
    update_w_column,
    w_side_statistics,
)
from parties.party import site_parties
from parties.view import View, frozen, received_message
from protocols import wire
from protocols.context import AesRandomness
from protocols.effects import Call
from protocols.field import FixedPoint, prime_field
from protocols.secure_sum import ALL_VARIANTS, secure_sum
from sim.ledger import Row
from sim.network import Network
from sim.simulation import Simulation, preshared_keys


class _Timer:
    """Wall and CPU seconds of one timed region; the CPU seconds are appended to ``cpu``.

    The CPU time is the process's (``time.process_time``): both arms of a ratio run in this one
    process with BLAS on one thread, so the CPU ratio does not grow with other processes' load
    as the wall ratio does (a run that waits for the processor is not charged for the wait).
    """

    def __init__(self, cpu: list[float] | None) -> None:
        self.sink = cpu
        self.wall = time.perf_counter()
        self.cpu = time.process_time()

    def stop(self) -> float:
        wall = time.perf_counter() - self.wall
        if self.sink is not None:
            self.sink.append(time.process_time() - self.cpu)
        return wall


def centralized(X: Any, T0: np.ndarray, sweeps: int, params: RRIParams,
                cpu: list[float] | None = None) -> tuple[float, Any]:
    """RRI-NMF's own loop: the data and factors checked once, then the sweeps in place (its CPU
    seconds appended to ``cpu``)."""
    timer = _Timer(cpu)
    block = as_row_block(X, "full")
    W, T = check_factors(block.shape, np.zeros((X.shape[0], T0.shape[0])), T0)
    for _ in range(sweeps):
        W = sweep_in_place(block, W, T, params)
    return timer.stop(), (W, T)


def local_floor(X: Any, T0: np.ndarray, sweeps: int, params: RRIParams, m: int,
                protocol: bool = False) -> tuple[float, np.ndarray]:
    """PD-NMF-Iter's local steps for M row blocks in lock-step, the sum taken in the clear —
    or, with ``protocol``, by SecureSum's own arithmetic in line (:class:`_InlineSecureSum`)."""
    blocks = [as_row_block(s, "full") for s in row_shards(X, m)]
    inline = _InlineSecureSum(m) if protocol else None
    start = time.perf_counter()
    T = np.array(T0, dtype=np.float64, copy=True)
    Ws = [np.zeros((b.shape[0], T.shape[0])) for b in blocks]
    for _ in range(sweeps):
        for t in range(T.shape[0]):
            stats = []
            for p, (b, W) in enumerate(zip(blocks, Ws, strict=True)):
                ws = w_side_statistics(b, W, T, t)
                W[:, t] = update_w_column(ws, params)
                stat = t_side_statistics(b, W, T, t, ws)
                stats.append(stat if inline is None else inline.send(p, stat))
            if inline is None:
                summed = [np.sum(stats, axis=0)] * m
            else:
                summed = inline.receive(stats)
            for p, W in enumerate(Ws):  # every party updates the public T row itself
                row, s_t = update_t_row(summed[p], params, "full")
                W[:, t] *= s_t
            T[t] = row
        Ws = [end_of_sweep(W, params) for W in Ws]
    return time.perf_counter() - start, T


class _InlineSecureSum:
    """SecureSum's (``prg``) arithmetic for M parties in line, without a driver.

    Party p encodes its statistic (fixed point, GF(2^61 − 1)), adds its one-stream pair masks
    (AES, its own :class:`~protocols.context.AesRandomness`) and puts the column sum on the
    wire as bytes (:meth:`send`); each encoding is decoded once, its elements checked and
    copied aligned, as the driver does for a broadcast; then every party adds up the M
    column sums and decodes the total (:meth:`receive`). No SimPy, no effects, no views, no
    ledger: what any implementation of the protocol computes, and nothing else.
    """

    def __init__(self, m: int, seed: int = 1) -> None:
        self.field = prime_field("2^61-1")
        self.fixed = FixedPoint(self.field, 24)  # the simulation's defaults
        keys = preshared_keys(seed, list(range(m)))
        self.m = m
        self.peers = [tuple(q for q in range(m) if q != p) for p in range(m)]
        self.randomness = []
        for p in range(m):
            randomness = AesRandomness(copy.copy(self.field), bytes(32), p)
            for q in self.peers[p]:
                randomness.set_pair_seed(q, keys[(min(p, q), max(p, q))][1])
            self.randomness.append(randomness)
        self.calls = 0

    def masked(self, party: int, stat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Party ``party``'s encoded statistic x̂ and its column sum x̂ ± masks of this call."""
        if party == 0:
            self.call = Call("secure_sum", self.calls)
            self.calls += 1
        x_hat = self.fixed.encode(stat, n_summands=self.m, what="t_statistics")
        return x_hat, self.randomness[party].add_pairwise_signed_sum(x_hat, self.peers[party],
                                                                     self.call)

    def send(self, party: int, stat: np.ndarray) -> bytes:
        """Party ``party``'s column sum of this call, as the bytes it sends."""
        return wire.encode(self.masked(party, stat)[1])

    def columns(self, sent: list[bytes]) -> list[np.ndarray]:
        """The M column sums, each encoding decoded once (elements checked) and aligned."""
        columns = []
        for data in sent:
            payload = wire.decode(data, self.field)
            body = wire.body_of(payload, data)
            columns.append(payload if body is None
                           else wire.decode_again(body, payload.shape, payload.dtype))
        return columns

    def total(self, party: int, columns: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Party ``party``'s sum of the M column sums, and its decoding."""
        return self.fixed.decode_sum([columns[party], *(columns[q] for q in self.peers[party])])

    def receive(self, sent: list[bytes]) -> list[np.ndarray]:
        """Every party's decoded sum of the M column sums."""
        columns = self.columns(sent)
        return [self.total(p, columns)[1] for p in range(self.m)]


class _SumBarrier:
    """One SimPy event per topic: the last party to add its statistic triggers it with the sum."""

    def __init__(self, env: simpy.Environment, m: int) -> None:
        self.env, self.m = env, m
        self.stats: list[np.ndarray] = []
        self.event = env.event()

    def add(self, stat: np.ndarray) -> simpy.Event:
        event = self.event
        self.stats.append(stat)
        if len(self.stats) == self.m:
            event.succeed(np.sum(self.stats, axis=0))  # parties in order, as the local floor
            self.stats, self.event = [], self.env.event()
        return event


SumStep = Callable[[int, np.ndarray], Generator[simpy.Event, Any, np.ndarray]]


def _party_processes(env: simpy.Environment, blocks: list[Any], T0: np.ndarray, sweeps: int,
                     params: RRIParams, sum_step: SumStep) -> dict[int, np.ndarray]:
    """PD-NMF-Iter's per-party loop (the party program's steps, residual and all) as one SimPy
    process per row block, each topic's statistic summed by ``sum_step(party, statistic)``;
    runs them and returns every party's T."""
    rows: dict[int, np.ndarray] = {}

    def party(p: int) -> Any:
        block = blocks[p]
        T = np.array(T0, dtype=np.float64, copy=True)
        W = np.zeros((block.shape[0], T.shape[0]))
        for _ in range(sweeps):
            residual = initial_residual(block, W, T)
            for t in range(T.shape[0]):
                ws = w_side_statistics(block, W, T, t, residual)
                W[:, t] = update_w_column(ws, params)
                summed = yield from sum_step(p, t_side_statistics(block, W, T, t, ws))
                T[t], s_t = update_t_row(summed, params, block.loss)
                W[:, t] *= s_t
                residual = next_residual(block, ws, W[:, t], T[t])
            W = end_of_sweep(W, params)
        rows[p] = T

    for p in range(len(blocks)):
        env.process(party(p))
    env.run()
    return rows


def simpy_floor(X: Any, T0: np.ndarray, sweeps: int, params: RRIParams,
                m: int) -> tuple[float, np.ndarray]:
    """PD-NMF-Iter's per-party loop as M SimPy processes, each sum in the clear behind one event."""
    blocks = [as_row_block(s, "full") for s in row_shards(X, m)]
    start = time.perf_counter()
    env = simpy.Environment()
    barrier = _SumBarrier(env, m)

    def clear_sum(p: int, stat: np.ndarray) -> Generator[simpy.Event, Any, np.ndarray]:
        return (yield barrier.add(stat))

    rows = _party_processes(env, blocks, T0, sweeps, params, clear_sum)
    return time.perf_counter() - start, rows[0]


_new_tuple = tuple.__new__


class _LoggedExchange:
    """One SimPy event per topic, as :class:`_SumBarrier`, carrying the parties' column sums as
    bytes; the last party to arrive decodes each encoding once and writes the M(M − 1) ledger
    rows of the topic's call (one per message, as the driver's ledger has them)."""

    def __init__(self, env: simpy.Environment, inline: _InlineSecureSum,
                 ledger: list[Row]) -> None:
        self.env, self.inline, self.ledger = env, inline, ledger
        self.sent: list[bytes] = []
        self.event = env.event()

    def add(self, data: bytes) -> simpy.Event:
        event = self.event
        self.sent.append(data)
        m = self.inline.m
        if len(self.sent) == m:
            call, now = self.inline.call, self.env.now
            columns = self.inline.columns(self.sent)
            elements = columns[0].size
            for sender, sent in enumerate(self.sent):
                for receiver in self.inline.peers[sender]:
                    self.ledger.append(_new_tuple(Row, (  # Row(...) without its call
                        sender, receiver, call.protocol, call.index, "column_sum", "", 1,
                        elements, len(sent), 1, now, now)))
            event.succeed(columns)
            self.sent, self.event = [], self.env.event()
        return event


def logging_floor(X: Any, T0: np.ndarray, sweeps: int, params: RRIParams,
                  m: int) -> tuple[float, np.ndarray, int, int]:
    """The SimPy floor with SecureSum's arithmetic in line and the run's records: per call a
    ledger row per message, and in every party's view an immutable copy of its input x̂ and
    of the decoded sum's field total and a record of each column sum it received; the cyclic
    garbage collector paused, as the driver pauses it. Returns the time, T, and the numbers of
    ledger rows and of received-message records."""
    blocks = [as_row_block(s, "full") for s in row_shards(X, m)]
    inline = _InlineSecureSum(m)
    start = time.perf_counter()
    env = simpy.Environment()
    ledger: list[Row] = []
    exchange = _LoggedExchange(env, inline, ledger)
    views = {p: View(p, "site") for p in range(m)}

    def logged_sum(p: int, stat: np.ndarray) -> Generator[simpy.Event, Any, np.ndarray]:
        view, peers = views[p], inline.peers[p]
        x_hat, column = inline.masked(p, stat)
        call = inline.call
        view.protocol_inputs.append((call, "t_statistics", frozen(x_hat)))
        columns = yield exchange.add(wire.encode(column))
        for q in peers:  # immutable arrays over the checked bytes: shared, not copied
            view.received.append(received_message(q, call.protocol, call.index, "column_sum",
                                                  1, columns[q]))
        # the program's own array objects over the same bytes (it cannot reshape a record),
        # as the driver hands them
        own = [columns[p], *(wire.another_array(columns[q]) for q in peers)]
        total, summed = inline.fixed.decode_sum(own)
        view.outputs.append((call, "sum", frozen(total)))
        return summed

    with paused_gc():  # as the driver runs
        rows = _party_processes(env, blocks, T0, sweeps, params, logged_sum)
    elapsed = time.perf_counter() - start
    return elapsed, rows[0], len(ledger), sum(len(v.received) for v in views.values())


def row_shards(X: Any, m: int) -> list[Any]:
    """X's rows split into M equal blocks, one per party (the partition every arm uses)."""
    return split_rows(X, partition_rows(X.shape[0], m, "equal"))


def pd_nmf_program(T0: np.ndarray, sweeps: int, params: RRIParams,
                   variant: str) -> Callable[[Any, Any], Any]:
    """Each party's program in the PD-NMF arms: PD-NMF-Iter on its rows X, from T0."""

    def program(ctx: Any, X: Any) -> Any:
        return pd_nmf_iter(ctx, X, T0, sweeps=sweeps, params=params, variant=variant,
                           loss="full", track_objective=False)

    return program


def driver_floor(X: Any, T0: np.ndarray, sweeps: int, params: RRIParams, m: int,
                 sealing: bool = False, variant: str = "prg"
                 ) -> tuple[float, np.ndarray, list[Row], dict[int, View]]:
    """The run's party programs (:func:`pd_nmf_program`) on the least driver of their
    effects (:mod:`driver_floor`), with pre-shared keys and, with ``sealing``, every message
    sealed and authenticated; returns the time, T, the ledger rows and the views."""
    program = pd_nmf_program(T0, sweeps, params, variant)
    start = time.perf_counter()
    outputs, rows, views = least_driver_run(dict.fromkeys(range(m), program),
                                            dict(enumerate(row_shards(X, m))), sealing=sealing)
    return time.perf_counter() - start, outputs[0].T, rows, views


NETWORK = {"latency_ms": 10.0, "bandwidth_mbps": 100.0}
"""The simulated links of the PD-NMF runs (the network's defaults, written out for the
deployment figure)."""


def private(X: Any, T0: np.ndarray, sweeps: int, params: RRIParams, m: int,
            sealing: bool = True, variant: str = "prg", clock: PartyClock | None = None,
            cpu: list[float] | None = None) -> tuple[float, Any]:
    """The PD-NMF simulation; with ``clock``, every party's program is timed step by step
    (the timed arms run without it); its CPU seconds are appended to ``cpu``."""
    sim = Simulation(Network.build(m, **NETWORK), seed=1, sealing=sealing)
    program = pd_nmf_program(T0, sweeps, params, variant)
    parties = site_parties(program if clock is None else clock.wrap(program),
                           [{"X": s} for s in row_shards(X, m)])
    timer = _Timer(cpu)
    result = sim.run(parties)
    wall = timer.stop()
    W = np.vstack([result.outputs[p].W for p in range(m)])
    return wall, (W, result.outputs[0].T, result)


def calls_alone(shards: list[Any], d: int, calls: int, sealing: bool, variant: str,
                cold: bool) -> float:
    """The run's SecureSum calls without the local steps; ``cold``: each party reads its shard
    between calls (timed and subtracted), as its matrix-vector products would."""
    m = len(shards)
    reading = [0.0]

    def program(ctx: Any, X: Any) -> Any:
        stat = np.random.default_rng(ctx.party).uniform(0.0, 1.0, d + 1)
        arrays = (X.data, X.indices)
        for _ in range(calls):
            if cold:
                start = time.perf_counter()
                for arr in arrays:
                    arr.sum()
                reading[0] += time.perf_counter() - start
            yield from secure_sum(ctx, stat, variant, label="t_statistics")

    sim = Simulation(Network.build(m), seed=1, sealing=sealing)
    start = time.perf_counter()
    sim.run(site_parties(program, [{"X": s} for s in shards]))
    return time.perf_counter() - start - reading[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=None, help="interleaved repetitions")
    parser.add_argument("--quick", action="store_true", help="a smaller matrix (smoke test)")
    parser.add_argument("--variant", default="prg", choices=ALL_VARIANTS,
                        help="SecureSum variant of the PD-NMF runs and the driver floors "
                             "(default prg; the protocol and logging floors are prg's)")
    parser.add_argument("--no-sklearn", action="store_true", help="skip the scikit-learn line")
    parser.add_argument("--target-only", action="store_true",
                        help="only the target's arms (PD-NMF sealing off and on, centralized): "
                             "the ratios' wall and CPU figures, no floors or breakdown")
    args = parser.parse_args()
    n, d, k, sweeps, m = (4000, 500, 10, 10, 4) if args.quick else (20000, 2000, 20, 30, 4)
    rng = np.random.default_rng(7)
    corpus = synthetic_topic_corpus(n, d, k, doc_length=100, alpha=0.3, rng=rng)
    X = sp.csr_array(corpus.tf)
    params = RRIParams(form="plain")
    T0 = rng.uniform(0.0, 1.0, size=(k, d))
    T0 /= T0.sum(axis=1, keepdims=True)  # the scenario's `random` start (balanced scales)
    repeats = args.repeats or 5
    last: dict[str, Any] = {}
    critical: dict[str, list[float]] = {"off": [], "on": []}
    synchronised: dict[str, list[float]] = {"off": [], "on": []}
    clocks: dict[str, list[PartyClock]] = {"off": [], "on": []}
    network: dict[str, float] = {}

    cpu: dict[str, list[float]] = {"centralized": [], "sealing_off": [], "sealing_on": []}

    def run_centralized() -> float:
        t_c, last["centralized"] = centralized(X, T0, sweeps, params, cpu["centralized"])
        return t_c

    def run_floor() -> float:
        t_f, last["local_floor"] = local_floor(X, T0, sweeps, params, m)
        return t_f

    def run_protocol_floor() -> float:
        t_f, last["protocol_floor"] = local_floor(X, T0, sweeps, params, m, protocol=True)
        return t_f

    def run_simpy_floor() -> float:
        t_s, last["simpy_floor"] = simpy_floor(X, T0, sweeps, params, m)
        return t_s

    def run_logging_floor() -> float:
        t_l, last["logging_floor"], *counts = logging_floor(X, T0, sweeps, params, m)
        last["logging_counts"] = counts
        return t_l

    def run_driver_floor(sealing: bool) -> float:
        arm = "driver_floor_sealed" if sealing else "driver_floor"
        t_d, last[arm], *last[f"{arm}_records"] = driver_floor(X, T0, sweeps, params, m,
                                                               sealing, args.variant)
        return t_d

    def run_private(sealing: bool) -> float:
        t_p, last["private"] = private(X, T0, sweeps, params, m, sealing, args.variant,
                                       cpu=cpu["sealing_on" if sealing else "sealing_off"])
        # the driver floors' messages are checked against these
        last["sealing_on_ledger" if sealing else "sealing_off_ledger"] = last["private"][2].ledger
        return t_p

    def run_clocked(sealing: bool) -> float:  # for the critical path only
        clock = PartyClock()
        t_p, (_, _, clocked) = private(X, T0, sweeps, params, m, sealing, args.variant, clock)
        arm = "on" if sealing else "off"
        critical[arm].append(clock.critical_path())
        synchronised[arm].append(clock.synchronised_critical_path())
        clocks[arm].append(clock)
        network[arm] = clocked.simulated_s  # the simulated network: the same in every run
        return t_p

    shards = [sp.csr_array(s) for s in row_shards(X, m)]

    def run_calls(cold: bool) -> float:
        return calls_alone(shards, d, k * sweeps, False, args.variant, cold)

    if args.target_only:
        with pinned() as note:
            runs = interleaved(repeats, sealing_off=lambda: run_private(False),
                               centralized=run_centralized,
                               sealing_on=lambda: run_private(True))
        emit_target(runs, cpu, last, X, params, note, n=n, d=d, nnz=int(X.nnz), k=k, sweeps=sweeps,
                    parties=m, variant=args.variant, repeats=repeats)
        return
    with pinned() as note:
        # the target's two ratios from neighbouring runs: centralized between the PD-NMF arms
        runs = interleaved(repeats, sealing_off=lambda: run_private(False),
                           centralized=run_centralized,
                           sealing_on=lambda: run_private(True),
                           driver_floor=lambda: run_driver_floor(False),
                           driver_floor_sealed=lambda: run_driver_floor(True),
                           logging_floor=run_logging_floor,
                           protocol_floor=run_protocol_floor,
                           simpy_floor=run_simpy_floor,
                           local_floor=run_floor,
                           clocked_off=lambda: run_clocked(False),
                           clocked_on=lambda: run_clocked(True),
                           calls_alone=lambda: run_calls(False),
                           calls_alone_cold=lambda: run_calls(True))
    W_c, T_c = last["centralized"]
    _, T_p, result = last["private"]
    target = objective(X, W_c, T_c, params)
    totals = result.ledger.select(protocol="secure_sum").totals()
    for sealing, key, goal in ((False, "sealing_off", 1.25), (True, "sealing_on", 1.5)):
        arm = "on" if sealing else "off"
        crit, sync = critical[arm], synchronised[arm]
        lockstep = synchronised_critical_path(clocks[arm])
        per_sweep = {
            "unit": "seconds per sweep; the simulation and centralized from their minima",
            "compute_critical_path_s": round(lockstep / sweeps, 5),
            "network_s": round(network[arm] / sweeps, 5),
            "deployment_s": round((lockstep + network[arm]) / sweeps, 5),
            "simulation_total_s": round(min(runs[key]) / sweeps, 5),
            "centralized_s": round(min(runs["centralized"]) / sweeps, 5),
            "note": "deployment = compute critical path (Σ over the SecureSum barriers of the "
                    "slowest party's compute between them, each party's compute there the "
                    "least over the clocked runs) + the simulated network's time "
                    f"(latency {NETWORK['latency_ms']} ms, {NETWORK['bandwidth_mbps']} Mbit/s "
                    "links); simulation_total = the one-core simulation of all M parties",
        }
        emit(benchmark="pd_nmf_vs_centralized", n=n, d=d, nnz=int(X.nnz), k=k, sweeps=sweeps,
             parties=m, variant=args.variant, sealing=sealing, repeats=repeats, **note,
             pd_nmf_to_centralized=ratio(runs[key], runs["centralized"]), target_ratio=goal,
             cpu_pd_nmf_to_centralized=ratio(cpu[key], cpu["centralized"]),
             critical_path_to_centralized=ratio(crit, runs["centralized"]),
             critical_path_note="slowest party's local compute (inside its program), from "
                                "runs of their own: clocked_to_timed is what the clock costs",
             synchronised_critical_path_to_centralized=ratio(sync, runs["centralized"]),
             lockstep_critical_path_to_centralized=round(lockstep / min(runs["centralized"]), 3),
             per_sweep=per_sweep,
             clocked_to_timed=ratio(runs["clocked_on" if sealing else "clocked_off"], runs[key]),
             pd_nmf_to_local_floor=ratio(runs[key], runs["local_floor"]),
             pd_nmf_to_simpy_floor=ratio(runs[key], runs["simpy_floor"]),
             pd_nmf_to_protocol_floor=ratio(runs[key], runs["protocol_floor"]),
             pd_nmf_to_logging_floor=ratio(runs[key], runs["logging_floor"]),
             pd_nmf_to_driver_floor=ratio(
                 runs[key], runs["driver_floor_sealed" if sealing else "driver_floor"]),
             objective=target,
             max_rel_diff_T=float(np.abs(T_p - T_c).max() / np.abs(T_c).max()),
             secure_sum_messages=totals["messages"], secure_sum_elements=totals["elements"])

    party_calls = m * k * sweeps
    floor_s, pd_s = min(runs["local_floor"]), min(runs["sealing_off"])
    simpy_s, protocol_s = min(runs["simpy_floor"]), min(runs["protocol_floor"])
    logging_s, driver_s = min(runs["logging_floor"]), min(runs["driver_floor"])
    alone_s, cold_s = min(runs["calls_alone"]), min(runs["calls_alone_cold"])
    emit(benchmark="pd_nmf_breakdown", parties=m, party_calls=party_calls, sealing=False,
         repeats=repeats, **note, unit="µs per party-call, from the minima",
         pd_nmf_over_local_floor=round((pd_s - floor_s) / party_calls * 1e6, 1),
         calls_alone=round(alone_s / party_calls * 1e6, 1),
         calls_alone_cold_caches=round(cold_s / party_calls * 1e6, 1),
         interleaving=round((pd_s - floor_s - alone_s) / party_calls * 1e6, 1),
         simpy_floor_over_local_floor=round((simpy_s - floor_s) / party_calls * 1e6, 1),
         pd_nmf_over_simpy_floor=round((pd_s - simpy_s) / party_calls * 1e6, 1),
         protocol_floor_over_local_floor=round((protocol_s - floor_s) / party_calls * 1e6, 1),
         pd_nmf_over_protocol_floor=round((pd_s - protocol_s) / party_calls * 1e6, 1),
         logging_floor_over_protocol_floor=round((logging_s - protocol_s) / party_calls * 1e6,
                                                 1),
         pd_nmf_over_logging_floor=round((pd_s - logging_s) / party_calls * 1e6, 1),
         driver_floor_over_logging_floor=round((driver_s - logging_s) / party_calls * 1e6, 1),
         pd_nmf_over_driver_floor=round((pd_s - driver_s) / party_calls * 1e6, 1),
         calls_alone_runs=summary(runs["calls_alone"]),
         calls_alone_cold_runs=summary(runs["calls_alone_cold"]),
         note="pd_nmf_over_local_floor = calls_alone + interleaving; the cold arm reads each "
              "party's shard between calls (read time subtracted)")

    def emit_floor(floor: str, note_text: str, **figures: Any) -> None:
        """A floor's line: its runs against centralized's (and ``figures``), and how far its T
        lies from centralized's."""
        emit(benchmark=f"pd_nmf_{floor}", n=n, d=d, k=k, sweeps=sweeps, parties=m,
             repeats=repeats, **note,
             **{f"{floor}_to_centralized": ratio(runs[floor], runs["centralized"])}, **figures,
             max_rel_diff_T=float(np.abs(last[floor] - T_c).max() / np.abs(T_c).max()),
             note=note_text)

    emit_floor("local_floor", "the parties' own steps in lock-step, sum in the clear: no "
               "protocol, no driver")
    emit_floor("simpy_floor", "the parties' own steps as SimPy processes, one event per topic, "
               "sum in the clear: the least any SimPy simulation of the run does",
               simpy_floor_to_local_floor=ratio(runs["simpy_floor"], runs["local_floor"]))
    emit_floor("protocol_floor", "the parties' steps in lock-step, each sum by SecureSum's own "
               "arithmetic in line (encode, AES masks, bytes, element checks, decode): no "
               "driver, no views",
               protocol_floor_to_local_floor=ratio(runs["protocol_floor"], runs["local_floor"]),
               secure_sum_variant="prg")

    ledger_rows, records = last["logging_counts"]
    received = sum(message.protocol == "secure_sum"
                   for view in result.views.values() for message in view.received)
    # the floors' arithmetic is prg's; explicit sends twice the messages (its shares)
    if args.variant != "explicit" and (ledger_rows, records) != (totals["messages"], received):
        raise SystemExit(f"logging floor kept {ledger_rows} rows and {records} records; the run "
                         f"{totals['messages']} and {received}")
    emit_floor("logging_floor", "the SimPy floor with SecureSum's arithmetic in line and the "
               "run's records: a ledger row per message, and in the views an immutable copy of "
               "each input and output and a record of each message received — as many as the "
               "run keeps; no driver, no effects, no network timing",
               logging_floor_to_protocol_floor=ratio(runs["logging_floor"],
                                                     runs["protocol_floor"]),
               ledger_rows=ledger_rows, received_records=records, secure_sum_variant="prg")

    def messages(rows: list[Row]) -> tuple[list[tuple[int, ...]], int]:
        """Each message's ends and size (sorted: the run's key agreement shifts its calls'
        numbers and times and the parties' order of sending), and the number of calls."""
        return (sorted((r.sender, r.receiver, r.elements, r.bytes) for r in rows),
                len({r.call for r in rows}))

    for arm, run_ledger in (("driver_floor", "sealing_off_ledger"),
                            ("driver_floor_sealed", "sealing_on_ledger")):
        rows, views = last[f"{arm}_records"]
        ledger = [row for row in last[run_ledger] if row.protocol == "secure_sum"]
        if messages(rows) != messages(ledger) or sum(
                len(view.received) for view in views.values()) != received:
            raise SystemExit(f"the {arm}'s ledger or views differ from the run's")
    emit_floor("driver_floor", "the run's party programs on the least driver of their effects "
               "(Input, SendEach, RecvEach, Output; direct links, no faults or abort handling) "
               "with the logging floor's records: what interpreting effects costs; sealed: "
               "each message also sealed and authenticated as the run seals it",
               driver_floor_to_logging_floor=ratio(runs["driver_floor"], runs["logging_floor"]),
               driver_floor_sealed_to_centralized=ratio(runs["driver_floor_sealed"],
                                                        runs["centralized"]),
               sealed_to_unsealed=ratio(runs["driver_floor_sealed"], runs["driver_floor"]),
               ledger_rows=len(rows))

    if args.no_sklearn:
        return
    from sklearn.decomposition import NMF

    max_iter = 25
    with pinned():
        while True:
            model = NMF(n_components=k, solver="cd", max_iter=max_iter, tol=0.0,
                        random_state=0)
            start = time.perf_counter()
            W_s = model.fit_transform(X)
            elapsed = time.perf_counter() - start
            reached = 0.5 * model.reconstruction_err_**2
            if reached <= target or max_iter >= 3200:
                break
            max_iter *= 2
    emit(benchmark="sklearn_nmf_cd_to_same_objective", target_objective=target,
         sklearn_objective=float(reached), reached=bool(reached <= target),
         max_iter=max_iter, sklearn_s=round(elapsed, 3),
         ratio_sklearn_to_centralized=round(elapsed / statistics.median(runs["centralized"]), 3),
         init=str(model.init), W_shape=list(W_s.shape), **note)


def emit_target(runs: dict[str, list[float]], cpu: dict[str, list[float]], last: dict[str, Any],
                X: Any, params: RRIParams, note: dict[str, int], **head: Any) -> None:
    """The target's lines alone (``--target-only``): each PD-NMF arm against centralized, by
    wall time and by the process's CPU time (``cpu``, :class:`_Timer`), from the same runs."""
    W_c, T_c = last["centralized"]
    _, T_p, _ = last["private"]
    for sealing, key, goal in ((False, "sealing_off", 1.25), (True, "sealing_on", 1.5)):
        emit(benchmark="pd_nmf_vs_centralized", **head, sealing=sealing, **note,
             target_ratio=goal,
             pd_nmf_to_centralized=ratio(runs[key], runs["centralized"]),
             cpu_pd_nmf_to_centralized=ratio(cpu[key], cpu["centralized"]),
             cpu_note="time.process_time of this process over the same timed regions as the "
                      "wall figures: both arms in one process, BLAS on one thread, so the load "
                      "of other processes does not enter it",
             objective=objective(X, W_c, T_c, params),
             max_rel_diff_T=float(np.abs(T_p - T_c).max() / np.abs(T_c).max()),
             load_average=round(os.getloadavg()[0], 1))


if __name__ == "__main__":
    main()
