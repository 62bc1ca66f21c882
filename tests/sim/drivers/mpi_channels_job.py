"""A job for ``mpiexec``: how many sealed channel ends each rank holds when its run ends.

    mpiexec -n R python mpi_channels_job.py OUT.json M [M ...] [--old]

Every rank runs a sealed SecureSum (x25519 keys, d = 4) among each M parties under the MPI
driver, and counts the :class:`~protocols.crypto.channel.SealedChannel` objects alive in the
process (the garbage collector's list, not the run's own bookkeeping) just before its run
returns, when the run still holds everything it kept. ``--old`` first sets the rank's cap back
to the one every run had before :func:`sim.drivers.envelopes.kept_for` (``CHANNELS_KEPT``).
Rank 0 writes OUT.json: per M, each rank's own parties, the count, and the largest distance of
an output from the inputs' sum computed here with numpy (every sealed message authenticated
under ends dropped and rebuilt, or the run would have aborted).
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path

import numpy as np

import sim.drivers.mpi_rank as mpi_rank
from parties.party import site_parties
from protocols.crypto.channel import SealedChannel
from protocols.secure_sum import secure_sum
from sim.drivers import envelopes
from sim.drivers.mpi_comm import load_mpi
from sim.network import Network
from sim.simulation import Simulation

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)


def program(ctx, x):
    return (yield from secure_sum(ctx, x))


def main() -> int:
    out = Path(sys.argv[1])
    sizes = [int(a) for a in sys.argv[2:] if a != "--old"]
    if "--old" in sys.argv:
        mpi_rank.kept_for = lambda parties: envelopes.CHANNELS_KEPT
    comm = MPI.COMM_WORLD
    counted: list[int] = []
    execute = mpi_rank.Run.execute

    def counting(self):
        outcome = execute(self)
        counted.append(sum(isinstance(o, SealedChannel) for o in gc.get_objects()))
        return outcome

    mpi_rank.Run.execute = counting
    report = {}
    for m in sizes:
        rng = np.random.default_rng(m)
        inputs = [{"x": rng.uniform(0.0, 1.0, 4)} for _ in range(m)]
        result = Simulation(Network.build(m), seed=5, keys="x25519", driver="mpi",
                            views="rank").run(site_parties(program, inputs))
        total = np.sum([i["x"] for i in inputs], axis=0)  # what every party must output
        error = max(float(np.max(np.abs(np.asarray(v) - total)))
                    for v in result.outputs.values())
        report[str(m)] = {"own": len(result.views.local()), "ends": counted[-1],
                          "outputs": len(result.outputs), "max_error": error}
    reports = comm.gather(report, root=0)
    if comm.Get_rank() == 0:
        out.write_text(json.dumps(reports))
    return 0


if __name__ == "__main__":
    sys.exit(main())
