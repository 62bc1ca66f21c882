"""How fast the command line answers: ``--help``, ``list``, argument and scenario errors.

Prints one JSON line per command: the minimum and median wall time of whole processes over
interleaved repetitions (the machines are shared and noisy), the same for a bare
``python -c pass`` (the interpreter's own start), and the ratio of the medians. The target for
``--help``, ``list`` and argument errors is well under half a second.

Usage: ``python benchmarks/startup.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import json
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
    "mpcsim --help": [*MPCSIM, "--help"],
    "mpcsim list": [*MPCSIM, "list"],
    "mpcsim list pd_nmf": [*MPCSIM, "list", "pd_nmf"],
    "mpcsim run (missing argument)": [*MPCSIM, "run"],
    "mpcsim frobnicate (unknown command)": [*MPCSIM, "frobnicate"],
    "mpcsim run missing.toml (scenario error)": [*MPCSIM, "run", "missing.toml"],
}


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def once(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):  # interleaved: every round runs every command once
        for name, argv in COMMANDS.items():
            times[name].append(once(argv))
    base = statistics.median(times["python -c pass"])
    for name, values in times.items():
        median = statistics.median(values)
        emit(command=name, repeats=args.repeat, min_s=round(min(values), 4),
             median_s=round(median, 4), python_start_median_s=round(base, 4),
             ratio_to_python_start=round(median / base, 2))


if __name__ == "__main__":
    main()
