"""Runs that cannot fit are refused before they start; a misjudged one ends with one line.

Issue 29: a coalition study over every coalition of a 40-party run was estimated at 138 MB and
grew until the kernel killed it; an exact audit in GF(2^61 − 1) raised ``MemoryError`` from
its enumeration. The counts these tests hold the refusals to are computed here (``math``), not
read from the estimator.
"""

from __future__ import annotations

import json
import math
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from protocols.errors import InputError, ScenarioError
from sim.estimate import allocation_cap, ranks_sharing_memory, study_size
from sim.runner import plan_scenario
from sim.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[2]
P61 = 2**61 - 1


def _secure_sum(parties: int, audit: dict, rows: int = 80, cols: int = 4) -> dict:
    return {"name": "limits", "seed": 1, "network": {"parties": parties},
            "data": {"source": "synthetic", "rows": rows, "cols": cols},
            "algorithm": {"name": "secure_sum", "variant": "explicit"}, "audit": [audit]}


def test_a_study_of_every_coalition_of_40_parties_is_refused_before_it_starts() -> None:
    """2^40 − 2 coalitions cannot be held in memory: refused by the estimate, naming them."""
    with pytest.raises(InputError) as caught:
        plan_scenario(_secure_sum(40, {"coalitions": "all", "method": "linear"}))
    message = str(caught.value)
    assert f"{2**40 - 2:,} coalitions" in message and "sizes" in message
    assert "memory available" in message


@pytest.mark.parametrize(("parties", "sizes"), [(40, [1, 2]), (12, [1, 2, 3]), (8, [7])])
def test_study_size_counts_the_coalitions_of_the_sizes(parties: int, sizes: list[int]) -> None:
    spec = load_scenario(_secure_sum(parties, {"sizes": sizes, "method": "linear"})).audits[0]
    assert study_size(spec, parties) == sum(math.comb(parties, t) for t in sizes)


def test_a_small_study_of_40_parties_still_runs_its_estimate() -> None:
    plan = plan_scenario(_secure_sum(40, {"sizes": [1], "method": "linear"}))
    assert "40 coalitions in studies" in plan.estimate.basis


def test_an_exact_audit_in_a_61_bit_field_is_refused_before_it_enumerates() -> None:
    audit = {"coalition": [0], "method": "exact", "prime": "2^61-1", "max_runs": 6500}
    with pytest.raises(ScenarioError) as caught:
        plan_scenario(_secure_sum(3, audit))
    assert f"about 2^{round(2 * math.log2(P61))}" in str(caught.value)
    assert "max_runs = 6,500" in str(caught.value)


@pytest.mark.parametrize(("max_runs", "refused"), [(5**2, True), (5**2 + 1, False)])
def test_the_exact_refusal_is_at_the_enumeration_of_the_honest_inputs(max_runs: int,
                                                                       refused: bool) -> None:
    """Three parties, coalition {0}: the audit runs once, then once per honest input of the
    two others in GF(5) — 5^2 + 1 runs before any tape."""
    audit = {"coalition": [0], "method": "exact", "max_runs": max_runs}
    if refused:
        with pytest.raises(ScenarioError, match=re.escape("5^2 = 25 runs")):
            plan_scenario(_secure_sum(3, audit))
    else:
        plan_scenario(_secure_sum(3, audit))


def test_allocation_cap_adds_what_the_process_holds_and_headroom() -> None:
    assert allocation_cap(available=3e9, current=1e9, headroom=5e8) == int(4.5e9)


