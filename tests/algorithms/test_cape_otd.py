"""OTD building blocks and capeAGN (seed 003 §5–§6; spec checklist 6, 8, 9)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from algorithms.cape.moments import (
    document_words,
    population_moments,
    second_moment,
    sensitivities,
    third_moment,
)
from algorithms.cape.otd import (
    TpmSettings,
    nonprivate,
    postprocess,
    recovery_error,
    unwhiten,
    whiten,
)
from algorithms.cape.symmetric import multilinear
from algorithms.cape.tensor_power import tensor_power_method
from algorithms.data import synthetic_mog, synthetic_stm
from protocols.errors import DataError


def brute_force_stm(C: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, D = C.shape
    M2, M3 = np.zeros((D, D)), np.zeros((D, D, D))
    for row in C:
        words = np.repeat(np.arange(D), row.astype(int))
        L = len(words)
        for p, q in itertools.permutations(range(L), 2):
            M2[words[p], words[q]] += 1 / (L * (L - 1))
        for p, q, r in itertools.permutations(range(L), 3):
            M3[words[p], words[q], words[r]] += 1 / (L * (L - 1) * (L - 2))
    return M2 / n, M3 / n


def test_stm_moments_average_every_distinct_word_triple() -> None:
    rng = np.random.default_rng(0)
    C = np.array([rng.multinomial(4, np.full(5, 0.2)) for _ in range(60)], dtype=float)
    M2, M3 = brute_force_stm(C)
    np.testing.assert_allclose(second_moment("stm", C), M2, atol=1e-12)
    np.testing.assert_allclose(third_moment("stm", C), M3, atol=1e-12)
    W = rng.normal(size=(5, 3))
    np.testing.assert_allclose(third_moment("stm", C, W), multilinear(M3, W), atol=1e-12)


def test_mog_third_moment_has_the_sigma_correction() -> None:
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4)) / 5
    s2, m, eye = 0.02, X.mean(axis=0), np.eye(4)
    corr = sum(np.einsum("a,b,c->abc", *v) for d in range(4)
               for v in ((m, eye[d], eye[d]), (eye[d], m, eye[d]), (eye[d], eye[d], m)))
    expected = np.einsum("na,nb,nc->abc", X, X, X) / 200 - s2 * corr
    np.testing.assert_allclose(third_moment("mog", X, None, s2), expected, atol=1e-12)
    np.testing.assert_allclose(second_moment("mog", X, s2), X.T @ X / 200 - s2 * eye)


def test_sensitivities_are_the_papers_and_the_frobenius_ones() -> None:
    assert sensitivities("stm", 100, 10) == (pytest.approx(2**0.5 / 100),) * 2
    assert sensitivities("mog", 100, 9, 0.1) == (0.01, pytest.approx((2 + 6 * 9 * 0.1) / 100))
    assert sensitivities("mog", 100, 9, 0.1, "replace_one")[1] == pytest.approx(
        (2 + 6 * 3 * 0.1) / 100)


def test_documents_must_be_counts_of_equal_length() -> None:
    with pytest.raises(DataError, match="same number"):
        document_words(np.array([[1, 2, 0], [3, 1, 0]]))
    with pytest.raises(DataError, match="L ≥ 3"):
        document_words(np.array([[1, 1, 0], [0, 1, 1]]))
    with pytest.raises(DataError, match="non-integer"):
        document_words(np.array([[1.5, 1.5, 0.0]]))


@pytest.mark.parametrize("mode", ["paper", "robust"])
def test_tpm_recovers_an_orthogonal_decomposition(mode: str) -> None:
    rng = np.random.default_rng(2)
    K = 6
    V = np.linalg.qr(rng.normal(size=(K, K)))[0]
    lam = np.linspace(3.0, 1.0, K)
    T = np.einsum("k,ak,bk,ck->abc", lam, V, V, V)
    got_lam, got_v = tensor_power_method(T, K, rng, mode=mode)
    np.testing.assert_allclose(np.sort(got_lam), np.sort(lam), atol=1e-6)
    assert np.all(np.abs(got_v.T @ V).max(axis=1) > 1 - 1e-6)


@pytest.mark.parametrize("model", ["stm", "mog"])
def test_whitening_and_unwhitening_recover_the_population_parameters(model: str) -> None:
    """From exact population moments, OTD recovers (w_k, μ_k) exactly (checklist 8)."""
    rng = np.random.default_rng(3)
    data = (synthetic_stm if model == "stm" else synthetic_mog)(10, 8, 4, rng)
    M2, M3 = population_moments(data.weights, data.means)
    W, U, s = whiten(M2, 4)
    np.testing.assert_allclose(W.T @ M2 @ W, np.eye(4), atol=1e-9)
    lams, thetas = tensor_power_method(multilinear(M3, W), 4, rng)
    weights, means = unwhiten(lams, thetas, U, s)
    order = [int(np.argmin(np.linalg.norm(data.means - m, axis=1))) for m in means]
    np.testing.assert_allclose(means, data.means[order], atol=1e-6)
    np.testing.assert_allclose(weights, data.weights[order], atol=1e-6)


def test_error_metric_is_zero_for_perfect_recovery_and_permutation_invariant() -> None:
    rng = np.random.default_rng(4)
    truth = postprocess("mog", rng.normal(size=(5, 7)))
    assert recovery_error(truth, truth) == 0.0
    assert recovery_error(truth[::-1], truth) == 0.0
    assert recovery_error(truth + 0.1, truth) > 0


def test_stm_postprocessing_gives_probability_vectors() -> None:
    out = postprocess("stm", np.array([[0.5, -0.2, 0.5], [-1.0, -1.0, -1.0]]))
    np.testing.assert_allclose(out.sum(axis=1), 1.0)
    assert np.all(out >= 0)
    np.testing.assert_allclose(out[1], 1 / 3)


@pytest.mark.parametrize("model", ["stm", "mog"])
def test_nonprivate_otd_recovers_the_planted_model_from_samples(model: str) -> None:
    rng = np.random.default_rng(5)
    data = (synthetic_stm if model == "stm" else synthetic_mog)(60_000, 10, 5, rng)
    sigma2 = data.sigma2
    result = nonprivate(model, data.X, 5, rng, sigma2, TpmSettings())
    assert recovery_error(result.means, data.means) < 0.08
