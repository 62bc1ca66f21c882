"""Normalized sum s/‖s‖₂ of M = 3 parties' vectors (d = 100 and 10^4), mpcsim beside its peers.

Every arm computes the direction of the same sum — party i holds
``x_i = default_rng(SEED + i).uniform(-1, 1, d)`` — and is checked against numpy's
``s / np.linalg.norm(s)`` of the unrounded inputs (max absolute error). Each arm runs in a worker
process of its own (start-up, imports and the peers' compilation excluded: every worker runs the
computation once untimed, then ``--reps`` timed runs, and reports its fastest); the arms'
workers are interleaved, their order alternating from one round to the next, with BLAS, OpenMP,
XLA and numba pinned to one thread. What each arm includes:

* ``mpcsim`` — the like-for-like arm, one process, the SimPy driver:
  :func:`protocols.normed_secure_sum.normed_secure_sum` (preset ``p127-default``: f = 16,
  GF(2^127 − 1), κ = 40, output at 20 fractional bits) with its trusted dealer, no sealing, no
  pairwise keys (the protocol uses none), no views kept (``record_views=False``; the ledger is
  still written). The time covers the dealer generating and sending the call's material (the
  offline phase, which SPU's simulator has no counterpart of: ABY3 draws its correlated
  randomness from pairwise PRGs inside the online run), encoding and sharing the inputs, the
  whole online phase and decoding at every party (``Simulation.run``).
  Its error is reported against numpy twice: of the inputs as given, and
  (``max_abs_error_encoded``) of the inputs rounded to its 16 fractional bits, which is the
  protocol's own error (the encoding's rounding moves the direction by up to ~2e-6 at d = 100).
* ``mpcsim_full`` — the same call as a default run: X25519 key agreement, every message sealed
  with AES-256-GCM, every party's view kept.
* ``spu_aby3`` — one process, SPU's simulator (``spu.utils.simulation``), ABY3 over FM64 with
  SPU's default 18 fractional bits: ``s * rsqrt(Σ s²)`` with ``s = x_0 + x_1 + x_2``, a jitted
  function of three private inputs; the time covers sharing the inputs, the secure computation
  and revealing the direction (compilation is in the untimed first run).
* ``mpyc`` — three processes (``-M3``, MPyC's own launcher and TCP links on localhost),
  SecFxp(48, 24): every party secret-shares its vector (``mpc.input``), the parties add the
  shares, form ``Σ s²`` (``mpc.in_prod``), its square root (``mpyc.statistics._fsqrt``, the
  routine ``statistics.stdev`` uses), its reciprocal, scale ``s`` by it and open the result;
  party 0's wall time between two barriers.

Prints one JSON line per arm and d, and one per d with the ratios peer ÷ mpcsim (of the minima
over rounds, and the median of the round-by-round ratios; against both mpcsim arms); peers not
installed (``make peers`` builds ``.venv-peers``) are reported as such. Run by ``make peers``, or
``python benchmarks/peers/normalized_sum.py [--rounds N] [--reps N] [--dims 100,10000]``.
"""

from __future__ import annotations

import os
import sys
import time

import harness
import numpy as np

BENCHMARK = "peers_normalized_sum"
M = 3
P127 = (1 << 127) - 1


def inputs(d: int) -> list[np.ndarray]:
    return harness.party_inputs(M, d)


def error(got: np.ndarray, d: int, frac_bits: int | None = None) -> float:
    """Max |got − s/‖s‖| against numpy; with ``frac_bits``, of the inputs rounded to that grid
    (the protocol's own error, without its input encoding's)."""
    xs = inputs(d) if frac_bits is None else [np.rint(x * 2.0**frac_bits) / 2.0**frac_bits
                                               for x in inputs(d)]
    s = sum(xs)
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - s / np.linalg.norm(s))))


# -- workers (each in its own process) ---------------------------------------------------------


def worker_mpcsim(d: int, reps: int, full: bool) -> dict[str, object]:
    sys.path.insert(0, str(harness.ROOT))
    from parties.party import Party
    from protocols.normed_secure_sum import normed_secure_sum, nss_dealer
    from sim.network import Network
    from sim.simulation import Simulation

    xs = inputs(d)
    options = ({} if full else {"sealing": False, "keys": "none", "record_views": False})

    def once() -> tuple[float, np.ndarray]:
        sim = Simulation(Network.build(M + 1), prime=P127, seed=harness.SEED, **options)
        parties = [Party(i, normed_secure_sum, {"x": xs[i]}) for i in range(M)]
        parties.append(Party(M, nss_dealer, {"calls": [(1, d)]}, role="dealer"))
        start = time.perf_counter()
        result = sim.run(parties)
        return time.perf_counter() - start, result.outputs[0]

    seconds, direction = harness.fastest(once, reps)
    return {"seconds": seconds, "max_abs_error": error(direction, d),
            "max_abs_error_encoded": error(direction, d, frac_bits=16)}