def _no_inherited_cap() -> None:
    """In the child: no address-space limit inherited from the test process."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))


def _python(program: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                          text=True, timeout=600, check=False, preexec_fn=_no_inherited_cap)


def test_an_allocation_past_the_cap_raises_memory_error() -> None:
    done = _python(
        "import numpy as np\n"
        "from sim.estimate import _address_space, cap_allocations\n"
        "cap = cap_allocations(int(_address_space() + 300e6))\n"
        "small = np.ones(10_000_000)  # 80 MB: within\n"
        "try:\n"
        "    np.ones(100_000_000)  # 800 MB: past the cap\n"
        "except MemoryError:\n"
        "    print('refused', cap_allocations(cap // 2) == cap)  # a cap set is kept\n")
    assert done.stdout.strip() == "refused True", done.stderr


def test_a_run_that_outgrows_a_wrong_estimate_ends_with_one_error_line(tmp_path: Path) -> None:
    """The estimate is made to let the run through (as a misestimate would) on a machine said
    to have 200 MB: the run's data alone (4 × 10^6 × 20 doubles, 640 MB) passes the cap, and the
    command line ends with one ``error:`` line, status 2, and no --out directory."""
    scenario = tmp_path / "big.toml"
    scenario.write_text('name = "big"\nseed = 1\n[network]\nparties = 3\n[data]\n'
                        'source = "synthetic"\nrows = 4000000\ncols = 20\n'
                        '[algorithm]\nname = "secure_sum"\n', encoding="utf-8")
    out = tmp_path / "out"
    done = _python(
        "import sys\nimport sim.estimate, sim.runner\n"
        "sim.estimate.available_memory = lambda: 200e6\n"
        "sim.estimate.VIRTUAL_HEADROOM = 0.0\n"
        "sim.runner.check_fits = lambda *a, **k: None  # the misestimate\n"
        "from sim.cli import main\n"
        f"sys.argv = ['mpcsim', 'run', {str(scenario)!r}, '--quiet', '--out', {str(out)!r}]\n"
        "sys.exit(main())  # as the program: with its cap\n")
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("error: the run ran out of the memory")
    assert not out.exists()


def test_ranks_on_one_host_divide_the_memory_a_run_may_fill() -> None:
    """Three ranks on a host may each fill a third of what one process may (issue 29: every
    rank had the whole cap); the headroom is address space, kept per process."""
    assert allocation_cap(available=3e9, current=1e9, headroom=5e8, share=3) == int(2.5e9)
    assert allocation_cap(available=3e9, current=1e9, headroom=5e8, share=1) == int(4.5e9)


@pytest.mark.parametrize(("environ", "ranks"), [
    ({}, 1), ({"MPI_LOCALNRANKS": "4", "PMI_SIZE": "8"}, 4),
    ({"OMPI_COMM_WORLD_LOCAL_SIZE": "3"}, 3), ({"PMI_SIZE": "6"}, 6),
    ({"MPI_LOCALNRANKS": "", "PMI_SIZE": "2"}, 2), ({"MPI_LOCALNRANKS": "0"}, 1)])
def test_ranks_sharing_memory_reads_the_launcher(environ: dict[str, str], ranks: int) -> None:
    assert ranks_sharing_memory(environ) == ranks


def test_every_rank_of_an_mpi_run_takes_its_share_of_the_cap(tmp_path: Path) -> None:
    """Under the installed mpiexec, each of 3 ranks caps its address space at what it holds,
    headroom, and a third of the memory the run may fill (here said to be 600 MB), and
    refuses a run whose estimate exceeds its third."""
    import sysconfig

    pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
    mpiexec = Path(sysconfig.get_path("scripts")) / "mpiexec"
    program = (
        "import argparse, json, resource, sim.estimate as e\n"
        "e.available_memory = lambda: 750e6  # 80 %: 600 MB to divide\n"
        "e.VIRTUAL_HEADROOM = 1e8\n"
        "held = e._address_space()\n"
        "from sim import cli\n"
        "args = argparse.Namespace(scenario=" + repr(str(ROOT / "scenarios/quickstart.toml"))
        + ", driver='mpi', seed=None, out=None, quiet=True, json=False, command='run')\n"
        "seen = {}\n"
        "def planned(a, p, share):\n"
        "    seen['share'] = share\n"
        "    seen['limit'] = e.memory_limit(share)\n"
        "    return 0\n"
        "cli._run_checked = planned\n"
        "cli._run(args, cap_memory=True)\n"
        "soft, _ = resource.getrlimit(resource.RLIMIT_AS)\n"
        "import os\n"
        f"with open(os.path.join({str(tmp_path)!r}, os.environ['PMI_RANK']), 'w') as fh:\n"
        "    json.dump({'beyond': soft - held, **seen}, fh)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([str(mpiexec), "-n", "3", sys.executable, "-c", program], env=env,
                          capture_output=True, text=True, timeout=300, check=False,
                          preexec_fn=_no_inherited_cap)
    assert done.returncode == 0, done.stderr
    ranks = [json.loads(path.read_text()) for path in sorted(tmp_path.iterdir())]
    assert len(ranks) == 3
    for rank in ranks:
        assert rank["share"] == 3 and rank["limit"] == pytest.approx(200e6)
        # what the rank held at its cap (a few pages of imports since `held`) + 200 MB + 100 MB
        assert 300e6 <= rank["beyond"] <= 300e6 + 50e6
