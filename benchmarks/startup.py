"""How fast the command line answers: ``--help``, ``list``, argument and scenario errors.

Prints one JSON line per command: the minimum and median wall time of whole processes over
interleaved repetitions (the machines are shared and noisy), the same for a bare
``python -c pass`` (the interpreter's own start), the ratio of the medians, the median CPU
time (user + system, which the load on a shared machine inflates much less than wall time)
and the load average. The target for
``--help``, ``list`` and argument errors is under 0.3 s: the catalogue they read declares its
entries as data and imports none of their run code (:mod:`sim.catalog`).

The commands run as an installed ``mpcsim`` does: with Python's bytecode cache (one warm-up
round writes it; ``PYTHONDONTWRITEBYTECODE`` is removed from the children's environment), so
that the figures measure imports, not recompiling every module on every start.

With ``--mpi``, where an MPI job's time before its first call goes instead (issue 32, item 5):
the parts a rank pays for, each as a whole process — the interpreter, ``numpy``, ``scipy.stats``
(which the audits load), ``numba``, mpi4py's ``MPI_Init`` under ``mpiexec -n 2``, the run path
(the runner, the simulation, the MPI driver and the SecureSum and PD-NMF entries, as a job
imports them) — and a whole ``mpcsim run --ranks 2`` job of a 4-party SecureSum (x25519 key
agreement, sealed). A figure of the run path that includes
``scipy.stats`` means the audit machinery is loaded by a job that runs no audit.

Usage: ``python benchmarks/startup.py [--repeat N] [--mpi]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MPCSIM = [sys.executable, "-c", "import sys; from sim.cli import main; sys.exit(main())"]
COMMANDS: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import sim.catalog (every entry declared)": [sys.executable, "-c", "import sim.catalog"],
    "mpcsim --help": [*MPCSIM, "--help"],
    "mpcsim list": [*MPCSIM, "list"],
    "mpcsim list pd_nmf": [*MPCSIM, "list", "pd_nmf"],
    "mpcsim run (missing argument)": [*MPCSIM, "run"],
    "mpcsim frobnicate (unknown command)": [*MPCSIM, "frobnicate"],
    "mpcsim run missing.toml (scenario error)": [*MPCSIM, "run", "missing.toml"],
}


MPIEXEC = str(Path(sysconfig.get_path("scripts")) / "mpiexec")
RUN_PATH = ("import sim.runner, sim.simulation, sim.drivers.mpi, sim.experiments.secure_sum, "
            "sim.experiments.nmf.pd_nmf")
SECURE_SUM = """name = "startup"
seed = 1
[network]
parties = 4
[data]
source = "synthetic"
rows = 40
cols = 10
[algorithm]
name = "secure_sum"
"""


def mpi_commands(workdir: Path) -> dict[str, list[str]]:
    """The parts of an MPI job's start (see the module docstring), each a whole process."""
    scenario = workdir / "secure_sum.toml"
    scenario.write_text(SECURE_SUM, encoding="utf-8")
    python = [sys.executable, "-c"]
    two = [MPIEXEC, "-n", "2", sys.executable, "-c"]
    return {
        "python -c pass": [*python, "pass"],
        "import numpy": [*python, "import numpy"],
        "import scipy.stats": [*python, "import scipy.stats"],
        "import numba": [*python, "import numba"],
        "import the run path": [*python, RUN_PATH],
        "import the run path; was scipy.stats loaded (1 = yes)": [
            *python, RUN_PATH + "; import sys; sys.exit(int('scipy.stats' in sys.modules))"],
        "mpiexec -n 2 python -c pass": [*two, "pass"],
        "mpiexec -n 2: MPI_Init (import mpi4py.MPI)": [*two, "from mpi4py import MPI"],
        "mpiexec -n 2: MPI_Init and the run path": [*two, "from mpi4py import MPI; " + RUN_PATH],
        "mpcsim run --ranks 2 (SecureSum, M = 4, x25519, sealed)": [
            *MPCSIM, "run", str(scenario), "--ranks", "2"],
    }


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def once(argv: list[str]) -> tuple[float, float, int]:
    """Wall and CPU (user + system) seconds of one whole process, and its exit status.

    Under ``mpiexec`` the CPU time is the whole job's, every rank's included: the launcher's
    proxy reaps the ranks, and a reaped child's time is counted in its parent's children's.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    return (time.perf_counter() - start, usage.ru_utime + usage.ru_stime,
            os.waitstatus_to_exitcode(status))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--mpi", action="store_true", help="an MPI job's start instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        commands = mpi_commands(Path(tmp)) if args.mpi else COMMANDS
        measure(commands, args.repeat)


def measure(commands: dict[str, list[str]], repeat: int) -> None:
    """Run every command ``repeat`` times, interleaved; one JSON line per command."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    codes: dict[str, int] = {}
    for argv in commands.values():  # warm-up: writes the bytecode cache, not counted
        once(argv)
    for _ in range(repeat):  # interleaved: every round runs every command once
        for name, argv in commands.items():
            wall, used, code = once(argv)
            times[name].append(wall)
            cpu[name].append(used)
            codes[name] = code
    base = statistics.median(times["python -c pass"])
    load = round(os.getloadavg()[0], 1)  # wall time on a shared machine grows with the load
    for name, values in times.items():
        median = statistics.median(values)
        emit(command=name, repeats=repeat, bytecode_cache=True, min_s=round(min(values), 4),
             median_s=round(median, 4), python_start_median_s=round(base, 4),
             ratio_to_python_start=round(median / base, 2),
             cpu_median_s=round(statistics.median(cpu[name]), 4), exit_status=codes[name],
             load_average=load)


if __name__ == "__main__":
    main()
