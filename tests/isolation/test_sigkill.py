"""A run killed with SIGKILL at any moment leaves no ``--out`` directory or a complete one.

Real ``mpcsim run SCENARIO --out DIR`` processes are killed: while the interpreter starts,
while the run computes, while the files are being written (the moment the staging directory
appears beside DIR), and at spread-out fractions of an uninterrupted run's duration. After
each kill DIR is either absent, or holds exactly the files of an uninterrupted run with the
same seed, byte for byte where the run replays (ledger and outputs) and parseable as a whole.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

SCENARIO = """\
name = "killed"
seed = 5
[network]
parties = 3
[data]
source = "synthetic"
rows = 30
cols = 6
[algorithm]
name = "secure_sum"
"""


def start(scenario: Path, out: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "sim.cli", "run", str(scenario), "--out", str(out), "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=scenario.parent,
    )


def kill(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def check_absent_or_complete(out: Path, reference: Path) -> str:
    if not out.exists():
        return "absent"
    names = sorted(p.name for p in out.iterdir())
    assert names == sorted(p.name for p in reference.iterdir()), f"partial --out: {names}"
    for name in ("ledger.csv", "outputs.npz"):  # these replay byte for byte
        assert (out / name).read_bytes() == (reference / name).read_bytes()
    report = json.loads((out / "report.json").read_text())
    assert report["seed"] == 5 and report["communication"]["total_messages"] > 0
    with np.load(out / "outputs.npz") as outputs:
        assert list(outputs)
    return "complete"


def test_a_killed_run_leaves_no_out_directory_or_a_complete_one(tmp_path: Path) -> None:
    scenario = tmp_path / "killed.toml"
    scenario.write_text(SCENARIO)
    reference = tmp_path / "reference"
    began = time.perf_counter()
    assert start(scenario, reference).wait(timeout=300) == 0
    duration = time.perf_counter() - began
    outcomes = []

    # while the files are written: kill as soon as the staging directory appears
    out = tmp_path / "writing"
    proc = start(scenario, out)
    while proc.poll() is None and not any(p.name.startswith(".writing.")
                                          for p in tmp_path.iterdir()):
        time.sleep(0.0002)
    kill(proc)
    outcome = check_absent_or_complete(out, reference)
    staged = any(p.name.startswith(".writing.") for p in tmp_path.iterdir())
    assert staged or outcome == "complete"  # killed while writing, or it won the race
    outcomes.append(outcome)

    for i, fraction in enumerate((0.0, 0.5, 0.9, 1.1)):
        out = tmp_path / f"killed{i}"
        proc = start(scenario, out)
        time.sleep(fraction * duration)
        kill(proc)
        outcomes.append(check_absent_or_complete(out, reference))
    assert "absent" in outcomes  # at least one kill landed before the end


@pytest.mark.parametrize("existing", ["missing", "empty"])
def test_an_uninterrupted_run_writes_the_directory_in_one_step(tmp_path: Path,
                                                              existing: str) -> None:
    """The staging directory becomes DIR by one rename (an empty DIR is replaced), with the
    permissions a directory made by the user would have."""
    from sim.report import write_files

    out = tmp_path / "out"
    if existing == "empty":
        out.mkdir()
    written = write_files(out, {"a.txt": b"a", "b.txt": b"b"})
    assert sorted(p.name for p in written) == ["a.txt", "b.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging left
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o777 & ~mask
