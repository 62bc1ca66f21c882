"""The ``mpcsim`` command line.

::

    mpcsim run SCENARIO [--out DIR] [--json] [--seed N] [--quiet] [--driver simpy|mpi]
                        [--ranks R]
    mpcsim list

A user's mistake — a bad scenario key, a missing data file, a value too large for the field —
prints one line ``error: ...`` on stderr and exits with status 2. A party that fails during
the run (an abort) prints one ``error:`` line naming the party and the call, and exits with
status 1; a run that an injected ``[[fault]]`` aborted prints its report (``outcome``,
``faults``) and exits with status 1. Progress of long runs goes to stderr (``--quiet`` turns it
off); results go to stdout.

``--driver mpi`` runs the parties on the MPI ranks of the job this process belongs to
(``mpiexec -n R mpcsim run S --driver mpi``); rank 0 alone prints and writes. ``--ranks R``
starts that job itself with the ``mpiexec`` of the installed MPICH (the ``mpi`` extra),
passing ``-disable-auto-cleanup`` so that a rank killed by a signal is reported by rank 0
rather than ending the job silently.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import sysconfig
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from protocols.errors import InputError, ProtocolAbort
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
    run.add_argument("--driver", choices=("simpy", "mpi"), default="simpy",
                     help="simpy: one process, simulated network (default); mpi: the ranks of "
                     "this MPI job (needs the mpi extra)")
    run.add_argument("--ranks", type=int, metavar="R", help="start R MPI ranks with the "
                     "installed mpiexec (implies --driver mpi)")
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
        if args.ranks is not None:
            return _launch(args.ranks, argv if argv is not None else sys.argv[1:])
        reporting = _reporting(args.driver)
        progress = None if args.quiet or not reporting else StderrProgress(sys.stderr)
        run = run_scenario(args.scenario, seed=args.seed, progress=progress,
                           driver=args.driver)
        if not run.reporting:
            return 0
        if args.out:
            written = run.write(args.out)
            if not args.quiet:
                sys.stderr.write(f"wrote {', '.join(p.name for p in written)} to {args.out}\n")
        sys.stdout.write(to_json(run.report) if args.json else run.format())
        aborted = run.report.get("outcome", {}).get("completed") is False  # by a [[fault]]
        return 1 if aborted else 0
    except InputError as exc:
        _error(exc, args)
        return 2
    except ProtocolAbort as exc:
        _error(exc, args)
        if getattr(exc, "report", None) is not None:  # a rank is gone: MPI cannot finalise
            from sim.drivers.mpi import exit_lost

            exit_lost()
        return 1


def _reporting(driver: str) -> bool:
    """Whether this process prints (every process under SimPy, rank 0 under MPI)."""
    if driver != "mpi":
        return True
    from sim.drivers.mpi import is_root

    try:
        return is_root()
    except InputError:  # no MPI: this lone process reports that
        return True


def _error(exc: Exception, args: argparse.Namespace) -> None:
    """Print the one ``error:`` line, from the one process that reports."""
    lost_report = getattr(exc, "report", None)
    if lost_report is False or (lost_report is None and args.command == "run"
                                and args.ranks is None and not _reporting(args.driver)):
        return
    message = " ".join(str(exc).split())
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


def _launch(ranks: int, argv: Sequence[str]) -> int:
    """Run this command on ``ranks`` MPI ranks with the installed MPICH's ``mpiexec``."""
    if ranks < 1:
        raise InputError(f"--ranks {ranks} must be at least 1")
    mpiexec = Path(sysconfig.get_path("scripts")) / "mpiexec"
    if not mpiexec.exists():
        from sim.drivers.mpi import EXTRA_HINT

        raise InputError(f"--ranks needs MPICH's mpiexec, which is not installed; install "
                         f"the MPI extra with {EXTRA_HINT}")
    rest = list(argv)
    for i, arg in enumerate(rest):  # drop --ranks R / --ranks=R and any --driver
        if arg.startswith("--ranks"):
            del rest[i:i + (1 if "=" in arg else 2)]
            break
    command = [str(mpiexec), "-disable-auto-cleanup", "-n", str(ranks), sys.executable,
               "-m", "sim.cli", *rest, "--driver", "mpi"]
    # stderr is relayed line by line, so that a job that ends before rank 0 could report
    # (a rank killed while it starts) still ends with one error line
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as job:
        assert job.stderr is not None
        reported = False
        for line in job.stderr:
            reported |= line.startswith("error:")
            sys.stderr.write(line)
            sys.stderr.flush()
        code = job.wait()
    if code != 0 and not reported:
        sys.stderr.write(f"error: the MPI job of {ranks} ranks ended with status {code} before "
                         "rank 0 could report (a rank died while starting?)\n")
    return 0 if code == 0 else (code if code in (1, 2) else 1)


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
