"""The time model of one RRI-NMF sweep (thesis seed 001, Algorithm 2), for the time estimate.

A sweep visits the k topics one after the other (the rank-one residual updates of steps 1 and
3, and the objective); per topic it pays a fixed cost of Python and numpy calls on every row
block it runs on, and a cost per entry of X that depends on how X is stored and on the loss:

* a dense X under the full loss: ``W[:, t] @ X`` and ``X @ T[t]`` are BLAS matrix-vector
  products, :data:`DENSE_ENTRY_FLOPS` per entry and topic;
* a scipy.sparse X under the full loss: sparse products over the stored entries,
  :data:`SPARSE_ENTRY_FLOPS` per stored entry and topic, plus :data:`SPARSE_LINE_FLOPS` per
  row and column;
* the observed-entries loss (X with NaN, or a sparse X whose stored entries are the observed
  ones): masked element-wise arithmetic, :data:`OBSERVED_ENTRY_FLOPS` per entry of a dense X,
  :data:`SPARSE_OBSERVED_ENTRY_FLOPS` per stored entry of a sparse one (plus
  :data:`SPARSE_OBSERVED_LINE_FLOPS` per row and column).

The "flops" are the estimate's unit of local arithmetic, costed at
:attr:`sim.estimate.Costs.flop_s` = 1 ns each, so every constant below is nanoseconds of one
core's CPU time. They were fitted to the CPU time per sweep of
:func:`sim.experiments.nmf.pd_nmf.centralized_sweeps` (``time.process_time``, BLAS on one
thread) on dense Poisson(1) and CSR Poisson(0.05) matrices of shapes 200 × 60, 400 × 100,
800 × 300, 1500 × 400, 1800 × 500 and 1500 × 2000 at k = 3, 6, 10 and 20, by minimising the
largest ratio of model to measurement; the old model (8 flops per entry and topic, whatever
the storage) overestimated a dense BLAS sweep 7–20×.
"""

from __future__ import annotations

TOPIC_FLOPS = 22_000.0
"""Fixed cost per topic and row block of a sweep (measured: 200 × 60, the smallest shape, took
0.090 ms a sweep at k = 3 and 0.538 ms at k = 20 dense, 0.097 and 0.512 ms sparse: ~24 µs per
topic, almost none of it per entry). A PD-NMF sweep pays it once per party."""

DENSE_ENTRY_FLOPS = 0.36
"""Per entry and topic of a dense X under the full loss (BLAS). Measured per sweep: 800 × 300
k = 10: 0.92 ms (model 1.08); 1500 × 400 k = 10: 1.79 ms (2.38); 1800 × 500
k = 10: 2.55 ms (3.46); 1500 × 2000 k = 10: 16.1 ms (11.0; X of 24 MB no longer fits the
cache, so the per-entry cost nearly doubles there). One constant is within 1.46× of all 24
dense shapes (0.69–1.46×)."""

SPARSE_ENTRY_FLOPS = 1.08
"""Per stored entry and topic of a CSR X under the full loss. Measured per sweep: 1500 × 2000
with 146,700 stored, k = 10: 2.34 ms (model 2.29); 1800 × 500 with 44,000, k = 20: 1.94 ms
(2.03). Within 0.81–1.07× of all 24 sparse shapes with :data:`SPARSE_LINE_FLOPS`."""

SPARSE_LINE_FLOPS = 14.0
"""Per row and column and topic of a CSR X under the full loss (the dense vectors of length
n and d each topic's products produce)."""

OBSERVED_ENTRY_FLOPS = 12.0
"""Per entry (observed or not) and topic of a dense X under the observed-entries loss, whose
masked arithmetic is element-wise numpy rather than BLAS. Measured per sweep, half the entries
NaN: 200 × 60 k = 10: 1.80 ms (model 1.66); 800 × 300 k = 3: 9.17 ms (8.71); 1500 × 400
k = 10: 67.8 ms (72.2)."""

SPARSE_OBSERVED_ENTRY_FLOPS = 20.0
"""Per stored entry and topic of a CSR X under the observed-entries loss. Measured per sweep:
1500 × 2000 with 146,100 stored, k = 10: 32.1 ms (model 31.5); 800 × 300 with 11,800, k = 10:
2.87 ms (3.24); 200 × 60 with 550, k = 10: 0.72 ms (0.49)."""

SPARSE_OBSERVED_LINE_FLOPS = 60.0
"""Per row and column and topic of a CSR X under the observed-entries loss."""


def sweep_flops(n_rows: int, n_cols: int, k: int, *, stored: float | None = None,
                observed: bool = False, blocks: int = 1) -> float:
    """The estimate's flops of one RRI-NMF sweep over ``n_rows`` rows of X.

    Parameters
    ----------
    n_rows, n_cols : int
        The rows swept (all of them, across the blocks) and d.
    k : int
        Topics.
    stored : float, optional
        Stored entries of a sparse X over those rows; None for a dense X.
    observed : bool
        The observed-entries loss (else the full loss).
    blocks : int
        Row blocks the sweep runs on, each paying :data:`TOPIC_FLOPS` per topic (the parties of
        PD-NMF, one block each; 1 for the centralized algorithm).

    Returns
    -------
    float
        ``k · (blocks · TOPIC_FLOPS + per-entry and per-line costs)``.
    """
    lines = float(n_rows + n_cols)
    if stored is None:
        per_entry = OBSERVED_ENTRY_FLOPS if observed else DENSE_ENTRY_FLOPS
        entries = per_entry * float(n_rows) * n_cols
    elif observed:
        entries = SPARSE_OBSERVED_ENTRY_FLOPS * stored + SPARSE_OBSERVED_LINE_FLOPS * lines
    else:
        entries = SPARSE_ENTRY_FLOPS * stored + SPARSE_LINE_FLOPS * lines
    return float(k) * (blocks * TOPIC_FLOPS + entries)
