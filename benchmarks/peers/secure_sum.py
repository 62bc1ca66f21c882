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
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import harness
import numpy as np

BENCHMARK = "peers_secure_sum"
M = 3
FRAC_BITS = 24
P61 = (1 << 61) - 1


def inputs(d: int) -> list[np.ndarray]:
    return harness.party_inputs(M, d)


def error(got: np.ndarray, d: int) -> float:
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - sum(inputs(d)))))


# -- workers (each in its own process) ---------------------------------------------------------


def worker_mpcsim(d: int, reps: int) -> dict[str, object]:
    sys.path.insert(0, str(harness.ROOT))
    from parties.party import site_parties
    from protocols.secure_sum import secure_sum
    from sim.network import Network
    from sim.simulation import Simulation

    xs = [{"x": x} for x in inputs(d)]

    def once() -> tuple[float, np.ndarray]:
        sim = Simulation(Network.build(M), seed=harness.SEED, sealing=True, keys="preshared")
        parties = site_parties(lambda ctx, x: secure_sum(ctx, x), xs)
        start = time.perf_counter()
        result = sim.run(parties)
        return time.perf_counter() - start, result.outputs[0]

    seconds, total = harness.fastest(once, reps)
    return {"seconds": seconds, "max_abs_error": error(total, d)}


def worker_spu(d: int, reps: int, protocol: str) -> dict[str, object]:
    seconds, total, frac = harness.spu_runs(protocol, lambda a, b, c: a + b + c, inputs(d), reps)
    return {"seconds": seconds, "max_abs_error": error(total, d), "fractional_bits": frac}


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
    code = MPYC_PARTY.format(seed=harness.SEED, m=M, frac=FRAC_BITS, p=P61, d=d, reps=reps)
    found = harness.run_mpyc(code, "secure_sum", timeout=3600)
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
        raise harness.SkipArm(f"crypten does not import in .venv-peers: {exc}") from exc
    code = CRYPTEN_PARTY.format(seed=harness.SEED, m=M, d=d, reps=reps)
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
    found = harness.result_line(outs[0][0])
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
    sys.path.insert(0, str(harness.ROOT))
    from mpi4py import MPI

    from parties.party import site_parties
    from sim.network import Network
    from sim.simulation import Simulation

    comm = MPI.COMM_WORLD
    sim = Simulation(Network.build(M), seed=harness.SEED, sealing=True, keys="preshared",
                     driver="mpi")
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
        raise harness.SkipArm("no mpiexec beside this Python: install the mpi extra (.[mpi])")
    done = subprocess.run([str(mpiexec), "-n", str(M), sys.executable, __file__, "--rank",
                           "--d", str(d), "--reps", str(reps)], capture_output=True, text=True,
                          check=True, timeout=3600)
    found = harness.result_line(done.stdout)
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


def main() -> None:
    cli = harness.parser(__doc__, WORKERS, reps=3)
    cli.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    cli.add_argument("--d", type=int, default=10**5)
    args = cli.parse_args()
    if args.rank:
        with harness.pinned():
            rank_mpcsim_mpi(args.d, args.reps)
        return
    if args.worker:
        harness.serve_worker(lambda: WORKERS[args.worker](args.d, args.reps))
        return
    arms = harness.installed_arms(BENCHMARK, args.arms.split(","), PEER_ARMS)
    samples = harness.interleave(BENCHMARK, arms, args.rounds, lambda arm: harness.run_worker(
        __file__, arm, arm in PEER_ARMS, ["--d", str(args.d), "--reps", str(args.reps)]))
    seconds = harness.seconds_of(samples)
    load = os.getloadavg()[0]
    for arm, runs in samples.items():
        head = {"m": M, "d": args.d, "processes": PROCESSES[arm]}
        harness.emit(harness.arm_line(BENCHMARK, arm, runs, head, args.rounds, args.reps, load))
    for base_arm in ("mpcsim", "mpcsim_mpi"):  # each peer against mpcsim's arm of its kind
        peers = [arm for arm in seconds if arm in PEER_ARMS
                 and PROCESSES[arm] == PROCESSES[base_arm]]
        if base_arm not in seconds or not peers:
            continue
        harness.emit({"benchmark": BENCHMARK, "processes": PROCESSES[base_arm],
              "ratios_peer_over": base_arm, "ratios": harness.ratios(seconds, base_arm, peers),
              "load_average": load})


if __name__ == "__main__":
    main()
