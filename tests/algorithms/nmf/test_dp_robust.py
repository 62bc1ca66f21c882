"""Tests of algorithms.nmf.dp_robust: DP robust NMF with outliers (seed 000, Algorithm 2).

Expected values come from outside the code under test: the digest's reference table of the
paper's RDP composition (§2.6, claim C15), the sensitivities of §3.2 (claim C14) measured on
neighbouring data sets with numpy, the Gaussian mechanism's variance, scipy's minimisation of
the closed-form RDP conversion, and the piecewise definition of S_{λ,M} (Eq. 9).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from algorithms.nmf.dp_robust import (
    ANALYST,
    RobustSettings,
    analyst,
    curator,
    dp_robust_nmf,
    statistics,
    threshold,
    unit_columns,
    update_h_r,
)
from algorithms.nmf.dp_robust_privacy import (
    account,
    check_privacy,
    gaussian_sigma,
    rdp_epsilon,
    sensitivities,
)
from parties.party import Party
from protocols.errors import InputError
from sim.simulation import Simulation

# digest §2.6: ε_total for δ = 1e-5, rows ε_i, columns T_iter = 1, 10, 100, 1000
REFERENCE = {
    0.5: (0.711, 2.321, 8.069, 32.80),
    0.7: (1.001, 3.309, 11.89, 51.88),
    0.999: (1.442, 4.850, 18.24, 86.77),
}
ALPHA_AT_HALF = (33.88, 11.40, 4.288, 2.040)


@pytest.mark.parametrize("eps_i", sorted(REFERENCE))
def test_paper_rdp_composition_matches_the_reference_table(eps_i: float) -> None:
    for iterations, expected in zip((1, 10, 100, 1000), REFERENCE[eps_i], strict=True):
        acc = account(eps_i, 1e-5, iterations)
        assert acc.epsilon_paper == pytest.approx(expected, abs=6e-3 * max(1, expected / 10))
    alphas = [account(0.5, 1e-5, it).alpha_opt for it in (1, 10, 100, 1000)]
    np.testing.assert_allclose(alphas, ALPHA_AT_HALF, rtol=2e-3)


def test_paper_formula_is_the_closed_form_c_plus_two_sqrt_cl() -> None:
    # digest §2.6 (DERIVED): ε_total = c + 2·sqrt(c L), c = K ε²/(2 log(1.25/δ)), L = log(1/δ)
    for eps_i, delta, iterations in [(0.3, 1e-6, 50), (0.9, 1e-3, 7), (0.05, 0.01, 400)]:
        c = iterations * eps_i**2 / (2 * math.log(1.25 / delta))
        L = math.log(1 / delta)
        assert account(eps_i, delta, iterations).epsilon_paper == pytest.approx(
            c + 2 * math.sqrt(c * L), rel=1e-12)


def test_accountant_is_tighter_and_matches_the_rdp_conversion_it_uses() -> None:
    eps_i, delta, iterations = 0.5, 1e-5, 100
    acc = account(eps_i, delta, iterations)
    assert acc.epsilon_exact < acc.epsilon_accountant < acc.epsilon_paper
    # two Gaussian releases per iteration, each (α, α/(2z²))-RDP with z = sqrt(2 log(1.25/δ))/ε
    z2 = 2 * math.log(1.25 / delta) / eps_i**2
    rdp = lambda a: iterations * 2 * a / (2 * z2)  # noqa: E731
    # Canonne–Kamath–Steinke conversion over real orders: the accountant tries a grid of
    # orders, so its value is at least the conversion's minimum and close to it. The minimum
    # is taken on a grid of 10^6 orders (no optimiser's stopping rule): smooth in α, the
    # grid's value exceeds the true minimum by O(f''·h²) ≈ 1e-9 relative, inside the slack.
    a = np.linspace(1.01, 200.0, 1_000_001)
    cks = float(np.min(rdp(a) + np.log((a - 1) / a) - (math.log(delta) + np.log(a)) / (a - 1)))
    assert cks * (1 - 1e-8) <= acc.epsilon_accountant <= cks * 1.02
    # the paper's conversion min_α c·α + L/(α − 1), with rdp(α) = c·α and L = log(1/δ), has
    # its minimum at α* = 1 + sqrt(L/c), where it is c + 2·sqrt(c·L) (closed form)
    c, L = rdp(1.0), math.log(1 / delta)
    assert acc.alpha_opt == pytest.approx(1 + math.sqrt(L / c), rel=1e-12)
    assert acc.epsilon_paper == pytest.approx(c + 2 * math.sqrt(c * L), rel=1e-12)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.0, 1e-5), (-0.5, 1e-5), (1.0, 1e-5),
                                                (1.5, 1e-5), (0.5, 0.0), (0.5, 1.0),
                                                (0.5, -1e-5)])
def test_privacy_parameters_out_of_range_are_refused(epsilon: float, delta: float) -> None:
    with pytest.raises(InputError, match=r"epsilon|delta"):
        check_privacy(epsilon, delta)


def test_gaussian_calibration_and_sensitivities() -> None:
    assert sensitivities(50) == (2 / 50, 4 / 50)
    assert sensitivities(50, outliers=False) == (2 / 50, 2 / 50)
    assert gaussian_sigma(0.1, 0.5, 1e-5) == pytest.approx(
        0.1 / 0.5 * math.sqrt(2 * math.log(1.25e5)))


def test_threshold_is_the_piecewise_operator_of_eq_9() -> None:
    lam, bound = 0.3, 0.5

    def s(x: float) -> float:
        if abs(x) < lam:
            return 0.0
        if abs(x) <= lam + bound:
            return x - math.copysign(lam, x)
        return math.copysign(bound, x)

    xs = np.linspace(-1.5, 1.5, 301)
    np.testing.assert_allclose(threshold(xs, lam, bound), [s(x) for x in xs], atol=1e-15)


def _neighbour_stats(V: np.ndarray, W: np.ndarray, H: np.ndarray, settings: RobustSettings,
                     replacement: np.ndarray, scale: bool = True):
    """A_t, B_t for V and for V with its last column replaced (replace-one neighbours)."""
    out = []
    n = V.shape[1]
    for data in (V, np.column_stack([V[:, :-1], replacement])):
        Vu = unit_columns(data) if scale else data
        Ht, Rt = update_h_r(Vu, W, H.copy(), np.zeros_like(Vu), n, settings)
        out.append(statistics(Vu, Ht, Rt, n))
    (A, B), (A2, B2) = out
    return np.linalg.norm(A - A2), np.linalg.norm(B - B2)


@pytest.mark.parametrize("outliers", [True, False])
def test_sensitivities_hold_on_neighbouring_data_sets(outliers: bool) -> None:
    """Claim C14 under the enforced normalisations, including adversarial replacements."""
    rng = np.random.default_rng(4)
    d, n, k = 12, 40, 4
    delta_a, delta_b = sensitivities(n, outliers)
    settings = RobustSettings(lam=0.05, outliers=outliers, inner_iterations=5)
    worst_a = worst_b = 0.0
    for trial in range(40):
        V = rng.uniform(0, 3, size=(d, n)) * (rng.random((d, n)) < 0.6)
        W = rng.uniform(0, 1, size=(d, k)) * (0.05 if trial % 4 == 0 else 1.0)  # short W: big h
        H = rng.uniform(0, 2, size=(k, n))
        replacement = rng.uniform(0, 5, size=d) if trial % 2 else np.eye(d)[trial % d] * 9
        da, db = _neighbour_stats(V, W, H, settings, replacement)
        worst_a, worst_b = max(worst_a, da), max(worst_b, db)
    assert worst_a <= delta_a * (1 + 1e-12)
    assert worst_b <= delta_b * (1 + 1e-12)
    # the two tests below show the bounds fail once the normalisations are taken away


def test_without_the_data_scaling_the_stated_sensitivity_fails() -> None:
    """The paper's ℓ∞ normalisation does not give Δ_B = 4/N: columns of ℓ2 norm > 1 exceed it."""
    rng = np.random.default_rng(5)
    d, n, k = 30, 20, 3
    V = rng.uniform(0, 1, size=(d, n))
    V /= V.max(axis=0)  # unit maximum, as in the paper's experiments
    W = rng.uniform(0, 1, size=(d, k))
    W /= np.linalg.norm(W, axis=0)
    settings = RobustSettings(outliers=False, inner_iterations=5)
    _, db = _neighbour_stats(V, W, rng.uniform(0, 1, (k, n)), settings, np.zeros(d),
                             scale=False)
    assert db > sensitivities(n, outliers=False)[1]


