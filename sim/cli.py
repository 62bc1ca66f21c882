"""The ``mpcsim`` command line.

::

    mpcsim run SCENARIO [--out DIR] [--json] [--seed N] [--quiet] [--driver simpy|mpi]
                        [--ranks R]
    mpcsim list [ALGORITHM]
    mpcsim claims [--json | --markdown] [--only IDS] [--quick] [--quiet]

A user's mistake — a bad scenario key, a missing data file, a value too large for the field, an
output directory that cannot be written, a run too large for the memory — prints one line
``error: ...`` on stderr and exits with status 2, before the run starts whenever it can be
known then. A party that fails during the run (an abort) prints one ``error:`` line naming the
party and the call, and exits with status 1; a run that an injected ``[[fault]]`` aborted
prints its report (``outcome``, ``faults``) and exits with status 1. Progress goes to stderr
(``--quiet`` turns it off): the estimated cost first, then a line every second for the first
seconds and at least every ten seconds after (:class:`StderrProgress`); results go to stdout.

SIGINT and SIGTERM end a run with one line ``interrupted after N s; nothing written`` and exit
status 130 or 143 (:mod:`sim.interrupt`), on every MPI rank too. ``--out DIR`` is locked from
before the run until its files are in place (:mod:`sim.ownership`): a second run into it ends
at once with an ``error:`` line. ``--driver simpy`` with ``--ranks``, and more ranks than the
scenario's participants could use, are refused before any process starts.

``--driver mpi`` runs the parties on the MPI ranks of the job this process belongs to
(``mpiexec -n R mpcsim run S --driver mpi``); rank 0 alone prints and writes. ``--ranks R``
starts that job itself with the ``mpiexec`` of the installed MPICH (the ``mpi`` extra),
passing ``-disable-auto-cleanup`` so that a rank killed by a signal is reported by rank 0
rather than ending the job silently.

Launching ``mpiexec`` and supervising a rank under MPICH's Hydra is
:mod:`sim.drivers.launch`'s.

Heavy modules (numpy, scipy, the simulator) are imported only by the command that needs them,
so that ``--help``, ``list`` and argument errors answer at once (``benchmarks/startup.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from protocols.errors import InputError, ProtocolAbort
from sim.interrupt import Interrupted, deferred, interruptible

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"
ANNOUNCE_S = 2.0
"""Runs estimated to take this long are announced with their estimate before they start;
shorter ones print it only if they are still running after a second."""


MAX_BEAT_S = 10.0
"""The longest silence of a running simulation's progress on stderr (after its first second)."""

class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see `mpcsim --help`)\n")
        raise SystemExit(2)


