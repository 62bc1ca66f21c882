"""SANLS: sketched alternating non-negative least squares (Qian et al., seed 004, §3.2, §3.5).

Orientation: this module and the DSANLS family use the paper's letters, M ≈ UVᵀ with M m×n,
U m×k (shared) and V n×k. The project's data matrix X (rows are samples, n×d) is **M = Xᵀ**:
the paper's m is the number of features, its n the number of samples, and U ↔ Tᵀ, V ↔ W of
the thesis (digest §0.1). The conversion happens at each program's boundary.

Each step of two-block coordinate descent (Algorithm 1) solves a non-negative least-squares
subproblem min_{X ≥ 0} ‖A − XB‖²_F for one factor X (r×k) given A (r×d) and B (k×d): for U,
A = MS^t and B = V^{tᵀ}S^t (Eq. 6); for V, A = MᵀS'^t and B = UᵀS'^t (Eq. 7). The sketched
optimum is shifted away from the true one (Eqs. 12–13), so only **one step** of a solver is
taken per sketch, with a step that shrinks over time:

``rcd`` — proximal coordinate descent (Algorithm 3, the paper's default)
    min ‖A − XB‖² + μ_t‖X − X^t‖² (Eq. 17), one pass over the columns j = 1..k of Eq. 19:
    X_{:j} ← max{(μ_t X^t_{:j} + (ABᵀ)_{:j} − Σ_{l≠j} (BBᵀ)_{lj} X_{:l}) / ((BBᵀ)_{jj} + μ_t), 0},
    with the new X_{:l} for l < j and the old for l > j. The printed indices B_{i:l}, B_{j:l}
    are rows of B (digest §7.4 item 59).
``pgd`` — one projected gradient step (Eq. 14)
    X ← max{X − 2η_t (XBBᵀ − ABᵀ), 0}. The paper asks only η_t → 0 with Σ η_t = ∞ and
    Σ η_t² < ∞ (Theorem 1) and gives no schedule; here η_t = 1 / (2(λ_max(BBᵀ) + μ_t)): never
    above 1/L for the subproblem's Lipschitz constant L = 2λ_max(BBᵀ), and ≈ 1/(2βt) for large
    t, so Theorem 1's conditions hold while the iterates stay bounded.

Step schedule: μ_t = α + βt (the experiments' form, §5.1; μ_t = t would make μ_0 = 0, digest
§7.4 item 60), α > 0, β ≥ 0. Σ 1/μ_t = ∞ and Σ 1/μ_t² < ∞ when β > 0.

The box (22) that enforces Assumption 2 (U_il, V_jl ≤ sqrt(2‖M‖_F)) is not imposed: it needs
‖M‖_F, which no node of the federated settings knows, and the paper observed bounded iterates
without it, as do our runs.

Both solvers act row by row given ABᵀ and BBᵀ, so a node updating its rows of X computes
exactly the rows the centralized update would (Eq. 8): the distributed programs and
:func:`sanls` call the same :func:`subproblem_step`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np

from algorithms.nmf.dsanls.sketches import (
    SKETCH_S,
    SKETCH_S_PRIME,
    SketchSize,
    SketchStream,
    sketch_columns,
)
from protocols.effects import Compute
from protocols.errors import InputError

SOLVERS: tuple[str, ...] = ("rcd", "pgd")


def check_solver(solver: str) -> str:
    """``solver`` if it is one of :data:`SOLVERS`, else an InputError naming them."""
    if solver not in SOLVERS:
        raise InputError(f"solver = {solver!r} is unknown; use one of {', '.join(SOLVERS)}")
    return solver


@dataclass(frozen=True)
class StepSchedule:
    """μ_t = α + βt: the proximal weight of ``rcd``; ``pgd`` steps η_t = 1/(2(λ_max + μ_t))."""

    alpha: float = 1.0
    beta: float = 1.0

    def __post_init__(self) -> None:
        for name, value, low in (("alpha", self.alpha, 0.0), ("beta", self.beta, None)):
            if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
                raise InputError(f"{name} = {value!r} must be a number")
            if low is not None and not value > low:
                raise InputError(f"{name} = {value} must be > 0 so that μ_t = α + βt > 0")
            if value < 0 or value == float("inf"):
                raise InputError(f"{name} = {value} must be finite and ≥ 0")

    def mu(self, t: int) -> float:
        """μ_t for iteration t = 0, 1, ..."""
        return self.alpha + self.beta * t


def rcd_step(X: np.ndarray, G: np.ndarray, H: np.ndarray, mu: float) -> np.ndarray:
    """One pass of proximal coordinate descent (Algorithm 3).

    Parameters
    ----------
    X : ndarray of shape (r, k)
        The current factor X^t (not modified).
    G : ndarray of shape (r, k)
        ABᵀ.
    H : ndarray of shape (k, k)
        BBᵀ.
    mu : float
        μ_t > 0.

    Returns
    -------
    ndarray of shape (r, k)
        X^{t+1} ≥ 0.
    """
    old = np.asarray(X, dtype=np.float64)
    new = old.copy()
    for j in range(old.shape[1]):
        # new holds X^{t+1} in columns < j and X^t in columns ≥ j; remove column j's own term
        t = mu * old[:, j] + G[:, j] - new @ H[:, j] + new[:, j] * H[j, j]
        new[:, j] = np.maximum(t / (H[j, j] + mu), 0.0)
    return new


def pgd_step(X: np.ndarray, G: np.ndarray, H: np.ndarray, mu: float) -> np.ndarray:
    """One projected gradient step (Eq. 14) with η = 1/(2(λ_max(H) + μ)); shapes as rcd_step."""
    old = np.asarray(X, dtype=np.float64)
    lam = float(np.linalg.eigvalsh(H)[-1]) if H.size else 0.0
    eta = 1.0 / (2.0 * (max(lam, 0.0) + mu))
    return np.maximum(old - 2.0 * eta * (old @ H - G), 0.0)


def subproblem_step(solver: str, X: np.ndarray, A: np.ndarray, B: np.ndarray,
                    mu: float) -> tuple[np.ndarray, int]:
    """One solver step on min_{X ≥ 0} ‖A − XB‖²: returns X^{t+1} and its flop count.

    Parameters
    ----------
    solver : {"rcd", "pgd"}
    X : ndarray of shape (r, k)
    A : ndarray of shape (r, d)
    B : ndarray of shape (k, d)
    mu : float
        μ_t of the step schedule.

    Returns
    -------
    X_new : ndarray of shape (r, k)
    flops : int
        2rdk for ABᵀ, 2k²d for BBᵀ, 2rk² for the pass (Eq. 20's O(kd(r + k))).
    """
    G = A @ B.T
    H = B @ B.T
    step = rcd_step if check_solver(solver) == "rcd" else pgd_step
    r, d = A.shape
    k = B.shape[0]
    return step(X, G, H, mu), 2 * r * d * k + 2 * k * k * d + 2 * r * k * k


@dataclass
class LocalWork:
    """Flops a node has done since it last told the driver, and their cost on its clock.

    Programs add the flop counts of their local steps (:func:`subproblem_step`, the sketch
    products) and :meth:`spend` them — one ``Compute`` effect of flops × ``seconds_per_flop``
    — before each message they send and at the end of an iteration, so that simulated time
    counts computation as well as communication. ``seconds_per_flop = 0`` makes computation
    free (time is then communication only).
    """

    seconds_per_flop: float = 0.0
    pending: int = 0
    total: int = 0

    def add(self, flops: int) -> None:
        self.pending += int(flops)
        self.total += int(flops)

    def spend(self) -> Generator[Any, Any, float]:
        """Yield the pending work as one ``Compute``; returns the party's clock after it."""
        seconds = self.pending * self.seconds_per_flop
        self.pending = 0
        clock = yield Compute(seconds)
        return float(clock)


def relative_error(M: np.ndarray, U: np.ndarray, V: np.ndarray) -> float:
    """‖M − UVᵀ‖_F / ‖M‖_F, the paper's measure (§5.1)."""
    norm = float(np.linalg.norm(M))
    return float(np.linalg.norm(M - U @ V.T)) / (norm if norm > 0 else 1.0)


def random_factor(rows: int, k: int, scale: float, rng: np.random.Generator) -> np.ndarray:
    """A non-negative start: U[0, 1) entries times ``scale``, shape (rows, k)."""
    return scale * rng.uniform(0.0, 1.0, size=(rows, k))


def v_start_scale(M_block: np.ndarray, k: int) -> float:
    """Scale of V^0 entries for U^0 ~ U[0, 1): E[(U^0 V^0ᵀ)_ij] = mean of the node's block.

    With u ~ U[0, 1) and v ~ U[0, s), E[Σ_l u_il v_jl] = k·s/4, so s = 4·mean/k. Computed from
    the node's own columns only.
    """
    mean = float(np.mean(M_block)) if np.size(M_block) else 0.0
    return 4.0 * mean / k if mean > 0 else 1.0


def sanls(
    M: np.ndarray,
    U0: np.ndarray,
    V0: np.ndarray,
    *,
    iterations: int,
    seed: int,
    sketch: str = "subsampling",
    d: SketchSize,
    d_prime: SketchSize,
    solver: str = "rcd",
    schedule: StepSchedule | None = None,
    callback: Callable[[int, np.ndarray, np.ndarray], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Centralized SANLS (Algorithm 1 on the sketched subproblems 6 and 7).

    The reference that DSANLS (:mod:`algorithms.nmf.dsanls.dsanls`) must equal from the same start
    and seed, in either setting, up to the All-Reduce's precision.

    Parameters
    ----------
    M : ndarray of shape (m, n)
    U0 : ndarray of shape (m, k)
    V0 : ndarray of shape (n, k)
    iterations : int
        T.
    seed : int
        The shared sketch seed.
    sketch : {"gaussian", "subsampling"}
    d : int or float
        Columns of S^t ∈ R^{n×d} (the U-subproblem), 1 ≤ d ≤ n, or a fraction of n.
    d_prime : int or float
        Columns of S'^t ∈ R^{m×d'} (the V-subproblem), 1 ≤ d' ≤ m, or a fraction of m.
    solver : {"rcd", "pgd"}
    schedule : StepSchedule, optional
        μ_t = α + βt; α = β = 1 by default.
    callback : callable, optional
        ``callback(t, U, V)`` after every iteration.

    Returns
    -------
    U : ndarray of shape (m, k)
    V : ndarray of shape (n, k)
    """
    M = np.asarray(M, dtype=np.float64)
    m, n = M.shape
    d = sketch_columns(d, n, "d")
    d_prime = sketch_columns(d_prime, m, "d_prime")
    schedule = schedule or StepSchedule()
    stream = SketchStream(seed, sketch)
    U = np.array(U0, dtype=np.float64, copy=True)
    V = np.array(V0, dtype=np.float64, copy=True)
    for t in range(iterations):
        mu = schedule.mu(t)
        S = stream.draw(SKETCH_S, t, n, d)
        U, _ = subproblem_step(solver, U, S.apply(M), S.apply(V.T), mu)
        S_prime = stream.draw(SKETCH_S_PRIME, t, m, d_prime)
        V, _ = subproblem_step(solver, V, S_prime.apply(M.T), S_prime.apply(U.T), mu)
        if callback is not None:
            callback(t, U, V)
    return U, V