def test_h_projection_is_what_keeps_delta_a() -> None:
    """Without projecting h_n, a short W makes ‖h‖ ≫ 1 and ‖hhᵀ‖/N exceeds Δ_A = 2/N."""
    rng = np.random.default_rng(6)
    d, k = 10, 3
    W = 0.05 * rng.uniform(0, 1, size=(d, k))
    v = rng.uniform(0, 1, size=d)
    v /= np.linalg.norm(v)
    h = np.zeros(k)
    gram, step = W.T @ W, 1 / np.linalg.norm(W.T @ W, 2)
    for _ in range(200):  # the paper's PGD on one column, no projection (numpy only)
        h = np.maximum(h - step * (gram @ h - W.T @ v), 0)
    assert np.linalg.norm(h) ** 2 > 2
    Hp, _ = update_h_r(v[:, None], W, np.zeros((k, 1)), np.zeros((d, 1)), 1,
                       RobustSettings(inner_iterations=200))
    assert np.linalg.norm(Hp[:, 0]) <= 1 + 1e-12


def _distributed(V: np.ndarray, W0: np.ndarray, H0: np.ndarray, splits: list[int], *,
                 iterations: int, settings: RobustSettings, sigma: tuple[float, float],
                 variant: str = "prg", seed: int = 1):
    edges = np.concatenate([[0], np.cumsum(splits)])
    m = len(splits)
    common = {"iterations": iterations, "settings": settings}
    parties = [Party(c, curator, {"V": V[:, a:b], "H0": H0[:, a:b], **common,
                                  "sigma_a": sigma[0], "sigma_b": sigma[1], "analyst": m,
                                  "variant": variant})
               for c, (a, b) in enumerate(itertools.pairwise(edges))]
    parties.append(Party(m, analyst, {"W0": W0, **common}, role=ANALYST))
    return Simulation(seed=seed, sealing=False, keys="preshared").run(parties)


