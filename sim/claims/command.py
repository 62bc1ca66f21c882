"""``mpcsim claims``: the claims table on the command line.

Rows go to stdout in the table's order — the text table (default), JSON lines (``--json``,
one per claim as soon as it and those before it are done) or the README's markdown
(``--markdown``); a line per claim goes to stderr as it finishes (in any order) unless
``--quiet``. ``--only C9,C15`` runs those claims; an unknown id, or ``--jobs`` below 1,
is an :class:`~protocols.errors.InputError` (``error:`` line, exit status 2, from
:mod:`sim.cli`). ``--jobs N`` measures the claims in N processes (default: one per core), each
row with its wall and CPU seconds; the rows come out in the table's order either way.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``claims`` subcommand's options."""
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="JSON lines, one per claim")
    out.add_argument("--markdown", action="store_true", help="the README's markdown table")
    parser.add_argument("--only", metavar="IDS", default="",
                        help="comma-separated claim ids, e.g. C9,C15")
    parser.add_argument("--quick", action="store_true", help="report the recorded outcome of "
                        "the expensive claims instead of measuring them")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--jobs", metavar="N", type=int, default=os.cpu_count() or 1,
                        help="measure the claims in N processes (default: the number of "
                        "cores); the rows and their order are those of --jobs 1")


def run(args: argparse.Namespace) -> int:
    """Run the table as ``args`` ask; exit status 0."""
    from sim.claims.catalog import check_ids, claims, markdown, text

    ids = check_ids(args.only.split(","))

    def progress(row: dict[str, Any]) -> None:
        if args.json:
            sys.stdout.write(json.dumps(row, ensure_ascii=False) + "\n")
            sys.stdout.flush()

    def finished(row: dict[str, Any]) -> None:
        if not args.quiet:
            sys.stderr.write(f"{row['id']}: {row['status']} ({row['seconds']:.1f} s, "
                             f"{row['cpu_seconds']:.1f} s CPU)\n")
            sys.stderr.flush()

    done = claims(ids, quick=args.quick, progress=progress, jobs=args.jobs, finished=finished)
    if args.markdown:
        sys.stdout.write(markdown(done) + "\n")
    elif not args.json:
        sys.stdout.write(text(done))
    return 0