class StderrProgress:
    """Progress on a stream: stage lines at most every half second, and a heartbeat.

    ``progress(stage, done, total)`` writes ``stage: done/total``. Between :meth:`start` and
    :meth:`stop`, a background thread calls :meth:`tick` every quarter of ``every`` seconds,
    which writes ``label: N s elapsed`` whenever no line was written for ``every`` seconds at
    first, then for a quarter of the time elapsed, but never more than ``longest`` (by default
    :data:`MAX_BEAT_S`): a line every second in the first seconds, and no silence longer than
    ten seconds in an hour-long run, without a line every second for an hour. ``clock`` is
    the time source (injected by tests).
    """

    def __init__(self, stream: TextIO, every: float = 1.0, longest: float = MAX_BEAT_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.every = every
        self.longest = max(longest, every)
        self.clock = clock
        self.last = 0.0
        self.began = 0.0
        self.label = ""
        self.estimate = ""
        self.announced = True
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()
            self.last = self.clock()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if done == total or self.clock() - self.last >= 0.5:
            self._write(f"{stage}: {done}/{total}")

    def start(self, label: str, estimate: str, announce: bool = True,
              background: bool = True) -> None:
        """Announce the run and its estimate (now, or after ``every`` s); beat until :meth:`stop`.

        With ``announce`` off, a run that ends (or fails) within ``every`` seconds prints
        nothing on the stream. With ``background`` off no thread beats: the caller calls
        :meth:`tick`.
        """
        self.began = self.clock()
        self.label, self.estimate, self.announced = label, estimate, announce
        if announce:
            self._write(f"{label}: {estimate}")
        else:
            self.last = self.began
        if not background:
            return

        def beat() -> None:
            while not self._done.wait(self.every / 4):
                self.tick()

        self._thread = threading.Thread(target=beat, name="mpcsim-progress", daemon=True)
        self._thread.start()

    def gap(self, elapsed: float) -> float:
        """The longest silence allowed ``elapsed`` seconds into the run."""
        return max(self.every, min(self.longest, elapsed / 4))

    def tick(self) -> None:
        """Write the heartbeat if it is due now."""
        now = self.clock()
        if now - self.last >= self.gap(now - self.began):
            elapsed = f"{now - self.began:.0f} s elapsed"
            self._write(f"{self.label}: {elapsed}" if self.announced
                        else f"{self.label}: {elapsed}; {self.estimate}")
            self.announced = True

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mpcsim", description="Simulate secure multi-party computation.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    run = sub.add_parser("run", help="run a scenario")
    run.add_argument("scenario", help="a scenario TOML file")
    run.add_argument("--out", metavar="DIR", help="write report.json, outputs.npz, ledger.csv "
                     "and plots into DIR (a new directory, or an earlier run's output)")
    run.add_argument("--json", action="store_true", help="print report.json on stdout")
    run.add_argument("--seed", type=int, metavar="N", help="override the scenario's seed")
    run.add_argument("--quiet", action="store_true", help="no progress on stderr")
    run.add_argument("--driver", choices=("simpy", "mpi"),
                     help="simpy: one process, simulated network (default); mpi: the ranks of "
                     "this MPI job (needs the mpi extra)")
    run.add_argument("--ranks", type=int, metavar="R", help="start R MPI ranks with the "
                     "installed mpiexec (implies --driver mpi)")
    listing = sub.add_parser("list", help="list algorithms and scenarios, or an algorithm's keys")
    listing.add_argument("algorithm", nargs="?", help="show this algorithm's scenario keys")
    from sim.claims.command import add_arguments

    add_arguments(sub.add_parser("claims", help="run the papers' claims table (sim.claims)"))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    with interruptible():
        try:
            return _main(args, argv)
        except Interrupted as exc:
            return _interrupted(exc, args)


def _main(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    try:
        if args.command == "list":
            sys.stdout.write(_list(args.algorithm))
            return 0
        if args.command == "claims":
            from sim.claims.command import run as run_claims

            return run_claims(args)
        if args.ranks is not None:
            if args.driver == "simpy":
                raise InputError(f"--driver simpy runs one process on a simulated network and "
                                 f"--ranks {args.ranks} starts MPI ranks; give one of them")
            return _launch(args.ranks, argv if argv is not None else sys.argv[1:],
                           args.scenario)
        args.driver = args.driver or "simpy"
        if args.driver == "mpi":
            from sim.drivers.launch import started_by_hydra, supervise_rank

            if started_by_hydra():
                armed = supervise_rank()  # returns in the child, which runs the rank
                from sim.drivers.liveness import ARMED_FD_ENV

                os.environ[ARMED_FD_ENV] = str(armed)
        return _run(args, cap_memory=argv is None)
    except InputError as exc:
        _error(exc, args)
        return 2
    except ProtocolAbort as exc:
        _error(exc, args)
        if getattr(exc, "report", None) is not None:  # a rank is gone: MPI cannot finalise
            from sim.drivers.launch import exit_lost

            exit_lost()
        return 1


def _interrupted(exc: Interrupted, args: argparse.Namespace) -> int:
    """SIGINT or SIGTERM: one line from the reporting process; exit ``128 + signal``.

    Under MPI every rank ends at once, without MPI finalisation (its peers may be waiting on a
    message of it): :func:`sim.drivers.launch.exit_interrupted`.
    """
    mpi_rank = args.command == "run" and args.ranks is None and args.driver == "mpi"
    if not mpi_rank or _interrupted_root():
        sys.stderr.write(exc.line(exc.written) + "\n")
        sys.stderr.flush()
    if mpi_rank:
        from sim.drivers.launch import exit_interrupted

        exit_interrupted(exc.status)
    return exc.status


def _interrupted_root() -> bool:
    """Whether this interrupted MPI rank is rank 0, without starting MPI if it has not started
    (``MPI_Init`` waits for every rank, some of which may have ended): the launcher's
    ``PMI_RANK`` then."""
    mpi = sys.modules.get("mpi4py.MPI")
    if mpi is not None and mpi.Is_initialized() and not mpi.Is_finalized():
        return bool(mpi.COMM_WORLD.Get_rank() == 0)
    return os.environ.get("PMI_RANK", "0") == "0"


def _reporting(driver: str) -> bool:
    """Whether this process prints (every process under SimPy, rank 0 under MPI)."""
    if driver != "mpi":
        return True
    from sim.drivers.mpi_comm import is_root

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


def _launch(ranks: int, argv: Sequence[str], scenario: str) -> int:
    """Check ``--ranks`` against the scenario, then start the job (:mod:`sim.drivers.launch`)."""
    if ranks < 1:
        raise InputError(f"--ranks {ranks} must be at least 1")
    _check_ranks(ranks, scenario)
    from sim.drivers.launch import launch

    return launch(ranks, argv)


def _check_ranks(ranks: int, scenario: str) -> None:
    """Refuse more ranks than the scenario's participants could use (before any starts).

    The participants are the ``network.parties`` data holders and the other roles the entry
    declares for the scenario's ``[algorithm]`` keys (:meth:`sim.entry.Algorithm.participants`:
    CAPE's aggregator and noise generator, a dealer, an aggregator, a server, an analyst); a
    rank beyond them would host nobody. A scenario too malformed to tell is left to the run,
    which names its mistake; an unknown algorithm or key is named here.
    """
    from sim import catalog
    from sim.checks import read_scenario_file

    raw = read_scenario_file(scenario)
    network = raw.get("network")
    parties = network.get("parties") if isinstance(network, dict) else None
    algorithm = raw.get("algorithm")
    if not (isinstance(parties, int) and not isinstance(parties, bool) and parties >= 1
            and isinstance(algorithm, dict)):
        return
    # a mistake here is named before any rank starts; a user's program is found as a run finds it
    entry = catalog.entry_for(algorithm, Path(scenario).resolve().parent)
    roles = entry.other_roles(entry.validate(algorithm))
    most = parties + len(roles)
    if ranks > most:
        others = f" and the {_listing(roles)}" if roles else ""
        raise InputError(
            f"--ranks {ranks} is more than this run can use: {entry.name} with "
            f"network.parties = {parties} has {most} participants ({parties} data "
            f"part{'ies' if parties > 1 else 'y'}{others}), and a rank beyond them would host "
            f"nobody; give --ranks {most} or fewer (at most {most})"
        )


def _listing(names: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _run(args: argparse.Namespace, cap_memory: bool = False) -> int:
    from sim.checks import read_scenario_file

    read_scenario_file(args.scenario)  # a missing or malformed file: before the heavy imports
    from sim.estimate import cap_allocations, out_of_memory, ranks_sharing_memory

    # the program (not a caller's process) caps its address space: a run the estimate
    # misjudged ends in MemoryError and one error line, not in the OOM killer; the ranks of
    # an MPI job on one host divide the memory between them
    share = ranks_sharing_memory() if args.driver == "mpi" else 1
    cap = cap_allocations(share=share) if cap_memory else None
    planned: list = []
    try:
        return _run_checked(args, planned, share)
    except MemoryError:
        raise out_of_memory(cap, planned[0].estimate if planned else None) from None


def _run_checked(args: argparse.Namespace, planned: list, share: int = 1) -> int:
    """:func:`_run` once the scenario file is read: ``--out`` checked and owned, then run."""
    from sim.ownership import OutputBusy, own_out_dir

    reporting = _reporting(args.driver)
    with contextlib.ExitStack() as stack:
        if args.out is not None and reporting:
            # a directory another run holds is refused before the heavy imports, where its
            # parent exists; where it does not, the parents are made only once checked
            early = bool(args.out.strip()) and Path(args.out).absolute().parent.is_dir()
            if early:
                try:
                    owned = stack.enter_context(own_out_dir(args.out))
                except OutputBusy:
                    raise
                except InputError:  # no lock can be made there: check_out_dir says why
                    early = False
            from sim.report import check_out_dir

            check_out_dir(args.out)
            if not early:
                owned = stack.enter_context(own_out_dir(args.out))
            if owned.restored and not args.quiet:
                sys.stderr.write(f"put back {args.out}'s earlier output, which a killed run "
                                 f"had set aside as {owned.restored}\n")
            if owned.cleaned and not args.quiet:
                sys.stderr.write(f"removed {len(owned.cleaned)} staging "
                                 f"director{'ies' if len(owned.cleaned) > 1 else 'y'} of "
                                 f"killed runs into {args.out}\n")
        return _run_owned(args, reporting, planned, share)


def _run_owned(args: argparse.Namespace, reporting: bool, planned: list, share: int = 1) -> int:
    """:func:`_run` once ``--out`` is checked and owned; ``share``: the processes (MPI ranks)
    on this host that divide its memory, each planning the whole run."""
    from sim.estimate import memory_limit
    from sim.report import to_json
    from sim.runner import plan_scenario

    plan = plan_scenario(args.scenario, seed=args.seed,
                         memory_limit=memory_limit(share) if share > 1 else None)
    planned.append(plan)
    import sim.simulation  # noqa: F401 -- loaded before the clock starts, not during the run

    progress = None if args.quiet or not reporting else StderrProgress(sys.stderr)
    if progress is not None:
        progress.start(plan.scenario.name, f"{plan.entry.name} with {plan.scenario.n_parties} "
                       f"parties, estimated {plan.estimate.describe()}",
                       announce=plan.estimate.seconds >= ANNOUNCE_S)
    try:
        run = plan.run(progress, driver=args.driver)
        if not run.reporting:
            return 0
        if args.out is not None:
            finished = False
            try:
                with deferred():  # a signal now: the output is completed, then reported
                    written = run.write(args.out)
                    finished = True
            except Interrupted as exc:
                exc.written = finished
                raise
            if progress is not None:
                progress.stop()
                sys.stderr.write(f"wrote {', '.join(p.name for p in written)} to {args.out}\n")
    finally:
        if progress is not None:
            progress.stop()
    sys.stdout.write(to_json(run.report) if args.json else run.format())
    aborted = run.report.get("outcome", {}).get("completed") is False  # by a [[fault]]
    return 1 if aborted else 0


def _list(name: str | None = None) -> str:
    import tomllib

    from sim import catalog
    from sim.console import table

    if name is not None:
        entry = catalog.get(name)
        rows = [[key, "(left out)" if p.default is None else repr(p.default), p.allowed(),
                 p.help] for key, p in entry.params.items()]
        return (f"{entry.name}: {entry.summary}\n{entry.reference}\n\n"
                + table(["key", "default", "allowed", "meaning"], rows,
                        f"[algorithm] keys of {entry.name}") + "\n")
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
    out.append("")
    out.append("`mpcsim list ALGORITHM` shows an algorithm's scenario keys and their ranges.")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
