"""DSANLS: distributed sketched ANLS (Qian et al., seed 004, §3.3 Algorithm 2, and §4.1).

Orientation: the paper's M ≈ UVᵀ with M m×n is the project's Xᵀ
(:mod:`algorithms.nmf.dsanls.sanls`): a node's samples are columns of M. The program takes the
node's rows of X (and, in the general setting, its block of X's columns) and transposes them at
the boundary; it returns U's and V's blocks in the paper's orientation.

N nodes. The columns (samples) {1..n} are split into blocks J_1..J_N — the scenario's row
partition of X — and the rows (features) {1..m} into equal blocks I_1..I_N. Node r updates
U_{I_r} and V_{J_r}. All nodes draw identical sketches from one seed that node 0 broadcasts
(:func:`algorithms.nmf.dsanls.sketches.shared_seed`).

``general`` setting (§3.1–3.3, Algorithm 2) — node r stores M_{I_r:} and M_{:J_r}
    per iteration t:
    4–7.   S^t ∈ R^{n×d}; A_r = M_{I_r:}S^t (local); B^t = Σ_i V_{J_i}ᵀS^t_{J_i} by All-Reduce
           (k×d, Eq. 11);
    8.     U_{I_r} ← one solver step on min ‖A_r − U_{I_r}B^t‖;
    10–13. S'^t ∈ R^{m×d'}; A'_r = M_{:J_r}ᵀS'^t (local); B'^t = Σ_i U_{I_i}ᵀS'^t_{I_i} by
           All-Reduce (k×d'), read with U^{t+1} (digest §7.4 item 58);
    14.    V_{J_r} ← one solver step on min ‖A'_r − V_{J_r}B'^t‖.
    This is a speed-up setting, not a privacy one: node r holds a row block and a column block.

``federated`` setting (§4.1, "modified DSANLS") — node r stores only M_{:J_r}
    The V-subproblem is as above. For the U-subproblem MS^t = Σ_i M_{:J_i}S^t_{J_i} (m×d) is
    All-Reduced before B^t, so **every node receives the whole sketched matrix**; node r uses
    its rows (MS^t)_{I_r}. Theorem 3: from the (S^t, MS^t) pairs a single node recovers M once
    Σ_t d ≥ n (Gaussian sketches), and d whole columns per iteration with subsampling
    (:func:`parties.attacks.dsanls_recovery`). The paper keeps this only as the target of that
    attack (digest §7.4 item 62).

Every All-Reduce (:func:`protocols.all_reduce.all_reduce`) is a SecureSum by default (or plain,
for comparison) and records its sum as a declared output: ``MS`` (federated), ``B`` and
``B_prime`` — exactly what Theorem 3 says a node learns.

Both settings compute what centralized SANLS (:func:`algorithms.nmf.dsanls.sanls.sanls`)
computes from the same start and seed — each step is row-separable (Eq. 8) and the nodes call
the same :func:`~algorithms.nmf.dsanls.sanls.subproblem_step` — up to the All-Reduce's
fixed-point precision (N·2^−(f+1) per summed entry). A test holds them to it.

Local work is charged to the node's simulated clock
(:class:`~algorithms.nmf.dsanls.sanls.LocalWork`): the sketch products, the Gram matrices and
the solver pass, as counted by their flop formulas.
The full U is the stack of the nodes' blocks U_{I_r} (the paper's algorithm returns the blocks;
assembling them is an evaluation, not a message).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from algorithms.nmf.dsanls.sanls import LocalWork, StepSchedule, check_solver, subproblem_step
from algorithms.nmf.dsanls.sketches import (
    SKETCH_S,
    SKETCH_S_PRIME,
    SketchSize,
    SketchStream,
    check_kind,
    shared_seed,
    sketch_columns,
)
from protocols.all_reduce import all_reduce, check_method
from protocols.context import PartyContext
from protocols.errors import InputError
from protocols.secure_sum import check_variant

SETTINGS: tuple[str, ...] = ("general", "federated")

Ranges = tuple[tuple[int, int], ...]


def check_ranges(ranges: Sequence[tuple[int, int]], total: int, what: str) -> Ranges:
    """Consecutive half-open ranges covering 0..total, each non-empty."""
    out = tuple((int(a), int(b)) for a, b in ranges)
    stops = [0, *[b for _, b in out]]
    if not out or any(a != s or b <= a for (a, b), s in zip(out, stops, strict=False)) or (
            stops[-1] != total):
        raise InputError(
            f"{what} = {list(out)} must be consecutive non-empty ranges covering 0..{total}"
        )
    return out


@dataclass(frozen=True)
class DsanlsConfig:
    """The public parameters of a DSANLS run, known to every node.

    Attributes
    ----------
    k : int
        Rank.
    iterations : int
        T, the number of iterations.
    n_features, n_samples : int
        m and n: M is m×n.
    columns : tuple of (int, int)
        J_r: node r's samples (columns of M) as a half-open range, one per node.
    rows : tuple of (int, int)
        I_r: node r's features (rows of M, the rows of U it updates).
    sketch : {"gaussian", "subsampling"}
    d, d_prime : int or float
        Sketch sizes, as numbers of columns or fractions of the dimension sketched:
        S^t ∈ R^{n×d} (1 ≤ d ≤ n), S'^t ∈ R^{m×d'} (1 ≤ d' ≤ m). The paper's rule of thumb is
        a tenth (§3.3, footnote 1), the default.
    solver : {"rcd", "pgd"}
    schedule : StepSchedule
        μ_t = α + βt.
    setting : {"general", "federated"}
    allreduce : {"secure_sum", "plain"}
    variant : {"prg", "explicit"}
        SecureSum variant.
    seconds_per_flop : float
        Cost of local work on the simulated clock (0: free).
    """

    k: int
    iterations: int
    n_features: int
    n_samples: int
    columns: Ranges
    rows: Ranges
    sketch: str = "subsampling"
    d: SketchSize = 0.1
    d_prime: SketchSize = 0.1
    solver: str = "rcd"
    schedule: StepSchedule = field(default_factory=StepSchedule)
    setting: str = "federated"
    allreduce: str = "secure_sum"
    variant: str = "prg"
    seconds_per_flop: float = 0.0

    def __post_init__(self) -> None:
        for name in ("k", "iterations"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} = {value!r} must be an integer ≥ 1")
        check_kind(self.sketch)
        _ = (self.sketch_d, self.sketch_d_prime)  # the sizes fit their dimensions
        check_solver(self.solver)
        if self.setting not in SETTINGS:
            raise InputError(f"setting = {self.setting!r} is unknown; use one of {SETTINGS}")
        check_method(self.allreduce)
        check_variant(self.variant)
        check_ranges(self.columns, self.n_samples, "columns")
        check_ranges(self.rows, self.n_features, "rows")
        if len(self.rows) != len(self.columns):
            raise InputError(f"{len(self.rows)} row blocks for {len(self.columns)} nodes")
        if not self.seconds_per_flop >= 0:
            raise InputError(f"seconds_per_flop = {self.seconds_per_flop} must be ≥ 0")

    @property
    def sketch_d(self) -> int:
        """d: columns of S^t ∈ R^{n×d}."""
        return sketch_columns(self.d, self.n_samples,
                              "sketch_size_v (d, the sketch of the n samples)")

    @property
    def sketch_d_prime(self) -> int:
        """d': columns of S'^t ∈ R^{m×d'}."""
        return sketch_columns(self.d_prime, self.n_features,
                              "sketch_size_u (d', the sketch of the m features)")


@dataclass
class DsanlsNode:
    """What DSANLS leaves at node r.

    Attributes
    ----------
    U_rows : ndarray of shape (|I_r|, k)
        U_{I_r}.
    V : ndarray of shape (|J_r|, k)
        V_{J_r}.
    seed : int
        The shared sketch seed.
    history : list of (float, ndarray, ndarray)
        After every iteration: the node's clock, U_{I_r} and V_{J_r}.
    flops : int
        Local work done.
    """

    U_rows: np.ndarray
    V: np.ndarray
    seed: int
    history: list[tuple[float, np.ndarray, np.ndarray]] = field(default_factory=list)
    flops: int = 0


def dense(X: Any) -> np.ndarray:
    """``X`` (dense or scipy sparse) as a dense float64 array."""
    return np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)


def dsanls(
    ctx: PartyContext,
    X: Any,
    U0: np.ndarray,
    V0: np.ndarray,
    config: DsanlsConfig,
    X_features: Any = None,
) -> Generator[Any, Any, DsanlsNode]:
    """Algorithm 2 (general) or modified DSANLS (federated), node r's program.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (|J_r|, m)
        The node's samples (rows of X): M_{:J_r} = Xᵀ.
    U0 : ndarray of shape (|I_r|, k)
        The node's block of the public start U^0.
    V0 : ndarray of shape (|J_r|, k)
        The node's start V^0_{J_r}.
    config : DsanlsConfig
        The public parameters (the same at every node).
    X_features : ndarray or sparse matrix of shape (n, |I_r|), general setting only
        Every sample's features I_r (X's columns I_r): M_{I_r:} = X_featuresᵀ.

    Returns
    -------
    DsanlsNode
    """
    r = ctx.party
    c = config
    col_lo, col_hi = c.columns[r]
    row_lo, row_hi = c.rows[r]
    M_cols = dense(X).T  # m × |J_r|
    if M_cols.shape != (c.n_features, col_hi - col_lo):
        raise InputError(f"node {r}: X has shape {M_cols.T.shape}; expected "
                         f"({col_hi - col_lo}, {c.n_features})")
    M_rows = None
    if c.setting == "general":
        if X_features is None:
            raise InputError(f"node {r}: the general setting needs X_features (M_{{I_r:}})")
        M_rows = dense(X_features).T  # |I_r| × n
        if M_rows.shape != (row_hi - row_lo, c.n_samples):
            raise InputError(f"node {r}: X_features has shape {M_rows.T.shape}; expected "
                             f"({c.n_samples}, {row_hi - row_lo})")
    U = np.array(U0, dtype=np.float64, copy=True)
    V = np.array(V0, dtype=np.float64, copy=True)
    if U.shape != (row_hi - row_lo, c.k) or V.shape != (col_hi - col_lo, c.k):
        raise InputError(f"node {r}: U0 {U.shape} / V0 {V.shape} do not match its blocks")
    reduce = {"method": c.allreduce, "variant": c.variant}
    d, d_prime = c.sketch_d, c.sketch_d_prime
    seed = yield from shared_seed(ctx)
    stream = SketchStream(seed, c.sketch)
    work = LocalWork(c.seconds_per_flop)
    node = DsanlsNode(U, V, seed)
    for t in range(c.iterations):
        mu = c.schedule.mu(t)
        S = stream.draw(SKETCH_S, t, c.n_samples, d)
        work.add(S.draw_flops + S.apply_flops(c.k, col_hi - col_lo, col_lo))
        B_local = S.apply(V.T, col_lo)  # k × d: this node's summand of V^tᵀS^t (Eq. 11)
        if M_rows is not None:
            A = S.apply(M_rows)  # |I_r| × d, local
            work.add(S.apply_flops(row_hi - row_lo, c.n_samples))
            yield from work.spend()
        else:
            work.add(S.apply_flops(c.n_features, col_hi - col_lo, col_lo))
            yield from work.spend()
            MS = yield from all_reduce(ctx, S.apply(M_cols, col_lo), output="MS", **reduce)
            A = MS[row_lo:row_hi]
        B = yield from all_reduce(ctx, B_local, output="B", **reduce)
        U, flops = subproblem_step(c.solver, U, A, B, mu)
        work.add(flops)
        S_prime = stream.draw(SKETCH_S_PRIME, t, c.n_features, d_prime)
        A_prime = S_prime.apply(M_cols.T)  # |J_r| × d', local
        B_prime_local = S_prime.apply(U.T, row_lo)  # k × d', with U^{t+1}
        work.add(S_prime.draw_flops + S_prime.apply_flops(col_hi - col_lo, c.n_features)
                 + S_prime.apply_flops(c.k, row_hi - row_lo, row_lo))
        yield from work.spend()
        B_prime = yield from all_reduce(ctx, B_prime_local, output="B_prime", **reduce)
        V, flops = subproblem_step(c.solver, V, A_prime, B_prime, mu)
        work.add(flops)
        clock = yield from work.spend()
        node.history.append((clock, U.copy(), V.copy()))
    node.U_rows, node.V, node.flops = U, V, work.total
    return node
