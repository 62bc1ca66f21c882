"""Ledger rows where they belong under MPI (issue 32, item 3; :mod:`sim.ledger_store`).

Real ``mpiexec -n 2`` jobs (``mpi_ledger_job.py``): each rank hands the ledger sink exactly
its own parties' rows — the rows alive in the process then are those, counted by the garbage
collector, and their number is the SimPy run's count of messages those parties sent — and
holds no row after the run, while the merged ``ledger.csv`` equals the SimPy run's but for the
two wall-clock columns and is in send-time order. The run as before (rows gathered) holds
every row at every rank: the count has the power to see the difference. A run that fails after
the rows were written leaves no ledger file. In process: the merge equals a stable sort of the
ranks' rows by send time (Python's ``sorted``), and the stored ledger's queries equal the
in-memory ledger's.
"""

from __future__ import annotations

import csv
import io
import json
import pickle
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sim.ledger import Ledger, Row
from sim.ledger_store import StoredLedger, merge_rows, write_rows

HERE = Path(__file__).resolve().parent
MPIEXEC = Path(sysconfig.get_path("scripts")) / "mpiexec"

SUM = """
    seed = 5
    [network]
    parties = {m}
    [data]
    source = "synthetic"
    rows = 40
    cols = 5
    [algorithm]
    name = "secure_sum"
"""


def random_rows(rng: np.random.Generator, n: int, senders: range) -> list[Row]:
    """Rows with repeated send times (ties) and names that need CSV quoting."""
    return [Row(int(rng.choice(senders)), int(rng.integers(0, 9)),
                str(rng.choice(["secure_sum", "a,b", 'q"x'])), int(rng.integers(0, 5)),
                str(rng.choice(["share", "out"])), str(rng.choice(["", "iter", "iter/1"])),
                int(rng.integers(1, 6)), int(rng.integers(0, 100)), int(rng.integers(0, 10**6)),
                1, float(rng.choice([0.5, 0.25, rng.random()])), float(rng.random()))
            for _ in range(n)]


@pytest.mark.parametrize("chunk", [7, 1 << 20])  # the file read in pieces that cut lines
def test_merged_rank_files_equal_the_gathered_ledger(tmp_path: Path, monkeypatch,
                                                     chunk: int) -> None:
    monkeypatch.setattr("sim.ledger_store._CHUNK", chunk)
    rng = np.random.default_rng(3)
    ranks = [random_rows(rng, n, range(3 * r, 3 * r + 3)) for r, n in enumerate((40, 0, 57))]
    gathered = sorted([row for rows in ranks for row in rows], key=lambda r: r.sent_s)
    parts = []
    for r, rows in enumerate(ranks):
        parts.append(tmp_path / f"rank-{r}.csv")
        assert write_rows(parts[-1], list(rows)) == len(rows)
    assert merge_rows(parts, tmp_path / "merged.csv") == len(gathered)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["merged.csv"]  # parts removed
    expected = Ledger(gathered)
    assert (tmp_path / "merged.csv").read_text() == expected.to_csv()
    stored = StoredLedger(tmp_path / "merged.csv", len(gathered))
    assert list(stored) == gathered and len(stored) == len(gathered)
    assert stored[5] == gathered[5] and stored[-1] == gathered[-1]
    roles = {p: "site" for p in range(10)}
    assert stored.totals() == expected.totals()
    assert stored.per_party(roles) == expected.per_party(roles)
    for by in ("protocol", "phase"):
        assert stored.summary(by) == expected.summary(by)
    assert list(stored.select(phase="iter")) == list(expected.select(phase="iter"))
    np.testing.assert_array_equal(stored.column("bytes"), expected.column("bytes"))
    assert stored[2:9] == tuple(gathered[2:9])
    copy = pickle.loads(pickle.dumps(stored))
    assert type(copy) is Ledger and list(copy) == gathered
    (tmp_path / "merged.csv").unlink()  # still readable through its open descriptor
    assert list(stored.with_faults([{"fault": 0}])) == gathered
    stored.write_csv(tmp_path / "copy.csv")  # streamed from the file, as to_csv's text
    assert (tmp_path / "copy.csv").read_bytes() == expected.to_csv().encode()


def test_a_failed_write_leaves_no_file(tmp_path: Path) -> None:
    class Broken(list):
        def __iter__(self):
            yield Row(0, 1, "p", 0, "s", "", 1, 1, 8, 1, 0.0, 0.0)
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        write_rows(tmp_path / "rank-0.csv", Broken())
    assert list(tmp_path.iterdir()) == []


def sent_by_block(simpy_rows: list[dict[str, str]], m: int, ranks: int) -> dict[int, int]:
    """Messages sent by each rank's block of parties (block distribution written out)."""
    q, s = divmod(m, ranks)
    counts, start = {}, 0
    for r in range(ranks):
        block = range(start, start + q + (1 if r < s else 0))
        counts[r] = sum(int(row["sender"]) in block for row in simpy_rows)
        start = block.stop
    return counts


def without_times(text: str) -> list[tuple[str, ...]]:
    return sorted(tuple(row[:10]) for row in list(csv.reader(io.StringIO(text)))[1:])


def job(tmp_path: Path, scenario: Path, mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(MPIEXEC), "-n", "2", sys.executable,
                           str(HERE / "mpi_ledger_job.py"), str(scenario),
                           str(tmp_path / f"out_{mode}"), str(tmp_path / f"{mode}.json"),
                           *([mode] if mode != "store" else [])],
                          capture_output=True, text=True, timeout=300, check=False)


def test_each_rank_holds_only_its_own_ledger_rows(tmp_path: Path) -> None:
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    from sim.runner import run_scenario

    m = 7
    scenario = tmp_path / "sum.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=m)))
    simpy_csv = run_scenario(scenario).ledger_csv
    simpy_rows = list(csv.DictReader(io.StringIO(simpy_csv)))
    own = sent_by_block(simpy_rows, m, 2)
    reports = {}
    for mode in ("store", "gathered"):
        done = job(tmp_path, scenario, mode)
        assert done.returncode == 0, done.stderr[-3000:]
        reports[mode] = json.loads((tmp_path / f"{mode}.json").read_text())
    blocks = {0: [0, 1, 2, 3], 1: [4, 5, 6]}
    for report in reports["store"]:
        (at_sink,) = report["at_sink"]
        assert at_sink["handed"] == at_sink["rows"] == own[report["rank"]] > 0
        assert at_sink["senders"] == blocks[report["rank"]]
        assert report["after"] == {"rows": 0, "senders": []}
        assert report["kind"] == "StoredLedger"
        assert report["length"] == report["read_back"] == len(simpy_rows)
    for report in reports["gathered"]:
        assert report["after"] == {"rows": len(simpy_rows), "senders": list(range(m))}
    merged = (tmp_path / "out_store" / "ledger.csv").read_text()
    assert without_times(merged) == without_times(simpy_csv)
    sent = [float(r["sent_s"]) for r in csv.DictReader(io.StringIO(merged))]
    assert sent == sorted(sent)
    assert without_times((tmp_path / "out_gathered" / "ledger.csv").read_text()) == (
        without_times(merged))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no staging left


def test_a_run_failing_after_its_rows_were_written_leaves_no_ledger_file(
        tmp_path: Path) -> None:
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    scenario = tmp_path / "sum.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=4)))
    done = job(tmp_path, scenario, "fail")
    assert done.returncode != 0
    assert "rows written: [{" in done.stderr  # the sink ran before the failure
    assert "the report fails after the ledger was written" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sum.toml"]
