"""The tensor power method with deflation (Anandkumar et al. 2014, Algorithm 1; seed 003 §5.4).

Given a symmetric K×K×K tensor T ≈ Σ_k λ_k v_k⊗v_k⊗v_k with orthonormal v_k, repeat K times:
find a robust eigenpair (λ, θ) with T(I, θ, θ) = λθ by power iterations
θ ← T(I, θ, θ)/‖T(I, θ, θ)‖, then deflate T ← T − λ θ⊗θ⊗θ.

Two modes (spec §10 T3):

``"paper"`` (default)
    What the authors' experiments ran: one start per component, θ₀ uniform in [0, 1]^K and
    normalised, iterated until ‖θ_new − θ‖ ≤ ``tol`` or ``max_iter`` updates; λ = ‖T(I, θ, θ)‖
    at the last step.
``"robust"``
    Anandkumar et al.'s Algorithm 1: ``n_restarts`` starts uniform on the sphere, ``n_iters``
    updates each (all restarts at once), keep the start with the largest T(θ, θ, θ), run
    ``n_iters`` more updates from it, λ = T(θ, θ, θ). (The paper calls the restarts L and the
    iterations N; renamed here so N stays the sample count.)
"""

from __future__ import annotations

import numpy as np

from algorithms.cape.symmetric import contract_vector
from algorithms.vocabulary import CAPE_TENSOR_MODES
from protocols.errors import InputError

MODES: tuple[str, ...] = CAPE_TENSOR_MODES


def tensor_power_method(
    T: np.ndarray,
    n_components: int,
    rng: np.random.Generator,
    *,
    mode: str = "paper",
    tol: float = 1e-6,
    max_iter: int = 1000,
    n_restarts: int = 10,
    n_iters: int = 100,
) -> tuple[np.ndarray, np.ndarray]:
    """Eigenpairs of a symmetric tensor by power iterations with deflation.

    Parameters
    ----------
    T : ndarray, shape (K, K, K)
    n_components : int
        How many eigenpairs (≤ K).
    rng : numpy.random.Generator
        The starts.
    mode : {"paper", "robust"}

    Returns
    -------
    eigenvalues : ndarray, shape (n_components,)
    eigenvectors : ndarray, shape (K, n_components)
        Unit columns.
    """
    T = np.array(T, dtype=np.float64, copy=True)
    if T.ndim != 3 or len(set(T.shape)) != 1:
        raise InputError(f"the tensor must be K×K×K, got shape {T.shape}")
    K = T.shape[0]
    if not 1 <= n_components <= K:
        raise InputError(f"n_components = {n_components} must lie in [1, {K}]")
    if mode not in MODES:
        raise InputError(f"tensor power mode {mode!r} is unknown; use one of {MODES}")
    lams = np.zeros(n_components)
    thetas = np.zeros((K, n_components))
    for c in range(n_components):
        if mode == "paper":
            lam, theta = _paper_eigenpair(T, rng, tol, max_iter)
        else:
            lam, theta = _robust_eigenpair(T, rng, n_restarts, n_iters)
        lams[c], thetas[:, c] = lam, theta
        T -= lam * np.einsum("a,b,c->abc", theta, theta, theta)
    return lams, thetas


def _normalize(v: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(v, axis=0)
    return v / np.where(norm > 0, norm, 1.0)


def _paper_eigenpair(T: np.ndarray, rng: np.random.Generator, tol: float,
                     max_iter: int) -> tuple[float, np.ndarray]:
    u = _normalize(rng.random(T.shape[0]))
    lam = 0.0
    for _ in range(max_iter):
        v = contract_vector(T, u)
        lam = float(np.linalg.norm(v))
        new = v / lam if lam > 0 else u
        done = np.linalg.norm(new - u) <= tol
        u = new
        if done:
            break
    return lam, u


def _robust_eigenpair(T: np.ndarray, rng: np.random.Generator, n_restarts: int,
                      n_iters: int) -> tuple[float, np.ndarray]:
    U = _normalize(rng.normal(size=(T.shape[0], n_restarts)))
    for _ in range(n_iters):
        U = _normalize(contract_vector(T, U))
    values = np.einsum("ar,ar->r", contract_vector(T, U), U)
    u = U[:, int(np.argmax(values))]
    for _ in range(n_iters):
        u = _normalize(contract_vector(T, u))
    return float(contract_vector(T, u) @ u), u
