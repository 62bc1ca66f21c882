"""A job for ``mpiexec``: runs scenarios under the MPI driver and writes what rank 0 got.

    mpiexec -n R python mpi_job.py scenarios OUT NAME...   # catalogue scenarios by name
    mpiexec -n R python mpi_job.py raise                   # party 1 raises in its 2nd call
    mpiexec -n R python mpi_job.py tamper                  # a forged message to party 2
    mpiexec -n R python mpi_job.py noviews                 # record_views = False

``scenarios`` writes, per name, ``OUT/NAME/`` (report.json, outputs.npz, ledger.csv) and
``OUT/NAME/views.txt`` (:func:`mpi_catalog.views_digest`), or ``OUT/NAME.error`` with the
error line. The fault modes print rank 0's ``error:`` line and exit 1, as the CLI does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
from mpi4py import MPI

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mpi_catalog import SCENARIOS, views_digest

from parties.party import site_parties
from protocols.errors import MpcsimError
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.runner import run_scenario
from sim.simulation import Simulation

ROOT = MPI.COMM_WORLD.Get_rank() == 0


def scenarios(out: Path, names: list[str]) -> int:
    for name in names:
        try:
            run = run_scenario(SCENARIOS[name], driver="mpi")
        except Exception as exc:  # every rank fails alike; the test reports it
            if ROOT:
                (out / f"{name}.error").write_text(f"error: {type(exc).__name__}: {exc}\n")
            continue
        if ROOT:
            run.write(out / name)
            result = run.run.result
            (out / name / "views.txt").write_text(views_digest(result.views if result else {}))
    return 0


def raising(ctx, x):
    yield from secure_sum(ctx, x)
    if ctx.party == 1:
        raise RuntimeError("planted failure")
    return (yield from secure_sum(ctx, x))


def fault(mode: str) -> int:
    interceptor = None
    program = secure_sum
    if mode == "raise":
        program = raising
    else:
        def interceptor(sender, receiver, tag, data):
            if (sender, receiver) == (0, 2) and tag.startswith("secure_sum"):
                return data[:-1] + bytes([data[-1] ^ 1])
            return data
    sim = Simulation(Network.build(4), seed=3, driver="mpi", interceptor=interceptor)
    inputs = [{"x": np.arange(5.0) + m} for m in range(4)]
    try:
        sim.run(site_parties(program, inputs))
    except MpcsimError as exc:
        if ROOT:
            sys.stderr.write(f"error: {exc}\n")
        return 1
    return 0


def noviews() -> int:
    """SecureSum of 4 parties without message records: rank 0 prints, per party, the messages
    its view holds, then the ledger's rows and the sum party 0 output."""
    sim = Simulation(Network.build(4), seed=3, driver="mpi", record_views=False)
    inputs = [{"x": np.arange(5.0) + m} for m in range(4)]
    result = sim.run(site_parties(secure_sum, inputs))
    if ROOT:
        held = [len(result.views[p].received) for p in range(4)]
        total = np.asarray(result.outputs[0]).tolist()
        sys.stdout.write(json.dumps([held, len(result.ledger), total]) + "\n")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "noviews":
        raise SystemExit(noviews())
    if sys.argv[1] == "scenarios":
        raise SystemExit(scenarios(Path(sys.argv[2]), sys.argv[3:]))
    raise SystemExit(fault(sys.argv[1]))
