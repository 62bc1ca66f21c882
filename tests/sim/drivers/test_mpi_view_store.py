"""Scenario runs under MPI with no rank holding every view (issue 32, item 3;
:mod:`sim.view_store`).

Real ``mpcsim run --ranks 2`` jobs: each rank writes its own parties' view files, rank 0 merges
the index, and the run's audits and attacks read views from the on-disk store. The tests hold
the job to the same scenario run under SimPy in process: the view files' payloads (parsed with
numpy from the format's description, not by the store's reader) are the SimPy views', the
index names the rank block distribution gives, verdicts agree, a planted leak is caught and
its honest input recovered from the files, a failed run leaves nothing, and
``record_views = false`` writes no view. ``mpi_store_job.py`` counts the views each rank holds.
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
sys.path.insert(0, str(HERE.parent))

from test_view_store import received_on_disk  # noqa: E402

from sim.runner import run_scenario  # noqa: E402
from sim.view_store import ViewStore  # noqa: E402

SUM = """
    seed = 5
    write_views = true
    [network]
    parties = {m}
    [data]
    source = "synthetic"
    rows = {rows}
    cols = {cols}
    [algorithm]
    name = "secure_sum"
"""


def mpcsim_run(scenario: Path, out: Path, ranks: int = 2) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "sim.cli", "run", str(scenario), "--ranks",
                           str(ranks), "--quiet", "--json", "--out", str(out)],
                          capture_output=True, text=True, timeout=600, check=False)


def blocks(m: int, ranks: int) -> dict[int, int]:
    """Block distribution written out: rank r runs the r-th contiguous block of ids."""
    q, s = divmod(m, ranks)
    owner, start = {}, 0
    for r in range(ranks):
        size = q + (1 if r < s else 0)
        owner.update({p: r for p in range(start, start + size)})
        start += size
    return owner


def messages(view_file: Path) -> list[tuple]:
    """A view file's received messages without arrival times, in a fixed order (MPI delivers
    messages of different senders in the order they arrive)."""
    rows = received_on_disk(view_file)
    return sorted(((s, p, c, st, r, arr.dtype.str, arr.tobytes()) for s, p, c, st, r, arr
                   in rows), key=lambda x: x[:5])


def test_each_rank_writes_its_parties_views_equal_to_the_simpy_run(tmp_path) -> None:
    scenario = tmp_path / "sum.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=5, rows=50, cols=7)))
    done = mpcsim_run(scenario, tmp_path / "mpi")
    assert done.returncode == 0, done.stderr[-3000:]
    simpy = run_scenario(scenario, out=tmp_path / "simpy")
    index = json.loads((tmp_path / "mpi" / "views" / "index.json").read_text())["parties"]
    owner = blocks(5, 2)
    assert [(e["party"], e["rank"]) for e in index] == sorted(owner.items())
    simpy_index = json.loads((tmp_path / "simpy" / "views" / "index.json").read_text())
    assert [e["digest"] for e in index] == [e["digest"] for e in simpy_index["parties"]]
    for pid, view in simpy.run.result.views.items():
        on_disk = messages(tmp_path / "mpi" / "views" / f"party-{pid}.view")
        expected = sorted(((m.sender, m.protocol, m.call, m.step, m.round, m.payload.dtype.str,
                            np.ascontiguousarray(m.payload).tobytes()) for m in view.received),
                          key=lambda x: x[:5])
        assert on_disk == expected and len(on_disk) > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mpi", "simpy", "sum.toml"]


LEAKS = '''
"""A masked sum of column 0 declared with SecureSum's judge, and a planted leak: party 0 also
sends its encoded rows to party 1 in the clear, inside the same call."""
import numpy as np
from protocols import secure_sum
from protocols.context import add_one_stream_mask
from protocols.effects import Input, Output, Recv, RecvEach, Send, SendEach
from protocols.registry import declare_protocol

DECLARATION = declare_protocol("csum", functionality=secure_sum.functionality,
                               simulator=secure_sum.SecureSumSimulator,
                               honest_inputs=secure_sum.honest_inputs)


def column_sum(ctx, X, copy=False):
    x = ctx.fixed.encode(np.asarray(X)[:, 0], n_summands=ctx.n_parties)
    call = ctx.new_call("csum")
    yield Input("x", x, call)
    masked = add_one_stream_mask(ctx.randomness, ctx.party, ctx.peers, call, x, ctx.field)
    yield SendEach(dict.fromkeys(ctx.peers, masked), call, "column_sum")
    if copy and ctx.party == 0:
        yield Send(1, x, call, "copy")
    if copy and ctx.party == 1:
        yield Recv(0, call, "copy")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = ctx.field.sum_arrays([masked, *got.values()])
    yield Output("sum", total, call)
    return ctx.fixed.decode(total)


def honest(ctx, X):
    return (yield from column_sum(ctx, X))


def plain_copy(ctx, X):
    return (yield from column_sum(ctx, X, copy=True))
'''


def leak_case(tmp_path: Path, function: str) -> Path:
    data = np.random.default_rng(8).uniform(0.0, 10.0, size=(12, 1))
    np.savetxt(tmp_path / "data.csv", data, delimiter=",")
    (tmp_path / "planted").mkdir(exist_ok=True)
    (tmp_path / "planted" / "__init__.py").write_text("")
    (tmp_path / "planted" / "leaks.py").write_text(LEAKS)
    path = tmp_path / f"{function}.toml"
    path.write_text(textwrap.dedent(f'''
        seed = 3
        write_views = true
        [network]
        parties = 3
        [data]
        source = "file"
        path = "data.csv"
        partition = [4, 4, 4]
        [algorithm]
        program = "planted.leaks:{function}"
        protocol = "planted.leaks:DECLARATION"
        [[audit]]
        method = "simulation"
        coalition = [1]
        trials = 40
    '''))
    return path


@pytest.mark.parametrize(("function", "verdict"), [("honest", "private"),
                                                   ("plain_copy", "leak")])
def test_audit_verdicts_under_mpi_equal_simpy_s_through_the_store(tmp_path, function,
                                                                  verdict) -> None:
    scenario = leak_case(tmp_path, function)
    done = mpcsim_run(scenario, tmp_path / "mpi")
    assert done.returncode == 0, done.stderr[-3000:]
    mpi_audits = json.loads(done.stdout)["privacy"]
    simpy_audits = run_scenario(scenario).report["privacy"]
    assert [a["verdict"] for a in mpi_audits] == [a["verdict"] for a in simpy_audits] == [
        verdict]
    assert [a["message"] for a in mpi_audits] == [a["message"] for a in simpy_audits] == [
        "csum#1.copy from 0 to 1" if function == "plain_copy" else None]
    # the attack: party 1's view, read from the store rank 1 wrote, holds party 0's rows
    store = ViewStore.open(tmp_path / "mpi" / "views")
    view = store[1]
    copies = [m.payload for m in view.received if m.sender == 0 and m.step == "copy"]
    rows = np.loadtxt(tmp_path / "data.csv", delimiter=",")[:4]
    if function == "plain_copy":  # fixed point with 24 fractional bits, decoded here
        (recovered,) = copies
        np.testing.assert_allclose(recovered.astype(np.float64) / 2**24, rows, atol=2**-24)
    else:
        assert copies == []
        # SecureSum's shares alone are uniform masks: no payload party 1 got equals the rows
        assert not any(m.payload.shape == rows.shape and np.allclose(m.payload, rows)
                       for m in view.received)


def test_a_failed_run_leaves_no_view_file(tmp_path) -> None:
    (tmp_path / "failing.py").write_text(textwrap.dedent('''
        import numpy as np
        from protocols.secure_sum import secure_sum

        def program(ctx, X):
            total = yield from secure_sum(ctx, np.asarray(X)[:, 0])
            if ctx.party == 3:
                raise RuntimeError("party 3 fails after its views were recorded")
            return total
    '''))
    scenario = tmp_path / "fail.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=4, rows=8, cols=2)).replace(
        'name = "secure_sum"', 'program = "failing:program"'))
    done = mpcsim_run(scenario, tmp_path / "out")
    assert done.returncode != 0
    assert "party 3" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fail.toml", "failing.py"]


def test_record_views_false_writes_no_view_under_mpi(tmp_path) -> None:
    scenario = tmp_path / "off.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=4, rows=20, cols=3)).replace(
        "write_views = true", "record_views = false"))
    done = mpcsim_run(scenario, tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "ledger.csv", "outputs.npz", "report.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["off.toml", "out"]


def test_each_rank_holds_only_its_own_parties_views(tmp_path) -> None:
    """At the end of the simulation, just before the views go to disk, the View objects
    alive in a rank are its own parties', their payload bytes those of the same parties'
    views in the SimPy run; after the run (metrics and the report read from the store) no
    rank holds a received payload in memory. The run as before issue 32 (views gathered)
    holds every party's view at every rank."""
    m, ranks = 8, 2
    scenario = tmp_path / "sum.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=m, rows=80, cols=300)))
    simpy = run_scenario(scenario).run.result.views
    own_bytes = {p: sum(msg.payload.nbytes for msg in v.received) for p, v in simpy.items()}
    owner = blocks(m, ranks)
    reports = {}
    for mode in ("store", "gathered"):
        report = tmp_path / f"{mode}.json"
        done = subprocess.run([str(MPIEXEC), "-n", str(ranks), sys.executable,
                               str(HERE / "mpi_store_job.py"), str(scenario),
                               str(tmp_path / f"out_{mode}"), str(report),
                               *(["gathered"] if mode == "gathered" else [])],
                              capture_output=True, text=True, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        reports[mode] = json.loads(report.read_text())
    for rank_report in reports["store"]:
        mine = sorted(p for p, r in owner.items() if r == rank_report["rank"])
        (at_sink,) = rank_report["at_sink"]
        assert at_sink["parties"] == mine
        assert at_sink["bytes"] == sum(own_bytes[p] for p in mine) > 0
        assert rank_report["after"] == {"parties": [], "bytes": 0}
        assert rank_report["readable"] == (list(range(m)) if rank_report["rank"] == 0 else [])
    # rank 0 reads the views from out/views once written there; other ranks from the staging
    # directory, which rank 0 removed: a rank other than 0 does no post-run work
    assert reports["store"][0]["store"] == str(tmp_path / "out_store" / "views")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    for rank_report in reports["gathered"]:
        assert rank_report["after"] == {"parties": list(range(m)),
                                        "bytes": sum(own_bytes.values())}


def test_a_crash_that_deadlocks_the_run_leaves_no_view_file(tmp_path) -> None:
    """A [[fault]] crash at the start: SecureSum waits for the crashed party's share, the run
    ends in a deadlock error on every rank — neither --out nor a staging directory is left."""
    scenario = tmp_path / "crash.toml"
    scenario.write_text(textwrap.dedent(SUM.format(m=4, rows=20, cols=3)) + textwrap.dedent('''
        [[fault]]
        kind = "crash"
        party = 2
        at_s = 0.0
    '''))
    done = mpcsim_run(scenario, tmp_path / "out")
    assert done.returncode == 1
    assert "deadlock" in done.stderr and "party 2" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["crash.toml"]
