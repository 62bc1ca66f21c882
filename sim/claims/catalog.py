"""The claims table's catalogue: every claim of every seed, and :func:`claims` to run them.

See :mod:`sim.claims` for what the table holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from protocols.errors import InputError
from sim.claims.recorded import RECORDED
from sim.claims.seed000 import CLAIMS_000
from sim.claims.seed001 import CLAIMS_001
from sim.claims.seed002 import CLAIMS_002
from sim.claims.seed003 import CLAIMS_003
from sim.claims.seed004 import CLAIMS_004
from sim.claims.table import STATUSES, Claim, Outcome, markdown, rows, text

__all__ = ["CLAIMS", "RECORDED", "STATUSES", "Claim", "Outcome", "check_ids", "claims",
           "markdown", "text"]

CLAIMS: tuple[Claim, ...] = CLAIMS_001 + CLAIMS_000 + CLAIMS_002 + CLAIMS_003 + CLAIMS_004


def check_ids(only: Sequence[str] | None) -> list[str]:
    """The claim ids named (stripped, empty ones dropped); an unknown id is an InputError."""
    ids = [i.strip() for i in (only or ()) if i.strip()]
    known = [c.id for c in CLAIMS]
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise InputError(f"unknown claim id(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return ids


def claims(only: Sequence[str] | None = None, quick: bool = False,
           progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run the claims table (every claim, or those in ``only``) and return its rows.

    ``quick`` reports the recorded outcome of the expensive claims instead of measuring them.
    ``progress`` is called with each row as it is done. BLAS runs on one thread, as in the
    measurements the README reports.
    """
    from threadpoolctl import threadpool_limits

    ids = check_ids(only)
    done = []
    with threadpool_limits(limits=1):
        for row in rows(CLAIMS, ids, quick=quick, recorded=RECORDED):
            done.append(row)
            if progress is not None:
                progress(row)
    return done
