"""Accounting of Gaussian releases: the exact profile against independent computations, and
dp-accounting's PLD and RDP accountants against it."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from protocols.accounting import (
    Release,
    account,
    composed_mu,
    gaussian_delta,
    gaussian_epsilon,
    repeated,
)


def test_exact_delta_matches_the_privacy_loss_integral() -> None:
    """δ(ε) = E[(1 − e^{ε − L})_+] with the privacy loss L ~ N(μ²/2, μ²) (integrated here)."""
    for mu, eps in ((1.0, 0.5), (0.4, 1.0), (2.0, 3.0)):
        loss = stats.norm(mu**2 / 2, mu)
        value, _ = integrate.quad(lambda x, e=eps, f=loss: (1 - math.exp(e - x)) * f.pdf(x), eps,
                                  eps + 40 * mu)
        assert gaussian_delta(mu, eps) == pytest.approx(value, rel=1e-6)


def test_epsilon_inverts_delta() -> None:
    for mu in (0.05, 0.5, 3.0):
        eps = gaussian_epsilon(mu, 1e-5)
        assert gaussian_delta(mu, eps) == pytest.approx(1e-5, rel=1e-6)


def test_classic_calibration_is_conservative_below_one_and_not_at_ten() -> None:
    """The paper's τ = Δ√(2 ln(1.25/δ))/ε buys (ε, δ) for ε < 1 (Dwork & Roth) but not at ε = 10."""
    for eps, met in ((0.5, True), (1.0, True), (10.0, False)):
        z = math.sqrt(2 * math.log(1.25 / 0.01)) / eps
        report = account([Release("r", z, 1.0, eps, 0.01)])
        assert report["paper_epsilon_met"] is met


def test_composition_of_gaussians_and_dp_accounting_agree() -> None:
    releases = [Release("stage 1", 2.0, 1.0, 0.5, 0.005), Release("stage 2", 3.0, 0.5, 0.5, 0.005)]
    assert composed_mu(releases) == pytest.approx(math.sqrt(0.25 + (0.5 / 3) ** 2))
    report = account(releases)
    assert report["paper"] == {"epsilon": 1.0, "delta": 0.01, "vacuous": False}
    exact = report["exact"]["epsilon"]
    assert report["dp_accounting_pld"]["epsilon"] == pytest.approx(exact, abs=5e-3)
    assert report["dp_accounting_rdp"]["epsilon"] >= exact - 1e-9  # RDP is an upper bound


def test_repeated_releases_compose_as_sqrt_n() -> None:
    r = Release("r", 4.0, 1.0, 1.0, 1e-3)
    report = account(repeated(r, 100), delta=1e-3)
    assert report["exact"]["mu"] == pytest.approx(10 * 0.25)
    assert report["paper"]["epsilon"] == pytest.approx(100.0)
    assert report["dp_accounting_pld"]["epsilon"] == pytest.approx(report["exact"]["epsilon"],
                                                                   abs=1e-2)
    assert np.isfinite(report["dp_accounting_rdp"]["epsilon"])


# -- the one calibration both DP families use (issue 31, item 3) ------------------------------


@pytest.mark.parametrize(("sensitivity", "epsilon", "delta"), [
    (2 / 1500, 0.5, 1e-5), (4 / 750, 0.1, 1e-5), (0.5, 2.0, 1e-3), (1.0, 0.9, 1e-6)])
def test_both_families_calibrate_by_the_classical_closed_form(sensitivity, epsilon,
                                                              delta) -> None:
    from algorithms.nmf.dp_robust_privacy import gaussian_sigma
    from protocols.accounting import classical_gaussian_std, classical_gaussian_std_def3
    from protocols.correlated_noise import gaussian_noise_scale

    by_hand = sensitivity * np.sqrt(2 * np.log(1.25 / delta)) / epsilon  # Dwork & Roth A.1
    assert classical_gaussian_std(sensitivity, epsilon, delta) == pytest.approx(by_hand,
                                                                                rel=1e-14)
    # CAPE's calibration is the accounting's, bit for bit (its scenarios replay unchanged)
    assert gaussian_noise_scale(sensitivity, epsilon, delta) == classical_gaussian_std(
        sensitivity, epsilon, delta)
    if epsilon < 1:  # DP robust NMF's Def. 3, in the paper's order of operations
        def3 = sensitivity / epsilon * math.sqrt(2.0 * math.log(1.25 / delta))
        assert gaussian_sigma(sensitivity, epsilon, delta) == def3
        assert classical_gaussian_std_def3(sensitivity, epsilon, delta) == def3
        assert def3 == pytest.approx(by_hand, rel=1e-15)


def test_the_classical_range_is_def_3s_and_not_capes() -> None:
    from algorithms.nmf.dp_robust_privacy import check_privacy, gaussian_sigma
    from protocols.accounting import check_budget, classical_gaussian_std
    from protocols.correlated_noise import gaussian_noise_scale
    from protocols.errors import InputError

    assert gaussian_noise_scale(1.0, 2.0, 1e-5) > 0  # CAPE: every ε > 0
    for bad in (1.0, 2.0):
        with pytest.raises(InputError, match=r"epsilon = .* must lie in \(0, 1\): the "
                                             r"classical Gaussian"):
            gaussian_sigma(1.0, bad, 1e-5)
        with pytest.raises(InputError, match="must lie in"):
            check_privacy(bad, 1e-5)
        with pytest.raises(InputError, match="must lie in"):
            classical_gaussian_std(1.0, bad, 1e-5, classical_range=True)
    for eps, delta, what in [(0.0, 1e-5, "epsilon"), (math.nan, 1e-5, "epsilon"),
                             (True, 1e-5, "epsilon"), (0.5, 1.0, "delta"),
                             (0.5, 0.0, "delta")]:
        with pytest.raises(InputError, match=f"stage {what} = "):
            check_budget(eps, delta, "stage")
    with pytest.raises(InputError, match=r"sensitivity = -1\.0 must be a finite number > 0"):
        classical_gaussian_std(-1.0, 0.5, 1e-5)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.1, 1e-5), (0.5, 1e-5), (1.0, 1e-6),
                                                (4.0, 1e-3)])
def test_the_analytic_gaussian_meets_delta_exactly_and_spends_less_noise(epsilon,
                                                                          delta) -> None:
    from protocols.accounting import analytic_gaussian_std, classical_gaussian_std

    sigma = analytic_gaussian_std(2.0, epsilon, delta)
    mu = 2.0 / sigma
    # Balle & Wang, Thm. 8, evaluated here with the normal CDF
    profile = (stats.norm.cdf(mu / 2 - epsilon / mu)
               - math.exp(epsilon) * stats.norm.cdf(-mu / 2 - epsilon / mu))
    assert profile == pytest.approx(delta, rel=1e-6)
    if epsilon < 1:  # where the classical calibration is valid, it over-noises
        assert sigma < classical_gaussian_std(2.0, epsilon, delta)


def test_the_analytic_gaussian_agrees_with_dp_accounting() -> None:
    pytest.importorskip("dp_accounting")
    import dp_accounting
    from dp_accounting import pld

    from protocols.accounting import analytic_gaussian_std

    epsilon, delta = 0.8, 1e-5
    z = analytic_gaussian_std(1.0, epsilon, delta)  # σ/Δ
    accountant = pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                                   value_discretization_interval=1e-4)
    accountant.compose(dp_accounting.GaussianDpEvent(z))
    assert accountant.get_epsilon(delta) == pytest.approx(epsilon, abs=5e-3)
