"""A one-shot CLI run, before and after a change: ``mpcsim run scenarios/quickstart.toml``.

Prints JSON lines:

* ``oneshot_fresh`` — the first run of each tree right after it is exported (``git archive``):
  a fresh clone, with no bytecode and no numba cache (numba compiles its kernels there);
* ``oneshot`` — then ``--repeat`` runs of each tree, interleaved (the order alternating each
  round), as whole processes (``mpcsim run … --quiet --out DIR``): wall and CPU seconds
  (min, median), the ratio before ÷ after of the minima and the median of the pair-by-pair
  ratios, whether each tree's process loaded numba, and whether the two trees wrote
  byte-identical ``outputs.npz`` and ``ledger.csv`` (``report.json`` differs in its wall time);
* ``rank_cost`` — the estimate :func:`protocols.field.fast_field.numpy_rank_seconds` beside the
  measured seconds of numpy's and the compiled Gaussian elimination over GF(2^61 − 1), for the
  stack shapes an audit ranks (the quickstart's are (1, 49, 40) and (1, 99, 40)).

"before" is the git revision ``--before`` (default ``HEAD``), "after" the working tree; both
are exported to temporary directories and run with ``PYTHONPATH`` set to them, with the
interpreter running this script and BLAS pinned to one thread.

Usage: ``python benchmarks/oneshot.py [--before REV] [--repeat N] [--scenario PATH]``.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from timing import emit

ROOT = Path(__file__).resolve().parents[1]
PROBE = ("import runpy, sys; sys.argv = ['mpcsim'] + sys.argv[1:]\n"
         "try:\n    runpy.run_module('sim.cli', run_name='__main__')\n"
         "except SystemExit as stop:\n    code = stop.code\n"
         "else:\n    code = 0\n"
         "print('numba' in sys.modules, file=open(sys.argv[sys.argv.index('--out') + 1]"
         " + '.numba', 'w'))\nsys.exit(code)\n")


def export(rev: str | None, into: Path) -> Path:
    """The tree at ``rev`` (None: the working tree, tracked and untracked files) in ``into``."""
    into.mkdir(parents=True)
    if rev is None:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT,
                               check=True, capture_output=True).stdout.decode().split("\0")
        for name in filter(None, files):
            source = ROOT / name
            if source.is_file():
                (into / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, into / name)
    else:
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_once(tree: Path, scenario: str, out: Path) -> tuple[float, float, bool]:
    """Wall and CPU seconds of one whole ``mpcsim run``, and whether it loaded numba."""
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(tree), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1", NUMBA_NUM_THREADS="1")
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", PROBE, "run", scenario, "--quiet",
                             "--out", str(out)], cwd=tree, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"mpcsim run failed in {tree} (status {status})")
    numba = Path(str(out) + ".numba").read_text().strip() == "True"
    return wall, usage.ru_utime + usage.ru_stime, numba


def rank_costs() -> None:
    """The numpy rank cost model against measured numpy and compiled times."""
    from protocols.field import MERSENNE61, prime_field
    from protocols.field import ranks as mersenne_ranks
    from protocols.field.fast_field import numpy_rank_seconds

    field = prime_field(MERSENNE61)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    mersenne_ranks.ranks(MERSENNE61, np.ones((1, 2, 2), dtype=np.uint64))
    emit(benchmark="rank_cost", kernels_load_s=round(time.perf_counter() - start, 3))
    for shape in [(1, 10, 10), (1, 49, 40), (1, 99, 40), (10, 49, 40), (100, 20, 20),
                  (1, 200, 100)]:
        stack = rng.integers(0, MERSENNE61, shape, dtype=np.uint64)
        numpy_s, compiled_s = [], []
        for _ in range(5):
            t = time.perf_counter()
            want = field.ranks(stack)
            numpy_s.append(time.perf_counter() - t)
            t = time.perf_counter()
            got = mersenne_ranks.ranks(MERSENNE61, stack)
            compiled_s.append(time.perf_counter() - t)
            assert np.array_equal(want, got)
        emit(benchmark="rank_cost", shape=list(shape),
             estimate_s=round(numpy_rank_seconds(shape), 5),
             numpy_min_s=round(min(numpy_s), 5), compiled_min_s=round(min(compiled_s), 6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", default="HEAD", help="git revision of the 'before' tree")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--scenario", default="scenarios/quickstart.toml")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="oneshot-"))
    try:
        trees = {"before": export(args.before, work / "before"),
                 "after": export(None, work / "after")}
        for name, tree in trees.items():  # a fresh clone: no bytecode, no numba cache
            wall, cpu, numba = run_once(tree, args.scenario, work / f"out-{name}")
            emit(benchmark="oneshot_fresh", tree=name, rev=args.before if name == "before"
                 else "working tree", wall_s=round(wall, 3), cpu_s=round(cpu, 3),
                 numba_loaded=numba, load_average=os.getloadavg()[0])
        samples: dict[str, list[tuple[float, float, bool]]] = {name: [] for name in trees}
        for r in range(args.repeat):
            for name in (list(trees) if r % 2 == 0 else list(reversed(trees))):
                samples[name].append(run_once(trees[name], args.scenario, work / f"out-{name}"))
        identical = all(filecmp.cmp(work / "out-before" / f, work / "out-after" / f,
                                    shallow=False) for f in ("outputs.npz", "ledger.csv"))
        walls = {name: [s[0] for s in runs] for name, runs in samples.items()}
        cpus = {name: [s[1] for s in runs] for name, runs in samples.items()}
        emit(benchmark="oneshot", scenario=args.scenario, before=args.before,
             repeats=args.repeat, load_average=os.getloadavg()[0],
             wall_s={name: {"min": round(min(w), 3), "median": round(statistics.median(w), 3)}
                     for name, w in walls.items()},
             cpu_s={name: {"min": round(min(c), 3), "median": round(statistics.median(c), 3)}
                    for name, c in cpus.items()},
             before_over_after_wall={
                 "ratio_of_minima": round(min(walls["before"]) / min(walls["after"]), 3),
                 "ratio_median_of_pairs": round(statistics.median(
                     b / a for b, a in zip(walls["before"], walls["after"], strict=True)), 3)},
             before_over_after_cpu_medians=round(
                 statistics.median(cpus["before"]) / statistics.median(cpus["after"]), 3),
             numba_loaded={name: runs[-1][2] for name, runs in samples.items()},
             outputs_identical=identical)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rank_costs()


if __name__ == "__main__":
    main()
