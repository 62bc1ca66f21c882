"""DP robust NMF with outliers (Saha & Imtiaz, seed 000, Algorithm 2; digest §2 and §7.2).

The robust objective (paper Eq. 3), with the outlier matrix R of V's shape,

    L(V, W, H, R) = (1/N)(½‖V − WH − R‖²_F + λ‖R‖_{1,1}),
    W ∈ C (columns in the non-negative unit ℓ2 ball), H ≥ 0, R ∈ Q (‖r_n‖_∞ ≤ M),

is minimised by the two-block scheme of Algorithm 2: for t = 1..T_iter

1. (H_t, R_t) from W_{t−1}: ``inner_iterations`` rounds of the projected-gradient H step
   H ← P_+(H − η_H ∇q(H)), ∇q(H) = (1/N)(WᵀWH − Wᵀ(V − R)) (Eq. 8), and the R step
   R ← S_{λ,M}(V − WH) (Eq. 9, :func:`threshold`);
2. the statistics A_t = (1/N)H_tH_tᵀ (K×K) and B_t = (1/N)(V − R_t)H_tᵀ (D×K), released with
   iid Gaussian noise N(0, τ²) of τ = (Δ/ε)·sqrt(2 log(1.25/δ)) (Def. 3; not symmetrised,
   digest §7.2 item 39);
3–4. W_t = P_C(W_{t−1} − η_W(W_{t−1}Ā_t − B̄_t)) (Eqs. 11–12), column by column.

Orientation: this module keeps the paper's letters and orientation — V is D×N with the
**samples in columns**, W is the D×K dictionary (the released factor), H (K×N) and R (D×N) are
per-sample. The scenario's row shards X^(m) (N_m×D, rows are samples, DESIGN.md) enter as
V^(m) = X^(m)ᵀ; the catalogue entry transposes at the boundary.

Roles (Fig. 1)
--------------
**Curators** (sites 0..M−1) hold column blocks V^(m), H^(m), R^(m); the **analyst** (role
``"analyst"``, id M) holds W. The paper has one curator; with several, A_t and B_t are sums over
the curators' columns, so each curator adds N(0, τ²/M) to its part and the curators combine the
parts with SecureSum (:mod:`protocols.secure_sum`); the sum carries noise of variance exactly τ²,
the single-curator mechanism. Curator 0 forwards the noisy sums to the analyst, who updates W
and sends it to every curator. Per iteration: one SecureSum of K² + DK elements among the
curators, one message of K² + DK elements to the analyst, M messages of DK elements back
(:func:`declared_iteration_elements`). The curators learn the released statistics too (they
are the DP output); a coalition of t curators knows its own noise shares, so against it the
others' data are protected by noise of variance τ²(M − t)/M (digest §6 item 6,
:func:`coalition_noise_variance`). N is public (the sensitivities depend on it); with several
curators it is obtained by one SecureSum of the shard sizes. The set-up messages (N, W_0) are
labelled ``setup`` in the ledger; every other message belongs to an iteration.

Where the sensitivities' normalisations are enforced (digest §7.2 item 35)
--------------------------------------------------------------------------
Δ_A = 2/N needs ‖h_n‖₂ ≤ 1; Δ_B = 4/N needs in addition ‖v_n‖₂ ≤ 1 and ‖r_n‖₂ ≤ 1 (2/N when
R ≡ 0). The paper normalises V to unit *maximum* entry and never normalises H or R, so its
stated Δ does not hold as written. Here:

* :func:`unit_columns` scales each v_n to ‖v_n‖₂ ≤ 1 when a curator (or the reference) takes
  its data — :func:`curator` and :func:`dp_robust_nmf` call it on entry;
* :func:`update_h_r` projects every h_n onto the ℓ2 unit ball after each H step and clips
  every r_n to ‖r_n‖₂ ≤ 1 after each R step (after the ℓ∞ box of S_{λ,M});

so every column that enters A_t and B_t satisfies the bounds, whatever the data or W.
``tests/algorithms/nmf/test_dp_robust.py`` checks Δ_A and Δ_B on neighbouring data sets and
shows the bounds fail without these projections.

Departures and readings (digest §7.2)
--------------------------------------
* The projections above are additions (item 35); they make the H/R step a projected step onto
  a smaller set, so the objective is not the paper's exactly when data columns are long.
* One W step per release by default (``w_steps``), the gradient at W_{t−1} (item 40); the
  analyst may take more at no privacy cost (the statistics are released, item 41).
* ``eta_h = None`` takes the 1/L step η_H = N/‖W_{t−1}ᵀW_{t−1}‖₂ of the 1/N-scaled gradient
  (item 40); the paper gives only the ratio η_H/η_W ≈ 1e4–2e4, so ``eta_w`` is a setting.
* Update order H, R then W (Algorithm 2, item 42). ε < 1 per release (item 38).
* After the last release each curator takes one more (H, R) update with the final W — local,
  no release — so that the objective is evaluated on a matched (W, H) pair.

Privacy (§3.2–§3.3): sensitivities, the Def. 3 calibration and both accountings are
:mod:`algorithms.nmf.dp_robust_privacy`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from algorithms.nmf.nndsvd import nndsvd
from protocols.context import PartyContext
from protocols.effects import Call, Output, Recv, Send
from protocols.errors import InputError
from protocols.publication import label as published
from protocols.secure_sum import declared_cost, secure_sum

ANALYST = "analyst"
PROTOCOL = "dp_robust_nmf"
NORM_EPS = 1e-300


# -- the per-iteration steps (pure) -------------------------------------------------------------


def unit_columns(V: np.ndarray) -> np.ndarray:
    """Scale every column to ℓ2 norm ≤ 1 (v_n / max(1, ‖v_n‖₂)); the Δ_B normalisation."""
    V = np.asarray(V, dtype=np.float64)
    return V / np.maximum(1.0, np.linalg.norm(V, axis=0))


def threshold(X: np.ndarray, lam: float, bound: float) -> np.ndarray:
    """S_{λ,M}(X), element-wise (Eq. 9): 0 below λ, shrunk by λ, capped at ±M beyond λ + M."""
    out = np.abs(X)
    out -= lam
    np.clip(out, 0.0, bound, out=out)
    return np.copysign(out, X, out=out)


def project_dictionary(W: np.ndarray) -> np.ndarray:
    """P_C: every column onto the non-negative unit ℓ2 ball (Eq. 12)."""
    P = np.maximum(W, 0.0)
    return P / np.maximum(1.0, np.linalg.norm(P, axis=0))


@dataclass(frozen=True)
class RobustSettings:
    """Settings of the (H, R) and W steps (public).

    Attributes
    ----------
    lam : float
        λ ≥ 0, the ℓ1 weight on R.
    bound : float
        M > 0, the ℓ∞ bound on R's entries (1 for data in [0, 1]).
    outliers : bool
        Update R (Δ_B = 4/N); False keeps R ≡ 0 (Δ_B = 2/N).
    inner_iterations : int
        (H, R) rounds per outer iteration (item 40).
    eta_h : float or None
        H step in the units of Eq. 8; None takes N/‖WᵀW‖₂.
    eta_w : float or None
        W step (Eq. 12); None takes the paper's ratio, η_W = η_H/10⁴ with η_H = N/‖WᵀW‖₂ at
        the current W (§4 and digest §7.2 item 40).
    w_steps : int
        W steps per release (item 41).
    """

    lam: float = 0.1
    bound: float = 1.0
    outliers: bool = True
    inner_iterations: int = 10
    eta_h: float | None = None
    eta_w: float | None = None
    w_steps: int = 1

    def __post_init__(self) -> None:
        if not math.isfinite(self.lam) or self.lam < 0:
            raise InputError(f"lam = {self.lam!r} must be a finite number ≥ 0")
        if not math.isfinite(self.bound) or self.bound <= 0:
            raise InputError(f"bound = {self.bound!r} must be a finite number > 0")
        for name in ("eta_h", "eta_w"):
            value = getattr(self, name)
            if value is not None and (not math.isfinite(value) or value <= 0):
                raise InputError(f"{name} = {value!r} must be a finite number > 0 (or None)")
        for name in ("inner_iterations", "w_steps"):
            if getattr(self, name) < 1:
                raise InputError(f"{name} = {getattr(self, name)} must be ≥ 1")


def update_h_r(V: np.ndarray, W: np.ndarray, H: np.ndarray, R: np.ndarray, n_total: int,
               settings: RobustSettings) -> tuple[np.ndarray, np.ndarray]:
    """Step 1 of Algorithm 2 on a block of columns: (H_t, R_t) from W_{t−1}.

    Parameters
    ----------
    V : ndarray of shape (D, N_m)
        The curator's columns (already scaled by :func:`unit_columns`).
    W : ndarray of shape (D, K)
        W_{t−1}, public.
    H : ndarray of shape (K, N_m)
    R : ndarray of shape (D, N_m)
    n_total : int
        N, the number of samples over all curators (the gradient's 1/N).
    settings : RobustSettings

    Returns
    -------
    (H, R) : ndarrays of shapes (K, N_m) and (D, N_m)
        Every h_n in the ℓ2 unit ball, every r_n in [−M, M]^D and in the ℓ2 unit ball.
    """
    gram = W.T @ W
    eta = settings.eta_h if settings.eta_h is not None else lipschitz_step(W, n_total)
    WtV = W.T @ V
    for _ in range(settings.inner_iterations):
        grad = (gram @ H - (WtV - W.T @ R)) / n_total
        H = np.maximum(H - eta * grad, 0.0)
        H = H / np.maximum(1.0, np.linalg.norm(H, axis=0))
        if settings.outliers:
            R = threshold(V - W @ H, settings.lam, settings.bound)
            R = R / np.maximum(1.0, np.linalg.norm(R, axis=0))
    return H, R


def lipschitz_step(W: np.ndarray, n_total: int) -> float:
    """N/‖WᵀW‖₂: the 1/L step of the 1/N-scaled H gradient (digest §7.2 item 40)."""
    return n_total / max(float(np.linalg.norm(W.T @ W, 2)), NORM_EPS)


ETA_RATIO = 1e4
"""η_H/η_W of the paper's experiments (§4: "about 10,000 to 20,000 times")."""


def statistics(V: np.ndarray, H: np.ndarray, R: np.ndarray,
               n_total: int) -> tuple[np.ndarray, np.ndarray]:
    """A curator's parts of A_t = (1/N)HHᵀ (K×K) and B_t = (1/N)(V − R)Hᵀ (D×K)."""
    return H @ H.T / n_total, (V - R) @ H.T / n_total


def gaussian_noise(rng: np.random.Generator, sigma_a: float, sigma_b: float, k: int, d: int,
                   n_curators: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """One curator's share of the noise: iid N(0, σ²/M) of shapes (K, K) and (D, K)."""
    scale = 1.0 / math.sqrt(n_curators)
    return (rng.normal(0.0, sigma_a * scale, size=(k, k)),
            rng.normal(0.0, sigma_b * scale, size=(d, k)))


def update_w(W: np.ndarray, A: np.ndarray, B: np.ndarray, settings: RobustSettings,
             n_total: int) -> np.ndarray:
    """Steps 3–4: W ← P_C(W − η_W(WA − B)), ``settings.w_steps`` times (Eqs. 11–12)."""
    for _ in range(settings.w_steps):
        eta = settings.eta_w if settings.eta_w is not None else (
            lipschitz_step(W, n_total) / ETA_RATIO)
        W = project_dictionary(W - eta * (W @ A - B))
    return W


def curator_step(V: np.ndarray, W: np.ndarray, H: np.ndarray, R: np.ndarray, n_total: int,
                 settings: RobustSettings, t: int,
                 loss: list[float]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Steps 1–2 at a curator (or the reference): (H_t, R_t), then its parts of A_t and B_t.

    The loss of the previous iteration's W with the new (H, R) is appended to ``loss`` (from
    the second iteration on; an evaluation, never sent).
    """
    H, R = update_h_r(V, W, H, R, n_total, settings)
    if t > 0:
        loss.append(robust_loss(V, W, H, R, settings.lam, n_total))
    A, B = statistics(V, H, R, n_total)
    return H, R, A, B


def robust_loss(V: np.ndarray, W: np.ndarray, H: np.ndarray, R: np.ndarray, lam: float,
                n_total: int) -> float:
    """A block's part of L(V, W, H, R) (Eq. 3)."""
    return float((0.5 * np.sum((V - W @ H - R) ** 2) + lam * np.abs(R).sum()) / n_total)


def clean_objective(V_clean: np.ndarray, W: np.ndarray, H: np.ndarray, n_total: int) -> float:
    """A block's part of the Objective Value (1/(2N))‖V° − WH‖²_F (Eq. 15)."""
    return float(0.5 * np.sum((V_clean - W @ H) ** 2) / n_total)


def nndsvd_start(V: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(W_0, H_0) from NNDSVD of V (§4), W_0's columns scaled to unit norm, H_0 to match.

    Reads the whole V: the paper's start, outside the DP guarantee.
    """
    H0t, W0t = nndsvd(np.asarray(V).T, k)  # Vᵀ ≈ H0ᵀ W0ᵀ in the rows-are-samples orientation
    W0, H0 = W0t.T, H0t.T
    norms = np.linalg.norm(W0, axis=0)
    scale = np.where(norms > 0, norms, 1.0)
    W0 = W0 / scale
    H0 = H0 * scale[:, None]
    return W0, H0 / np.maximum(1.0, np.linalg.norm(H0, axis=0))


def random_start(d: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A public W_0: U[0, 1] entries, unit columns (data-independent)."""
    return project_dictionary(rng.uniform(0.0, 1.0, size=(d, k)))


# -- the centralized reference ------------------------------------------------------------------


@dataclass
class RobustFit:
    """What Algorithm 2 returns, and what a run recorded along the way.

    Attributes
    ----------
    W : ndarray of shape (D, K)
        W_private (the released dictionary).
    H, R : ndarrays of shapes (K, N) and (D, N)
        The final coefficients and outliers (refit to the final W; private to the curators).
    A_released, B_released : list of ndarray
        The noisy statistics of every iteration (the analyst's view).
    loss : list of float
        L(V, W_t, H_{t+1}, R_{t+1}) after each iteration, from the curators' next (H, R).
    """

    W: np.ndarray
    H: np.ndarray
    R: np.ndarray
    A_released: list[np.ndarray] = field(default_factory=list)
    B_released: list[np.ndarray] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)


def dp_robust_nmf(
    V: np.ndarray,
    W0: np.ndarray,
    H0: np.ndarray,
    *,
    iterations: int,
    settings: RobustSettings,
    sigma_a: float,
    sigma_b: float,
    rng: np.random.Generator | None = None,
    noise: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None,
) -> RobustFit:
    """Algorithm 2 with one curator and one analyst (the centralized reference).

    Parameters
    ----------
    V : ndarray of shape (D, N)
        Non-negative data, samples in columns; scaled by :func:`unit_columns` on entry.
    W0 : ndarray of shape (D, K)
        The public start (projected onto C).
    H0 : ndarray of shape (K, N)
    iterations : int
        T_iter, the number of noisy releases.
    settings : RobustSettings
    sigma_a, sigma_b : float
        τ_A and τ_B (0 for the non-private run through the same code).
    rng : numpy.random.Generator, optional
        Draws the noise (needed when a σ is positive and ``noise`` is not given).
    noise : callable, optional
        ``noise(t) -> (E_A, E_B)`` replaces the drawn noise of iteration t (tests).
    """
    V = unit_columns(V)
    d, n = V.shape
    W = project_dictionary(np.asarray(W0, dtype=np.float64))
    k = W.shape[1]
    H = np.array(H0, dtype=np.float64, copy=True)
    R = np.zeros_like(V)
    fit = RobustFit(W, H, R)
    for t in range(iterations):
        H, R, A, B = curator_step(V, W, H, R, n, settings, t, fit.loss)
        if noise is not None:
            E_A, E_B = noise(t)
        elif sigma_a > 0 or sigma_b > 0:
            if rng is None:
                raise InputError("dp_robust_nmf needs rng to draw the noise")
            E_A, E_B = gaussian_noise(rng, sigma_a, sigma_b, k, d)
        else:
            E_A, E_B = 0.0, 0.0
        A_bar, B_bar = A + E_A, B + E_B
        fit.A_released.append(A_bar)
        fit.B_released.append(B_bar)
        W = update_w(W, A_bar, B_bar, settings, n)
    H, R = update_h_r(V, W, H, R, n, settings)
    fit.loss.append(robust_loss(V, W, H, R, settings.lam, n))
    fit.W, fit.H, fit.R = W, H, R
    return fit


# -- the party programs -------------------------------------------------------------------------


def declared_iteration_elements(n_curators: int, d: int, k: int,
                                variant: str = "prg") -> dict[str, int]:
    """Elements each role sends per iteration: a curator's SecureSum, curator 0's forward,
    the analyst's W to every curator."""
    stats = k * k + d * k
    curator = declared_cost(variant, n_curators, stats).elements_sent
    return {"curator": curator, "curator_0": curator + stats, "analyst": n_curators * d * k}


@dataclass
class CuratorState:
    """What a curator ends with (private).

    Attributes
    ----------
    H : ndarray of shape (K, N_m)
    R : ndarray of shape (D, N_m)
    n_total : int
        N, as the curators obtained it.
    loss : list of float
        The curator's part of L after each iteration (an evaluation; never sent).
    """

    H: np.ndarray
    R: np.ndarray
    n_total: int
    loss: list[float] = field(default_factory=list)


def _call(t: int) -> Call:
    return Call(PROTOCOL, t)


def curator(
    ctx: PartyContext,
    V: np.ndarray,
    H0: np.ndarray,
    *,
    iterations: int,
    settings: RobustSettings,
    sigma_a: float,
    sigma_b: float,
    analyst: int,
    variant: str = "prg",
) -> Generator[Any, Any, CuratorState]:
    """Curator m's program (Fig. 1, generalised to M curators holding column blocks).

    Parameters
    ----------
    V : ndarray of shape (D, N_m)
        The curator's samples (columns), non-negative; scaled by :func:`unit_columns`.
    H0 : ndarray of shape (K, N_m)
        The curator's start of H.
    iterations, settings, sigma_a, sigma_b
        As :func:`dp_robust_nmf`; σ are the aggregate noise levels (each curator adds 1/M of
        the variance).
    analyst : int
        The analyst's party id.
    variant : {"prg", "explicit"}
        The SecureSum variant.
    """
    V = unit_columns(V)
    d, n_m = V.shape
    H = np.array(H0, dtype=np.float64, copy=True)
    k = H.shape[0]
    if H.shape != (k, n_m):
        raise InputError(f"H0 has shape {H.shape}; expected (K, {n_m})")
    R = np.zeros_like(V)
    m = ctx.n_parties
    with ctx.in_phase("setup"):
        if m > 1:
            summed = yield from secure_sum(ctx, [float(n_m)], variant, label="n_samples")
            n_total = round(float(summed[0]))
        else:
            n_total = n_m
        yield Output("n_samples", n_total)
        if ctx.party == ctx.parties[0]:
            count = np.array([float(n_total)])
            yield Output(published("n_samples"), count, _call(0))
            yield Send(analyst, count, _call(0), "n_samples")
        W = yield Recv(analyst, _call(0), "W")
        yield Output(published("W"), W, _call(0))
    state = CuratorState(H, R, n_total)
    for t in range(iterations):
        H, R, A, B = curator_step(V, W, H, R, n_total, settings, t, state.loss)
        E_A, E_B = gaussian_noise(ctx.rng, sigma_a, sigma_b, k, d, m)
        noisy = np.concatenate([(A + E_A).ravel(), (B + E_B).ravel()])
        if m > 1:
            noisy = yield from secure_sum(ctx, noisy, variant, label="noisy_statistics")
        if ctx.party == ctx.parties[0]:
            yield Output(published("statistics"), noisy, _call(t + 1))
            yield Send(analyst, noisy, _call(t + 1), "statistics")
        W = yield Recv(analyst, _call(t + 1), "W")
        yield Output(published("W"), W, _call(t + 1))
    H, R = update_h_r(V, W, H, R, n_total, settings)
    state.loss.append(robust_loss(V, W, H, R, settings.lam, n_total))
    state.H, state.R = H, R
    return state


@dataclass
class AnalystState:
    """What the analyst ends with: W_private and the statistics it received."""

    W: np.ndarray
    A_released: list[np.ndarray] = field(default_factory=list)
    B_released: list[np.ndarray] = field(default_factory=list)


def analyst(
    ctx: PartyContext,
    W0: np.ndarray,
    *,
    iterations: int,
    settings: RobustSettings,
) -> Generator[Any, Any, AnalystState]:
    """The analyst's program: receives (Ā_t, B̄_t), updates W, sends W to every curator.

    Parameters
    ----------
    W0 : ndarray of shape (D, K)
        The public start (projected onto C).
    """
    W = project_dictionary(np.asarray(W0, dtype=np.float64))
    d, k = W.shape
    state = AnalystState(W)
    curators = ctx.parties
    with ctx.in_phase("setup"):
        received = yield Recv(curators[0], _call(0), "n_samples")
        yield Output(published("n_samples"), received, _call(0))
        n_total = round(float(received[0]))
        yield Output(published("W"), W, _call(0))
        for c in curators:
            yield Send(c, W, _call(0), "W")
    for t in range(iterations):
        flat = yield Recv(curators[0], _call(t + 1), "statistics")
        yield Output(published("statistics"), flat, _call(t + 1))
        A = np.asarray(flat[: k * k]).reshape(k, k)
        B = np.asarray(flat[k * k:]).reshape(d, k)
        state.A_released.append(A)
        state.B_released.append(B)
        W = update_w(W, A, B, settings, n_total)
        yield Output(published("W"), W, _call(t + 1))
        for c in curators:
            yield Send(c, W, _call(t + 1), "W")
    yield Output("W", W.copy())
    state.W = W
    return state
