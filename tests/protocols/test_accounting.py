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
