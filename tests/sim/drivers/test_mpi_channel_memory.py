"""Sealing's memory per MPI rank grows with the rank's own parties, not with M (issue 32, 3).

A rank's parties use ``own · (M − 1)`` sealed channel ends per direction, each holding an
AES-GCM key schedule (~3.5 KB resident). A rank used to keep up to ``CHANNELS_KEPT`` = 16,384
of them per direction: ~115 MB at M = 256 over 2 ranks, O(M²/ranks). It now keeps
:data:`~sim.drivers.envelopes.CHANNELS_KEPT_PER_PARTY` per own party and direction.

Real ``mpiexec -n 2`` jobs (``mpi_channels_job.py``) run a sealed SecureSum at M = 40 and 80
and count the ``SealedChannel`` objects alive on each rank as its run ends (the garbage
collector's list). Closed forms, with own = M / 2 parties per rank: the kept ends are at most
2 · 32 · own, and at least the 32 · own sending ends an all-to-all run fills its cap with. The
control sets the old cap back: every end is kept, the sending ends of the own · (M − 1)
channels out of the rank's parties and the receiving ends of those into them, less the
own · (own − 1) channels between two of its own parties, whose ends are one object — so
2 · own · (M − 1) − own · (own − 1), which outgrows 64 · own at M = 80.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"
SIZES = (40, 80)
PER_PARTY = 32  # sim.drivers.envelopes.CHANNELS_KEPT_PER_PARTY, as the docstring states it


def job(tmp_path: Path, *extra: str) -> list[dict]:
    out = tmp_path / "ends.json"
    done = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable,
                           str(HERE / "mpi_channels_job.py"), str(out),
                           *map(str, SIZES), *extra],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(out.read_text())


def test_a_rank_keeps_channel_ends_for_its_own_parties_only(tmp_path) -> None:
    ranks = job(tmp_path)
    assert len(ranks) == 2
    for report in ranks:
        for m in SIZES:
            own, ends = report[str(m)]["own"], report[str(m)]["ends"]
            assert own == m // 2  # block distribution over 2 ranks
            assert PER_PARTY * own <= ends <= 2 * PER_PARTY * own
            # ends were dropped and rebuilt (own · (M − 1) > 32 · own), and every party still
            # got the inputs' sum (numpy's, in the job); fixed point's 2^-24 steps, M inputs
            assert report[str(m)]["outputs"] == m
            assert report[str(m)]["max_error"] < m * 2.0 ** -20


def test_control_the_old_cap_keeps_every_end_and_grows_with_m(tmp_path) -> None:
    ranks = job(tmp_path, "--old")
    for report in ranks:
        for m in SIZES:
            own, ends = report[str(m)]["own"], report[str(m)]["ends"]
            assert ends == 2 * own * (m - 1) - own * (own - 1)
        own = report["80"]["own"]
        assert report["80"]["ends"] > 2 * PER_PARTY * own  # the bound above fails the old cap
