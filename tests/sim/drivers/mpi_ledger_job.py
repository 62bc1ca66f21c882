"""A job for ``mpiexec``: a scenario run under MPI, counting the ledger rows each rank holds.

    mpiexec -n R python mpi_ledger_job.py SCENARIO.toml OUT_DIR REPORT.json [gathered|fail]

Every rank runs ``run_scenario(SCENARIO, driver="mpi", out=OUT_DIR)`` with the garbage
collector off, so that every :class:`~sim.ledger.Row` alive stays in ``gc.get_objects()`` (a
collection would untrack tuples of atomic values), as does every
:class:`~sim.ledger.RowColumns` (rows kept by column). Just before a rank hands its rows to
the ledger sink (:class:`sim.ledger_store.LedgerSink`), and again after the whole run, it
counts the rows alive in the process, either way, and their senders; it also reports the
number of rows its ledger reads back and its peak resident set size. Rank 0 gathers the reports into
REPORT.json. With ``gathered``, the run gathers every row at every rank as before (no sink):
the measure to compare with. With ``fail``, building the report raises once every rank has
written its rows (the run must then leave no ledger file behind).
"""

from __future__ import annotations

import gc
import json
import resource
import sys
from pathlib import Path
from typing import Any

from sim import ledger_store
from sim.drivers.mpi_comm import load_mpi
from sim.ledger import Row, RowColumns
from sim.runner import run_scenario
from sim.view_store import ViewScratch

MPI = load_mpi()  # MPICH as the driver starts it (MPICH_SETTINGS)


def alive() -> dict[str, Any]:
    objects = gc.get_objects()
    rows = [o for o in objects if type(o) is Row]
    rows += [r for o in objects if type(o) is RowColumns for r in o]
    return {"rows": len(rows), "senders": sorted({r.sender for r in rows})}


def main() -> int:
    gc.disable()
    scenario, out, report = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    comm = MPI.COMM_WORLD
    at_sink: list[dict[str, Any]] = []
    write = ledger_store.LedgerSink.__call__

    def counting(self: ledger_store.LedgerSink, rows: RowColumns) -> Any:
        at_sink.append({**alive(), "handed": len(rows)})
        return write(self, rows)

    ledger_store.LedgerSink.__call__ = counting  # type: ignore[method-assign]
    if sys.argv[4:] == ["gathered"]:  # the run as before: every row at every rank
        ViewScratch.ledger_sink = lambda self: None  # type: ignore[method-assign,assignment]
    if sys.argv[4:] == ["fail"]:
        from sim import report as report_module

        def failing(*args: Any, **kwargs: Any) -> Any:
            sys.stderr.write(f"rows written: {at_sink}\n")
            raise RuntimeError("the report fails after the ledger was written")

        report_module.build_report = failing  # type: ignore[assignment]
    run = run_scenario(scenario, driver="mpi", out=out)  # held: its ledger stays reachable
    after = alive()
    ledger = run.run.result.ledger
    read_back = len(list(ledger))  # read from the file (or memory), then dropped
    reports = comm.gather({"rank": comm.Get_rank(), "at_sink": at_sink, "after": after,
                           "length": len(ledger), "read_back": read_back,
                           "kind": type(ledger).__name__,
                           "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
                           / 1024}, root=0)
    if comm.Get_rank() == 0:
        report.write_text(json.dumps(sorted(reports, key=lambda r: r["rank"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
