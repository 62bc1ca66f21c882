"""The claims table: ``python benchmarks/claims.py ARGS`` is ``mpcsim claims ARGS``
(:mod:`sim.claims`, :mod:`sim.claims.command`).

Usage::

    python benchmarks/claims.py --json        # JSON lines, one per claim
    python benchmarks/claims.py --markdown    # the README's reproduction table
    python benchmarks/claims.py --only C9,C15 --quick
    python benchmarks/claims.py --json --jobs 2   # two processes, rows in the table's order
"""

from __future__ import annotations

import sys

from sim.cli import main

if __name__ == "__main__":
    sys.exit(main(["claims", *sys.argv[1:]]))