def worker_spu(d: int, reps: int) -> dict[str, object]:
    import jax
    import jax.numpy as jnp

    def direction(a: jax.Array, b: jax.Array, c: jax.Array) -> jax.Array:
        s = a + b + c
        return s * jax.lax.rsqrt(jnp.sum(s * s))

    seconds, out, frac = harness.spu_runs("ABY3", direction, inputs(d), reps)
    return {"seconds": seconds, "max_abs_error": error(out, d), "fractional_bits": frac}


MPYC_PARTY = r"""
import json, time
import numpy as np
from mpyc.runtime import mpc
from mpyc.statistics import _fsqrt

SEED, M = {seed}, {m}
d, reps = {d}, {reps}
secfxp = mpc.SecFxp(48, 24)

async def main():
    await mpc.start()
    x = np.random.default_rng(SEED + mpc.pid).uniform(-1.0, 1.0, d)
    mine = [secfxp(float(v)) for v in x]
    times, y = [], None
    for r in range(reps + 1):
        await mpc.barrier()
        start = time.perf_counter()
        shares = mpc.input(mine)
        s = shares[0]
        for other in shares[1:]:
            s = mpc.vector_add(s, other)
        inv = 1 / _fsqrt(mpc.in_prod(s, s))
        y = await mpc.output(mpc.scalar_mul(inv, s))
        await mpc.barrier()
        if r:
            times.append(time.perf_counter() - start)
    await mpc.shutdown()
    if mpc.pid == 0:
        found = {{"seconds": min(times), "direction": [float(v) for v in y]}}
        print("RESULT " + json.dumps(found))

mpc.run(main())
"""


def worker_mpyc(d: int, reps: int) -> dict[str, object]:
    code = MPYC_PARTY.format(seed=harness.SEED, m=M, d=d, reps=reps)
    found = harness.run_mpyc(code, "normalized_sum")
    return {"seconds": found["seconds"],
            "max_abs_error": error(np.array(found["direction"]), d)}


WORKERS = {"mpcsim": lambda d, reps: worker_mpcsim(d, reps, full=False),
           "mpcsim_full": lambda d, reps: worker_mpcsim(d, reps, full=True),
           "spu_aby3": worker_spu,
           "mpyc": worker_mpyc}
PEER_ARMS = {"spu_aby3", "mpyc"}
BASES = ("mpcsim", "mpcsim_full")
PROCESSES = {"mpcsim": 1, "mpcsim_full": 1, "spu_aby3": 1, "mpyc": 3}


# -- the driver ---------------------------------------------------------------------------------


def report(d: int, samples: dict[str, list[dict[str, object]]], rounds: int,
           reps: int) -> None:
    seconds = harness.seconds_of(samples)
    load = os.getloadavg()[0]
    for arm, runs in samples.items():
        head = {"m": M, "d": d, "processes": PROCESSES[arm]}
        harness.emit(harness.arm_line(BENCHMARK, arm, runs, head, rounds, reps, load,
                                      errors=("max_abs_error", "max_abs_error_encoded"),
                                      extra=False))
    for base in BASES:
        if base not in seconds:
            continue
        harness.emit({"benchmark": BENCHMARK, "d": d, "base": base,
              "ratios_peer_over_mpcsim": harness.ratios(
                  seconds, base, [arm for arm in seconds if arm not in BASES]),
              "load_average": load})


def main() -> None:
    cli = harness.parser(__doc__, WORKERS, reps=3)
    cli.add_argument("--dims", default="100,10000")
    args = cli.parse_args()
    dims = [int(x) for x in args.dims.split(",")]
    if args.worker:
        harness.serve_worker(lambda: WORKERS[args.worker](dims[0], args.reps))
        return
    arms = harness.installed_arms(BENCHMARK, args.arms.split(","), PEER_ARMS)
    for d in dims:
        worker_args = ["--dims", str(d), "--reps", str(args.reps)]
        samples = harness.interleave(BENCHMARK, arms, args.rounds, lambda arm, a=worker_args:
                                     harness.run_worker(__file__, arm, arm in PEER_ARMS, a))
        report(d, samples, args.rounds, args.reps)


if __name__ == "__main__":
    main()
