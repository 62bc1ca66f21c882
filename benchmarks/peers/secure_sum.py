"""Secure sum of M = 3 parties' real vectors (d = 10^5), mpcsim beside its peers, in one process
and in three.

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
* ``mpcsim_mpi`` — three processes (``mpiexec -n 3`` of the ``mpi`` extra's MPICH, one party
  per rank, the MPI driver), the same SecureSum call as ``mpcsim`` (sealed channels, pre-shared
  pair keys, ledger and views): one ``Simulation.run`` whose program makes 1 + ``--reps`` calls,
  each between two barriers (an All-Gather of one public element, so that the second barrier
  waits for every party's sum); party 0's wall time from the first barrier's end to the second
  one's, as MPyC's arm. Starting the job and the run (the driver's communicators, gathering the
  ledger and the views at the end) are outside that time; ``whole_run_s`` reports the whole
  ``Simulation.run`` between two ``MPI.Barrier`` calls beside it.
* ``crypten`` — three processes, CrypTen 0.4.1 on torch 2.4.1 (CPU, one thread), its
  ``DistributedCommunicator`` over gloo on localhost (a file rendezvous): every party shares its
  vector (``crypten.cryptensor(x, src=i)`` for i = 0, 1, 2: pseudo-random zero shares from
  pairwise seeds, so the sharing sends nothing), the parties add the shares and open the sum
  (``get_plain_text``, one all-reduce); CrypTen's default encoding, 16 fractional bits in
  Z_2^64; party 0's wall time between two ``torch.distributed.barrier`` calls.

Each three-process peer is compared with ``mpcsim_mpi``, each one-process peer with ``mpcsim``.
Prints one JSON line per arm and one per kind of arm with the ratios peer ÷ mpcsim (of the minima
over rounds, and the median of the round-by-round ratios); peers not installed (``make peers``
builds ``.venv-peers``) are reported as skipped, and so is a peer that does not import, and
``mpcsim_mpi`` without the ``mpi`` extra. Run by ``make peers``, or
``python benchmarks/peers/secure_sum.py [--rounds N] [--reps N] [--d D] [--arms A,B]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
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


class SkipArm(Exception):
    """A peer that is not there to measure (the message says why); the arm is skipped."""


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


CRYPTEN_PARTY = r"""
import json, os, time
import numpy as np
import torch
import torch.distributed as dist
import crypten

torch.set_num_threads(1)
SEED, M, d, reps = {seed}, {m}, {d}, {reps}
crypten.init()
rank = dist.get_rank()
x = torch.from_numpy(np.random.default_rng(SEED + rank).uniform(-1.0, 1.0, d))
times, total = [], None
for r in range(reps + 1):
    dist.barrier()
    start = time.perf_counter()
    shares = [crypten.cryptensor(x, src=i) for i in range(M)]
    acc = shares[0]
    for other in shares[1:]:
        acc = acc + other
    total = acc.get_plain_text()
    dist.barrier()
    if r:
        times.append(time.perf_counter() - start)
if rank == 0:
    found = {{"seconds": min(times), "sum": total.double().tolist(),
              "fractional_bits": int(round(np.log2(acc.encoder.scale))),
              "version": crypten.__version__, "torch": torch.__version__}}
    print("RESULT " + json.dumps(found), flush=True)
dist.destroy_process_group()
"""


def worker_crypten(d: int, reps: int) -> dict[str, object]:
    try:
        import crypten  # noqa: F401
    except ImportError as exc:  # reported as skipped by the driver
        raise SkipArm(f"crypten does not import in .venv-peers: {exc}") from exc
    code = CRYPTEN_PARTY.format(seed=SEED, m=M, d=d, reps=reps)
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    script = tmp / f"crypten_secure_sum_{os.getpid()}.py"
    rendezvous = tmp / f"crypten_rendezvous_{os.getpid()}"
    script.write_text(code)
    rendezvous.unlink(missing_ok=True)
    env = {**os.environ, "DISTRIBUTED_BACKEND": "gloo", "RENDEZVOUS": f"file://{rendezvous}",
           "WORLD_SIZE": str(M)}
    try:
        ranks = [subprocess.Popen([sys.executable, str(script)], env={**env, "RANK": str(i)},
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(M)]
        outs = [p.communicate(timeout=3600) for p in ranks]
    finally:
        script.unlink(missing_ok=True)
        rendezvous.unlink(missing_ok=True)
    if any(p.returncode for p in ranks):
        raise RuntimeError("crypten ranks failed:\n" + "\n".join(e[-1500:] for _, e in outs))
    line = next(x for x in outs[0][0].splitlines() if x.startswith("RESULT "))
    found = json.loads(line[len("RESULT "):])
    return {"seconds": found["seconds"], "max_abs_error": error(np.array(found["sum"]), d),
            "fractional_bits": found["fractional_bits"], "version": found["version"],
            "torch": found["torch"]}


def timed_sums(reps: int):
    """A party program: 1 + ``reps`` SecureSum calls, each between two barriers (an All-Gather
    of one public element), timed on this party's clock as MPyC's arm times its call."""
    from protocols.all_gather import all_gather
    from protocols.secure_sum import secure_sum

    def program(ctx, x):
        times, total = [], None
        for r in range(reps + 1):
            yield from all_gather(ctx, np.zeros(1), output="barrier")
            start = time.perf_counter()
            total = yield from secure_sum(ctx, x)
            yield from all_gather(ctx, np.zeros(1), output="barrier")
            if r:
                times.append(time.perf_counter() - start)
        return times, total

    return program


def rank_mpcsim_mpi(d: int, reps: int) -> None:
    """One rank of mpcsim's three-process arm (under ``mpiexec -n 3``): one party per rank."""
    sys.path.insert(0, str(ROOT))
    from mpi4py import MPI

    from parties.party import site_parties
    from sim.network import Network
    from sim.simulation import Simulation

    comm = MPI.COMM_WORLD
    sim = Simulation(Network.build(M), seed=SEED, sealing=True, keys="preshared", driver="mpi")
    parties = site_parties(timed_sums(reps), [{"x": v} for v in inputs(d)])
    comm.Barrier()
    start = time.perf_counter()
    result = sim.run(parties)
    comm.Barrier()
    run_s = time.perf_counter() - start
    if comm.Get_rank() == 0:
        times, total = result.outputs[0]
        print("RESULT " + json.dumps({"seconds": min(times), "run_s": run_s,
                                      "sum": np.asarray(total).tolist()}), flush=True)


