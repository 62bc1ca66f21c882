"""The threshold below which SecureSum's calls keep the numpy paths (no numba in the process).

:data:`protocols.field.mersenne61.KERNEL_MIN_ELEMENTS`: the compiled kernels of
:mod:`protocols.field.mersenne61_kernels` cost a fresh process about half a second to load, which
runs of short vectors never win back. (The kernels' results are tested in
``test_mersenne61_kernels.py``.)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from protocols.field.mersenne61 import KERNEL_MIN_ELEMENTS

ROOT = Path(__file__).resolve().parents[2]

SHORT_RUN = """
import sys
import numpy as np
from parties.party import site_parties
from protocols.secure_sum import secure_sum
from sim.network import Network
from sim.simulation import Simulation
sim = Simulation(Network.build(3), seed=1)
xs = [{"x": np.ones(int(sys.argv[1]))} for _ in range(3)]
sim.run(site_parties(lambda ctx, x: secure_sum(ctx, x), xs))
print("numba" in sys.modules)
"""


def test_runs_of_short_vectors_never_load_numba() -> None:
    """numba costs a process ~0.5 s to load: a run of short vectors must not pay it, and a
    run at the threshold uses the kernels."""
    threshold = KERNEL_MIN_ELEMENTS
    for d, loaded in ((threshold - 1, "False"), (threshold, "True")):
        done = subprocess.run([sys.executable, "-c", SHORT_RUN, str(d)], cwd=ROOT,
                              capture_output=True, text=True, check=True)
        assert done.stdout.split() == [loaded]
