"""The command line answers ``--help``, ``list`` and argument errors without loading heavy modules.

No timing is asserted (``benchmarks/startup.py`` prints the figures); what is tested is the
cause of a slow start: which modules a fresh interpreter has imported when the command is done.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("numpy", "scipy", "networkx", "simpy", "matplotlib", "galois", "Crypto", "sklearn",
         "algorithms", "parties", "sim.simulation", "sim.runner", "sim.report", "sim.network")

ENTRY_HEAVY = ("protocols", "sim.plots", "sim.privacy", "sim.ledger", "sim.experiments")
"""Also kept out of the catalogue modules' top level (all of protocols but its errors)."""

LIGHT = ("protocols.errors", "protocols.vocabulary", "algorithms.vocabulary")
"""What the catalogue reads from below: the errors and the vocabularies, which import nothing
(their packages' ``__init__`` modules are empty)."""

PROBE = """
import contextlib, io, json, sys
from sim.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "err": err.getvalue(), "out": out.getvalue(),
                  "modules": sorted(sys.modules)}))
"""


def loaded(*argv: str) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if m not in ("algorithms", *LIGHT)
                  and any(m == h or m.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize(("argv", "code", "expect"), [
    (["--help"], 0, "usage: mpcsim"),
    (["run", "--help"], 0, "--out DIR"),
    (["list"], 0, "pd_nmf_init_comparison"),
    (["list", "pd_nmf"], 0, "integer, 1 ≤ x ≤ 10000"),
    (["run"], 2, "error: the following arguments are required: scenario"),
    (["frobnicate"], 2, "error: argument command: invalid choice"),
    (["run", "x.toml", "--seed", "many"], 2, "error: argument --seed: invalid int value"),
    ([], 2, "error: the following arguments are required: command"),
    (["run", "missing.toml"], 2, "error: scenario file 'missing.toml' does not exist"),
    (["run", "scenarios"], 2, "is a directory, not a TOML file"),
])
def test_quick_commands_load_nothing_heavy(argv, code, expect):
    result = loaded(*argv)
    assert result["code"] == code
    assert expect in result["out"] + result["err"]
    assert heavy(result["modules"]) == []


def test_the_probe_sees_heavy_modules_when_they_are_loaded(tmp_path):
    """The check has the power to fail: a run past the file check does load the simulator."""
    path = tmp_path / "bad.toml"
    path.write_text('colour = "red"\n', encoding="utf-8")
    result = loaded("run", str(path))
    assert result["code"] == 2 and "unknown key 'colour'" in result["err"]
    assert "numpy" in heavy(result["modules"])


def test_an_unknown_algorithm_in_list_is_one_error_line():
    result = loaded("list", "secure_product")
    assert result["code"] == 2
    assert result["err"].startswith("error: algorithm.name = 'secure_product' is unknown")
    assert heavy(result["modules"]) == []


def test_the_catalogue_loads_without_numpy() -> None:
    """By construction: the declarations import no run code, so a fresh interpreter that
    imports the catalogue and reads every entry's keys has loaded nothing heavy."""
    probe = ("import json, sys\nfrom sim import catalog\n"
             "keys = {e.name: [(k, p.allowed()) for k, p in e.params.items()] "
             "for e in catalog.ENTRIES}\n"
             "print(json.dumps({'n': len(keys), 'modules': sorted(sys.modules)}))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    result = json.loads(done.stdout)
    assert result["n"] == 29
    assert "numpy" not in result["modules"]
    assert heavy(result["modules"]) == []
    assert not [m for m in result["modules"] if m.startswith("sim.experiments")]


def test_every_entry_names_code_that_loads() -> None:
    """Each ``"module:function"`` of the catalogue names a function of an experiment module."""
    from sim.catalog import ENTRIES
    from sim.entry import CODE_FIELDS, Code

    named = [(e.name, f, getattr(e, f)) for e in ENTRIES for f in CODE_FIELDS
             if isinstance(getattr(e, f), Code)]
    assert {name for name, field, _ in named if field == "run"} == {e.name for e in ENTRIES}
    for name, field, code in named:
        assert code.path.startswith("sim.experiments."), (name, field, code.path)
        assert callable(code.load()), (name, field, code.path)


@pytest.mark.parametrize("path", ["numpy", "sim.experiments.nmf.pd_nmf", "a.b:c-d", ":f"])
def test_run_code_must_be_module_colon_function(path: str) -> None:
    from protocols.errors import ScenarioError
    from sim.entry import Code

    with pytest.raises(ScenarioError, match=r"must be 'package\.module:function'"):
        Code(path)


def test_run_code_naming_a_missing_function_is_named() -> None:
    from protocols.errors import ScenarioError
    from sim.entry import Code

    with pytest.raises(ScenarioError, match="has no function 'no_such_run'"):
        Code("sim.experiments.secure_sum:no_such_run").load()


def test_vocabularies_import_nothing() -> None:
    """The one spelling of each user vocabulary sits in a module the catalogue can read without
    numpy: ``protocols.vocabulary`` and ``algorithms.vocabulary`` import nothing at all."""
    import ast

    for name in ("protocols", "algorithms"):
        tree = ast.parse((ROOT / name / "vocabulary.py").read_text(encoding="utf-8"))
        imported = [node for node in ast.walk(tree) if isinstance(node, ast.Import | ast.ImportFrom)
                    and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")]
        assert imported == [], f"{name}/vocabulary.py imports {ast.unparse(imported[0])}"


def _imports(path: Path, nested: bool) -> list[tuple[int, list[str]]]:
    """(line, imported names) of the module's imports: top level, or inside functions."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    if nested:
        nodes = [n for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
                 for n in ast.walk(f)]
    else:
        nodes = list(tree.body)
    out = []
    for node in nodes:
        if isinstance(node, ast.Import):
            out.append((node.lineno, [a.name for a in node.names]))
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, [node.module]
                        + [f"{node.module}.{a.name}" for a in node.names]))
    return out


def test_no_catalogue_module_imports_a_heavy_module_at_its_top():
    """Each declaration module on its own, read rather than imported, so that the message
    names the module and the import."""
    offenders = []
    for path in sorted((ROOT / "sim" / "catalog").glob("*.py")):
        for line, names in _imports(path, nested=False):
            bad = [n for n in names if not n.startswith(LIGHT) and any(
                n == h or n.startswith(h + ".") for h in HEAVY + ENTRY_HEAVY)]
            if bad:
                offenders.append(f"{path.name}:{line} imports {bad[0]}")
    assert offenders == [], "the catalogue declares; it imports no run code:\n" + "\n".join(
        offenders)


def test_experiment_modules_import_at_their_top():
    """The run code is imported only when an entry runs, so it imports what it needs at its
    top, as any module does."""
    offenders = [f"{path.relative_to(ROOT)}:{line}"
                 for path in sorted((ROOT / "sim" / "experiments").rglob("*.py"))
                 for line, _ in _imports(path, nested=True)]
    assert offenders == [], "imports inside functions:\n" + "\n".join(offenders)


AUDIT_MACHINERY = ("parties.audit", "scipy.stats")
"""Loaded only when an audit runs: a run without ``[[audit]]`` (an MPI rank's start, every
rank's) does not pay for them (``benchmarks/startup.py``, ``mpi job start``)."""


def test_a_run_without_an_audit_loads_no_audit_machinery() -> None:
    """SecureSum and PD-NMF scenarios without ``[[audit]]`` run in a fresh interpreter that
    has not loaded :mod:`parties.audit` or ``scipy.stats``; one with an ``[[audit]]`` has (the
    probe has the power to see them)."""
    probe = (
        "import json, sys\nfrom sim.runner import run_scenario\n"
        "base = {'name': 'x', 'seed': 1, 'network': {'parties': 3},\n"
        "        'data': {'source': 'synthetic', 'rows': 12, 'cols': 4}}\n"
        "for alg in ({'name': 'secure_sum'}, {'name': 'pd_nmf', 'k': 2, 'iterations': 2}):\n"
        "    run_scenario({**base, 'algorithm': alg})\n"
        "plain = sorted(sys.modules)\n"
        "run_scenario({**base, 'algorithm': {'name': 'secure_sum'},\n"
        "              'audit': [{'coalition': [0], 'method': 'simulation', 'trials': 10}]})\n"
        "print(json.dumps({'plain': plain, 'audited': sorted(sys.modules)}))\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    result = json.loads(done.stdout)
    assert [m for m in AUDIT_MACHINERY if m in result["plain"]] == []
    assert [m for m in AUDIT_MACHINERY if m in result["audited"]] == list(AUDIT_MACHINERY)


RUN_UNNEEDED = ("scipy.stats", "scipy.optimize", "numba", "galois", "matplotlib", "sklearn",
                "parties.audit", "sim.coalitions")
"""What a run without an ``[[audit]]`` table or plots never uses: the audits (scipy.stats),
the privacy accounting's root finding (scipy.optimize), the compiled kernels, the large-prime
fields, the plots. An MPI job pays every import once per rank before its first message."""

SECURE_SUM = """name = "startup"
seed = 1
[network]
parties = 4
[data]
source = "synthetic"
rows = 40
cols = 10
[algorithm]
name = "secure_sum"
"""


def test_a_run_without_audits_loads_no_audit_machinery(tmp_path) -> None:
    path = tmp_path / "secure_sum.toml"
    path.write_text(SECURE_SUM, encoding="utf-8")
    result = loaded("run", str(path))
    assert result["code"] == 0, result["err"]
    assert "sim.simulation" in result["modules"]  # the probe saw a whole run
    assert sorted(m for m in result["modules"] if any(
        m == u or m.startswith(u + ".") for u in RUN_UNNEEDED)) == []
    # nor the registry of declarations, which loads every protocol's simulator: only audits
    # judge calls against it
    assert "protocols.registry" not in result["modules"]


def test_the_run_path_imports_no_audit_machinery() -> None:
    """The modules an MPI job of SecureSum or PD-NMF imports on every rank (the runner, the
    simulation, the MPI driver, the two entries) load none of :data:`RUN_UNNEEDED`."""
    probe = ("import json, sys\nimport sim.runner, sim.simulation, sim.drivers.mpi, "
             "sim.experiments.secure_sum, sim.experiments.nmf.pd_nmf\n"
             "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    modules = json.loads(done.stdout)
    assert "sim.experiments.nmf.pd_nmf" in modules
    assert sorted(m for m in modules if any(
        m == u or m.startswith(u + ".") for u in RUN_UNNEEDED)) == []