def worker_mpcsim_mpi(d: int, reps: int) -> dict[str, object]:
    mpiexec = Path(sysconfig.get_path("scripts")) / "mpiexec"
    if not mpiexec.exists():
        raise SkipArm("no mpiexec beside this Python: install the mpi extra (.[mpi])")
    done = subprocess.run([str(mpiexec), "-n", str(M), sys.executable, __file__, "--rank",
                           "--d", str(d), "--reps", str(reps)], capture_output=True, text=True,
                          check=True, timeout=3600)
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    found = json.loads(line[len("RESULT "):])
    return {"seconds": found["seconds"], "max_abs_error": error(np.array(found["sum"]), d),
            "whole_run_s": found["run_s"]}


WORKERS = {"mpcsim": worker_mpcsim,
           "mpcsim_mpi": worker_mpcsim_mpi,
           "spu_aby3": lambda d, reps: worker_spu(d, reps, "ABY3"),
           "spu_semi2k": lambda d, reps: worker_spu(d, reps, "SEMI2K"),
           "mpyc": worker_mpyc,
           "crypten": worker_crypten}
PEER_ARMS = {"spu_aby3", "spu_semi2k", "mpyc", "crypten"}
PROCESSES = {"mpcsim": 1, "mpcsim_mpi": 3, "spu_aby3": 1, "spu_semi2k": 1, "mpyc": 3,
             "crypten": 3}


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
    parser.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--d", type=int, default=10**5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--arms", default=",".join(WORKERS))
    args = parser.parse_args()
    if args.rank:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            rank_mpcsim_mpi(args.d, args.reps)
        return
    if args.worker:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=1):
            try:
                found = WORKERS[args.worker](args.d, args.reps)
            except SkipArm as exc:
                found = {"skipped": str(exc)}
            print(json.dumps(found), flush=True)
        return
    arms = args.arms.split(",")
    if not PEERS_PYTHON.exists():
        print(json.dumps({"benchmark": "peers_secure_sum", "skipped": sorted(PEER_ARMS),
                          "reason": "no .venv-peers: run `make peers`"}), flush=True)
        arms = [a for a in arms if a not in PEER_ARMS]
    samples: dict[str, list[dict[str, object]]] = {arm: [] for arm in arms}
    for r in range(args.rounds):
        for arm in arms if r % 2 == 0 else list(reversed(arms)):
            if arm not in samples:
                continue
            found = run_worker(arm, args.d, args.reps)
            if "skipped" in found:
                print(json.dumps({"benchmark": "peers_secure_sum", "skipped": [arm],
                                  "reason": found["skipped"]}), flush=True)
                del samples[arm]
                continue
            samples[arm].append(found)
    seconds = {arm: [float(s["seconds"]) for s in runs] for arm, runs in samples.items()}
    load = os.getloadavg()[0]
    for arm, runs in samples.items():
        extra = {k: v for k, v in runs[-1].items() if k not in ("seconds", "max_abs_error")}
        print(json.dumps({"benchmark": "peers_secure_sum", "arm": arm, "m": M, "d": args.d,
                          "processes": PROCESSES[arm], "rounds": args.rounds,
                          "reps_per_round": args.reps, "blas_threads": 1,
                          "min_s": round(min(seconds[arm]), 4),
                          "median_s": round(statistics.median(seconds[arm]), 4),
                          "max_abs_error": max(float(s["max_abs_error"]) for s in runs),
                          **extra, "load_average": load}), flush=True)
    for base_arm in ("mpcsim", "mpcsim_mpi"):  # each peer against mpcsim's arm of its kind
        peers = [arm for arm in seconds if arm in PEER_ARMS
                 and PROCESSES[arm] == PROCESSES[base_arm]]
        if base_arm not in seconds or not peers:
            continue
        base = seconds[base_arm]
        print(json.dumps({
            "benchmark": "peers_secure_sum", "processes": PROCESSES[base_arm],
            "ratios_peer_over": base_arm, "ratios": {
                arm: {"ratio_of_minima": round(min(seconds[arm]) / min(base), 2),
                      "ratio_median_of_rounds": round(statistics.median(
                          a / b for a, b in zip(seconds[arm], base, strict=True)), 2)}
                for arm in peers},
            "load_average": load}), flush=True)


if __name__ == "__main__":
    main()
