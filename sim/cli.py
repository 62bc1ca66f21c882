"""The ``mpcsim`` command line.

::

    mpcsim run SCENARIO [--out DIR] [--json] [--seed N] [--quiet]
    mpcsim list

A user's mistake — a bad scenario key, a missing data file, a value too large for the field —
prints one line ``error: ...`` on stderr and exits with status 2. Progress of long runs goes to
stderr (``--quiet`` turns it off); results go to stdout. A run that an injected ``[[fault]]``
aborted prints its report (``outcome``, ``faults``) and exits with status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from protocols.errors import InputError
from sim import catalog
from sim.report import table, to_json
from sim.runner import run_scenario

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see `mpcsim --help`)\n")
        raise SystemExit(2)


class StderrProgress:
    """Prints ``stage done/total`` lines on stderr at most every half second."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == total or now - self.last >= 0.5:
            self.last = now
            self.stream.write(f"{stage}: {done}/{total}\n")
            self.stream.flush()


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mpcsim", description="Simulate secure multi-party computation.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run a scenario")
    run.add_argument("scenario", help="a scenario TOML file")
    run.add_argument("--out", metavar="DIR", help="write report.json, outputs.npz, ledger.csv "
                     "and plots into DIR")
    run.add_argument("--json", action="store_true", help="print report.json on stdout")
    run.add_argument("--seed", type=int, metavar="N", help="override the scenario's seed")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    sub.add_parser("list", help="list algorithms and scenarios")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "list":
            sys.stdout.write(_list())
            return 0
        if args.seed is not None and args.seed < 0:
            raise InputError(f"--seed {args.seed} must be a non-negative integer")
        progress = None if args.quiet else StderrProgress(sys.stderr)
        run = run_scenario(args.scenario, seed=args.seed, progress=progress)
        if args.out:
            written = run.write(args.out)
            if not args.quiet:
                sys.stderr.write(f"wrote {', '.join(p.name for p in written)} to {args.out}\n")
        sys.stdout.write(to_json(run.report) if args.json else run.format())
        aborted = run.report.get("outcome", {}).get("completed") is False  # by a [[fault]]
        return 1 if aborted else 0
    except InputError as exc:
        message = " ".join(str(exc).split())
        sys.stderr.write(f"error: {message}\n")
        return 2


def _list() -> str:
    rows = [[a.name, a.summary, a.reference] for a in catalog.algorithms().values()]
    out = [table(["algorithm", "what it runs", "reference"], rows, "algorithms"), ""]
    scen_rows = []
    for path in sorted(SCENARIO_DIR.glob("*.toml")):
        try:
            raw = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        alg = raw.get("algorithm", {}).get("name", "?")
        scen_rows.append([path.name, alg, raw.get("description", "")])
    out.append(table(["scenario", "algorithm", "description"], scen_rows,
                     f"scenarios in {SCENARIO_DIR}"))
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
