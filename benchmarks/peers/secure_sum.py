"""Secure sum of M = 3 parties' real vectors (d = 10^5), mpcsim beside its peers.

Every arm sums the same inputs — party i holds ``x_i = default_rng(SEED + i).uniform(-1, 1, d)``
— and is checked against numpy's ``x_0 + x_1 + x_2`` (max absolute error). Each arm runs in a
worker process of its own (start-up, imports and the peers' compilation excluded: every worker
runs the computation once untimed, then ``--reps`` timed runs, and reports its fastest); the
workers of the arms are interleaved, their order alternating from one round to the next, with
BLAS, OpenMP, XLA and numba pinned to one thread. What each arm includes:

* ``mpcsim`` — one process, the SimPy driver: :func:`protocols.secure_sum.secure_sum` (PRG
  masks, GF(2^61 − 1), 24 fractional bits) over sealed channels (AES-256-GCM) with pre-shared
  pair keys: encoding, masking, the simulated network, the ledger and every party's view,
  reconstruction and decoding at every party (``Simulation.run``).
* ``spu_aby3`` / ``spu_semi2k`` — one process, SPU's simulator (``spu.utils.simulation``),
  FM64 with SPU's default 18 fractional bits: ``x_0 + x_1 + x_2`` as a jitted function of
  three private inputs; the time covers sharing the inputs, the secure addition and revealing
  the sum (the compilation is in the untimed first run).
* ``mpyc`` — three processes (``-M3``, MPyC's own launcher and TCP links on localhost),
  SecFld(2^61 − 1) with the inputs encoded by hand to 24 fractional bits: every party secret-
  shares its vector (``mpc.input``), the parties add the shares (``mpc.vector_add``) and open
  the sum (``mpc.output``); party 0's wall time between two barriers.

Prints one JSON line per arm and one with the ratios peer ÷ mpcsim (of the minima over rounds,
and the median of the round-by-round ratios); peers not installed (``make peers`` builds
``.venv-peers``) are reported as such. Run by ``make peers``, or
``python benchmarks/peers/secure_sum.py [--rounds N] [--reps N] [--d D]``.
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
FRAC_BITS = 24
P61 = (1 << 61) - 1
SINGLE = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
          "NUMBA_NUM_THREADS": "1",
          "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}


def inputs(d: int) -> list[np.ndarray]:
    return [np.random.default_rng(SEED + i).uniform(-1.0, 1.0, d) for i in range(M)]


def error(got: np.ndarray, d: int) -> float:
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - sum(inputs(d)))))


# -- workers (each in its own process) ---------------------------------------------------------


def worker_mpcsim(d: int, reps: int) -> dict[str, object]:
    sys.path.insert(0, str(ROOT))
    from parties.party import site_parties
    from protocols.secure_sum import secure_sum
    from sim.network import Network
    from sim.simulation import Simulation

    xs = [{"x": x} for x in inputs(d)]

    def once() -> tuple[float, np.ndarray]:
        sim = Simulation(Network.build(M), seed=SEED, sealing=True, keys="preshared")
        parties = site_parties(lambda ctx, x: secure_sum(ctx, x), xs)
        start = time.perf_counter()
        result = sim.run(parties)
        return time.perf_counter() - start, result.outputs[0]

    once()
    runs = [once() for _ in range(reps)]
    return {"seconds": min(t for t, _ in runs), "max_abs_error": error(runs[-1][1], d)}


def worker_spu(d: int, reps: int, protocol: str) -> dict[str, object]:
    import spu.libspu as libspu
    import spu.utils.simulation as spsim

    config = libspu.RuntimeConfig(protocol=getattr(libspu.ProtocolKind, protocol),
                                  field=libspu.FieldType.FM64)
    sim = spsim.Simulator(M, config)
    total = spsim.sim_jax(sim, lambda a, b, c: a + b + c)
    xs = inputs(d)
    total(*xs)  # compiles

    def once() -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        out = total(*xs)
        return time.perf_counter() - start, np.asarray(out)

    runs = [once() for _ in range(reps)]
    return {"seconds": min(t for t, _ in runs), "max_abs_error": error(runs[-1][1], d),
            "fractional_bits": config.fxp_fraction_bits or 18}


MPYC_PARTY = r"""
import json, sys, time
import numpy as np
from mpyc.runtime import mpc

SEED, M, FRAC, P = {seed}, {m}, {frac}, {p}
d, reps = {d}, {reps}
secfld = mpc.SecFld(P)

