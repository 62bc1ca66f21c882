"""What a rank holds for its views and unread messages no longer grows with M (issue 32, item 3;
:mod:`sim.view_spill`, :mod:`sim.drivers.mpi_mailbox`).

Real ``--ranks 2`` scenario jobs (``mpi_view_memory_job.py``) of SecureSum at M = 4 and
M = 8 with ``--out``: at the moment the views go to the sink, the garbage collector finds no
received-message record alive in a rank — at either M — while its spill file on disk holds at
least what the closed form says the rank's parties received: each of its parties gets M − 1
shares of ``cols`` 8-byte field elements. The control runs the same jobs with views recorded
in memory (the behaviour before spilling): there the records a rank holds grow with M, and the
same check fails on them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"

sys.path.insert(0, str(HERE))
from test_mpi_view_store import SUM  # noqa: E402  (the same SecureSum scenario)

COLS = 400


def job(tmp_path: Path, m: int, mode: str, *options: str) -> list[dict]:
    """Each rank's report at the view sink, with its mailboxes' (``mailbox``)."""
    scenario = tmp_path / f"sum{m}.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=m, rows=40, cols=COLS)))
    report = tmp_path / f"{mode}{m}.json"
    done = subprocess.run([str(MPIEXEC), "-n", "2", sys.executable,
                           str(HERE / "mpi_view_memory_job.py"), str(scenario),
                           str(tmp_path / f"out_{mode}{m}"), str(report),
                           *(["memory"] if mode == "memory" else []), *options],
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return [{**r["at_sink"][0], **r["mailbox"][0]} for r in json.loads(report.read_text())]


def held_per_party(reports: dict[int, list[dict]]) -> dict[int, float]:
    """Payload bytes held in memory per own party, by M (the most any rank holds)."""
    return {m: max(r["bytes"] / r["own_parties"] for r in ranks)
            for m, ranks in reports.items()}


def assert_flat(reports: dict[int, list[dict]]) -> None:
    """What a rank holds for its views, per own party, is the same at every M."""
    held = held_per_party(reports)
    assert len(set(held.values())) == 1, held
    counts = {m: max(r["messages"] / r["own_parties"] for r in ranks)
              for m, ranks in reports.items()}
    assert len(set(counts.values())) == 1, counts


def test_a_rank_s_view_memory_does_not_grow_with_m(tmp_path) -> None:
    spilled = {m: job(tmp_path, m, "spill") for m in (4, 8)}
    assert_flat(spilled)
    for m, ranks in spilled.items():
        for r in ranks:
            assert r["messages"] == 0 and r["bytes"] == 0
            # one spill file per rank, whatever its parties (one descriptor, not one each)
            assert r["own_parties"] == m // 2 and r["spill_files"] == 1
            # each own party received M − 1 shares of COLS uint64 elements, now on disk
            assert r["spilled_bytes"] >= r["own_parties"] * (m - 1) * COLS * 8

    control = {m: job(tmp_path, m, "memory") for m in (4, 8)}
    held = held_per_party(control)
    for m, ranks in control.items():
        assert all(r["spill_files"] == 0 for r in ranks)
        assert held[m] >= (m - 1) * COLS * 8  # the shares, in memory
    assert held[8] > held[4]
    with pytest.raises(AssertionError):
        assert_flat(control)


def received(out: Path) -> dict[int, list[tuple]]:
    """Every party's received messages from its view file, without the wall-clock times."""
    from sim.view_store import read_view

    views = {int(p.stem.split("-")[1]): read_view(p) for p in (out / "views").glob("*.view")}
    return {pid: [(m.sender, m.protocol, m.call, m.step, m.round,
                   np.asarray(m.payload).tobytes()) for m in view.received]
            for pid, view in views.items()}


def test_unread_messages_past_the_mailbox_budget_wait_on_disk(tmp_path) -> None:
    """:mod:`sim.drivers.mpi_mailbox`: with a budget of 0 bytes, every unread message of
    SPILL_FROM bytes or more goes to the rank's mailbox file, so what the mailboxes hold in
    memory is at most the short messages the rank's parties received (summed from the
    ledger, independently of the mailbox); the views and outputs are those of a run with the
    default budget, which spills nothing."""
    from sim.drivers.mpi_mailbox import SPILL_FROM

    m = 8
    budget0 = job(tmp_path, m, "spill", "mailbox=0")
    default = job(tmp_path, m, "default")
    out0, out = tmp_path / f"out_spill{m}", tmp_path / f"out_default{m}"
    ledger = np.genfromtxt(out0 / "ledger.csv", delimiter=",", names=True, dtype=None,
                           encoding="utf-8")
    hosts = {0: range(0, m // 2), 1: range(m // 2, m)}
    for rank, r in enumerate(budget0):
        mine = ledger[np.isin(ledger["receiver"], list(hosts[rank]))]
        short = int(mine["bytes"][mine["bytes"] < SPILL_FROM].sum())
        long = int(mine["bytes"][mine["bytes"] >= SPILL_FROM].sum())
        assert r["budget"] == 0 and 0 < r["spilled"] <= long
        assert r["peak"] <= short
    for r in default:
        assert r["spilled"] == 0
    assert max(r["peak"] for r in default) > max(r["peak"] for r in budget0)
    assert received(out0) == received(out) and len(received(out)) == m
    with np.load(out0 / "outputs.npz") as a, np.load(out / "outputs.npz") as b:
        assert sorted(a.files) == sorted(b.files)
        for name in a.files:
            assert np.array_equal(a[name], b[name])