def _problem(seed: int = 7, d: int = 16, n: int = 60, k: int = 3):
    rng = np.random.default_rng(seed)
    V = rng.uniform(0, 1, size=(d, n)) * (rng.random((d, n)) < 0.5)
    W0 = rng.uniform(0, 1, size=(d, k))
    return V, W0 / np.linalg.norm(W0, axis=0), rng.uniform(0, 0.3, size=(k, n))


@pytest.mark.parametrize(("splits", "variant"), [([60], "prg"), ([25, 35], "prg"),
                                                 ([10, 20, 30], "explicit")])
def test_distributed_equals_centralized_from_the_same_state(splits: list[int],
                                                            variant: str) -> None:
    V, W0, H0 = _problem()
    settings = RobustSettings(lam=0.05, inner_iterations=4, eta_w=0.5)
    ref = dp_robust_nmf(V, W0, H0, iterations=12, settings=settings, sigma_a=0, sigma_b=0)
    result = _distributed(V, W0, H0, splits, iterations=12, settings=settings, sigma=(0, 0),
                          variant=variant)
    m = len(splits)
    W = result.outputs[m].W
    assert np.max(np.abs(W - ref.W)) < 1e-6
    H = np.hstack([result.outputs[c].H for c in range(m)])
    assert np.max(np.abs(H - ref.H)) < 1e-5
    assert all(result.outputs[c].n_total == 60 for c in range(m))
    for A, A_ref in zip(result.outputs[m].A_released, ref.A_released, strict=True):
        assert np.max(np.abs(A - A_ref)) < 1e-6
    # what the analyst received: one statistics message per iteration, nothing else of V
    from_curators = result.ledger.select(receiver=m)
    assert {r.step for r in from_curators} == {"statistics", "n_samples"}
    assert len([r for r in from_curators if r.step == "statistics"]) == 12


