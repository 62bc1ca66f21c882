"""A job for ``mpiexec -n 2``: does a message reach its receiver while its sender computes?

    mpiexec -n 2 python mpi_progress_job.py FLAGS DEADLINE_S SIZE...

Party 0 (rank 0) sends party 1 (rank 1) one message of each SIZE bytes as MPI carries it
(frame, wire header and elements), then computes — a Python loop that never calls into MPI —
until party 1's flag file for that message appears in FLAGS, or DEADLINE_S seconds pass.
Party 1 writes the flag as soon as it has received the message. Rank 0 prints, as JSON, the
sizes of the messages the driver posted and, per message, whether party 0 saw its flag.

MPI starts the way the driver starts it (:data:`sim.drivers.mpi_comm.MPICH_SETTINGS`): this
job imports mpi4py only through the driver.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

from parties.party import Party
from protocols import wire
from protocols.effects import Recv, Send
from sim.drivers import mpi_transfer
from sim.network import Network
from sim.simulation import Simulation

PROTOCOL = "progress"


def payload_sizes(sizes: list[int]) -> list[int]:
    """Elements (uint8) of a payload whose message is each of ``sizes`` bytes."""
    head = len(wire.encoded_head(np.zeros(1, dtype=np.uint8))[0])
    return [size - mpi_transfer.data_offset(len(PROTOCOL), len(f"s{i}")) - head
            for i, size in enumerate(sizes)]


def main(flags: Path, deadline_s: float, sizes: list[int]) -> int:
    elements = payload_sizes(sizes)

    def program(ctx):
        call = ctx.new_call(PROTOCOL)
        seen = []
        for i, n in enumerate(elements):
            if ctx.party == 1:
                yield Recv(0, call, f"s{i}")
                (flags / str(i)).touch()
                continue
            yield Send(1, np.zeros(n, dtype=np.uint8), call, f"s{i}")
            flag, end = flags / str(i), time.monotonic() + deadline_s
            while not flag.exists() and time.monotonic() < end:
                pass  # computing: no effect, so no call into MPI
            seen.append(flag.exists())
        return seen

    posted = []
    framed = mpi_transfer.Framing.framed

    def counted(self, *args, **kwargs):
        buffer, view, at = framed(self, *args, **kwargs)
        posted.append(len(buffer))
        return buffer, view, at

    mpi_transfer.Framing.framed = counted
    result = Simulation(Network.build(2), seed=1, driver="mpi", sealing=False,
                        keys="none").run([Party(p, program, {}) for p in range(2)])
    from mpi4py import MPI  # started by the driver by now

    if MPI.COMM_WORLD.Get_rank() == 0:
        sys.stdout.write(json.dumps({"posted": posted, "seen": result.outputs[0]}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), float(sys.argv[2]),
                          [int(v) for v in sys.argv[3:]]))
