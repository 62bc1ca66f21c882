"""Distributed two-block coordinate descent with the fixed factor all-gathered (seed 004, §3.1).

The distribution Qian et al. give their baselines — distributed MU (:mod:`algorithms.nmf.mu`),
HALS (:mod:`algorithms.nmf.hals`) and ANLS by block principal pivoting
(:mod:`algorithms.nmf.abpp`) — and that DSANLS replaces by sketches (§3.1, Eq. 5; §3.6.1).
The orientation, partition and start are DSANLS's general setting
(:mod:`algorithms.nmf.dsanls`): the paper's M ≈ UVᵀ (m×n) is the project's Xᵀ, node r stores
M_{I_r:} and M_{:J_r} and updates U_{I_r} and V_{J_r}. Per iteration t (Algorithm 1):

1. All-Gather V^t = [V_{J_1}; …; V_{J_N}] (n×k; node r sends (N − 1)|J_r|k numbers);
2. U_{I_r} ← update(U_{I_r}, M_{I_r:}, V^t) on min_{U_{I_r} ≥ 0} ‖M_{I_r:} − U_{I_r}V^{tᵀ}‖²_F;
3. All-Gather U^{t+1} (m×k);
4. V_{J_r} ← update(V_{J_r}, M_{:J_r}ᵀ, U^{t+1}) on
   min_{V_{J_r} ≥ 0} ‖M_{:J_r}ᵀ − V_{J_r}U^{t+1ᵀ}‖²_F.

Both subproblems separate by rows (Eq. 5), so every node computes exactly the rows of the
centralized update from the same start: the All-Gather (:mod:`protocols.all_gather`) moves
float64 blocks unchanged. Communication is O(kn) and O(km) per node and iteration — the
O(kn) of §3.6.1 against DSANLS's O(kd). Local work is charged to the node's simulated clock by
the update's flop count (:class:`~algorithms.nmf.dsanls.sanls.LocalWork`).
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.nmf.dsanls.dsanls import Ranges, check_ranges, dense
from algorithms.nmf.dsanls.sanls import LocalWork
from protocols.all_gather import all_gather
from protocols.context import PartyContext
from protocols.errors import InputError

Update = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, int]]
"""``update(X, A, F) -> (X_new, flops)``: one update of X (r×k) ≥ 0 on min ‖A − XFᵀ‖²_F, with
A r×n (the node's data rows) and F n×k (the whole gathered factor)."""


@dataclass(frozen=True)
class GatheredConfig:
    """The public parameters of a run, known to every node.

    Attributes
    ----------
    k : int
        Rank.
    iterations : int
        T.
    n_features, n_samples : int
        m and n: M is m×n.
    columns : tuple of (int, int)
        J_r: node r's samples (columns of M), half-open, one per node.
    rows : tuple of (int, int)
        I_r: node r's features (rows of M, the rows of U it updates).
    seconds_per_flop : float
        Cost of local work on the simulated clock (0: free).
    """

    k: int
    iterations: int
    n_features: int
    n_samples: int
    columns: Ranges
    rows: Ranges
    seconds_per_flop: float = 0.0

    def __post_init__(self) -> None:
        for name in ("k", "iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} = {value!r} must be an integer ≥ 1")
        check_ranges(self.columns, self.n_samples, "columns")
        check_ranges(self.rows, self.n_features, "rows")
        if len(self.rows) != len(self.columns):
            raise InputError(f"{len(self.rows)} row blocks for {len(self.columns)} nodes")
        if not self.seconds_per_flop >= 0:
            raise InputError(f"seconds_per_flop = {self.seconds_per_flop} must be ≥ 0")


@dataclass
class GatheredNode:
    """What a run leaves at node r: U_{I_r}, V_{J_r}, and after every iteration the node's
    clock with both blocks (``history``); ``flops``, the local work done."""

    U_rows: np.ndarray
    V: np.ndarray
    history: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)
    flops: int = 0


def gathered_bcd(
    ctx: PartyContext,
    X: Any,
    X_features: Any,
    U0: np.ndarray,
    V0: np.ndarray,
    config: GatheredConfig,
    update: Update,
) -> Generator[Any, Any, GatheredNode]:
    """Node r's program: T iterations of steps 1–4 (module docstring) with ``update``.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (|J_r|, m)
        The node's samples: M_{:J_r} = Xᵀ.
    X_features : ndarray or sparse matrix of shape (n, |I_r|)
        Every sample's features I_r: M_{I_r:} = X_featuresᵀ.
    U0 : ndarray of shape (|I_r|, k)
        The node's block of the public start U^0.
    V0 : ndarray of shape (|J_r|, k)
        The node's start V^0_{J_r}.
    config : GatheredConfig
    update : Update
        The algorithm's update of one factor's rows.
    """
    r = ctx.party
    c = config
    col_lo, col_hi = c.columns[r]
    row_lo, row_hi = c.rows[r]
    M_cols = dense(X).T
    M_rows = dense(X_features).T
    if M_cols.shape != (c.n_features, col_hi - col_lo):
        raise InputError(f"node {r}: X has shape {M_cols.T.shape}; expected "
                         f"({col_hi - col_lo}, {c.n_features})")
    if M_rows.shape != (row_hi - row_lo, c.n_samples):
        raise InputError(f"node {r}: X_features has shape {M_rows.T.shape}; expected "
                         f"({c.n_samples}, {row_hi - row_lo})")
    U = np.array(U0, dtype=np.float64, copy=True)
    V = np.array(V0, dtype=np.float64, copy=True)
    if U.shape != (row_hi - row_lo, c.k) or V.shape != (col_hi - col_lo, c.k):
        raise InputError(f"node {r}: U0 {U.shape} / V0 {V.shape} do not match its blocks")
    M_cols_t = np.ascontiguousarray(M_cols.T)
    work = LocalWork(c.seconds_per_flop)
    node = GatheredNode(U, V)
    for _ in range(c.iterations):
        V_all = yield from all_gather(ctx, V, output="V")
        U, flops = update(U, M_rows, V_all)
        work.add(flops)
        yield from work.spend()
        U_all = yield from all_gather(ctx, U, output="U")
        V, flops = update(V, M_cols_t, U_all)
        work.add(flops)
        clock = yield from work.spend()
        node.history.append((clock, U.copy(), V.copy()))
    node.U_rows, node.V, node.flops = U, V, work.total
    return node
