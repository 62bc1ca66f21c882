"""Every scenario in ``scenarios/``: its cost as estimated before the run against the measured one.

For each scenario, prints one JSON line: the estimate of :mod:`sim.estimate` (memory, time,
messages), and the measured whole-process figures of ``mpcsim run SCENARIO --quiet`` — wall
time, CPU time (user + system) and peak resident memory — with the ratios estimate/measured.
These are the figures behind the run times quoted in the README and the unit costs in
:data:`sim.estimate.COSTS`. BLAS is limited to one thread in the runs (``OMP_NUM_THREADS=1``
and friends), so CPU time is single-core time.

Usage: ``python benchmarks/scenarios.py [--quick] [SCENARIO ...]`` (``--quick`` skips the
scenarios estimated above a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SINGLE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "MKL_NUM_THREADS", "BLIS_NUM_THREADS")}


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def measure(path: Path) -> dict[str, float]:
    """Wall, CPU (user + system) seconds and peak RSS bytes of one whole ``mpcsim run``."""
    argv = [sys.executable, "-c", "import sys; from sim.cli import main; sys.exit(main())",
            "run", str(path), "--quiet"]
    env = {**os.environ, **SINGLE_THREAD}
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode != 0 and not (proc.returncode == 1 and "Traceback" not in err):
        raise SystemExit(f"{path.name} failed: {err}")  # 1 without a traceback: a run that a
        # scripted [[fault]] aborted, which reports and exits 1 by design
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_bytes": usage.ru_maxrss * 1024.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help="scenario files (default: all)")
    parser.add_argument("--quick", action="store_true", help="skip runs estimated over 60 s")
    args = parser.parse_args()
    from sim.runner import plan_scenario

    paths = [Path(p) for p in args.scenarios] or sorted((ROOT / "scenarios").glob("*.toml"))
    for path in paths:
        estimate = plan_scenario(path).estimate
        if args.quick and estimate.seconds > 60:
            emit(scenario=path.name, skipped=True, estimate_s=round(estimate.seconds, 1))
            continue
        got = measure(path)
        emit(scenario=path.name, blas_threads=1,
             estimate_s=round(estimate.seconds, 2), wall_s=round(got["wall_s"], 2),
             cpu_s=round(got["cpu_s"], 2), time_ratio=round(estimate.seconds / got["cpu_s"], 2),
             estimate_mb=round(estimate.memory_bytes / 1e6), peak_mb=round(got["peak_bytes"] / 1e6),
             memory_ratio=round(estimate.memory_bytes / got["peak_bytes"], 2),
             messages=estimate.messages)


if __name__ == "__main__":
    main()
