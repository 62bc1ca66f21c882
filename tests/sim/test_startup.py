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

ENTRY_HEAVY = ("protocols", "sim.plots", "sim.privacy", "sim.ledger")
"""Also kept out of the catalogue modules' top level (all of protocols but its errors)."""

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
    return sorted(m for m in modules
                  if any(m == h or m.startswith(h + ".") for h in HEAVY))


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


def test_vocabulary_spelled_out_for_the_catalogue_equals_its_source():
    """Entries spell out their algorithms' choices so as not to import them; the copies agree."""
    from algorithms.cape.moments import MODELS
    from algorithms.cape.pca import ORDERS
    from algorithms.cape.tensor_power import MODES
    from algorithms.nmf.pd_nmf import INITS
    from protocols.correlated_noise import NOISE_KINDS, SCHEMES
    from protocols.secure_sum import ALL_VARIANTS, VARIANTS
    from sim.experiments import secure_sum
    from sim.experiments.cape import cape_setup
    from sim.experiments.nmf import pd_nmf

    assert (secure_sum.VARIANTS, secure_sum.ALL_VARIANTS) == (VARIANTS, ALL_VARIANTS)
    assert pd_nmf.INITS == INITS
    assert (cape_setup.NOISE_KINDS, cape_setup.SCHEMES) == (NOISE_KINDS, SCHEMES)
    assert (cape_setup.ORDERS, cape_setup.MODELS, cape_setup.MODES) == (ORDERS, MODELS, MODES)


def test_vocabulary_of_the_later_entries_equals_its_source():
    from algorithms.nmf.corrective import MISSING_RULES, MODES
    from algorithms.svd.pd_svd import VARIANTS as SVD_VARIANTS
    from protocols.normed_secure_sum import PRESETS
    from protocols.normed_secure_sum import VARIANTS as NSS_VARIANTS
    from sim.experiments.nmf import corrective_nmf, pd_nmf
    from sim.experiments.svd import normed_secure_sum, pd_svd

    assert pd_svd.VARIANTS == pd_nmf.SVD_VARIANTS == SVD_VARIANTS
    assert normed_secure_sum.PRESET_NAMES == tuple(PRESETS)
    assert normed_secure_sum.NSS_VARIANTS == NSS_VARIANTS
    assert (corrective_nmf.MODES, corrective_nmf.MISSING_RULES) == (MODES, MISSING_RULES)


def test_vocabulary_of_the_secagg_and_table_entries_equals_its_source():
    from algorithms.nmf.corrective import REPLACE_BASES
    from protocols.secagg import GRAPHS
    from sim.experiments import secagg
    from sim.experiments.nmf import corrective_nmf_tables

    assert secagg.GRAPHS == GRAPHS
    assert corrective_nmf_tables.REPLACE_BASES == REPLACE_BASES


def test_no_catalogue_module_imports_a_heavy_module_at_its_top():
    """Each entry module on its own, read rather than imported, so that the message names the
    module and the import to move into the function that needs it."""
    import ast

    offenders = []
    for path in sorted((ROOT / "sim" / "experiments").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            else:
                continue
            bad = [n for n in names if not n.startswith("protocols.errors") and any(
                n == h or n.startswith(h + ".") for h in HEAVY + ENTRY_HEAVY)]
            if bad:
                offenders.append(f"{path.name}:{node.lineno} imports {bad[0]}")
    assert offenders == [], "import these inside the functions that use them:\n" + "\n".join(
        offenders)
