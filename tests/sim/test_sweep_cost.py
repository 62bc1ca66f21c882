"""The RRI-NMF sweep model of the time estimate (:mod:`sim.experiments.nmf.sweep_cost`).

The model's constants are measured (their docstrings); these tests hold its structure — cost
linear in k, per-topic overhead per row block, dense products over all n·d entries, sparse ones
over the stored entries only — and hold the runner to handing the estimate a sparse file's
stored entries, counted here by scipy.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sim.experiments.nmf import sweep_cost as sc
from sim.runner import plan_scenario


@pytest.mark.parametrize(("n", "d", "k", "blocks"), [(200, 60, 3, 1), (1500, 2000, 10, 4)])
def test_a_dense_full_loss_sweep_is_topics_times_overhead_and_blas_entries(
        n: int, d: int, k: int, blocks: int) -> None:
    expected = k * (blocks * sc.TOPIC_FLOPS + sc.DENSE_ENTRY_FLOPS * n * d)
    assert sc.sweep_flops(n, d, k, blocks=blocks) == pytest.approx(expected)


def test_the_cost_is_linear_in_k_and_the_observed_loss_costs_more() -> None:
    one = sc.sweep_flops(800, 300, 1)
    assert sc.sweep_flops(800, 300, 7) == pytest.approx(7 * one)
    assert sc.sweep_flops(800, 300, 7, observed=True) > sc.sweep_flops(800, 300, 7)
    stored = 12_000.0
    assert (sc.sweep_flops(800, 300, 7, stored=stored, observed=True)
            > sc.sweep_flops(800, 300, 7, stored=stored))


def test_a_sparse_sweep_counts_stored_entries_not_n_times_d() -> None:
    n, d, k, stored = 1500, 2000, 10, 146_000.0
    expected = k * (sc.TOPIC_FLOPS + sc.SPARSE_ENTRY_FLOPS * stored
                    + sc.SPARSE_LINE_FLOPS * (n + d))
    assert sc.sweep_flops(n, d, k, stored=stored) == pytest.approx(expected)
    assert sc.sweep_flops(n, d, k, stored=stored) < sc.sweep_flops(n, d, k)


def _scenario(path: Path) -> dict:
    return {"name": "sparse_cost", "seed": 1, "network": {"parties": 2},
            "data": {"source": "file", "path": str(path)},
            "algorithm": {"name": "rri_nmf", "k": 4, "iterations": 3}}


def test_the_runner_hands_the_estimate_a_sparse_files_stored_entries(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    dense = rng.poisson(0.05, size=(300, 400)).astype(float)
    dense[:, 0] += 1.0  # no empty row
    matrix = sp.csr_array(dense)
    sp.save_npz(tmp_path / "X.npz", matrix)
    np.save(tmp_path / "X.npy", dense)
    sparse_plan = plan_scenario(_scenario(tmp_path / "X.npz"))
    dense_plan = plan_scenario(_scenario(tmp_path / "X.npy"))
    flops = 3 * sc.sweep_flops(300, 400, 4, stored=float(np.count_nonzero(dense)))
    # centralized RRI-NMF: 3 sweeps over the stored entries, the rest of the estimate shared
    assert (dense_plan.estimate.seconds - sparse_plan.estimate.seconds) == pytest.approx(
        1e-9 * (3 * sc.sweep_flops(300, 400, 4) - flops), rel=1e-6)