async def main():
    await mpc.start()
    x = np.random.default_rng(SEED + mpc.pid).uniform(-1.0, 1.0, d)
    mine = [int(v) % P for v in np.rint(x * 2.0**FRAC).astype(np.int64)]
    times, total = [], None
    for r in range(reps + 1):
        await mpc.barrier()
        start = time.perf_counter()
        shares = mpc.input([secfld(v) for v in mine])
        acc = shares[0]
        for other in shares[1:]:
            acc = mpc.vector_add(acc, other)
        total = await mpc.output(acc)
        await mpc.barrier()
        if r:
            times.append(time.perf_counter() - start)
    await mpc.shutdown()
    if mpc.pid == 0:
        values = [int(v) for v in total]
        signed = np.array([v - P if v > P // 2 else v for v in values], dtype=np.float64)
        found = {{"seconds": min(times), "sum": (signed / 2.0**FRAC).tolist()}}
        print("RESULT " + json.dumps(found))

mpc.run(main())
"""


def worker_mpyc(d: int, reps: int) -> dict[str, object]:
    code = MPYC_PARTY.format(seed=SEED, m=M, frac=FRAC_BITS, p=P61, d=d, reps=reps)
    script = Path(os.environ.get("TMPDIR", "/tmp")) / f"mpyc_secure_sum_{os.getpid()}.py"
    script.write_text(code)
    try:
        done = subprocess.run([sys.executable, str(script), "-M3", "--no-log"],
                              capture_output=True, text=True, check=True, timeout=3600)
    finally:
        script.unlink(missing_ok=True)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    found = json.loads(line[len("RESULT "):])
    return {"seconds": found["seconds"], "max_abs_error": error(np.array(found["sum"]), d)}


WORKERS = {"mpcsim": worker_mpcsim,
           "spu_aby3": lambda d, reps: worker_spu(d, reps, "ABY3"),
           "spu_semi2k": lambda d, reps: worker_spu(d, reps, "SEMI2K"),
           "mpyc": worker_mpyc}
PEER_ARMS = {"spu_aby3", "spu_semi2k", "mpyc"}
PROCESSES = {"mpcsim": 1, "spu_aby3": 1, "spu_semi2k": 1, "mpyc": 3}


# -- the driver ---------------------------------------------------------------------------------


def run_worker(arm: str, d: int, reps: int) -> dict[str, object]:
    python = str(PEERS_PYTHON) if arm in PEER_ARMS else sys.executable
    env = {**os.environ, **SINGLE, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, __file__, "--worker", arm, "--d", str(d), "--reps",
                           str(reps)], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=7200)
    if done.returncode != 0:
        raise RuntimeError(f"{arm} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", choices=sorted(WORKERS))
    parser.add_argument("--d", type=int, default=10**5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--arms", default=",".join(WORKERS))
    args = parser.parse_args()
    if args.worker:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            print(json.dumps(WORKERS[args.worker](args.d, args.reps)), flush=True)
        return
    arms = args.arms.split(",")
    if not PEERS_PYTHON.exists():
        print(json.dumps({"benchmark": "peers_secure_sum", "skipped": sorted(PEER_ARMS),
                          "reason": "no .venv-peers: run `make peers`"}), flush=True)
        arms = [a for a in arms if a not in PEER_ARMS]
    samples: dict[str, list[dict[str, object]]] = {arm: [] for arm in arms}
    for r in range(args.rounds):
        for arm in arms if r % 2 == 0 else list(reversed(arms)):
            samples[arm].append(run_worker(arm, args.d, args.reps))
    seconds = {arm: [float(s["seconds"]) for s in runs] for arm, runs in samples.items()}
    load = os.getloadavg()[0]
    for arm, runs in samples.items():
        print(json.dumps({"benchmark": "peers_secure_sum", "arm": arm, "m": M, "d": args.d,
                          "processes": PROCESSES[arm], "rounds": args.rounds,
                          "reps_per_round": args.reps, "blas_threads": 1,
                          "min_s": round(min(seconds[arm]), 4),
                          "median_s": round(statistics.median(seconds[arm]), 4),
                          "max_abs_error": max(float(s["max_abs_error"]) for s in runs),
                          "load_average": load}), flush=True)
    if "mpcsim" in seconds:
        base = seconds["mpcsim"]
        print(json.dumps({
            "benchmark": "peers_secure_sum", "ratios_peer_over_mpcsim": {
                arm: {"ratio_of_minima": round(min(s) / min(base), 2),
                      "ratio_median_of_rounds": round(statistics.median(
                          a / b for a, b in zip(s, base, strict=True)), 2)}
                for arm, s in seconds.items() if arm != "mpcsim"},
            "load_average": load}), flush=True)


if __name__ == "__main__":
    main()
