"""Topic-quality measures against their published definitions on hand-computable corpora."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from algorithms.data.synthetic import synthetic_topic_corpus
from algorithms.nmf.topic_quality import (
    expected_coherence,
    heldout_frobenius,
    npmi_coherence,
    perplexity,
    top_words,
    topic_recovery,
    umass_coherence,
)
from protocols.errors import InputError

# four documents over four words: d0 = {w0, w1}, d1 = {w0, w1, w2}, d2 = {w0}, d3 = {w2, w3}
# D(w0) = 3, D(w1) = 2, D(w2) = 2, D(w3) = 1; D(0,1) = 2, D(0,2) = 1, D(1,2) = 1, D(2,3) = 1,
# D(0,3) = D(1,3) = 0.
DOCS = np.array([[2, 1, 0, 0], [1, 1, 3, 0], [4, 0, 0, 0], [0, 0, 1, 5]], dtype=float)
# topic 0 ranks w0 > w1 > w2 > w3, topic 1 ranks w3 > w2 > w0 > w1
TOPICS = np.array([[0.4, 0.3, 0.2, 0.1], [0.2, 0.1, 0.3, 0.4]])


def test_top_words_are_ranked_most_probable_first() -> None:
    assert top_words(TOPICS, 3).tolist() == [[0, 1, 2], [3, 2, 0]]


def test_umass_matches_mimno_equation_by_hand() -> None:
    # topic 0: (w1|w0) log(3/3) + (w2|w0) log(2/3) + (w2|w1) log(2/2) = log(2/3)
    # topic 1: (w2|w3) log(2/1) + (w0|w3) log(1/1) + (w0|w2) log(2/2) = log 2
    got = umass_coherence(DOCS, TOPICS, n_top=3)
    np.testing.assert_allclose(got, [math.log(2 / 3), math.log(2)], rtol=1e-12)


def test_umass_gensim_form_is_mean_with_tiny_epsilon() -> None:
    # gensim u_mass: mean over pairs of log((D(w_m, w_l) + 1e-12) / D(w_l))
    eps = 1e-12
    by_hand = np.mean([math.log((2 + eps) / 3), math.log((1 + eps) / 3),
                       math.log((1 + eps) / 2)])
    got = umass_coherence(DOCS, TOPICS, n_top=3, smoothing=eps)[0] / 3
    assert got == pytest.approx(by_hand, rel=1e-12)


def test_npmi_matches_bouma_definition_by_hand() -> None:
    eps = 1e-12
    # topic 0, top 2 words w0, w1: P0 = 3/4, P1 = 1/2, P01 = 1/2
    p01 = 0.5 + eps
    expected = math.log(p01 / (0.75 * 0.5)) / -math.log(p01)
    assert npmi_coherence(DOCS, TOPICS, n_top=2)[0] == pytest.approx(expected, rel=1e-12)
    # topic 1, top 2 words w3, w2: P3 = 1/4, P2 = 1/2, P23 = 1/4
    p23 = 0.25 + eps
    expected = math.log(p23 / (0.25 * 0.5)) / -math.log(p23)
    assert npmi_coherence(DOCS, TOPICS, n_top=2)[1] == pytest.approx(expected, rel=1e-12)


def test_npmi_limits_always_together_and_never_together() -> None:
    docs = np.array([[1, 1, 0, 1], [1, 1, 1, 0]], dtype=float)
    T = np.array([[0.5, 0.4, 0.05, 0.05], [0.05, 0.05, 0.5, 0.4]])
    got = npmi_coherence(docs, T, n_top=2)
    assert got[0] == 1.0  # w0, w1 in every document
    # w2, w3 never together: log(eps / (1/2 · 1/2)) / −log eps, → −1 as eps → 0
    assert got[1] == pytest.approx(math.log(1e-12 / 0.25) / -math.log(1e-12), rel=1e-12)


def test_sparse_and_dense_documents_agree() -> None:
    dense = umass_coherence(DOCS, TOPICS, n_top=4)
    assert np.array_equal(umass_coherence(sp.csr_matrix(DOCS), TOPICS, n_top=4), dense)


def test_expected_coherence_weighs_topics_by_their_share() -> None:
    W = np.array([[1.0, 0.0], [0.5, 0.5], [1.0, 0.0], [0.0, 1.0]])
    assert expected_coherence([2.0, -4.0], W) == pytest.approx(2.0 * 0.625 - 4.0 * 0.375)


def test_perplexity_closed_forms() -> None:
    # the average mixture is uniform over four words: perplexity 4 whatever the test words
    W = np.eye(2)
    T = np.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]])
    assert perplexity(np.array([[3, 0, 1, 7]]), W, T) == pytest.approx(4.0)
    # p = (0.75, 0.25); test counts (3, 1): exp(−(3 log .75 + log .25) / 4)
    W = np.array([[1.0, 0.0], [0.5, 0.5]])
    got = perplexity(np.array([[3.0, 1.0]]), W, np.eye(2))
    assert got == pytest.approx(math.exp(-(3 * math.log(0.75) + math.log(0.25)) / 4))
    # a test word the model gives no mass: infinite
    assert perplexity(np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]]), np.eye(2)) == math.inf
    # mixed with the uniform distribution: p = (1 − λ)(1, 0) + λ/2
    lam = 0.01
    got = perplexity(np.array([[1.0, 1.0]]), np.array([[1.0, 0.0]]), np.eye(2), lam)
    assert got == pytest.approx(math.exp(-(math.log(1 - lam / 2) + math.log(lam / 2)) / 2))


def test_heldout_frobenius_is_zero_for_documents_in_the_topics_cone() -> None:
    T = np.array([[0.5, 0.5, 0.0], [0.0, 0.2, 0.8]])
    E = np.array([[0.3, 0.3, 0.0], [0.5, 0.7, 0.8]])  # 0.6 T0, and T0 + T1
    assert heldout_frobenius(E, T) == pytest.approx(0.0, abs=1e-12)
    # a document orthogonal to the cone leaves its whole norm
    E = np.array([[0.0, 0.0, 0.0]])
    assert heldout_frobenius(E, T) == 0.0


def test_planted_topics_are_more_coherent_than_random_ones() -> None:
    rng = np.random.default_rng(3)
    corpus = synthetic_topic_corpus(600, 300, 6, doc_length=80, rng=rng)
    planted = umass_coherence(corpus.counts, corpus.topics)
    shuffled = np.array([rng.permutation(t) for t in corpus.topics])
    random = umass_coherence(corpus.counts, shuffled)
    assert planted.min() > random.max()
    assert npmi_coherence(corpus.counts, corpus.topics).min() > npmi_coherence(
        corpus.counts, shuffled).max()
    # fresh documents from the planted topics: the planted model's perplexity beats the
    # uniform model's (exactly d = 300) and the shuffled topics'
    mix = rng.dirichlet(np.full(6, 0.1), size=200) @ corpus.topics
    fresh = rng.multinomial(80, mix / mix.sum(axis=1, keepdims=True))
    planted_pp = perplexity(fresh, corpus.weights, corpus.topics)
    assert perplexity(fresh, corpus.weights, np.full((6, 300), 1 / 300)) == pytest.approx(300)
    assert planted_pp < 300
    assert planted_pp < perplexity(fresh, corpus.weights, shuffled)


@pytest.mark.parametrize("bad", [np.ones((2, 1)), np.full((1, 3), np.nan), np.ones(3)])
def test_bad_topics_are_refused(bad: np.ndarray) -> None:
    with pytest.raises(InputError, match="topics"):
        umass_coherence(np.ones((2, 3)), bad, n_top=2)


def test_shape_mismatch_is_refused() -> None:
    with pytest.raises(InputError, match="d = 4"):
        umass_coherence(np.ones((2, 3)), TOPICS, n_top=2)
    with pytest.raises(InputError, match="n_top"):
        umass_coherence(DOCS, TOPICS, n_top=5)


def test_topic_recovery_is_the_best_matching_of_every_permutation() -> None:
    """Against brute force over the k! matchings (k = 5), with numpy's cosines; planted topics
    recovered in another order score 1."""
    rng = np.random.default_rng(3)
    truth, learned = rng.uniform(0.0, 1.0, (5, 40)), rng.uniform(0.0, 1.0, (5, 40))
    unit = lambda A: A / np.linalg.norm(A, axis=1, keepdims=True)  # noqa: E731
    cos = unit(truth) @ unit(learned).T
    best = max(np.mean([cos[i, p[i]] for i in range(5)]) for p in itertools.permutations(range(5)))
    assert topic_recovery(truth, learned) == pytest.approx(best, rel=1e-12)
    assert topic_recovery(truth, truth[[3, 0, 4, 1, 2]]) == pytest.approx(1.0, rel=1e-12)
