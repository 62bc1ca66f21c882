"""``[[fault]]`` under ``--driver mpi`` (sim/drivers/mpi_faults.py): each kind's observable
effect, and SecAgg with dropouts giving the survivors' sum.

Each test starts a real ``mpiexec`` job of ``mpi_fault_job.py`` on two ranks (parties 0..1
on rank 0 and 2 on rank 1 for the probe, so both in-rank and between-rank messages are
faulted) and reads the JSON line rank 0 prints. Expected values come from the plan and from
numpy, never from the run under test. Times are wall clock: the tests compare them only
with the plan's own durations, never with how long anything took.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"


def job(mode: str, ranks: int = 2) -> dict[str, Any]:
    done = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable,
                           str(HERE / "mpi_fault_job.py"), mode], capture_output=True, text=True,
                          timeout=300, check=False, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_secagg_with_dropouts_gives_the_survivors_sum_under_mpi() -> None:
    got = job("secagg")
    # the plan: site 2 crashes before its masked input (dropped from the sum), site 5 before
    # unmasking (its masked input is in, its mask recovered from the others' shares)
    sites = sorted(int(p) for p in got["inputs"])
    assert got["survivors"] == [u for u in sites if u != 2]
    expected = np.sum([got["inputs"][str(u)] for u in got["survivors"]], axis=0)
    bound = len(sites) * 2.0 ** -24  # each input's fixed-point rounding (2^-24 fractional bits)
    np.testing.assert_allclose(got["total"], expected, rtol=0, atol=bound)
    crashed = {e["party"] for e in got["faults"]["events"] if e["effect"] == "crashed"}
    assert crashed == {2, 5}
    # and the SimPy run of the same scenario and seed agrees (message-keyed faults, and a
    # timeout far from the real times: nothing here depends on the clock)
    from sim.runner import run_scenario

    simpy = run_scenario(str(ROOT / "scenarios" / "secagg_dropouts.toml")).run.result
    total, survivors = simpy.outputs[max(simpy.outputs)]
    assert [int(u) for u in survivors] == got["survivors"]
    assert np.asarray(total).tolist() == got["total"]


def test_a_crashed_sender_is_timed_out_by_recv_within() -> None:
    got = job("crash")
    assert got["outputs"]["0"] == {"2": 27}  # party 2's message (10·2 + 7); party 1 never sent
    assert "1" not in got["outputs"]
    assert got["faults"]["parties"]["1"].startswith("crashed")
    assert [(r["sender"], r["receiver"]) for r in got["rows"]] == [(2, 0)]


def test_a_timed_crash_stops_a_waiting_party_at_its_wall_clock_time() -> None:
    got = job("crash_at")
    assert "0" not in got["outputs"]  # party 0 never returned
    [event] = [e for e in got["faults"]["events"] if e["effect"] == "crashed"]
    assert event["party"] == 0 and event["time_s"] >= 0.3  # not before its at_s
    assert got["faults"]["parties"]["0"].startswith("crashed")


def test_link_down_loses_the_message_and_recv_within_times_out() -> None:
    got = job("link_down")
    assert got["outputs"]["0"] == {"2": 27}
    assert sorted((r["sender"], r["receiver"]) for r in got["rows"]) == [(1, 0), (2, 0)]
    lost = next(r for r in got["rows"] if r["sender"] == 1)
    assert lost["delivered_s"] == lost["sent_s"]  # in the ledger, never delivered
    assert "1" not in got["arrivals"]
    [event] = got["faults"]["events"]
    assert (event["effect"], event["sender"], event["receiver"]) == ("lost", 1, 0)


def test_delay_holds_the_message_back_by_extra_ms() -> None:
    got = job("delay")
    assert got["outputs"]["0"] == {"1": 17, "2": 27}  # 0.4 s late, within the 5 s timeout
    delayed = next(r for r in got["rows"] if r["sender"] == 1)
    assert delayed["delivered_s"] - delayed["sent_s"] >= 0.4
    assert got["arrivals"]["1"] >= delayed["sent_s"] + 0.4


def test_a_tampered_message_fails_authentication_at_its_receiver() -> None:
    got = job("tamper")
    assert got["abort"]["party"] == 0
    assert "AuthenticationError" in got["abort"]["reason"]
    assert "from party 1 to party 0" in got["abort"]["reason"]


def test_a_replayed_message_is_refused_by_the_channel_number() -> None:
    got = job("replay")
    assert got["abort"]["party"] == 0
    assert "number 0 on its channel where number 1 was expected" in got["abort"]["reason"]
