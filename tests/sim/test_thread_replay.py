"""A seeded run gives the same bytes whatever the environment says about threads (issue 29).

Each replay is a fresh ``mpcsim run`` process, because BLAS, OpenMP and numba read their thread
variables when they are loaded: a setting can only be tested in a process that starts with it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from sim.threads import RUN_THREADS, pinned_threads

ROOT = Path(__file__).resolve().parents[2]

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                    "NUMBA_NUM_THREADS", "BLIS_NUM_THREADS")

SCENARIO = """\
name = "thread_replay"
seed = 31

[network]
parties = 3

[data]
source = "synthetic"
kind = "mog"
rows = 6000
cols = 10
k = 5

[algorithm]
name = "cape_otd_sweep"
model = "mog"
k = 5
delta = 0.01
trials = 2
samples_per_site = 2000
sweep = "epsilon"
values = [0.5, 1.0]
"""


def _replay(tmp_path: Path, name: str, threads: str | None) -> dict[str, bytes]:
    """``mpcsim run`` in a process whose thread variables all say ``threads`` (None: unset)."""
    env = {k: v for k, v in os.environ.items() if k not in THREAD_VARIABLES}
    if threads is not None:
        env.update(dict.fromkeys(THREAD_VARIABLES, threads))
    env["PYTHONPATH"] = str(ROOT)
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SCENARIO, encoding="utf-8")
    out = tmp_path / name
    done = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(scenario), "--quiet",
                           "--out", str(out)], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    report.pop("time")  # wall time: the one figure a replay does not repeat
    return {"report": json.dumps(report, sort_keys=True).encode(),
            "ledger.csv": (out / "ledger.csv").read_bytes(),
            "outputs.npz": (out / "outputs.npz").read_bytes()}


def test_replay_is_byte_identical_across_thread_settings(tmp_path: Path) -> None:
    """The same seed under one thread, two threads and the libraries' defaults: the report
    (but its wall time), the ledger and the outputs are the same bytes, and the report records
    the one thread count the run was pinned to."""
    runs = {threads: _replay(tmp_path, f"threads_{threads}", threads)
            for threads in ("1", "2", None)}
    reference = runs["1"]
    for threads, files in runs.items():
        for name, data in files.items():
            assert data == reference[name], f"{name} differs with threads = {threads}"
    assert json.loads(reference["report"])["numerics"]["threads"] == RUN_THREADS


def test_pinned_threads_sets_every_loaded_pool_and_restores_it() -> None:
    """Inside the block every BLAS and OpenMP library threadpoolctl finds runs one thread;
    after it, the counts are what they were."""
    import scipy.linalg  # noqa: F401 -- loaded, so that its BLAS is among the pools

    with threadpool_limits(limits=2):
        before = [(p["internal_api"], p["filepath"], p["num_threads"])
                  for p in threadpool_info()]
        with pinned_threads() as numerics:
            inside = threadpool_info()
            assert inside and {p["num_threads"] for p in inside} == {numerics["threads"]}
            a = np.random.default_rng(0).random((300, 300))
            np.testing.assert_allclose(a @ a, np.einsum("ij,jk->ik", a, a), rtol=1e-12)
        after = [(p["internal_api"], p["filepath"], p["num_threads"])
                 for p in threadpool_info()]
    assert after == before


@pytest.mark.parametrize("threads", [1, 3])
def test_pinned_threads_sets_numba_when_loaded(threads: int) -> None:
    numba = pytest.importorskip("numba")
    before = numba.get_num_threads()
    with pinned_threads(threads):
        assert numba.get_num_threads() == min(threads, numba.config.NUMBA_NUM_THREADS)
    assert numba.get_num_threads() == before
