"""Where one SecureSum call across processes spends its time, rank by rank.

Runs the ``mpcsim_mpi`` arm of ``secure_sum.py`` (M = 3 parties, one per rank, sealed channels,
pre-shared pair keys, ledger and views; each call between two barriers, an All-Gather of one
public element) and reports, per rank, over ``--calls`` calls after one untimed call: the wall
time of the call with its closing barrier, of the SecureSum call alone and of the barrier; the
rank's processor time inside the SecureSum call (its waiting loop included); and the page faults
it took there (fresh memory: the view's records and the received messages). With ``--cprofile``
each rank also prints its 25 most expensive functions inside the run (``Run.execute``).

Run: ``python benchmarks/peers/secure_sum_phases.py [--calls N] [--d D] [--cprofile]``
(it starts ``mpiexec -n 3`` of itself, BLAS and numba pinned to one thread). Prints one JSON
line per rank.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

import harness
import numpy as np

M = 3


def rank_main(d: int, calls: int, profile: bool) -> None:
    sys.path.insert(0, str(harness.ROOT))
    from mpi4py import MPI

    import sim.drivers.mpi_rank as mpi_rank
    from parties.party import site_parties
    from protocols.all_gather import all_gather
    from protocols.secure_sum import secure_sum
    from sim.network import Network
    from sim.simulation import Simulation

    def program(ctx, x):
        rows = []
        for r in range(calls + 1):
            yield from all_gather(ctx, np.zeros(1), output="barrier")
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            cpu, start = time.process_time(), time.perf_counter()
            yield from secure_sum(ctx, x)
            summed = time.perf_counter()
            cpu, faults = (time.process_time() - cpu,
                           resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults)
            yield from all_gather(ctx, np.zeros(1), output="barrier")
            if r:
                rows.append((time.perf_counter() - start, summed - start, cpu, faults))
        return rows

    profiler = cProfile.Profile()
    execute = mpi_rank.Run.execute

    def profiled(run):  # the run's own loop only: not the set-up, nor the gathering after
        profiler.enable()
        try:
            return execute(run)
        finally:
            profiler.disable()

    if profile:
        mpi_rank.Run.execute = profiled
    comm = MPI.COMM_WORLD
    sim = Simulation(Network.build(M), seed=harness.SEED, sealing=True, keys="preshared",
                     driver="mpi")
    result = sim.run(site_parties(program, [{"x": v} for v in harness.party_inputs(M, d)]))
    rank = comm.Get_rank()
    rows = np.array(result.outputs[rank]) * [1e3, 1e3, 1e3, 1]
    line = {"rank": rank, "d": d, "calls": calls, "load_average": os.getloadavg()[0]}
    for name, column in zip(("call_with_barrier_ms", "secure_sum_ms", "secure_sum_cpu_ms",
                             "page_faults"), rows.T, strict=True):
        line[name] = {"min": round(float(column.min()), 3),
                      "median": round(float(np.median(column)), 3)}
    text = ""
    if profile:
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(25)
        text = out.getvalue()
    for turn in range(comm.Get_size()):  # one rank at a time
        comm.Barrier()
        if turn == rank:
            print(json.dumps(line), flush=True)
            if text:
                print(text, flush=True)


def main() -> None:
    cli = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    cli.add_argument("--calls", type=int, default=50)
    cli.add_argument("--d", type=int, default=10**5)
    cli.add_argument("--cprofile", action="store_true")
    cli.add_argument("--rank", action="store_true", help=argparse.SUPPRESS)
    args = cli.parse_args()
    if args.rank:
        with harness.pinned():
            rank_main(args.d, args.calls, args.cprofile)
        return
    mpiexec = Path(sysconfig.get_path("scripts")) / "mpiexec"
    command = [str(mpiexec), "-n", str(M), sys.executable, __file__, "--rank", "--d",
               str(args.d), "--calls", str(args.calls)] + (["--cprofile"] if args.cprofile
                                                           else [])
    env = {**os.environ, **harness.SINGLE, "PYTHONPATH": str(harness.ROOT)}
    subprocess.run(command, check=True, env=env, timeout=harness.WORKER_TIMEOUT_S)


if __name__ == "__main__":
    main()
