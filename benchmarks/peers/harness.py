"""How the peers' scripts run their arms, so that every comparison in ``benchmarks/peers/`` is
taken the same way.

* Each arm runs in a worker process of its own (:func:`run_worker`): the script calls itself
  with ``--worker ARM``, under ``.venv-peers``' Python for a peer's arm (:data:`PEERS_PYTHON`,
  built by ``make peers``) and under this one for mpcsim's, with BLAS, OpenMP, XLA and numba
  pinned to one thread (:data:`SINGLE` in the environment, :func:`pinned` inside the worker).
  The worker prints one JSON line (:func:`serve_worker`): what the arm measured, or
  ``{"skipped": reason}`` when the arm raised :class:`SkipArm`.
* Peers that are not installed are reported as skipped before anything runs
  (:func:`installed_arms`), and so is an arm whose worker skipped (:func:`interleave`).
* The arms' workers are interleaved, their order alternating from one round to the next
  (:func:`interleave`), so that a burst of load from other processes hits every arm.
* Each arm is summarised by one JSON line (:func:`arm_line`: the minimum and median over the
  rounds, the worst error) and each peer compared with an mpcsim arm by the ratio of the
  minima and the median of the round-by-round ratios (:func:`ratios`).

The scripts run as ``python benchmarks/peers/<name>.py``, which puts this folder on the import
path (as ``benchmarks/timing.py`` is for the scripts beside it); it is not part of the installed
package. It imports numpy and the standard library only, since the workers of the peers' arms
import it under ``.venv-peers``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
SEED = 20261127
SINGLE = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
          "NUMBA_NUM_THREADS": "1",
          "XLA_FLAGS": "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"}
"""The environment of every worker: one thread for every pool a peer or mpcsim may start."""
BLAS_THREADS = 1
WORKER_TIMEOUT_S = 7200

Sample = dict[str, Any]
"""What one worker measured: ``seconds``, ``max_abs_error`` and the arm's own figures."""


class SkipArm(Exception):
    """A peer that is not there to measure (the message says why); the arm is skipped."""


def emit(fields: dict[str, Any]) -> None:
    """Print one JSON line (the scripts' only output on stdout)."""
    print(json.dumps(fields), flush=True)


def party_inputs(m: int, d: int) -> list[np.ndarray]:
    """Every arm's inputs: party i holds ``default_rng(SEED + i).uniform(-1, 1, d)``."""
    return [np.random.default_rng(SEED + i).uniform(-1.0, 1.0, d) for i in range(m)]


@contextmanager
def pinned() -> Iterator[None]:
    """Limit every BLAS/OpenMP pool of this process to one thread for the duration."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=BLAS_THREADS):
        yield


def serve_worker(measure: Callable[[], Sample]) -> None:
    """The worker's side: run one arm pinned, print what it measured (or why it skipped)."""
    with pinned():
        try:
            found = measure()
        except SkipArm as exc:
            found = {"skipped": str(exc)}
        emit(found)


