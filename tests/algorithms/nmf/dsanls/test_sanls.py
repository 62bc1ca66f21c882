"""SANLS's subproblem solvers (seed 004, §3.5: Algorithm 3 and Eq. 14) and their behaviour.

The solvers are checked against element-by-element implementations of Eq. 19 and Eq. 14
written here from the paper's formulas; convergence claims (Theorem 1; §5.2.4, digest C22) on
a planted non-negative low-rank matrix with fixed seeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from algorithms.nmf.dsanls.sanls import (
    LocalWork,
    StepSchedule,
    pgd_step,
    rcd_step,
    relative_error,
    sanls,
    subproblem_step,
    v_start_scale,
)
from protocols.effects import Compute
from protocols.errors import InputError


def eq19(X: np.ndarray, A: np.ndarray, B: np.ndarray, mu: float) -> np.ndarray:
    """Eq. 19 entry by entry: columns in order, new values for l < j, old for l > j."""
    r, k = X.shape
    new = X.copy()
    for j in range(k):
        for i in range(r):
            total = mu * X[i, j] + float(np.dot(A[i], B[j]))
            for l_ in range(k):
                if l_ != j:
                    total -= new[i, l_] * float(np.dot(B[l_], B[j]))
            new[i, j] = max(total / (float(np.dot(B[j], B[j])) + mu), 0.0)
    return new


def problem(seed: int = 0, r: int = 5, k: int = 3, d: int = 4):
    rng = np.random.default_rng(seed)
    return rng.random((r, k)), rng.normal(size=(r, d)), rng.normal(size=(k, d))


@pytest.mark.parametrize("mu", [0.5, 3.0])
def test_rcd_step_is_algorithm_3(mu: float) -> None:
    X, A, B = problem()
    np.testing.assert_allclose(rcd_step(X, A @ B.T, B @ B.T, mu), eq19(X, A, B, mu),
                               rtol=1e-12, atol=1e-12)


def test_rcd_step_minimises_each_coordinate_of_the_proximal_objective() -> None:
    """Each column update is the exact minimiser of Eq. 18 over that column (KKT)."""
    X, A, B = problem(1)
    mu = 0.7
    new = rcd_step(X, A @ B.T, B @ B.T, mu)
    k = X.shape[1]
    for j in range(k):
        cur = np.concatenate([new[:, :j], X[:, j:]], axis=1)  # the state before column j
        cur[:, j] = new[:, j]
        grad = 2 * ((cur @ B - A) @ B[j]) + 2 * mu * (new[:, j] - X[:, j])
        assert np.all(grad[new[:, j] > 0] == pytest.approx(0, abs=1e-10))
        assert np.all(grad[new[:, j] == 0] >= -1e-10)


def test_pgd_step_is_eq_14_with_a_step_below_one_over_l() -> None:
    X, A, B = problem(2)
    mu = 2.0
    H = B @ B.T
    eta = 1 / (2 * (np.linalg.eigvalsh(H)[-1] + mu))
    expected = np.maximum(X - 2 * eta * (X @ B @ B.T - A @ B.T), 0)
    np.testing.assert_allclose(pgd_step(X, A @ B.T, H, mu), expected, rtol=1e-12)
    assert eta <= 1 / (2 * np.linalg.eigvalsh(H)[-1])


def test_a_large_proximal_weight_keeps_the_step_small() -> None:
    X, A, B = problem(3)
    for step in (rcd_step, pgd_step):
        moved = np.abs(step(X, A @ B.T, B @ B.T, 1e9) - X).max()
        assert moved < 1e-6


def test_subproblem_step_counts_the_flops_of_eq_20() -> None:
    X, A, B = problem(4, r=6, k=3, d=5)
    new, flops = subproblem_step("rcd", X, A, B, 1.0)
    np.testing.assert_allclose(new, eq19(X, A, B, 1.0), rtol=1e-12)
    assert flops == 2 * 6 * 5 * 3 + 2 * 3 * 3 * 5 + 2 * 6 * 3 * 3
    with pytest.raises(InputError, match="solver = 'hals' is unknown"):
        subproblem_step("hals", X, A, B, 1.0)


def test_step_schedule_is_alpha_plus_beta_t_and_refuses_mu_0() -> None:
    s = StepSchedule(0.5, 2.0)
    assert [s.mu(t) for t in range(3)] == [0.5, 2.5, 4.5]
    with pytest.raises(InputError, match="alpha = 0 must be > 0"):
        StepSchedule(0, 1)
    with pytest.raises(InputError, match="beta = -1 must be finite and ≥ 0"):
        StepSchedule(1, -1)


def test_local_work_spends_flops_on_the_clock() -> None:
    work = LocalWork(seconds_per_flop=1e-9)
    work.add(2_000)
    gen = work.spend()
    effect = next(gen)
    assert isinstance(effect, Compute) and effect.seconds == pytest.approx(2e-6)
    with pytest.raises(StopIteration) as stop:
        gen.send(5.0)
    assert stop.value.value == 5.0 and work.pending == 0 and work.total == 2_000


def planted(seed: int = 0, m: int = 60, n: int = 80, k: int = 4):
    rng = np.random.default_rng(seed)
    M = rng.random((m, k)) @ rng.random((k, n))
    U0 = rng.random((m, k))
    V0 = rng.random((n, k)) * v_start_scale(M, k)
    return M, U0, V0


def errors(M, U0, V0, **kwargs) -> list[float]:
    out: list[float] = []
    sanls(M, U0, V0, callback=lambda t, U, V: out.append(relative_error(M, U, V)), **kwargs)
    return out


@pytest.mark.parametrize("sketch", ["gaussian", "subsampling"])
@pytest.mark.parametrize("solver", ["rcd", "pgd"])
def test_sanls_fits_a_planted_low_rank_matrix(sketch: str, solver: str) -> None:
    """Theorem 1 in practice: the error of an exactly rank-4 matrix keeps falling."""
    M, U0, V0 = planted()
    err = errors(M, U0, V0, iterations=150, seed=1, sketch=sketch, d=0.3, d_prime=0.3,
                 solver=solver, schedule=StepSchedule(1.0, 0.1))
    start = relative_error(M, U0, V0)
    assert err[-1] < 0.25 * start
    assert err[-1] < min(err[:10])


def test_rcd_converges_faster_per_iteration_than_pgd() -> None:
    """§5.2.4 (Fig. 5, digest C22): DSANLS-RCD beats DSANLS-PGD per iteration."""
    M, U0, V0 = planted(5)
    kwargs = {"iterations": 60, "seed": 2, "sketch": "gaussian", "d": 0.3, "d_prime": 0.3,
              "schedule": StepSchedule(1.0, 0.1)}
    rcd = errors(M, U0, V0, solver="rcd", **kwargs)
    pgd = errors(M, U0, V0, solver="pgd", **kwargs)
    assert all(r < p for r, p in zip(rcd[9::10], pgd[9::10], strict=True))


def test_relative_error_and_start_scale() -> None:
    M = np.array([[3.0, 4.0]])
    assert relative_error(M, np.zeros((1, 1)), np.zeros((2, 1))) == 1.0
    assert relative_error(M, np.ones((1, 1)), np.array([[3.0], [4.0]])) == 0.0
    rng = np.random.default_rng(0)
    block = rng.random((30, 40)) * 2
    scale = v_start_scale(block, 5)
    U = rng.random((30, 5))
    V = rng.random((40, 5)) * scale
    assert (U @ V.T).mean() == pytest.approx(block.mean(), rel=0.1)
