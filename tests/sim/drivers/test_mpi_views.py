"""Views where they belong under MPI (``Simulation(views="rank")``, :mod:`sim.drivers.rank_views`).

A real ``mpiexec`` job (``mpi_views_job.py``) runs SecureSum with the views gathered and with
the views kept on their ranks; the test runs the same program under SimPy in process and holds
the job to it: every rank holds exactly its own parties' views (block distribution, computed
here), the merged index equals one computed here from the SimPy run's views, and the explicit
gathering gives back the very views of the gathered run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"

from parties.party import site_parties  # noqa: E402
from protocols.errors import InputError  # noqa: E402
from sim.drivers.rank_views import view_digest  # noqa: E402
from sim.network import Network  # noqa: E402
from sim.simulation import Simulation  # noqa: E402

sys.path.insert(0, str(HERE))
from mpi_views_job import program  # noqa: E402


def simpy_views(m: int) -> tuple[dict, dict]:
    rng = np.random.default_rng(4)
    inputs = [{"x": rng.uniform(0.0, 1.0, 5)} for _ in range(m)]
    result = Simulation(Network.build(m), seed=11).run(site_parties(program, inputs))
    return result.outputs, result.views


@pytest.mark.parametrize(("ranks", "m"), [(2, 5), (3, 7)])
def test_each_rank_keeps_its_own_views_and_rank_0_merges_the_index(tmp_path, ranks, m):
    out = tmp_path / "views.json"
    done = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable,
                           str(HERE / "mpi_views_job.py"), str(out), str(m)],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    job = json.loads(out.read_text())
    outputs, views = simpy_views(m)
    # block distribution, written out: rank r holds the r-th contiguous block of the ids
    q, s = divmod(m, ranks)
    sizes = [q + (1 if r < s else 0) for r in range(ranks)]
    blocks = [list(range(sum(sizes[:r]), sum(sizes[:r + 1]))) for r in range(ranks)]
    for report in sorted(job["ranks"], key=lambda r: r["rank"]):
        assert report["local"] == blocks[report["rank"]]
        assert report["held"] == sizes[report["rank"]] < m  # no rank holds every view
        assert report["listed"] == list(range(m))  # every party is listed, none skipped
        assert "held by MPI rank" in report["refused"]
        assert f"not rank {report['rank']}" in report["refused"]
    expected = {str(p): view_digest(v) for p, v in views.items()}
    assert job["full_digests"] == expected  # the gathered run: SimPy's views
    assert job["index"] == [f"{p} {len(views[p].received)} {expected[str(p)]}"
                            for p in range(m)]
    for report in job["ranks"]:  # gathered on demand: the very same views at every rank
        assert report["gathered_digests"] == expected
    for p, value in outputs.items():
        np.testing.assert_allclose(job["outputs"][str(p)], np.asarray(value))
    assert job["outputs"] == job["outputs_gathered"]


def test_views_at_rank_needs_the_mpi_driver():
    with pytest.raises(InputError, match=r"views = 'rank' is not offered by driver 'simpy'; "
                                         r"use one of \('gathered',\)"):
        Simulation(Network.build(2), views="rank")
    with pytest.raises(InputError, match="views = 'where' is not offered by driver 'mpi'"):
        Simulation(Network.build(2), views="where", driver="mpi")
