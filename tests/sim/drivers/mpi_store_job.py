"""A job for ``mpiexec``: a scenario run under MPI, counting the views each rank holds.

    mpiexec -n R python mpi_store_job.py SCENARIO.toml OUT_DIR REPORT.json [gathered]

Every rank runs ``run_scenario(SCENARIO, driver="mpi", out=OUT_DIR)``. Just before a rank
writes its views to the store (:class:`sim.view_store.ViewSink`), and again after the whole
run, it walks the garbage collector's objects and counts the :class:`~parties.view.View`
objects alive in the process: their parties and the bytes of their received payloads held in
memory (a payload mapped from a view file is on disk, not counted), then reads every party's
view back (rank 0: the ranks other than 0 do no post-run work, and the staging directory
their store reads is removed once rank 0 has written ``--out``) and says from which
directory. Each rank also reports its peak resident set size (``resource.getrusage``). Rank 0
gathers the reports and writes REPORT.json. With ``gathered``, the run keeps every view at
every rank as before issue 32 (``views = "gathered"``, no store): the measure to compare with.
"""

from __future__ import annotations

import gc
import json
import mmap
import resource
import sys
from pathlib import Path
from typing import Any

import numpy as np

from parties.view import View
from sim import view_store
from sim.drivers.mpi_comm import load_mpi
from sim.runner import run_scenario
from sim.view_store import ViewScratch

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)


def mapped(arr: np.ndarray) -> bool:
    base: Any = arr
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, mmap.mmap)


def resident() -> dict[str, Any]:
    gc.collect()
    views = [o for o in gc.get_objects() if type(o) is View]
    held = [v for v in views if any(not mapped(m.payload) for m in v.received)]
    return {"parties": sorted({v.party for v in held}),
            "bytes": int(sum(m.payload.nbytes for v in held for m in v.received
                             if not mapped(m.payload)))}


def main() -> int:
    scenario, out, report = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    comm = MPI.COMM_WORLD
    at_sink: list[dict[str, Any]] = []
    write = view_store.ViewSink.__call__

    def counting(self: view_store.ViewSink, views: Any) -> Any:
        at_sink.append(resident())
        return write(self, views)

    view_store.ViewSink.__call__ = counting  # type: ignore[method-assign]
    if sys.argv[4:] == ["gathered"]:  # the run as before: no store, every view everywhere
        ViewScratch.make = classmethod(lambda cls, beside: None)  # type: ignore[method-assign]
    run = run_scenario(scenario, driver="mpi", out=out)  # held: its views stay reachable
    after = resident()
    views = run.run.result.views
    where = str(getattr(views, "directory", ""))
    readable = []  # rank 0 reads every view back from disk; the others' staging copy is gone
    if comm.Get_rank() == 0:
        readable = sorted(p for p in views if len(views[p].received) > 0)
    del run, views
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reports = comm.gather({"rank": comm.Get_rank(), "at_sink": at_sink, "after": after,
                           "store": where, "readable": readable,
                           "peak_rss_mb": peak_kb / 1024}, root=0)
    if comm.Get_rank() == 0:
        report.write_text(json.dumps(sorted(reports, key=lambda r: r["rank"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
