"""Every shipped scenario: its cost as estimated before the run against the measured run.

For each scenario in ``scenarios/``, runs ``mpcsim run SCENARIO --quiet --out TMP`` in a
process of its own (one after the other, BLAS and numba on one thread) and prints one JSON
line::

    {"scenario": ..., "estimated_s": ..., "measured_s": ..., "ratio": ...,
     "estimated_bytes": ..., "peak_rss_bytes": ..., "ratio_mem": ..., ...}

``measured_s`` is the process's CPU time (user + system): on a single BLAS thread that is the
single-core time the estimate predicts, and unlike wall time it does not grow when other
processes share the cores (``wall_s`` is printed beside it). The project's bytecode is compiled
first and the runs may use it, whatever ``PYTHONDONTWRITEBYTECODE`` says: an installed
``mpcsim`` has it, and compiling the sources again in every run adds 2–3 s of CPU to each.
``peak_rss_bytes`` is the process's peak resident memory (``ru_maxrss``). ``ratio`` and
``ratio_mem`` are estimate over measurement: above 1 the estimate is high. Each line also
carries the workload the entry declared (``workload``: messages, elements, flops, simulations,
seconds) and the estimate's totals (``messages``, ``elements``), which is what
:mod:`sim.estimate`'s unit costs are fitted to (see its module docstring).

These are the figures behind the README's run times and :data:`sim.estimate.COSTS`.

Usage: ``python benchmarks/estimate_accuracy.py [--quick] [--over S] [SCENARIO ...]``
(``--quick`` skips the scenarios estimated above 60 s, ``--over S`` above S seconds).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SINGLE_THREAD = {name: "1" for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                        "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                                        "NUMBA_NUM_THREADS")}

PACKAGES = ("protocols", "algorithms", "parties", "sim")


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def measure(path: Path) -> dict[str, float]:
    """Wall, CPU (user + system) seconds and peak RSS bytes of one whole ``mpcsim run``."""
    with tempfile.TemporaryDirectory(prefix="mpcsim-estimate-") as tmp:
        argv = [sys.executable, "-c", "import sys; from sim.cli import main; sys.exit(main())",
                "run", str(path), "--quiet", "--out", str(Path(tmp) / "out")]
        env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
               **SINGLE_THREAD,
               "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                            os.environ.get("PYTHONPATH")]))}
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        err = proc.stderr.read().decode() if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    if code != 0 and not (code == 1 and "Traceback" not in err):
        raise SystemExit(f"{path.name} failed: {err}")  # 1 without a traceback: a run that a
        # scripted [[fault]] aborted, which reports and exits 1 by design
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime,
            "peak_bytes": usage.ru_maxrss * 1024.0}


def planned(path: Path) -> tuple[Any, dict[str, Any]]:
    """The scenario's estimate, and the workload its entry declared (for fitting the costs)."""
    from sim.entry import EstimateInput
    from sim.runner import plan_scenario

    plan = plan_scenario(path)
    rows, cols = plan.data.shape
    work = plan.entry.estimate(EstimateInput(plan.scenario, plan.params, rows, cols))
    declared = {"messages": work.messages, "elements": work.elements,
                "simulations": work.simulations, "flops": work.flops,
                "seconds": round(work.seconds, 3), "working_bytes": work.working_bytes}
    return plan.estimate, declared


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenarios", nargs="*", help="scenario files (default: all)")
    parser.add_argument("--quick", action="store_true", help="skip runs estimated over 60 s")
    parser.add_argument("--over", type=float, metavar="S",
                        help="skip runs estimated over S seconds")
    args = parser.parse_args()
    limit = args.over if args.over is not None else (60.0 if args.quick else None)
    sys.path.insert(0, str(ROOT))
    for package in PACKAGES:  # bytecode, as an installed mpcsim has it
        compileall.compile_dir(ROOT / package, quiet=1)
    paths = [Path(p) for p in args.scenarios] or sorted((ROOT / "scenarios").glob("*.toml"))
    for path in paths:
        estimate, declared = planned(path)
        if limit is not None and estimate.seconds > limit:
            emit(scenario=path.stem, skipped=True, estimated_s=round(estimate.seconds, 1))
            continue
        got = measure(path)
        emit(scenario=path.stem, estimated_s=round(estimate.seconds, 2),
             measured_s=round(got["cpu_s"], 2), ratio=round(estimate.seconds / got["cpu_s"], 2),
             estimated_bytes=int(estimate.memory_bytes), peak_rss_bytes=int(got["peak_bytes"]),
             ratio_mem=round(estimate.memory_bytes / got["peak_bytes"], 2),
             wall_s=round(got["wall_s"], 2), blas_threads=1, messages=estimate.messages,
             elements=estimate.elements, workload=declared)


if __name__ == "__main__":
    main()
