"""Tests of algorithms.nmf.corrective: NMF under adversarial noise (seed 002, Algorithm 1).

Independent references: the monotonicity of the Mao–Saul masked updates (their theorem) and
of the clipped loss under ignore-corrupt (the paper's §2.1 argument, claim C17), as hypothesis
properties; the Gaussian density (scipy) for the probabilistic λ of §2.3; the 0.99^t
interpolation written out; and the centralized run on the stacked rows for the distributed
program.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from algorithms.data import convert_users, fake_profiles, flip_ratings
from algorithms.nmf.corrective import (
    CorrectiveSettings,
    corrective_nmf,
    corrective_party,
    injecting_party,
    lambda_from_noise,
    mark_corrupt,
    observed,
    random_start,
    working_targets,
)
from parties.party import Party
from protocols.errors import DataError, InputError
from sim.simulation import Simulation


def ratings(seed: int, n: int = 30, m: int = 12, k: int = 3, density: float = 0.5):
    rng = np.random.default_rng(seed)
    R = np.clip(np.rint(rng.uniform(0.3, 1.3, (n, k)) @ rng.uniform(0.3, 1.7, (k, m))
                        + rng.normal(0, 0.6, (n, m))), 1, 5)
    R[rng.random((n, m)) > density] = np.nan
    R[np.arange(n), np.arange(n) % m] = 3.0  # every user rates something
    return R


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.floats(0.2, 4.0), k=st.integers(1, 4))
def test_clipped_loss_is_non_increasing_under_ignore_corrupt(seed: int, lam: float,
                                                             k: int) -> None:
    """Claim C17: Σ_observed min[(V − WH)², λ] never increases (ignore-corrupt, ignore-missing)."""
    V = ratings(seed)
    W0, H0 = random_start(V.shape[0], V.shape[1], k, np.random.default_rng(seed))
    fit = corrective_nmf(V, W0, H0, iterations=25,
                         settings=CorrectiveSettings(mode="ignore", missing="ignore", lam=lam))
    loss = np.array(fit.clipped_loss)
    # independent recomputation of the last value from W and H
    obs = ~np.isnan(V)
    err = (np.nan_to_num(V) - fit.W @ fit.H)[obs]
    assert loss[-1] == pytest.approx(np.minimum(err**2, lam).sum(), rel=1e-12)
    assert np.all(np.diff(loss) <= 1e-9 * loss[:-1])


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), k=st.integers(1, 4))
def test_masked_squared_error_is_non_increasing_for_ignore_missing(seed: int, k: int) -> None:
    """Mao & Saul: the masked multiplicative updates do not increase Σ_observed (V − WH)²."""
    V = ratings(seed)
    W0, H0 = random_start(V.shape[0], V.shape[1], k, np.random.default_rng(seed + 1))
    fit = corrective_nmf(V, W0, H0, iterations=25,
                         settings=CorrectiveSettings(mode="standard", missing="ignore"))
    err = np.array(fit.squared_error)
    assert np.all(np.diff(err) <= 1e-9 * err[:-1])


def test_ignore_corrupt_can_increase_the_plain_error_so_the_clipping_matters() -> None:
    """The monotone quantity is the clipped loss, not the squared error (a non-vacuous C17)."""
    increased = False
    for seed in range(20):
        V = ratings(seed)
        V[seed % V.shape[0], :3] = [1, 5, 1]  # a few wild ratings
        W0, H0 = random_start(V.shape[0], V.shape[1], 2, np.random.default_rng(seed))
        fit = corrective_nmf(V, W0, H0, iterations=25,
                             settings=CorrectiveSettings(mode="ignore", lam=0.5))
        increased |= bool(np.any(np.diff(fit.squared_error) > 1e-9))
    assert increased


def test_replace_corrupt_interpolates_towards_wh_from_the_original_v() -> None:
    V = np.array([[5.0, np.nan], [1.0, 2.0]])
    WH = np.array([[2.0, 3.0], [1.2, 2.1]])
    obs = observed(V)
    s = CorrectiveSettings(mode="replace", missing="ignore", lam=1.0)
    corrupt = mark_corrupt(V, obs, WH, s)
    assert corrupt.tolist() == [[True, False], [False, False]]
    for t in (1, 10, 100):
        Z, Vbar = working_targets(V, obs, WH, corrupt, t, s)
        assert Vbar[0, 0] == pytest.approx(0.99**t * 5 + (1 - 0.99**t) * 2)
        assert Vbar[1, 0] == 1.0 and Z.tolist() == [[1, 0], [1, 1]]
    Z, Vbar = working_targets(V, obs, WH, corrupt, 7, CorrectiveSettings(
        mode="replace", missing="replace", lam=1.0, interpolate=False))
    assert Vbar[0, 0] == 2.0 and Vbar[0, 1] == 3.0 and Z.min() == 1.0
    Z, _ = working_targets(V, obs, WH, corrupt, 7, CorrectiveSettings(mode="ignore", lam=1.0))
    assert Z.tolist() == [[0, 0], [1, 1]]


@pytest.mark.parametrize(("p", "sigma"), [(0.05, 0.5), (0.01, 1.0), (0.2, 0.3)])
def test_probabilistic_lambda_marks_exactly_the_entries_less_likely_than_p(
        p: float, sigma: float) -> None:
    lam = lambda_from_noise(p, sigma)
    assert lam > 0
    errors = np.linspace(0, 4 * lam, 2001)
    f = norm.pdf(np.sqrt(errors), scale=sigma)  # density of the residual √ERR under N(0, σ²)
    np.testing.assert_array_equal(errors > lam + 1e-12, f < p * (1 - 1e-12))


def test_probabilistic_lambda_refuses_impossible_settings() -> None:
    with pytest.raises(InputError, match="density"):
        lambda_from_noise(0.9, 1.0)  # p above the largest density 1/sqrt(2π) ≈ 0.40
    for p, sigma in [(0.0, 1.0), (1.0, 1.0), (0.1, 0.0)]:
        with pytest.raises(InputError):
            lambda_from_noise(p, sigma)


def _run_distributed(V: np.ndarray, W0: np.ndarray, H0: np.ndarray, splits: list[int],
                     s: CorrectiveSettings, fake: np.ndarray | None = None,
                     variant: str = "prg"):
    edges = np.concatenate([[0], np.cumsum(splits)])
    parties = []
    for i, (a, b) in enumerate(itertools.pairwise(edges)):
        common = {"H0": H0, "iterations": 15, "settings": s, "variant": variant}
        if fake is not None and i == len(splits) - 1:
            W_fake = np.vstack([W0[a:b], W0[len(V):]])
            parties.append(Party(i, injecting_party, {"V": V[a:b], "fake": fake, "W0": W_fake,
                                                      **common}))
        else:
            parties.append(Party(i, corrective_party, {"V": V[a:b], "W0": W0[a:b], **common}))
    return Simulation(seed=3, sealing=False, keys="preshared").run(parties)


@pytest.mark.parametrize("mode", ["standard", "ignore", "replace"])
@pytest.mark.parametrize(("splits", "variant"), [([12, 18], "prg"), ([5, 10, 15], "explicit")])
def test_distributed_equals_centralized(mode: str, splits: list[int], variant: str) -> None:
    V = ratings(11)
    s = CorrectiveSettings(mode=mode, missing="replace" if mode == "replace" else "ignore",
                           lam=1.5)
    W0, H0 = random_start(V.shape[0], V.shape[1], 3, np.random.default_rng(2))
    ref = corrective_nmf(V, W0, H0, iterations=15, settings=s)
    result = _run_distributed(V, W0, H0, splits, s, variant=variant)
    for i in range(len(splits)):
        assert np.max(np.abs(result.outputs[i].H - ref.H)) < 1e-6 * np.abs(ref.H).max()
    W = np.vstack([result.outputs[i].W for i in range(len(splits))])
    assert np.max(np.abs(W - ref.W)) < 1e-6 * np.abs(ref.W).max()
    loss = np.sum([result.outputs[i].clipped_loss for i in range(len(splits))], axis=0)
    np.testing.assert_allclose(loss, ref.clipped_loss, rtol=1e-6)


def test_injecting_party_equals_the_centralized_poisoned_data() -> None:
    """SecureSum cannot stop a party's bad inputs: the attack reaches H exactly as injected."""
    V = ratings(12)
    rng = np.random.default_rng(4)
    fake = fake_profiles(V.shape[1], np.array([2]), 6, 1.0, 1.0, 5.0, rng, filler=4)
    s = CorrectiveSettings(mode="ignore", lam=1.5)
    W0, H0 = random_start(V.shape[0] + 6, V.shape[1], 3, np.random.default_rng(5))
    ref = corrective_nmf(np.vstack([V, fake]), W0, H0, iterations=15, settings=s)
    result = _run_distributed(V, W0, H0, [10, 20], s, fake=fake)
    assert np.max(np.abs(result.outputs[0].H - ref.H)) < 1e-6 * np.abs(ref.H).max()
    # the malicious party's view records its genuine rows and the profiles it injected
    view = result.views[1]
    assert view.inputs["fake"].shape == (6, V.shape[1])
    # and H differs from the clean run's
    clean = corrective_nmf(V, W0[: len(V)], H0, iterations=15, settings=s)
    assert np.abs(clean.H - ref.H).max() > 1e-3


