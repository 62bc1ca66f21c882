"""The claims table's catalogue: every claim of every seed, and :func:`claims` to run them.

See :mod:`sim.claims` for what the table holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from protocols.errors import InputError
from sim.claims.jobs import in_processes
from sim.claims.recorded import CPU_SECONDS, RECORDED
from sim.claims.seed000 import CLAIMS_000
from sim.claims.seed001 import CLAIMS_001
from sim.claims.seed002 import CLAIMS_002
from sim.claims.seed003 import CLAIMS_003
from sim.claims.seed004 import CLAIMS_004
from sim.claims.table import STATUSES, Claim, Outcome, Runs, markdown, rows, text

__all__ = ["CLAIMS", "RECORDED", "STATUSES", "Claim", "Outcome", "check_ids", "claims",
           "markdown", "text"]

CLAIMS: tuple[Claim, ...] = CLAIMS_001 + CLAIMS_000 + CLAIMS_002 + CLAIMS_003 + CLAIMS_004

SHARED: tuple[tuple[str, ...], ...] = (
    ("C1", "C4"),  # pd_nmf_audit
    ("C2", "C3"),  # quickstart
    ("C7", "Fig. 3.8"),  # pd_svd
    ("C18b", "C18c"),  # corrective_nmf_table2
    ("PCA-1", "PCA-2", "PCA-3", "PCA-4"),  # cape_pca_synthetic_epsilon
    ("OTD-1", "OTD-2", "OTD-4"),  # cape_otd_{mog,stm}_epsilon
)
"""Claims that read the same scenario runs: with ``jobs`` > 1 each group is measured in one
process, so that its runs are done once (:mod:`sim.claims.jobs`)."""

ALONE: tuple[str, ...] = ("C8",)
"""Claims that time their own calls: measured before the other processes start."""


def check_ids(only: Sequence[str] | None) -> list[str]:
    """The claim ids named (stripped, empty ones dropped); an unknown id is an InputError."""
    ids = [i.strip() for i in (only or ()) if i.strip()]
    known = [c.id for c in CLAIMS]
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise InputError(f"unknown claim id(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return ids


def planning_cost(quick: bool) -> dict[str, float]:
    """Each claim's cost for ``jobs`` > 1 to plan by: its CPU seconds in the last measurement
    (:data:`sim.claims.recorded.CPU_SECONDS`); an expensive claim never measured counts as the
    costliest (it is started first), a cheap one as free; with ``quick`` the expensive claims
    are not measured and cost nothing."""
    return {c.id: 0.0 if quick and c.expensive else
            CPU_SECONDS.get(c.id, math.inf if c.expensive else 0.0) for c in CLAIMS}


def measure_group(group: list[str], quick: bool) -> list[dict[str, Any]]:
    """One process's share of ``claims(jobs=N)``: the group's rows, BLAS on one thread, with a
    cache of scenario runs of its own (:mod:`sim.claims.jobs`)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return list(rows(CLAIMS, group, quick=quick, recorded=RECORDED, runs=Runs()))


def claims(only: Sequence[str] | None = None, quick: bool = False,
           progress: Callable[[dict[str, Any]], None] | None = None,
           jobs: int = 1,
           finished: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run the claims table (every claim, or those in ``only``) and return its rows, in the
    catalogue's order.

    ``quick`` reports the recorded outcome of the expensive claims instead of measuring them.
    ``progress`` is called with each row, in the catalogue's order, as soon as it and those
    before it are done. ``jobs`` > 1 measures the claims in that many processes
    (:mod:`sim.claims.jobs`); the rows are the same but for their seconds. BLAS runs on one
    thread in every process, as in the measurements the README reports. One cache of scenario
    runs serves the whole call (one per process with ``jobs`` > 1).
    """
    from threadpoolctl import threadpool_limits

    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs must be a whole number ≥ 1, got {jobs!r}")
    ids = check_ids(only)
    runs = Runs()

    def here(named: list[str]) -> Any:
        return rows(CLAIMS, named, quick=quick, recorded=RECORDED, runs=runs) if named else ()

    done = []
    with threadpool_limits(limits=1):
        if jobs == 1:
            every = rows(CLAIMS, ids, quick=quick, recorded=RECORDED, runs=runs)
        else:
            every = in_processes(CLAIMS, ids, jobs, quick, SHARED, ALONE, planning_cost(quick),
                                 here, measure_group, finished)
        for row in every:
            if jobs == 1 and finished is not None:
                finished(row)
            done.append(row)
            if progress is not None:
                progress(row)
    return done
