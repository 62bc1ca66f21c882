"""A user's own program from a scenario file, the CLI, ``--driver mpi`` and an installed package.

Issue 30: ``[algorithm] program = "package.module:function"`` runs a module importable from
the scenario's directory, each party on its own rows; ``protocol = "module:DECLARATION"``
names the declaration its audits judge by. An installed distribution adds catalogue entries
(``mpcsim.algorithms``) and protocol declarations (``mpcsim.protocols``) through entry points.
Expected values come from numpy on the scenario's own CSV.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import numpy as np
import pytest

from protocols.errors import ScenarioError
from sim.runner import run_scenario

ROOT = Path(__file__).resolve().parents[2]

MODULE = '''
"""A weighted average over every party's rows: column 0 weighted by column 1."""
import numpy as np
from protocols import secure_sum
from protocols.context import add_one_stream_mask
from protocols.effects import Input, Output, RecvEach, SendEach
from protocols.registry import declare_protocol

DECLARATION = declare_protocol("wsum", functionality=secure_sum.functionality,
                               simulator=secure_sum.SecureSumSimulator,
                               honest_inputs=secure_sum.honest_inputs)


def masked_sum(ctx, pair, chain):
    call = ctx.new_call("wsum")
    yield Input("x", pair, call)
    peers = [p for p in ctx.peers if abs(p - ctx.party) == 1] if chain else ctx.peers
    masked = add_one_stream_mask(ctx.randomness, ctx.party, peers, call, pair, ctx.field)
    yield SendEach(dict.fromkeys(ctx.peers, masked), call, "column_sum")
    got = yield RecvEach(ctx.peers, call, "column_sum")
    total = ctx.field.sum_arrays([masked, *got.values()])
    yield Output("sum", total, call)
    return total


def average(ctx, X, chain=False):
    X = np.asarray(X)
    pair = ctx.fixed.encode(np.array([X[:, 1] @ X[:, 0], X[:, 1].sum()]),
                            n_summands=ctx.n_parties)
    total = yield from masked_sum(ctx, pair, chain)
    s = ctx.fixed.decode(total)
    return s[0] / s[1]


def buggy(ctx, X):
    return (yield from average(ctx, X, chain=True))