def test_fake_profiles_follow_model_3() -> None:
    rng = np.random.default_rng(6)
    targets = np.array([3, 7])
    fake = fake_profiles(40, targets, 25, 1.0, 1.0, 5.0, rng)
    assert fake.shape == (25, 40)
    assert np.all(fake[:, targets] == 1.0)
    others = np.delete(fake, targets, axis=1)
    assert np.all((~np.isnan(others)).sum(axis=1) == 19)  # 20 ratings per fake user in all
    vals = others[~np.isnan(others)]
    assert set(np.unique(vals)) <= {1.0, 2.0, 3.0, 4.0, 5.0} and len(np.unique(vals)) == 5
    with pytest.raises(DataError):
        fake_profiles(40, np.array([40]), 2, 1.0, 1.0, 5.0, rng)


def test_converted_users_and_random_flips() -> None:
    V = ratings(13)
    out = convert_users(V, np.array([0, 4]), np.array([1]), 1.0)
    assert out[0, 1] == 1.0 and out[4, 1] == 1.0
    mask = np.ones_like(V, dtype=bool)
    mask[[0, 4], 1] = False
    np.testing.assert_array_equal(np.nan_to_num(out[mask], nan=-1), np.nan_to_num(V[mask],
                                                                                   nan=-1))
    flipped = flip_ratings(V, 1.0, 1.0, 5.0, np.random.default_rng(0))
    obs = ~np.isnan(V)
    assert np.all(flipped[obs & (V <= 3)] == 5.0) and np.all(flipped[obs & (V >= 4)] == 1.0)
    assert np.array_equal(np.isnan(flipped), np.isnan(V))
    unchanged = flip_ratings(V, 0.0, 1.0, 5.0, np.random.default_rng(0))
    assert np.array_equal(np.nan_to_num(unchanged), np.nan_to_num(V))


