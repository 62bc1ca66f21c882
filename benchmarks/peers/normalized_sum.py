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

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
SEED = 20261127
M = 3
P127 = (1 << 127) - 1
SINGLE = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
          "NUMBA_NUM_THREADS": "1",
          "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def inputs(d: int) -> list[np.ndarray]:
    return [np.random.default_rng(SEED + i).uniform(-1.0, 1.0, d) for i in range(M)]


def error(got: np.ndarray, d: int, frac_bits: int | None = None) -> float:
    """Max |got − s/‖s‖| against numpy; with ``frac_bits``, of the inputs rounded to that grid
    (the protocol's own error, without its input encoding's)."""
    xs = inputs(d) if frac_bits is None else [np.rint(x * 2.0**frac_bits) / 2.0**frac_bits
                                               for x in inputs(d)]
    s = sum(xs)
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - s / np.linalg.norm(s))))


# -- workers (each in its own process) ---------------------------------------------------------


def worker_mpcsim(d: int, reps: int, full: bool) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from parties.party import Party
    from protocols.normed_secure_sum import normed_secure_sum, nss_dealer
    from sim.network import Network
    from sim.simulation import Simulation

    xs = inputs(d)
    options = ({} if full else {"sealing": False, "keys": "none", "record_views": False})

    def once() -> tuple[float, np.ndarray]:
        sim = Simulation(Network.build(M + 1), prime=P127, seed=SEED, **options)
        parties = [Party(i, normed_secure_sum, {"x": xs[i]}) for i in range(M)]
        parties.append(Party(M, nss_dealer, {"calls": [(1, d)]}, role="dealer"))
        start = time.perf_counter()
        result = sim.run(parties)
        return time.perf_counter() - start, result.outputs[0]

    once()
    runs = [once() for _ in range(reps)]
    return {"seconds": min(t for t, _ in runs), "max_abs_error": error(runs[-1][1], d),
            "max_abs_error_encoded": error(runs[-1][1], d, frac_bits=16)}


def worker_spu(d: int, reps: int) -> dict[str, object]:
    import jax
    import jax.numpy as jnp
    import spu.libspu as libspu
    import spu.utils.simulation as spsim

    config = libspu.RuntimeConfig(protocol=libspu.ProtocolKind.ABY3,
                                  field=libspu.FieldType.FM64)
    sim = spsim.Simulator(M, config)

    def direction(a: jax.Array, b: jax.Array, c: jax.Array) -> jax.Array:
        s = a + b + c
        return s * jax.lax.rsqrt(jnp.sum(s * s))

    run = spsim.sim_jax(sim, direction)
    xs = inputs(d)
    run(*xs)  # compiles

    def once() -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        out = run(*xs)
        return time.perf_counter() - start, np.asarray(out)

    runs = [once() for _ in range(reps)]
    return {"seconds": min(t for t, _ in runs), "max_abs_error": error(runs[-1][1], d),
            "fractional_bits": config.fxp_fraction_bits or 18}


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
    code = MPYC_PARTY.format(seed=SEED, m=M, d=d, reps=reps)
    script = Path(os.environ.get("TMPDIR", "/tmp")) / f"mpyc_normalized_sum_{os.getpid()}.py"
    script.write_text(code)
    try:
        done = subprocess.run([sys.executable, str(script), "-M3", "--no-log"],
                              capture_output=True, text=True, check=True, timeout=7200)
    finally:
        script.unlink(missing_ok=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    found = json.loads(line[len("RESULT "):])
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


def run_worker(arm: str, d: int, reps: int) -> dict[str, object]:
    python = str(PEERS_PYTHON) if arm in PEER_ARMS else sys.executable
    env = {**os.environ, **SINGLE, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, __file__, "--worker", arm, "--dims", str(d), "--reps",
                           str(reps)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(f"{arm} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(d: int, samples: dict[str, list[dict[str, object]]], rounds: int,
           reps: int) -> None:
    seconds = {arm: [float(s["seconds"]) for s in runs] for arm, runs in samples.items()}
    load = os.getloadavg()[0]
    for arm, runs in samples.items():
        print(json.dumps({"benchmark": "peers_normalized_sum", "arm": arm, "m": M, "d": d,
                          "processes": PROCESSES[arm], "rounds": rounds,
                          "reps_per_round": reps, "blas_threads": 1,
                          "min_s": round(min(seconds[arm]), 4),
                          "median_s": round(statistics.median(seconds[arm]), 4),
                          "max_abs_error": max(float(s["max_abs_error"]) for s in runs),
                          **({"max_abs_error_encoded": max(float(s["max_abs_error_encoded"])
                                                           for s in runs)}
                             if "max_abs_error_encoded" in runs[0] else {}),
                          "load_average": load}), flush=True)
    for base in BASES:
        if base not in seconds:
            continue
        print(json.dumps({
            "benchmark": "peers_normalized_sum", "d": d, "base": base,
            "ratios_peer_over_mpcsim": {
                arm: {"ratio_of_minima": round(min(s) / min(seconds[base]), 2),
                      "ratio_median_of_rounds": round(statistics.median(
                          a / b for a, b in zip(s, seconds[base], strict=True)), 2)}
                for arm, s in seconds.items() if arm not in BASES},
            "load_average": load}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", choices=sorted(WORKERS))
    parser.add_argument("--dims", default="100,10000")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--arms", default=",".join(WORKERS))
    args = parser.parse_args()
    dims = [int(x) for x in args.dims.split(",")]
    if args.worker:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            print(json.dumps(WORKERS[args.worker](dims[0], args.reps)), flush=True)
        return
    arms = args.arms.split(",")
    if not PEERS_PYTHON.exists():
        print(json.dumps({"benchmark": "peers_normalized_sum", "skipped": sorted(PEER_ARMS),
                          "reason": "no .venv-peers: run `make peers`"}), flush=True)
        arms = [a for a in arms if a not in PEER_ARMS]
    for d in dims:
        samples: dict[str, list[dict[str, object]]] = {arm: [] for arm in arms}
        for r in range(args.rounds):
            for arm in arms if r % 2 == 0 else list(reversed(arms)):
                samples[arm].append(run_worker(arm, d, args.reps))
        report(d, samples, args.rounds, args.reps)


if __name__ == "__main__":
    main()
