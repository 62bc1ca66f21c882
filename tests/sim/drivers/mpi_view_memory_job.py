"""A job for ``mpiexec``: what a rank holds in memory for its views at the end of a run.

    mpiexec -n R python mpi_view_memory_job.py SCENARIO.toml OUT_DIR REPORT.json [memory]
        [mailbox=BYTES]

Every rank runs ``run_scenario(SCENARIO, driver="mpi", out=OUT_DIR)``. When the simulation
hands the views to the rank's view sink (:class:`sim.view_store.ViewSink`, before anything is
written), the rank collects garbage and counts, with the garbage collector, the received-message
records (:class:`parties.view.Message`) alive in the process and the bytes of their payloads,
and measures with ``os.stat`` its hidden spill file in the run's view directory. With
``memory`` the sink's ``prepare`` is skipped: the views record every message in memory, as
before spilling (the control). With ``mailbox=BYTES`` the ranks' mailboxes hold at most BYTES of
unread data in memory (:mod:`sim.drivers.mpi_mailbox`). Each rank also reports the most unread
data its mailboxes held and what they spilled. Rank 0 gathers the reports and writes
REPORT.json.
"""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import sim.drivers.mpi_rank as mpi_rank
from parties.view import Message
from sim import view_store
from sim.drivers import mpi_mailbox
from sim.drivers.mpi_comm import load_mpi
from sim.runner import run_scenario

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)


def main() -> int:
    scenario, out, report = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    comm = MPI.COMM_WORLD
    at_sink: list[dict[str, Any]] = []
    write = view_store.ViewSink.__call__

    def counting(self: view_store.ViewSink, views: Any) -> Any:
        gc.collect()
        held = [o for o in gc.get_objects() if type(o) is Message]
        run_dir = Path(self.root) / f"run-{self.runs}"
        own = sorted(views.local())  # the ranks share the directory: this rank's file
        spilled = [p.stat().st_size
                   for p in run_dir.glob(f".rank-{comm.Get_rank()}.*.received")]
        at_sink.append({"own_parties": len(own), "messages": len(held),
                        "bytes": int(sum(m.payload.nbytes for m in held)),
                        "spill_files": len(spilled), "spilled_bytes": int(sum(spilled))})
        del held
        return write(self, views)

    mailboxes: list[dict[str, int]] = []
    execute = mpi_rank.Run.execute

    def measured(self: mpi_rank.Run) -> Any:
        outcome = execute(self)
        mailboxes.append({"peak": self.mailbox.peak, "spilled": self.mailbox.spilled,
                          "budget": self.mailbox.budget})
        return outcome

    view_store.ViewSink.__call__ = counting  # type: ignore[method-assign]
    mpi_rank.Run.execute = measured  # type: ignore[method-assign]
    options = sys.argv[4:]
    if "memory" in options:  # the control: every message recorded in memory
        view_store.ViewSink.prepare = lambda self, views: None  # type: ignore[method-assign]
    for option in options:
        if option.startswith("mailbox="):
            mpi_mailbox.MAILBOX_BYTES = int(option.split("=")[1])
    run_scenario(scenario, driver="mpi", out=out)
    reports = comm.gather({"rank": comm.Get_rank(), "at_sink": at_sink,
                           "mailbox": mailboxes}, root=0)
    if comm.Get_rank() == 0:
        report.write_text(json.dumps(sorted(reports, key=lambda r: r["rank"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
