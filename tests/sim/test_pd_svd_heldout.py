"""PD-SVD's held-out rows (thesis Fig. 3.8): the ``holdout`` key of ``pd_svd``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sim.runner import run_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def small(holdout: float, cols: int = 30, k: int = 3, kind: str = "topics") -> dict:
    return {
        "seed": 5,
        "network": {"parties": 3, "sealing": False},
        "field": {"prime": "2^127-1", "frac_bits": 24},
        "data": {"source": "synthetic", "kind": kind, "rows": 150, "cols": cols,
                 "partition": [10, 60, 80], **({"k": 3} if kind == "topics" else {})},
        "algorithm": {"name": "pd_svd", "k": k, "iterations": 15, "variant": "secure_sum",
                      "holdout": holdout},
    }


def test_a_full_global_basis_leaves_no_heldout_error() -> None:
    # k = d: PD-SVD's V is a d × d orthonormal basis, so X_test − X_test V Vᵀ = 0 for every
    # party; party 0 trains on 8 rows of full-rank uniform data, so its local basis spans 8 of
    # the 12 directions and leaves its unseen rows a residual
    run = run_scenario(small(0.2, cols=12, k=12, kind="uniform"))
    m = run.report["metrics"]
    assert m["heldout_rows"] == {"0": 2, "1": 12, "2": 16}
    assert m["n"] == 150 - 30  # PD-SVD ran on the training rows only
    V = run.outputs["V"]
    assert np.allclose(V.T @ V, np.eye(12), atol=1e-6)
    for party, err in m["lra_error_heldout_global"].items():
        assert err == pytest.approx(0.0, abs=1e-5), party
    assert m["lra_error_heldout_local"]["0"] > 1e-3
    for party, change in m["lra_error_heldout_change"].items():
        assert change == pytest.approx(m["lra_error_heldout_global"][party]
                                       - m["lra_error_heldout_local"][party])


def test_no_holdout_keeps_the_run_as_it_was() -> None:
    m = run_scenario(small(0.0)).report["metrics"]
    assert "lra_error_heldout_change" not in m and m["n"] == 150
    assert m["lra_error_local"]["0"] <= m["lra_error_global"]["0"]  # Eckart–Young


@pytest.mark.slow
def test_global_basis_lowers_every_partys_heldout_error() -> None:
    """Fig. 3.8: on rows it did not train on, every party's LRA error is lower with PD-SVD's
    global basis than with its own; the smallest party gains most (relative change)."""
    m = run_scenario(SCENARIOS / "pd_svd_heldout.toml").report["metrics"]
    rel = {p: m["lra_error_heldout_change"][p] / m["lra_error_heldout_local"][p]
           for p in m["lra_error_heldout_change"]}
    assert all(r < 0 for r in rel.values()), rel
    assert min(rel, key=rel.get) == "0"  # the 40-row party