'''


def write_case(tmp_path: Path, function: str = "average") -> tuple[Path, np.ndarray]:
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.uniform(0, 10, 12), rng.uniform(0.1, 1, 12)])
    np.savetxt(tmp_path / "data.csv", X, delimiter=",")
    (tmp_path / "wavg").mkdir(exist_ok=True)
    (tmp_path / "wavg" / "__init__.py").write_text("")
    (tmp_path / "wavg" / "protocol.py").write_text(MODULE)
    path = tmp_path / f"{function}.toml"
    path.write_text(textwrap.dedent(f'''
        seed = 4
        [network]
        parties = 3
        [data]
        source = "file"
        path = "data.csv"
        [algorithm]
        program = "wavg.protocol:{function}"
        protocol = "wavg.protocol:DECLARATION"
        [[audit]]
        method = "simulation"
        coalition = [1]
        trials = 150
    '''))
    return path, X


def test_a_user_program_runs_from_a_scenario_and_its_planted_bug_is_a_leak(tmp_path) -> None:
    path, X = write_case(tmp_path)
    run = run_scenario(path)
    expected = X[:, 1] @ X[:, 0] / X[:, 1].sum()
    assert run.report["metrics"]["outputs_agree"] is True
    assert [a["verdict"] for a in run.report["privacy"]] == ["private"]
    bug, _ = write_case(tmp_path, "buggy")
    leak = run_scenario(bug)
    assert [a["verdict"] for a in leak.report["privacy"]] == ["leak"]
    out = tmp_path / "out"
    run.write(out)
    saved = np.load(out / "outputs.npz")
    for m in range(3):
        assert float(saved[f"party_{m}"]) == pytest.approx(expected, abs=1e-5)


def test_a_program_that_does_not_load_is_a_scenario_error_naming_it(tmp_path) -> None:
    path, _ = write_case(tmp_path)
    for value, pattern in [("wavg.protocol:nothing", "has no 'nothing'"),
                           ("no_such_pkg_xyz.mod:f", "does not import"),
                           ("wavg.protocol", "must be 'package.module:name'")]:
        path.write_text(path.read_text().replace('program = "wavg.protocol:average"',
                                                 f'program = "{value}"'))
        with pytest.raises(ScenarioError, match=pattern):
            run_scenario(path)
        path.write_text(path.read_text().replace(f'program = "{value}"',
                                                 'program = "wavg.protocol:average"'))


def _env(extra: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in (ROOT, extra) if p is not None)
    return env


def test_the_cli_and_the_mpi_driver_run_the_same_user_program(tmp_path) -> None:
    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    path, X = write_case(tmp_path)
    expected = X[:, 1] @ X[:, 0] / X[:, 1].sum()
    simpy = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(path), "--out",
                            str(tmp_path / "simpy")], env=_env(), capture_output=True,
                           text=True, timeout=600)
    assert simpy.returncode == 0, simpy.stderr
    mpiexec = Path(sysconfig.get_path("scripts")) / "mpiexec"
    mpi = subprocess.run([str(mpiexec), "-n", "3", sys.executable, "-m", "sim.cli", "run",
                          str(path), "--driver", "mpi", "--out", str(tmp_path / "mpi")],
                         env=_env(), capture_output=True, text=True, timeout=600)
    assert mpi.returncode == 0, mpi.stderr
    for out in ("simpy", "mpi"):
        saved = np.load(tmp_path / out / "outputs.npz")
        assert [float(saved[f"party_{m}"]) for m in range(3)] == pytest.approx(
            [expected] * 3, abs=1e-5)
        report = json.loads((tmp_path / out / "report.json").read_text())
        assert [a["verdict"] for a in report["privacy"]] == ["private"]


def test_an_installed_package_adds_an_entry_and_a_protocol(tmp_path) -> None:
    site = tmp_path / "site"
    (site / "wpkg").mkdir(parents=True)
    (site / "wpkg" / "__init__.py").write_text("")
    (site / "wpkg" / "protocol.py").write_text(MODULE + textwrap.dedent('''
        from sim.experiments.user_program import program_entry

        ENTRY = program_entry({"program": "wpkg.protocol:average", "name": "wpkg_average",
                               "protocol": "wpkg.protocol:DECLARATION"}, None)
    '''))
    info = site / "wpkg-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: wpkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[mpcsim.algorithms]\nwpkg_average = wpkg.protocol:ENTRY\n\n"
        "[mpcsim.protocols]\nwsum = wpkg.protocol:DECLARATION\n")
    listed = subprocess.run([sys.executable, "-m", "sim.cli", "list"], env=_env(site),
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    assert "wpkg_average" in listed.stdout
    registry = subprocess.run(
        [sys.executable, "-c", "from protocols.registry import default_registry; "
                               "print(sorted(default_registry()))"],
        env=_env(site), capture_output=True, text=True, timeout=300)
    assert "'wsum'" in registry.stdout, registry.stderr
    _, X = write_case(tmp_path)
    scenario = tmp_path / "installed.toml"
    scenario.write_text(textwrap.dedent('''
        seed = 4
        [network]
        parties = 3
        [data]
        source = "file"
        path = "data.csv"
        [algorithm]
        name = "wpkg_average"
    '''))
    ran = subprocess.run([sys.executable, "-m", "sim.cli", "run", str(scenario), "--out",
                          str(tmp_path / "inst")], env=_env(site), capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr
    saved = np.load(tmp_path / "inst" / "outputs.npz")
    assert float(saved["party_0"]) == pytest.approx(X[:, 1] @ X[:, 0] / X[:, 1].sum(), abs=1e-5)


def test_the_run_prints_each_call_cost_fitted_in_d_and_m_beside_the_ledger(tmp_path) -> None:
    path, _ = write_case(tmp_path)
    text = run_scenario(path).format()
    assert "fitted in d = columns and M = data holders" in text
    # the program sends the masked pair (2 elements) to each of the M − 1 peers: by hand,
    # M − 1 messages and 2(M − 1) elements per party, 2 and 4 at M = 3 as the ledger measured
    rows = [line.split() for line in text.splitlines() if line.lstrip().startswith("wsum#1")]
    cells = {r[2]: r[3:] for r in rows}
    assert cells["messages_sent"] == ["M", "−", "1", "2", "2"]
    assert cells["elements_sent"] == ["2M", "−", "2", "4", "4"]


def test_two_scenarios_whose_programs_share_a_name_each_run_their_own(tmp_path) -> None:
    """A module name imported from one scenario's directory must not stand in for another
    directory's module of the same name (the second file would never load)."""
    from sim.experiments.user_program import load_object

    values = {}
    for value in (3, 7):
        package = tmp_path / f"run{value}" / "samename"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "mod.py").write_text(f"VALUE = {value}\n")
        values[value] = load_object("samename.mod:VALUE", "program", package.parent)
    assert values == {3: 3, 7: 7}
    assert load_object("samename.mod:VALUE", "program", tmp_path / "run3") == 3
    sys.modules.pop("samename.mod", None)
    sys.modules.pop("samename", None)
