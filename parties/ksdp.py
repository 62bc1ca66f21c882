"""π-KSDP: Kolmogorov–Smirnov distributional privacy, measured (thesis §3.1–3.4, Algorithm 11).

Thesis seed 001, Ch. 3. Secure computation hides the transcript, not what the *outputs* say
about one document. KS distributional privacy asks whether an adversary who knows a document
x can tell, through a scalar *statistic* σ(observable, x), the mechanism run on a database that
contains x from a simulator run on one that does not: a mechanism is π-KSDP when the KS
two-sample test between the two empirical CDFs gives p ≥ π for every statistic in the family
and every document (§3.2). :func:`measure` is Algorithm 11, steps 7–12: the minimum p-value
over the statistics, from samples already drawn (they can be stored and reused across
statistics, as the thesis notes).

What is here
------------
* The **one-bit sum** (§3.1, Figs. 3.3 and 3.5): n individuals with Bernoulli(p) bits;
  f = Σ bits. The neighbouring databases X^n_1 (X_1 = 1) and X^n_0 (X_1 = 0) give
  f(X^n_1) = 1 + Bin(n − 1, p) and f(X^n_0) = Bin(n − 1, p), and the KS statistic between
  them is max_k B(k; n − 1, p) (digest §1.9.1, with the typo of item 24 corrected).
  :func:`one_bit_sum_pmfs` builds both laws by convolving the n Bernoulli laws (no binomial
  formula), :func:`one_bit_sum_ks` takes the largest CDF gap; the tests hold it to
  ``scipy.stats.binom``. The (ε, δ) view of the same mechanism (eqs. 3.2–3.3, Fig. 3.4):
  :func:`one_bit_sum_delta_min`, :func:`one_bit_sum_epsilon_at_delta_min` (exp ε = p(n−1)/q)
  and :func:`one_bit_sum_epsilon` / :func:`one_bit_sum_epsilon_curve` for vanishing δ by the
  thesis's normal approximation.
* The statistic for **PD-NMF** (§3.4.1, digest item 28): the *document-weighted topic
  weights* σ = Σ_t a_t w²_t with a = argmin_{u ∈ [0, 1]^k} ‖x − uT‖² (box-constrained least
  squares) and w² the victim's k-vector ‖W^(v)_:t‖² (SumWW_t minus the adversary's own share,
  with M = 2) at the final sweep.
* The statistics for **PD-SVD** (§3.4.2, digest item 29): Ŝ = V_k Σ̂²_k V_kᵀ, with Σ̂² the
  revealed eigenvalues (Σ-revealing SVD) or the adversary's estimate ((n_v + n_a)/n_a)·(Σ^(A))²
  (PD-SVD, which hides Σ); the families W = |Ŝ ∘ xxᵀ| and D = |Ŝ/‖Ŝ‖_F − xxᵀ/‖x‖²|, each
  reduced by max, sum and sum of squares (six statistics).

Departures
----------
* D normalises xxᵀ by ‖x‖² (its Frobenius norm), not ‖x‖ as printed, so that both terms have
  unit Frobenius norm (digest item 29); D's reductions are W's three (the text lists none).
* Σ^(A)_k, "the adversary's own" spectrum, is read as ‖X^(A) V_:i‖ — its data's spread along
  the revealed directions, aligned with V's columns (a local SVD's order need not match V's).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import lsq_linear
from scipy.stats import ks_2samp, norm

from protocols.errors import InputError

Statistic = Callable[[object, np.ndarray], float]
"""σ(observable, x): a document-specific scalar statistic."""


@dataclass(frozen=True)
class KsdpMeasure:
    """Algorithm 11's outcome for one document.

    Attributes
    ----------
    pi : float
        The minimum p-value over the statistics (π).
    p_values : dict of str to float
        The KS two-sample p-value of every statistic.
    ks_statistics : dict of str to float
        The KS statistic (largest ECDF gap) of every statistic.
    """

    pi: float
    p_values: dict[str, float]
    ks_statistics: dict[str, float]

    @property
    def weakest(self) -> str:
        """The statistic with the smallest p-value (the most discriminative)."""
        return min(self.p_values, key=lambda k: self.p_values[k])


def measure(
    with_x: Mapping[str, Sequence[float]], without_x: Mapping[str, Sequence[float]]
) -> KsdpMeasure:
    """Algorithm 11, steps 7–12: π = min over statistics of the KS two-sample p-value.

    Parameters
    ----------
    with_x : mapping of str to sequence of float
        Per statistic, its values on the t mechanism runs whose database contains x.
    without_x : mapping of str to sequence of float
        Per statistic, its values on the t simulator runs (databases without x).

    Raises
    ------
    InputError
        If the two mappings name different statistics or a sample has fewer than 2 values.
    """
    if set(with_x) != set(without_x) or not with_x:
        raise InputError(f"with_x and without_x must name the same statistics, not "
                         f"{sorted(with_x)} and {sorted(without_x)}")
    p_values, stats = {}, {}
    for name in with_x:
        a = np.asarray(with_x[name], dtype=np.float64)
        b = np.asarray(without_x[name], dtype=np.float64)
        if a.size < 2 or b.size < 2:
            raise InputError(f"statistic {name!r} needs at least 2 samples on each side")
        result = ks_2samp(a, b)
        p_values[name] = float(result.pvalue)
        stats[name] = float(result.statistic)
    return KsdpMeasure(min(p_values.values()), p_values, stats)


# -- the one-bit sum (§3.1) ----------------------------------------------------------------------


def _check_bits(n: int, p: float) -> None:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise InputError(f"n = {n!r} must be an integer ≥ 2 (the victim and one other)")
    if not 0.0 < float(p) < 1.0:
        raise InputError(f"p = {p!r} must lie in (0, 1)")


def one_bit_sum_pmfs(n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """The laws of f(X^n_0) and f(X^n_1) on 0..n, by convolving Bernoulli laws.

    Returns
    -------
    pmf0, pmf1 : ndarray of shape (n + 1,)
        P(f = k) with the victim's bit 0, and with it 1.
    """
    _check_bits(n, p)
    others = np.array([1.0])
    bit = np.array([1.0 - p, p])
    for _ in range(n - 1):
        others = np.convolve(others, bit)
    pmf0 = np.append(others, 0.0)  # victim's bit is 0
    pmf1 = np.insert(others, 0, 0.0)  # victim's bit is 1: shifted by one
    return pmf0, pmf1


def one_bit_sum_ks(n: int, p: float) -> float:
    """KS(F_0, F_1) = max_k |F_0(k) − F_1(k)| for the one-bit sum (exact)."""
    pmf0, pmf1 = one_bit_sum_pmfs(n, p)
    return float(np.max(np.abs(np.cumsum(pmf0) - np.cumsum(pmf1))))


def one_bit_sum_delta_min(n: int, p: float) -> float:
    """δ_min(n) = 1 − (1 − q^(n−1))(1 − p^(n−1)): the smallest δ with a finite ε (eq. 3.3).

    The mass the two laws do not share is f(X^n_0) = 0 (all other bits 0, probability
    q^(n−1)) and f(X^n_1) = n (all other bits 1, probability p^(n−1)); the thesis's δ_min is the
    probability that either of these events happens.
    """
    _check_bits(n, p)
    q = 1.0 - p
    return float(1.0 - (1.0 - q ** (n - 1)) * (1.0 - p ** (n - 1)))


def one_bit_sum_mass_ratio(n: int, p: float, k: ArrayLike) -> np.ndarray:
    """r(n, k) = B(k; n−1, p)/B(k−1; n−1, p) = p(n − k)/(q k), real-valued k as in §3.1."""
    _check_bits(n, p)
    k = np.asarray(k, dtype=np.float64)
    return p * (n - k) / ((1.0 - p) * k)


def one_bit_sum_epsilon_at_delta_min(n: int, p: float) -> float:
    """ε with δ = δ_min: exp(ε) = r(n, 1) = p(n − 1)/q (eq. 3.3; r(n, 1) is the largest ratio)."""
    return float(np.log(one_bit_sum_mass_ratio(n, p, 1.0)))


def one_bit_sum_epsilon(n: int, p: float, delta: float) -> float:
    """ε for a vanishing δ by the thesis's normal approximation (§3.1, Fig. 3.4).

    k_l = µ + σΦ⁻¹(δ/2) and k_u = µ + σΦ⁻¹(1 − δ/2) with µ = np, σ = sqrt(np(1 − p)) bound
    the central mass; ε = max{|log r(n, k_l)|, |log r(n, k_u)|}. The thesis requires
    1 ≤ k_l ≤ k_u ≤ n − 1: outside that range ε is undefined and NaN is returned (n = 10 with
    δ = 10⁻³ gives k_l < 0).
    """
    _check_bits(n, p)
    if not 0.0 < float(delta) < 1.0:
        raise InputError(f"delta = {delta!r} must lie in (0, 1)")
    mu, sigma = n * p, np.sqrt(n * p * (1.0 - p))
    k_l = mu + sigma * norm.ppf(delta / 2.0)
    k_u = mu + sigma * norm.ppf(1.0 - delta / 2.0)
    if k_l < 1.0 or k_u > n - 1:
        return float("nan")
    return float(np.max(np.abs(np.log(one_bit_sum_mass_ratio(n, p, [k_l, k_u])))))


DELTA_SCHEDULES: dict[str, Callable[[int], float]] = {
    "const": lambda n: 1e-3,
    "lin": lambda n: 1.0 / n,
    "quad": lambda n: 1.0 / n**2,
    "cube": lambda n: 1.0 / n**3,
}
"""Fig. 3.4's four vanishing δ's: 10⁻³, 1/n, 1/n², 1/n³."""


def one_bit_sum_epsilon_curve(sizes: Sequence[int], p: float = 0.5) -> dict[str, list[float]]:
    """Fig. 3.4: ε against n for each of :data:`DELTA_SCHEDULES` (NaN where undefined)."""
    return {name: [one_bit_sum_epsilon(int(n), p, rule(int(n))) for n in sizes]
            for name, rule in DELTA_SCHEDULES.items()}


# -- PD-NMF (§3.4.1) -----------------------------------------------------------------------------


def topic_coefficients(x: np.ndarray, T: np.ndarray) -> np.ndarray:
    """a = argmin_{u ∈ [0, 1]^k} ‖x − uT‖² (box-constrained least squares), shape (k,).

    Solved by bounded-variable least squares (``method="bvls"``), an active-set method that
    ends at the exact minimiser — its free coordinates are a least-squares solve on the free
    set, so the answer is correct to rounding (about cond(T)·ε) whatever the library version.
    The default trust-region method stops on a relative change of the cost (``tol = 1e-10``),
    which leaves coordinates up to ~1e-5 off the minimiser on ordinary problems: σ = a · w²
    then moves by ‖w²‖ times that, enough to swap two runs' order in the KS test's pooled
    sample, whose p-value depends on that order only.
    """
    T = np.asarray(T, dtype=np.float64)
    return lsq_linear(T.T, np.asarray(x, dtype=np.float64), bounds=(0.0, 1.0),
                      method="bvls").x


def topic_weight_statistic(x: np.ndarray, T: np.ndarray, w2: np.ndarray) -> float:
    """The document-weighted topic weights σ = a · w² (digest item 28)."""
    return float(topic_coefficients(x, T) @ np.asarray(w2, dtype=np.float64))


# -- PD-SVD (§3.4.2) -----------------------------------------------------------------------------

SVD_STATISTICS = ("W_max", "W_sum", "W_sumsq", "D_max", "D_sum", "D_sumsq")


def svd_statistics(x: np.ndarray, V: np.ndarray, sigma2: np.ndarray) -> dict[str, float]:
    """The six statistics of §3.4.2 for document x, shape (d,), given V (d×k) and Σ̂² (k,)."""
    x = np.asarray(x, dtype=np.float64)
    S = (V * np.asarray(sigma2, dtype=np.float64)[None, :]) @ V.T
    xx = np.outer(x, x)
    W = np.abs(S * xx)
    norm_s = np.linalg.norm(S)
    norm_x = float(x @ x)
    D = np.abs(S / norm_s - xx / norm_x) if norm_s > 0 and norm_x > 0 else np.zeros_like(S)
    out = {}
    for name, M in (("W", W), ("D", D)):
        out[f"{name}_max"] = float(M.max())
        out[f"{name}_sum"] = float(M.sum())
        out[f"{name}_sumsq"] = float((M * M).sum())
    return out


def estimated_sigma2(X_adversary: np.ndarray, V: np.ndarray, n_victim: int) -> np.ndarray:
    """The adversary's estimate of the global Σ²_k: ((n_v + n_a)/n_a)·‖X^(A) V_:i‖²."""
    n_a = X_adversary.shape[0]
    own = np.sum((np.asarray(X_adversary) @ V) ** 2, axis=0)
    return own * (n_victim + n_a) / n_a
