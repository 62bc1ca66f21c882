"""Secure distributed NMF (Qian et al., seed 004, §4.2–4.3): what Syn-SD, Syn-SSD, Asyn-SD and
Asyn-SSD share — the public configuration, a node's local updates and what a node returns.

Setting (§2.1.2, Eq. 4): party r holds the column block M_{:J_r} = M_r of M = [M_1 … M_N] (its
own samples, same features) and must learn only M_r, U and V_r ≈ its part of the factorisation
M_r ≈ UV_rᵀ. Orientation: M = Xᵀ, so party r's rows of X (its samples) are M_r's columns
(:mod:`algorithms.nmf.dsanls.sanls`); U (m×k) is shared, V_r (|J_r|×k) never leaves party r.

Every node keeps a local copy U_(r) of U. One "update" of a factor is one step of the solver
(digest §7.4 item 65: one pass of Algorithm 3, or one projected gradient step) on its
subproblem, unsketched or sketched:

* :func:`u_step` — min_U ‖M_r − UV_rᵀ‖, or with a local sketch S_1 ∈ R^{|J_r|×d} of the node's
  columns ("sketch on V", Algorithm 5 line 6): min_U ‖M_rS_1 − U(V_rᵀS_1)‖;
* :func:`v_step` — min_V ‖M_rᵀ − V_rUᵀ‖, with U the node's copy or, sketched on U (Algorithm 5
  line 9), min_V ‖M_rᵀS_2ᵀ − V_r(S_2U)ᵀ‖ with the All-Reduced average S_2U.

μ_t = α + βt with t counted from 1 as the algorithms print it (t = t_1T_2 + t_2).

Algorithm 5 line 6 prints update(M_{:J_r}, S_1^t, U, V, S_1^t); the sketched U-subproblem is
read as above (digest §7.4 item 63). S_1 must be |J_r|×d, so "the same S_1 on every node"
cannot hold when the blocks differ in size (item 64); S_1 only ever multiplies the node's own
data, so each node draws its own.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.nmf.dsanls.dsanls import Ranges, check_ranges
from algorithms.nmf.dsanls.sanls import LocalWork, StepSchedule, check_solver, subproblem_step
from algorithms.nmf.dsanls.sketches import Sketch, SketchSize, check_kind, sketch_columns
from protocols.all_reduce import all_reduce, check_method
from protocols.context import PartyContext
from protocols.errors import InputError
from protocols.secure_sum import check_variant

SKETCH_ON: tuple[str, ...] = ("", "u", "v", "uv")


@dataclass(frozen=True)
class SecureNmfConfig:
    """The public parameters of a secure distributed NMF run, known to every node.

    Attributes
    ----------
    k : int
        Rank.
    outer, inner : int
        T_1 and T_2 (synchronous); rounds per client on average and T (asynchronous: the
        server stops after ``outer`` × N updates).
    n_features : int
        m, the rows of M (the length of U's columns).
    columns : tuple of (int, int)
        J_r: node r's samples as a half-open range of M's columns, one per node.
    sketch : {"gaussian", "subsampling"}
    d : int or float
        Columns of S_1 ∈ R^{|J_r|×d} (sketch on V): a number 1 ≤ d ≤ min_r |J_r|, or a
        fraction of each node's |J_r| (:meth:`d_for`).
    d_prime : int or float
        Rows of S_2 ∈ R^{d'×m} (sketch on U): 1 ≤ d' ≤ m, or a fraction of m.
    sketch_on : {"", "u", "v", "uv"}
        Which factors are sketched ("" for Syn-SD and Asyn-SD).
    solver : {"rcd", "pgd"}
    schedule : StepSchedule
    allreduce : {"secure_sum", "plain"}
    variant : {"prg", "explicit"}
    seconds_per_flop : float
        Cost of local work on the simulated clock.
    rho : float
        Relaxation of the asynchronous server, ω_t = ρ/(ρ + t), ρ > 0.
    time_budget_s : float or None
        Asynchronous server: also stop once its clock passes this many seconds.
    """

    k: int
    outer: int
    inner: int
    n_features: int
    columns: Ranges
    sketch: str = "subsampling"
    d: SketchSize = 0.1
    d_prime: SketchSize = 0.1
    sketch_on: str = ""
    solver: str = "rcd"
    schedule: StepSchedule = field(default_factory=StepSchedule)
    allreduce: str = "secure_sum"
    variant: str = "prg"
    seconds_per_flop: float = 0.0
    rho: float = 1.0
    time_budget_s: float | None = None

    def __post_init__(self) -> None:
        for name in ("k", "outer", "inner", "n_features"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} = {value!r} must be an integer ≥ 1")
        if self.sketch_on not in SKETCH_ON:
            raise InputError(f"sketch_on = {self.sketch_on!r} is unknown; use u, v or uv")
        check_kind(self.sketch)
        blocks = check_ranges(self.columns, self.columns[-1][1] if self.columns else 0,
                              "columns")
        if "v" in self.sketch_on:
            for node in range(len(blocks)):
                self.d_for(node)
        if "u" in self.sketch_on:
            _ = self.sketch_d_prime  # d' fits m
        check_solver(self.solver)
        check_method(self.allreduce)
        check_variant(self.variant)
        rho = self.rho
        if isinstance(rho, bool) or not isinstance(rho, int | float) or not 0 < rho < np.inf:
            raise InputError(f"rho = {rho!r} must be a finite number > 0 (ω_t = ρ/(ρ + t))")
        if not self.seconds_per_flop >= 0:
            raise InputError(f"seconds_per_flop = {self.seconds_per_flop} must be ≥ 0")
        if self.time_budget_s is not None and not self.time_budget_s > 0:
            raise InputError(f"time_budget_s = {self.time_budget_s} must be > 0")

    @property
    def n_nodes(self) -> int:
        return len(self.columns)

    def d_for(self, node: int) -> int:
        """d of node r's S_1 ∈ R^{|J_r|×d}."""
        lo, hi = self.columns[node]
        return sketch_columns(self.d, hi - lo,
                              f"sketch_size_v (d, the sketch of party {node}'s {hi - lo} samples)")

    @property
    def sketch_d_prime(self) -> int:
        """d' of S_2 ∈ R^{d'×m}."""
        return sketch_columns(self.d_prime, self.n_features,
                              "sketch_size_u (d', the sketch of the m features)")


@dataclass
class SecureNode:
    """What a node (or the asynchronous server) leaves.

    Attributes
    ----------
    U : ndarray of shape (m, k) or None
        The node's copy U_(r) (the server's U); None for an asynchronous client.
    V : ndarray of shape (|J_r|, k) or None
        V_{J_r}; None for the server.
    history : list of (float, ndarray or None, ndarray or None)
        Snapshots (clock, U, V): after every outer All-Reduce (synchronous), after every
        update (server, U only), or whenever a client sends its copy (V only).
    flops : int
        Local work done.
    updates : int
        Server: updates made; client: rounds completed.
    """

    U: np.ndarray | None
    V: np.ndarray | None
    history: list[tuple[float, np.ndarray | None, np.ndarray | None]] = field(
        default_factory=list)
    flops: int = 0
    updates: int = 0


def node_matrix(X: Any, config: SecureNmfConfig, node: int) -> np.ndarray:
    """M_r = Xᵀ (m × |J_r|) from the node's rows of X, checked against the configuration."""
    M_r = np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64).T
    lo, hi = config.columns[node]
    if M_r.shape != (config.n_features, hi - lo):
        raise InputError(f"node {node}: X has shape {M_r.T.shape}; expected "
                         f"({hi - lo}, {config.n_features})")
    return M_r


def u_step(config: SecureNmfConfig, U: np.ndarray, V: np.ndarray, M_r: np.ndarray, t: int,
           work: LocalWork, S1: Sketch | None = None) -> np.ndarray:
    """U_(r) ← update(M_r, U_(r), V_r), sketched on V by S_1 when given."""
    mu = config.schedule.mu(t)
    if S1 is None:
        U, flops = subproblem_step(config.solver, U, M_r, V.T, mu)
        work.add(flops)
        return U
    m, n_r = M_r.shape
    work.add(S1.draw_flops + S1.apply_flops(m, n_r) + S1.apply_flops(config.k, n_r))
    U, flops = subproblem_step(config.solver, U, S1.apply(M_r), S1.apply(V.T), mu)
    work.add(flops)
    return U


def v_step(config: SecureNmfConfig, V: np.ndarray, M_r: np.ndarray, t: int, work: LocalWork,
           U: np.ndarray | None = None, S2: Sketch | None = None,
           SU: np.ndarray | None = None) -> np.ndarray:
    """V_r ← update(M_r, U, V_r) with the node's U, or sketched: min ‖M_rᵀS_2ᵀ − V_r SUᵀ‖.

    Give ``U`` (unsketched) or both ``S2`` (S_2ᵀ as an m×d' sketch) and ``SU`` (d'×k).
    """
    mu = config.schedule.mu(t)
    if S2 is None or SU is None:
        if U is None:
            raise InputError("v_step needs U, or S2 and SU")
        V, flops = subproblem_step(config.solver, V, M_r.T, U.T, mu)
        work.add(flops)
        return V
    m, n_r = M_r.shape
    work.add(S2.apply_flops(n_r, m))
    V, flops = subproblem_step(config.solver, V, S2.apply(M_r.T), SU.T, mu)
    work.add(flops)
    return V


def average_copies(ctx: PartyContext, config: SecureNmfConfig, U: np.ndarray, V: np.ndarray,
                   node: SecureNode, work: LocalWork) -> Generator[Any, Any, np.ndarray]:
    """All-Reduce: U_(r) ← Σ_j U_(j) / N (Algorithm 4 line 7, Algorithm 5 line 10).

    The pending local work is charged first; the average is the declared output
    ``U_average``; afterwards the node records the snapshot (clock, U, V_r).
    """
    yield from work.spend()
    U = yield from all_reduce(ctx, U, method=config.allreduce, variant=config.variant,
                              average=True, output="U_average")
    clock = yield from work.spend()
    node.history.append((clock, U.copy(), V.copy()))
    return U
