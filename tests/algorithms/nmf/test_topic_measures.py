"""The thesis's §1.3 measures added for Tables 1.4 / 1.5: ARI, VI, distances to bad outcomes,
discriminability, closeness and log-likelihood, on hand-counted examples and against
scikit-learn / scipy where those define the same quantity."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import entropy

from algorithms.nmf.topic_agreement import (
    adjusted_rand_index,
    one_hot,
    variation_of_information,
)
from algorithms.nmf.topic_discrimination import (
    closeness,
    doc_average_distance,
    topic_average_distance,
    topic_discriminability,
    topic_uniform_distance,
    uplift_top_words,
    weights_background_distance,
    word_discriminability,
)
from algorithms.nmf.topic_quality import loglikelihood
from protocols.errors import InputError

T2 = np.array([[1.0, 0, 0, 0], [0.5, 0.5, 0, 0]])
W2 = np.eye(2)


def test_hard_ari_equals_scikit_learn_and_vi_equals_its_entropy_identity():
    metrics = pytest.importorskip("sklearn.metrics")
    adjusted_rand_score, mutual_info_score = metrics.adjusted_rand_score, metrics.mutual_info_score
    rng = np.random.default_rng(3)
    for _ in range(5):
        a, b = rng.integers(0, 4, size=60), rng.integers(0, 3, size=60)
        assert adjusted_rand_index(one_hot(a, 4), one_hot(b, 3)) == pytest.approx(
            adjusted_rand_score(b, a), abs=1e-12)
        h = entropy(np.bincount(a)) + entropy(np.bincount(b))
        assert variation_of_information(one_hot(a, 4), one_hot(b, 3)) == pytest.approx(
            h - 2 * mutual_info_score(a, b), abs=1e-12)


def test_perfect_and_independent_partitions():
    y = one_hot(np.array([0, 0, 1, 1]))
    assert adjusted_rand_index(y[:, ::-1], y) == pytest.approx(1.0)
    assert variation_of_information(y[:, ::-1], y) == pytest.approx(0.0, abs=1e-15)
    crossed = one_hot(np.array([0, 1, 0, 1]))
    assert variation_of_information(crossed, y) == pytest.approx(2 * math.log(2))


def test_soft_ari_uses_the_thesis_approximation_of_the_binomial():
    # A = Wᵀ Y = [[1.5, 0.5], [0.5, 1.5]]; comb(x) = x(x − 1)/2
    W = np.array([[1.0, 0], [0.5, 0.5], [0.5, 0.5], [0, 1.0]])
    Y = one_hot(np.array([0, 0, 1, 1]))
    c = lambda x: x * (x - 1) / 2  # noqa: E731
    pairs = 2 * c(1.5) + 2 * c(0.5)
    rows = cols = 2 * c(2.0)
    expected = rows * cols / c(4.0)
    want = (pairs - expected) / ((rows + cols) / 2 - expected)
    assert adjusted_rand_index(W, Y) == pytest.approx(want)


def test_distances_to_bad_outcomes_by_hand():
    # w = (1/2, 1/2); KL(T_1 ‖ u) = log 4, KL(T_2 ‖ u) = log 2
    assert topic_uniform_distance(W2, T2) == pytest.approx(1.5 * math.log(2))
    mean = T2.mean(axis=0)
    want = 0.5 * entropy(T2[0], mean) + 0.5 * entropy(T2[1], mean)
    assert topic_average_distance(W2, T2) == pytest.approx(want)
    X = np.array([[1.0, 1, 0, 0], [0, 0, 2, 2]])  # mean document (1/4, 1/4, 1/4, 1/4)
    assert doc_average_distance(W2, T2, X) == pytest.approx(1.5 * math.log(2))
    assert doc_average_distance(W2, T2, np.array([[0, 1.0, 1, 1], [0, 0, 1, 1]])) == math.inf


def test_weights_background_and_discriminability_by_hand():
    W = np.array([[1.0, 0], [1.0, 0], [0, 1.0], [0, 1.0]])  # each topic on 2 of 4 documents
    assert weights_background_distance(W, T2) == pytest.approx(math.log(2))
    assert topic_discriminability(W, T2) == pytest.approx(0.5)
    # words: v = (3/4, 1/4, 0, 0); word 0 over topics (2/3, 1/3), word 1 (0, 1)
    want = 0.75 * (1 - entropy([2 / 3, 1 / 3]) / math.log(2)) + 0.25 * 1.0
    assert word_discriminability(W2, T2) == pytest.approx(want)


def test_closeness_counts_shared_uplift_words():
    T = np.array([[0.5, 0.5, 0, 0, 0, 0], [0, 0.5, 0.5, 0, 0, 0], [0, 0, 0, 0, 0.5, 0.5]])
    assert [sorted(r) for r in uplift_top_words(T, 2)] == [[0, 1], [1, 2], [4, 5]]
    assert closeness(np.eye(3), T, m=2) == pytest.approx(2 / 3)


def test_loglikelihood_by_hand_and_its_errors():
    got = loglikelihood(np.array([[2.0, 1.0]]), np.array([[1.0]]), np.array([[2.0, 1.0]]))
    assert got == pytest.approx((2 * math.log(2 / 3) + math.log(1 / 3)) / 3)
    assert loglikelihood(np.array([[1.0, 1.0]]), np.array([[1.0]]),
                         np.array([[1.0, 0.0]])) == -math.inf
    with pytest.raises(InputError, match="uniform_mix"):
        loglikelihood(np.ones((1, 2)), np.ones((1, 1)), np.ones((1, 2)), uniform_mix=1.0)


def test_bad_inputs_name_the_problem():
    with pytest.raises(InputError, match="sum to 1"):
        adjusted_rand_index(np.ones((3, 2)), one_hot(np.array([0, 1, 1])))
    with pytest.raises(InputError, match="k ≥ 2"):
        topic_uniform_distance(np.ones((3, 1)), np.ones((1, 4)))