def run_worker(script: str, arm: str, peer: bool, args: Sequence[str]) -> Sample:
    """Run ``script --worker arm *args`` in a process of its own; the JSON line it printed.

    A peer's arm (``peer``) runs under ``.venv-peers``' Python, mpcsim's under this one.
    """
    python = str(PEERS_PYTHON) if peer else sys.executable
    env = {**os.environ, **SINGLE, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([python, script, "--worker", arm, *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=WORKER_TIMEOUT_S)
    if done.returncode != 0:
        raise RuntimeError(f"{arm} worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def result_line(stdout: str) -> dict[str, Any]:
    """The ``RESULT {json}`` line a multi-process peer's party 0 printed, decoded."""
    line = next(x for x in stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def run_mpyc(code: str, name: str, timeout: float = WORKER_TIMEOUT_S) -> dict[str, Any]:
    """Run an MPyC party program on three local parties (``-M3``, MPyC's own launcher and TCP
    links); the ``RESULT`` its party 0 printed."""
    script = Path(os.environ.get("TMPDIR", "/tmp")) / f"mpyc_{name}_{os.getpid()}.py"
    script.write_text(code)
    try:
        done = subprocess.run([sys.executable, str(script), "-M3", "--no-log"],
                              capture_output=True, text=True, check=True, timeout=timeout)
    finally:
        script.unlink(missing_ok=True)
    return result_line(done.stdout)


def parser(doc: str, arms: Iterable[str], reps: int) -> argparse.ArgumentParser:
    """The options every script takes: ``--worker``, ``--reps``, ``--rounds``, ``--arms``."""
    names = list(arms)
    found = argparse.ArgumentParser(description=doc.split("\n")[0])
    found.add_argument("--worker", choices=sorted(names))
    found.add_argument("--reps", type=int, default=reps)
    found.add_argument("--rounds", type=int, default=5)
    found.add_argument("--arms", default=",".join(names))
    return found


def installed_arms(benchmark: str, arms: Sequence[str], peer_arms: set[str]) -> list[str]:
    """``arms`` without the peers' when ``.venv-peers`` is missing (reported as skipped)."""
    if PEERS_PYTHON.exists():
        return list(arms)
    emit({"benchmark": benchmark, "skipped": sorted(peer_arms),
          "reason": "no .venv-peers: run `make peers`"})
    return [a for a in arms if a not in peer_arms]


def interleave(benchmark: str, arms: Sequence[str], rounds: int,
               run: Callable[[str], Sample]) -> dict[str, list[Sample]]:
    """``rounds`` samples of every arm, the arms' order alternating from round to round.

    An arm whose worker skipped is reported (one JSON line) and left out of the rest.
    """
    samples: dict[str, list[Sample]] = {arm: [] for arm in arms}
    for r in range(rounds):
        for arm in arms if r % 2 == 0 else list(reversed(arms)):
            if arm not in samples:
                continue
            found = run(arm)
            if "skipped" in found:
                emit({"benchmark": benchmark, "skipped": [arm], "reason": found["skipped"]})
                del samples[arm]
                continue
            samples[arm].append(found)
    return samples


def seconds_of(samples: dict[str, list[Sample]]) -> dict[str, list[float]]:
    """Each arm's seconds, one per round."""
    return {arm: [float(s["seconds"]) for s in runs] for arm, runs in samples.items()}


def arm_line(benchmark: str, arm: str, runs: list[Sample], head: dict[str, Any], rounds: int,
             reps: int, load: float, errors: Sequence[str] = ("max_abs_error",),
             extra: bool = True) -> dict[str, Any]:
    """One arm's JSON line: ``head`` (m, d, …), the rounds, the minimum and median seconds,
    the worst of each of ``errors`` over the rounds, and (``extra``) the last round's other
    figures (versions, fractional bits, …)."""
    seconds = [float(s["seconds"]) for s in runs]
    worst = {e: max(float(s[e]) for s in runs) for e in errors if e in runs[0]}
    rest = ({k: v for k, v in runs[-1].items() if k != "seconds" and k not in errors}
            if extra else {})
    return {"benchmark": benchmark, "arm": arm, **head, "rounds": rounds,
            "reps_per_round": reps, "blas_threads": BLAS_THREADS,
            "min_s": round(min(seconds), 4), "median_s": round(statistics.median(seconds), 4),
            **worst, **rest, "load_average": load}


def ratios(seconds: dict[str, list[float]], base: str,
           peers: Iterable[str]) -> dict[str, dict[str, float]]:
    """Each peer ÷ the ``base`` arm: the ratio of the minima over the rounds, and the median
    of the round-by-round ratios."""
    den = seconds[base]
    return {arm: {"ratio_of_minima": round(min(seconds[arm]) / min(den), 2),
                  "ratio_median_of_rounds": round(statistics.median(
                      a / b for a, b in zip(seconds[arm], den, strict=True)), 2)}
            for arm in peers}


def fastest(once: Callable[[], tuple[float, Any]], reps: int,
            warm: bool = True) -> tuple[float, Any]:
    """The least seconds of ``reps`` timed runs of ``once`` (after one untimed run when
    ``warm``), and the last run's value; ``once`` returns the seconds it measured and a value."""
    if warm:
        once()
    runs = [once() for _ in range(reps)]
    return min(t for t, _ in runs), runs[-1][1]


def spu_runs(protocol: str, fn: Callable[..., Any], xs: Sequence[np.ndarray],
             reps: int) -> tuple[float, np.ndarray, int]:
    """``fn(*xs)`` on SPU's simulator (``spu.utils.simulation``, FM64), one private input per
    party: compiled in an untimed first run, then the least seconds of ``reps`` runs (sharing
    the inputs, the secure computation, revealing the output), the output and SPU's
    fractional bits."""
    import spu.libspu as libspu
    import spu.utils.simulation as spsim

    config = libspu.RuntimeConfig(protocol=getattr(libspu.ProtocolKind, protocol),
                                  field=libspu.FieldType.FM64)
    run = spsim.sim_jax(spsim.Simulator(len(xs), config), fn)

    def once() -> tuple[float, np.ndarray]:
        start = time.perf_counter()
        out = run(*xs)
        return time.perf_counter() - start, np.asarray(out)

    seconds, out = fastest(once, reps)
    return seconds, out, config.fxp_fraction_bits or 18
