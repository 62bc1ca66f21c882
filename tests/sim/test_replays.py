"""Every shipped scenario replays byte for byte: ledger, outputs and every view.

``replays/replays.json`` was recorded (``replays/record.py``) from the drivers as they stood
before the effects were interpreted once for both transports; a change of the drivers must
leave every digest as it was. The digests are SHA-256 of the bytes the run produced, computed
by hashlib over a canonical encoding of each view (:mod:`replays`), not by the simulator.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "replays"))

from replays import HEAVY, RECORD, replay, shipped, unportable_floats

RECORDED = json.loads(RECORD.read_text(encoding="utf-8"))


def test_every_shipped_scenario_is_recorded() -> None:
    assert sorted(RECORDED) == shipped()


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.slow) if n in HEAVY else n for n in sorted(RECORDED)])
def test_replay_is_byte_identical(name: str) -> None:
    unportable = unportable_floats()
    assert unportable is None, unportable
    got = replay(name)
    want = RECORDED[name]
    assert got["ledger.csv"] == want["ledger.csv"], f"{name}: ledger.csv differs"
    assert got["outputs.npz"] == want["outputs.npz"], f"{name}: outputs.npz differs"
    assert got["views"] == want["views"], f"{name}: views differ"


def test_other_kernels_are_named_before_any_digest_is_compared() -> None:
    """Under other OpenBLAS kernels (or without numpy's AVX2 loops) the replays would differ
    in their floats: the check names the setting instead of reporting digests that differ."""
    import os
    import subprocess

    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from replays import unportable_floats; print(unportable_floats())")
    where = str(RECORD.parent)
    for setting, named in ((("OPENBLAS_CORETYPE", "Sandybridge"), "Sandybridge kernels"),
                           (("OPENBLAS_CORETYPE", "Haswell"), "None")):
        env = {**os.environ, setting[0]: setting[1]}
        out = subprocess.run([sys.executable, "-c", code, where], env=env, check=True,
                             capture_output=True, text=True).stdout
        assert named in out, (setting, out)
