"""The ``mpcsim`` command line.

::

    mpcsim run SCENARIO [--out DIR] [--json] [--seed N] [--quiet] [--driver simpy|mpi]
                        [--ranks R]
    mpcsim list [ALGORITHM]

A user's mistake — a bad scenario key, a missing data file, a value too large for the field, an
output directory that cannot be written, a run too large for the memory — prints one line
``error: ...`` on stderr and exits with status 2, before the run starts whenever it can be
known then. A party that fails during the run (an abort) prints one ``error:`` line naming the
party and the call, and exits with status 1; a run that an injected ``[[fault]]`` aborted
prints its report (``outcome``, ``faults``) and exits with status 1. Progress goes to stderr
(``--quiet`` turns it off): the estimated cost first, then a line at least every few seconds;
results go to stdout.

``--driver mpi`` runs the parties on the MPI ranks of the job this process belongs to
(``mpiexec -n R mpcsim run S --driver mpi``); rank 0 alone prints and writes. ``--ranks R``
starts that job itself with the ``mpiexec`` of the installed MPICH (the ``mpi`` extra),
passing ``-disable-auto-cleanup`` so that a rank killed by a signal is reported by rank 0
rather than ending the job silently.

A rank under MPICH's Hydra runs in a child of the process Hydra started, which only waits for
it (:func:`_supervise_rank`). Hydra's per-host proxy, ``-disable-auto-cleanup`` or not,
SIGKILLs every process it started on its host as soon as it reaps one that a signal ended
(``waitpid`` in the proxy's event loop, ``PMIP_bcast_signal(SIGKILL)``): a rank killed there
took rank 0 with it, before rank 0 could read the death on its liveness connection
(:mod:`sim.drivers.mpi`) whenever the proxy ran first — often on a loaded machine. The
waiting parent ends with ``128 + N`` when its rank died by signal N, an ordinary exit to the
proxy, so the other ranks live on to report. It does so only while the rank has said on a
pipe that its death would be reported (its liveness connections are up); a rank killed while
starting or finishing, which no other rank would notice, the parent follows by the same
signal, so that the proxy ends the job as before and the launcher reports. It ignores SIGUSR1
(the proxy's notice to the survivors that a process of the job ended, which MPICH handles in
the rank) and SIGINT (the proxy delivers it to the rank's whole process group), and passes
SIGTERM on to its rank.

Heavy modules (numpy, scipy, the simulator) are imported only by the command that needs them,
so that ``--help``, ``list`` and argument errors answer at once (``benchmarks/startup.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn, TextIO

from protocols.errors import InputError, ProtocolAbort

SCENARIO_DIR = Path(__file__).resolve().parent.parent / "scenarios"
ANNOUNCE_S = 2.0
"""Runs estimated to take this long are announced with their estimate before they start;
shorter ones print it only if they are still running after a second."""


MAX_BEAT_S = 60.0
"""The longest silence of a running simulation's progress on stderr."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"error: {message} (see `mpcsim --help`)\n")
        raise SystemExit(2)


