"""Without the mpi extra, ``--driver mpi`` ends with one error line naming the extra."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCENARIO = """\
seed = 1
[network]
parties = 2
[data]
source = "synthetic"
rows = 4
cols = 2
[algorithm]
name = "secure_sum"
"""

BLOCKED = """\
import sys
sys.modules["mpi4py"] = None  # as if the extra were not installed
from sim.cli import main
raise SystemExit(main(sys.argv[1:]))
"""


def test_missing_extra_is_one_error_line(tmp_path: Path) -> None:
    scenario = tmp_path / "s.toml"
    scenario.write_text(SCENARIO)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", BLOCKED, "run", str(scenario), "--driver",
                           "mpi", "--out", str(out)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: --driver mpi needs the MPI extra; install it with pip install -e '.[mpi]' "
        "(mpi4py and MPICH wheels)"]
    assert done.stdout == "" and not out.exists()
