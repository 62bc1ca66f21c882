"""The guide runs as written: every code block of ``docs/tutorial.md``, in order, in one
directory — the module saved as its ``# file:`` line says, the Python blocks executed in one
namespace (their asserts inside), the scenario saved, and the shell commands run (``mpcsim``
as ``python -m sim.cli``; ``mpiexec`` from the installed MPI, skipped without the extra).
Expected values are the tutorial's own closed forms, computed here with numpy.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in
            re.finditer(r"^```(\w*)\n(.*?)^```", GUIDE, re.M | re.S)]


def test_the_tutorial_runs_as_written(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    namespace: dict[str, object] = {}
    found = blocks()
    assert [lang for lang, _ in found] == ["python"] * 6 + ["toml", "sh"]
    for lang, text in found:
        if lang == "python" and text.startswith("# file: "):
            target = tmp_path / text.splitlines()[0].removeprefix("# file: ").strip()
            target.parent.mkdir(parents=True, exist_ok=True)
            (target.parent / "__init__.py").write_text("")
            target.write_text(text)
        elif lang == "python":
            exec(compile(text, "docs/tutorial.md", "exec"), namespace)
        elif lang == "toml":
            (tmp_path / "average.toml").write_text(text)
        else:
            _run_shell(text, tmp_path)
    # step 2's comment: (0.5·2 + 1·4 + 0.25·9) / 1.75
    w, v = np.array([0.5, 1.0, 0.25]), np.array([2.0, 4.0, 9.0])
    result = namespace["result"]
    assert [result.outputs[m] for m in range(3)] == pytest.approx(  # type: ignore[attr-defined]
        [w @ v / w.sum()] * 3, abs=1e-6)
    summary = result.ledger.summary("protocol")["weighted_sum"]  # type: ignore[attr-defined]
    assert (summary["messages"], summary["elements"]) == (3 * 2, 3 * 2 * 2)


def _run_shell(text: str, cwd: Path) -> None:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(cwd)]))
    outs = []
    for line in text.splitlines():
        args = shlex.split(line)
        if args[0] == "mpiexec":
            pytest.importorskip("mpi4py", reason="the mpi extra is not installed")
            args[0] = str(Path(sysconfig.get_path("scripts")) / "mpiexec")
            at = args.index("mpcsim")
            args[at:at + 1] = [sys.executable, "-m", "sim.cli"]
        else:
            assert args[0] == "mpcsim"
            args[:1] = [sys.executable, "-m", "sim.cli"]
        done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        assert "private" in done.stdout
        outs.append(cwd / args[args.index("--out") + 1])
    first, second = (np.load(o / "outputs.npz") for o in outs)
    for m in range(3):
        assert float(first[f"party_{m}"]) == pytest.approx(float(second[f"party_{m}"]))
