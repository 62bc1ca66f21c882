"""Recorded replays: what every shipped scenario produced, byte for byte, at a small size.

Each shipped scenario (``scenarios/*.toml``) is run with its ``[[audit]]`` tables left out and
its sizes capped (:func:`small`), and digested (:func:`digest`): SHA-256 of ``ledger.csv``,
of ``outputs.npz`` and of every party's view in a canonical encoding (every field, arrival
times and clocks included). ``replays.json`` holds the digests of the code as it stood before
the drivers shared one interpreter; ``tests/sim/test_replays.py`` re-runs and compares. They
were recorded first on a processor with AVX-512, and re-recorded on 2026-11-28 from main at
``f156a8b`` (the shared interpreter, which had replayed them all) under :data:`PORTABLE` on
one without: 46 of 63 scenarios' outputs and 23 scenarios' views differed in the last bits of
their floats there, no ledger did. Re-record (only when a change is *meant* to change what
runs produce) with the :data:`PORTABLE` settings::

    OPENBLAS_CORETYPE=Haswell NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR" \
        PYTHONPATH=$PWD python tests/sim/replays/record.py
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
SCENARIO_DIR = ROOT / "scenarios"
RECORD = Path(__file__).resolve().parent / "replays.json"

CAPS = {"iterations": 2, "trials": 2, "repetitions": 1, "local_iterations": 3,
        "inner_iterations": 2, "svd_iterations": 3, "outer": 2, "inner": 2, "samples": 20,
        "local_restarts": 1, "k": 3, "documents": 2, "samples_per_site": 10,
        "audit_instances": 20, "time_budget_s": 0.01, "tuning_R": 3}
"""Upper bounds on ``[algorithm]`` keys, so that each replay takes about a second."""
DATA_CAPS = {"rows": 120, "cols": 30, "k": 3}
LIST_CAP = 2
"""Sweeps (``epsilons``, ``values``, ``inits``, ...) keep their first two values."""

HEAVY = {"secure_nmf_imbalanced", "secure_nmf_uniform", "secure_nmf_mnist_imbalanced",
         "secure_nmf_mnist_uniform", "topic_models", "nmf_baselines", "topic_models_tuned",
         "dpnmf_comparison_ratings"}
"""Scenarios still slow at their capped size (over 5 s on two shared cores): run by the slow
test only; `make test` replays the other 55."""


PORTABLE = {"OPENBLAS_CORETYPE": "Haswell",
            "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
"""The settings under which floating point is alike on every x86-64 processor with AVX2 (the
Makefile exports them): the digests are recorded and compared under them."""


def unportable_floats() -> str | None:
    """Why this process's floating point may differ from the recording machine's, or None:
    OpenBLAS's kernel family and the processor features numpy dispatches to, as the run's
    report records them (:func:`sim.threads.kernels`)."""
    from sim.threads import kernels

    used = kernels()
    reasons = [f"OpenBLAS uses {arch} kernels" for arch in used["blas"] if arch != "Haswell"]
    wide = set(PORTABLE["NPY_DISABLE_CPU_FEATURES"].split()) & set(used["numpy"] or ())
    if wide:
        reasons.append(f"numpy dispatches to {', '.join(sorted(wide))}")
    if not reasons:
        return None
    settings = " ".join(f"{k}='{v}'" for k, v in PORTABLE.items())
    return (f"{'; '.join(reasons)}: replays are recorded with {settings} (make test sets "
            "them)")


def shipped() -> list[str]:
    """The shipped scenarios' names, sorted."""
    return sorted(p.stem for p in SCENARIO_DIR.glob("*.toml"))


def small(name: str) -> dict[str, Any]:
    """Scenario ``name`` without its audits, with every size capped (:data:`CAPS`)."""
    spec = tomllib.loads((SCENARIO_DIR / f"{name}.toml").read_text(encoding="utf-8"))
    spec = copy.deepcopy(spec)
    spec.pop("audit", None)
    for key, cap in CAPS.items():
        value = spec["algorithm"].get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > cap:
            spec["algorithm"][key] = type(value)(cap)
    for key, value in list(spec["algorithm"].items()):
        if isinstance(value, list) and len(value) > LIST_CAP and key != "party_sizes":
            spec["algorithm"][key] = value[:LIST_CAP]
    if spec["algorithm"].get("sweep") == "samples_per_site":
        spec["algorithm"]["values"] = [6, 12]
    data = spec.get("data", {})
    if data.get("source") == "synthetic" and spec["algorithm"]["name"] != "ksdp":
        for key, cap in DATA_CAPS.items():
            value = data.get(key)
            if isinstance(value, int) and value > cap:
                data[key] = cap
        partition = data.get("partition")
        if isinstance(partition, list) and sum(partition) > data["rows"]:
            scale = DATA_CAPS["rows"] / sum(partition)
            data["partition"] = [max(8, int(p * scale)) for p in partition]
            data["rows"] = sum(data["partition"])
    return spec


def _canonical(value: Any) -> bytes:
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            return b"O" + repr(value.tolist()).encode()
        return (str(value.dtype).encode() + repr(value.shape).encode()
                + np.ascontiguousarray(value).tobytes())
    if isinstance(value, Mapping):
        return b"{" + b",".join(_canonical(k) + b":" + _canonical(v)
                                for k, v in sorted(value.items(), key=lambda kv: repr(kv[0])))
    if isinstance(value, list | tuple):
        return b"(" + b",".join(_canonical(v) for v in value) + b")"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return type(value).__name__.encode() + _canonical(
            {f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    if hasattr(value, "toarray"):  # a scipy sparse matrix
        return b"S" + _canonical(value.toarray())
    return type(value).__name__.encode() + repr(value).encode()


def view_digest(view: Any) -> str:
    """SHA-256 of every field of one party's view, in order (times included)."""
    return hashlib.sha256(_canonical(view)).hexdigest()


def digest(run: Any) -> dict[str, Any]:
    """The digests of one :class:`sim.runner.ScenarioRun`."""
    from sim import report

    result = run.run.result
    views = result.views if result is not None else {}
    return {
        "ledger.csv": hashlib.sha256(run.ledger_csv.encode()).hexdigest(),
        "outputs.npz": hashlib.sha256(report.npz_bytes(run.outputs)).hexdigest(),
        "views": {str(pid): view_digest(view) for pid, view in sorted(views.items())},
    }


def replay(name: str) -> dict[str, Any]:
    """Run scenario ``name`` at its small size under SimPy and digest it."""
    from sim.runner import run_scenario

    return digest(run_scenario(small(name)))