def test_aggregate_noise_has_the_single_curator_variance() -> None:
    """Each of M curators adds N(0, τ²/M): the analyst sees N(0, τ²), not N(0, Mτ²)."""
    rng = np.random.default_rng(8)
    d, n, k = 150, 30, 6
    V = rng.uniform(0, 1, size=(d, n))
    W0 = rng.uniform(0, 1, size=(d, k))
    W0 /= np.linalg.norm(W0, axis=0)
    H0 = rng.uniform(0, 0.2, size=(k, n))
    settings = RobustSettings(inner_iterations=3)
    sigma_a, sigma_b = 0.02, 0.05
    result = _distributed(V, W0, H0, [10, 10, 10], iterations=1, settings=settings,
                          sigma=(sigma_a, sigma_b))
    H1, R1 = update_h_r(unit_columns(V), W0, H0, np.zeros((d, n)), n, settings)
    A, B = statistics(unit_columns(V), H1, R1, n)
    noise_b = (result.outputs[3].B_released[0] - B).ravel()
    noise_a = (result.outputs[3].A_released[0] - A).ravel()
    # 900 draws of B's noise: the sample variance is within ±15% (about 4.5 sd) of τ_B²
    assert np.var(noise_b) / sigma_b**2 == pytest.approx(1.0, abs=0.15)
    assert abs(np.mean(noise_b)) < 4 * sigma_b / math.sqrt(noise_b.size)
    assert np.var(noise_a) / sigma_a**2 == pytest.approx(1.0, abs=0.6)  # only 36 draws
    # the noise is iid, not symmetrised (digest §7.2 item 39)
    E_A = noise_a.reshape(k, k)
    assert not np.allclose(E_A, E_A.T)


def test_outliers_off_keeps_r_zero() -> None:
    V, W0, H0 = _problem()
    fit = dp_robust_nmf(V, W0, H0, iterations=3, settings=RobustSettings(outliers=False),
                        sigma_a=0, sigma_b=0)
    assert not fit.R.any()


def test_private_gap_shrinks_with_epsilon() -> None:
    """Claim C16 on synthetic data: larger ε, smaller gap to the non-private objective."""
    rng = np.random.default_rng(9)
    d, n, k = 20, 400, 3
    V = rng.uniform(0, 1, size=(d, k)) @ rng.uniform(0, 1, size=(k, n))
    V /= V.max(axis=0)
    W0, H0 = V[:, :k] / np.linalg.norm(V[:, :k], axis=0), np.full((k, n), 0.1)
    settings = RobustSettings(lam=0.05, eta_w=0.5, inner_iterations=5)

    def objective(fit) -> float:
        Vu = unit_columns(V)
        return float(0.5 * np.sum((Vu - fit.W @ fit.H) ** 2) / n)

    base = objective(dp_robust_nmf(V, W0, H0, iterations=30, settings=settings, sigma_a=0,
                                   sigma_b=0))
    gaps = []
    for eps in (0.05, 0.3, 0.9):
        d_a, d_b = sensitivities(n)
        vals = [objective(dp_robust_nmf(V, W0, H0, iterations=30, settings=settings,
                                        sigma_a=gaussian_sigma(d_a, eps, 1e-5),
                                        sigma_b=gaussian_sigma(d_b, eps, 1e-5),
                                        rng=np.random.default_rng(s))) for s in range(3)]
        gaps.append(np.mean(vals) - base)
    assert gaps[0] > gaps[1] > gaps[2]


def test_rdp_epsilon_refuses_bad_arguments() -> None:
    with pytest.raises(InputError):
        rdp_epsilon([0.1], 0, 1e-5)
    with pytest.raises(InputError):
        rdp_epsilon([0.1], 5, 1.0)
