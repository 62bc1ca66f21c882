"""What sealing costs a SimPy run at scale: one SecureSum among M parties, sealed and not.

Prints one JSON line per run (each in a fresh process, so that the peak resident set is that
run's): wall and CPU seconds of ``Simulation.run`` and the process's peak RSS, for a SecureSum
(PRG variant) of a d-vector per party with pre-shared keys, sealing on and off. Issue 32
measured 13 s and 1.4 GB unsealed but 51 s and 7.8 GB sealed at M = 1,000, d = 1,000: every
directed channel's two AES-GCM key schedules (~3 KB each) were kept for the whole run —
O(M²) memory — not ciphertext copies (views keep the decoded payload only, the ledger its
sizes). See :data:`sim.drivers.envelopes.CHANNELS_KEPT`.

Usage: ``python benchmarks/sealing_memory.py [--parties 1000] [--d 1000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def one(m: int, d: int, sealed: bool) -> dict[str, object]:
    """One run in this process: wall and CPU seconds, peak RSS."""
    import numpy as np

    from parties.party import site_parties
    from protocols.secure_sum import secure_sum
    from sim.network import Network
    from sim.simulation import Simulation

    rng = np.random.default_rng(1)
    inputs = [{"x": rng.uniform(0.0, 1.0, d)} for _ in range(m)]

    def program(ctx: object, x: object) -> object:
        return (yield from secure_sum(ctx, x))

    sim = Simulation(Network.build(m), seed=1, sealing=sealed, keys="preshared")
    parties = site_parties(program, inputs)
    cpu0, start = time.process_time(), time.perf_counter()
    sim.run(parties)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"parties": m, "d": d, "sealed": sealed, "wall_s": round(wall, 2),
            "cpu_s": round(cpu, 2), "peak_rss_mb": round(peak),
            "load_average": round(os.getloadavg()[0], 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parties", type=int, default=1000)
    parser.add_argument("--d", type=int, default=1000)
    parser.add_argument("--one", choices=("sealed", "plain"), default=None,
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.parties, args.d, args.one == "sealed")), flush=True)
        return 0
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    for mode in ("plain", "sealed"):
        subprocess.run([sys.executable, __file__, "--parties", str(args.parties), "--d",
                        str(args.d), "--one", mode], cwd=ROOT, env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
