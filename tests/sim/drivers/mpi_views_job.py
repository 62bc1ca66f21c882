"""A job for ``mpiexec``: a SecureSum run whose views stay on their ranks (``views="rank"``).

    mpiexec -n R python mpi_views_job.py OUT.json M

Every rank runs M parties' SecureSum twice under the MPI driver — views gathered (the
default) and views kept on their ranks — and rank 0 writes OUT.json: the outputs, each rank's
own parties and the number of views it holds, the merged index (:meth:`RankViews.index`), the
digests of the gathered run's views, the message a rank gets for another rank's view, and the
digests of :meth:`RankViews.gathered`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from parties.party import site_parties
from protocols.secure_sum import secure_sum
from sim.drivers.mpi_comm import load_mpi
from sim.drivers.rank_views import RankViews, ViewElsewhere, view_digest
from sim.network import Network
from sim.simulation import Simulation

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)


def program(ctx, x):
    first = yield from secure_sum(ctx, x)
    return (yield from secure_sum(ctx, first + x))


def main() -> int:
    out, m = Path(sys.argv[1]), int(sys.argv[2])
    comm = MPI.COMM_WORLD
    rng = np.random.default_rng(4)
    inputs = [{"x": rng.uniform(0.0, 1.0, 5)} for _ in range(m)]
    runs = {}
    for views in ("gathered", "rank"):
        sim = Simulation(Network.build(m), seed=11, driver="mpi", views=views)
        runs[views] = sim.run(site_parties(program, inputs))
    kept = runs["rank"].views
    assert isinstance(kept, RankViews)
    local = sorted(kept.local())
    other = next(p for p in sorted(kept) if p not in local)
    try:
        kept[other]
        refused = ""
    except ViewElsewhere as exc:
        refused = str(exc)
    everything = kept.gathered()
    report = {
        "rank": comm.Get_rank(),
        "local": local,
        "held": len(kept.local()),
        "listed": sorted(kept),
        "refused": refused,
        "gathered_digests": {str(p): view_digest(v) for p, v in everything.items()},
    }
    reports = comm.gather(report, root=0)
    index = kept.index()
    if comm.Get_rank() == 0:
        full = runs["gathered"].views
        out.write_text(json.dumps({
            "outputs": {str(p): np.asarray(v).tolist() for p, v in runs["rank"].outputs.items()},
            "outputs_gathered": {str(p): np.asarray(v).tolist()
                                 for p, v in runs["gathered"].outputs.items()},
            "ledger_rows": len(list(runs["rank"].ledger)),
            "index": index,
            "full_digests": {str(p): view_digest(v) for p, v in full.items()},
            "full_received": {str(p): len(v.received) for p, v in full.items()},
            "ranks": reports,
        }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
