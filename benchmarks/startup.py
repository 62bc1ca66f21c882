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

Usage: ``python benchmarks/startup.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
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


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def once(argv: list[str]) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one whole process."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    cpu: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for argv in COMMANDS.values():  # warm-up: writes the bytecode cache, not counted
        once(argv)
    for _ in range(args.repeat):  # interleaved: every round runs every command once
        for name, argv in COMMANDS.items():
            wall, used = once(argv)
            times[name].append(wall)
            cpu[name].append(used)
    base = statistics.median(times["python -c pass"])
    load = round(os.getloadavg()[0], 1)  # wall time on a shared machine grows with the load
    for name, values in times.items():
        median = statistics.median(values)
        emit(command=name, repeats=args.repeat, bytecode_cache=True, min_s=round(min(values), 4),
             median_s=round(median, 4), python_start_median_s=round(base, 4),
             ratio_to_python_start=round(median / base, 2),
             cpu_median_s=round(statistics.median(cpu[name]), 4), load_average=load)


if __name__ == "__main__":
    main()