class StderrProgress:
    """Progress on a stream: stage lines at most every half second, and a heartbeat.

    ``progress(stage, done, total)`` writes ``stage: done/total``. Between :meth:`start` and
    :meth:`stop`, a background thread writes ``label: N s elapsed`` whenever no line was written
    for ``every`` seconds at first, then for a quarter of the time elapsed (at most
    :data:`MAX_BEAT_S`), so a long simulation shows progress from its first second even when
    the algorithm reports no stages, without a line every second for an hour.
    """

    def __init__(self, stream: TextIO, every: float = 1.0) -> None:
        self.stream = stream
        self.every = every
        self.last = 0.0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text + "\n")
            self.stream.flush()
            self.last = time.monotonic()

    def __call__(self, stage: str, done: int, total: int) -> None:
        if done == total or time.monotonic() - self.last >= 0.5:
            self._write(f"{stage}: {done}/{total}")

    def start(self, label: str, estimate: str, announce: bool = True) -> None:
        """Announce the run and its estimate (now, or after ``every`` s); beat until :meth:`stop`.

        With ``announce`` off, a run that ends (or fails) within ``every`` seconds prints
        nothing on the stream.
        """
        began = time.monotonic()
        if announce:
            self._write(f"{label}: {estimate}")
        else:
            self.last = began

        def beat() -> None:
            announced = announce
            while not self._done.wait(self.every / 4):
                now = time.monotonic()
                # every second at first, then less often: a quarter of the time elapsed, at
                # most a minute apart
                if now - self.last >= max(self.every, min(MAX_BEAT_S, (now - began) / 4)):
                    elapsed = f"{now - began:.0f} s elapsed"
                    self._write(f"{label}: {elapsed}" if announced
                                else f"{label}: {elapsed}; {estimate}")
                    announced = True

        self._thread = threading.Thread(target=beat, name="mpcsim-progress", daemon=True)
        self._thread.start()

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
    run.add_argument("--driver", choices=("simpy", "mpi"), default="simpy",
                     help="simpy: one process, simulated network (default); mpi: the ranks of "
                     "this MPI job (needs the mpi extra)")
    run.add_argument("--ranks", type=int, metavar="R", help="start R MPI ranks with the "
                     "installed mpiexec (implies --driver mpi)")
    listing = sub.add_parser("list", help="list algorithms and scenarios, or an algorithm's keys")
    listing.add_argument("algorithm", nargs="?", help="show this algorithm's scenario keys")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "list":
            sys.stdout.write(_list(args.algorithm))
            return 0
        if args.ranks is not None:
            return _launch(args.ranks, argv if argv is not None else sys.argv[1:])
        if args.driver == "mpi" and _started_by_hydra():
            armed = _supervise_rank()  # returns in the child, which runs the rank
            from sim.drivers.mpi import ARMED_FD_ENV

            os.environ[ARMED_FD_ENV] = str(armed)
        return _run(args, cap_memory=argv is None)
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


HYDRA_PROXY = "hydra_pmi_proxy"
"""The process name of MPICH Hydra's per-host proxy, the parent of the processes it starts."""


def _started_by_hydra() -> bool:
    """Whether this process's parent is MPICH Hydra's proxy (``/proc``; false elsewhere)."""
    try:
        comm = Path(f"/proc/{os.getppid()}/comm").read_text(encoding="utf-8")
    except OSError:
        return False
    return comm.strip() == HYDRA_PROXY


def _supervise_rank() -> int:
    """Run this MPI rank in a child process; in the parent, wait for it and exit as it did.

    Returns in the child only, before MPI is initialised (see the module docstring for why):
    the write end of a pipe on which the rank says whether its death would be reported
    (:data:`sim.drivers.mpi.ARMED_FD_ENV`). The parent exits with the child's exit status,
    or ``128 + N`` if signal N ended the child while armed; a death by a signal that nobody
    would report (starting, finishing) the parent repeats on itself, so that Hydra ends the
    job as it would have without it.
    """
    ignored = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGUSR1, signal.SIGINT)}
    said, armed = os.pipe()
    child = os.fork()
    if child == 0:
        os.close(said)
        for sig, handler in ignored.items():
            signal.signal(sig, handler)
        return armed
    os.close(armed)

    def pass_on(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    signal.signal(signal.SIGTERM, pass_on)
    _, status = os.waitpid(child, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        os.set_blocking(said, False)
        states = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(said, 4096):
                states += chunk
        if not states.endswith(b"A"):  # sim.drivers.mpi.ARMED, not imported in this process
            with contextlib.suppress(OSError, ValueError):  # SIGKILL's action is fixed
                signal.signal(-code, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [-code])
            os.kill(os.getpid(), -code)
    os._exit(code if code >= 0 else 128 - code)


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


def _run(args: argparse.Namespace, cap_memory: bool = False) -> int:
    from sim.checks import read_scenario_file

    read_scenario_file(args.scenario)  # a missing or malformed file: before the heavy imports
    from sim.estimate import cap_allocations, out_of_memory

    # the program (not a caller's process) caps its address space: a run the estimate
    # misjudged ends in MemoryError and one error line, not in the OOM killer
    cap = cap_allocations() if cap_memory else None
    planned: list = []
    try:
        return _run_planned(args, planned)
    except MemoryError:
        raise out_of_memory(cap, planned[0].estimate if planned else None) from None


def _run_planned(args: argparse.Namespace, planned: list) -> int:
    from sim.report import check_out_dir, to_json
    from sim.runner import plan_scenario

    reporting = _reporting(args.driver)
    if args.out is not None and reporting:
        check_out_dir(args.out)
    plan = plan_scenario(args.scenario, seed=args.seed)
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
            written = run.write(args.out)
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