def _algorithm_1_by_hand(V: np.ndarray, W: np.ndarray, H: np.ndarray, iterations: int,
                         mode: str, missing: str, lam: float, interpolate: bool,
                         running: bool, once: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Algorithm 1 written out entry by entry from the paper's four steps (plain loops for the
    rules, numpy only for the products), as an independent reference. ``once``: step 4 sets
    V = WH on the missing entries after the first iteration, and from then on they are
    entries of V (marked and replaced like the observed ones)."""
    n, m = V.shape
    obs = ~np.isnan(V)
    Vrun = V.copy()  # the V that step 3 overwrites under the literal ("running") reading
    Z = obs.astype(float)
    Vbar = np.where(obs, V, 0.0)
    if missing == "replace":
        WH = W @ H
        for i, j in zip(*np.nonzero(~obs), strict=True):
            Vbar[i, j], Z[i, j] = WH[i, j], 1.0
    for t in range(1, iterations + 1):
        W = W * ((Z * Vbar) @ H.T) / ((Z * (W @ H)) @ H.T + 1e-12)
        H = H * (W.T @ (Z * Vbar)) / (W.T @ (Z * (W @ H)) + 1e-12)
        WH = W @ H
        base = Vrun if running else V
        Z = obs.astype(float)
        Vbar = np.where(obs, base, 0.0)
        for i in range(n):
            for j in range(m):
                if not obs[i, j]:
                    if missing == "replace":
                        Vbar[i, j], Z[i, j] = WH[i, j], 1.0
                    continue
                if mode == "standard" or (base[i, j] - WH[i, j]) ** 2 <= lam:
                    continue
                if mode == "ignore":
                    Z[i, j] = 0.0
                else:
                    w = 0.99**t if interpolate else 0.0
                    Vbar[i, j] = w * base[i, j] + (1 - w) * WH[i, j]
                    if running:
                        Vrun[i, j] = Vbar[i, j]
        if t == 1 and once and missing == "replace" and mode != "standard":
            V, Vrun = np.where(obs, V, WH), np.where(obs, Vrun, WH)
            obs = np.ones_like(obs)
    return W, H


@pytest.mark.parametrize(("mode", "missing", "interpolate", "base"), [
    ("standard", "ignore", True, "original"), ("standard", "replace", True, "original"),
    ("ignore", "ignore", True, "original"), ("replace", "replace", True, "original"),
    ("replace", "replace", False, "original"), ("replace", "ignore", True, "running"),
    ("replace", "replace", True, "running"), ("replace", "replace", False, "running")])
@pytest.mark.parametrize("fill", ["every", "once"])
def test_corrective_nmf_equals_algorithm_1_written_out(mode: str, missing: str,
                                                       interpolate: bool, base: str,
                                                       fill: str) -> None:
    V = ratings(21, n=14, m=9, density=0.6)
    W0, H0 = random_start(14, 9, 3, np.random.default_rng(8))
    s = CorrectiveSettings(mode=mode, missing=missing, lam=0.6, interpolate=interpolate,
                           replace_base=base, fill=fill)
    fit = corrective_nmf(V, W0, H0, iterations=12, settings=s)
    W, H = _algorithm_1_by_hand(V, W0, H0, 12, mode, missing, 0.6, interpolate,
                                base == "running", once=fill == "once")
    np.testing.assert_allclose(fit.W, W, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(fit.H, H, rtol=1e-9, atol=1e-12)


def test_the_two_readings_of_replace_corrupt_differ_and_only_for_replace_corrupt() -> None:
    V = ratings(22, n=20, m=10, density=0.7)
    V[:4, 0] = 5.0  # ratings the model cannot follow, so entries stay marked
    W0, H0 = random_start(20, 10, 2, np.random.default_rng(9))
    fits = {base: corrective_nmf(V, W0, H0, iterations=30, settings=CorrectiveSettings(
        mode="replace", missing="replace", lam=0.3, replace_base=base))
        for base in ("original", "running")}
    assert np.abs(fits["original"].H - fits["running"].H).max() > 1e-3
    same = [corrective_nmf(V, W0, H0, iterations=30, settings=CorrectiveSettings(
        mode="ignore", lam=0.3, replace_base=base)).H for base in ("original", "running")]
    np.testing.assert_array_equal(same[0], same[1])
    with pytest.raises(InputError, match="replace_base"):
        CorrectiveSettings(replace_base="cumulative")


def test_filling_once_changes_replace_corrupt_only() -> None:
    """Step 4 read literally (``fill = "once"``) changes Algorithm 1's replace rows, which mark
    the filled entries, and nothing else: the baselines and ignore-missing rows ignore it."""
    V = ratings(23, n=20, m=10, density=0.5)
    W0, H0 = random_start(20, 10, 2, np.random.default_rng(10))

    def fit(**kw: object) -> np.ndarray:
        return corrective_nmf(V, W0, H0, iterations=25, settings=CorrectiveSettings(
            lam=0.3, **kw)).H

    assert np.abs(fit(mode="replace", missing="replace")
                  - fit(mode="replace", missing="replace", fill="once")).max() > 1e-3
    for kw in ({"mode": "standard", "missing": "replace"}, {"mode": "ignore"},
               {"mode": "replace", "missing": "ignore"}):
        np.testing.assert_array_equal(fit(**kw), fit(**kw, fill="once"))
    with pytest.raises(InputError, match="fill"):
        CorrectiveSettings(fill="twice")
