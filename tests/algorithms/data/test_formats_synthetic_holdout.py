"""Tests of algorithms.data's generators, UCI / MovieLens formats and held-out splits.

File round-trips compare against literal file text written here and arrays written by hand;
generator properties are checked with independent numpy / scikit-learn computations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment

from algorithms.data import (
    holdout_entries,
    holdout_rows,
    read_movielens,
    read_uci_bow,
    synthetic_ratings,
    synthetic_topic_corpus,
    tf_rows,
    uci_vocab_path,
    write_movielens,
    write_uci_bow,
)
from protocols.errors import DataError, ScenarioError


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    message = str(exc.value)
    assert "\n" not in message
    return message


def _cosines(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A = A / np.linalg.norm(A, axis=1, keepdims=True)
    B = B / np.linalg.norm(B, axis=1, keepdims=True)
    return A @ B.T


# --------------------------------------------------------------------------------------------
# synthetic topic corpus


@pytest.fixture(scope="module")
def corpus():
    return synthetic_topic_corpus(
        600, 150, 5, doc_length=200, alpha=0.1, beta=0.05, rng=np.random.default_rng(0)
    )


def test_corpus_shapes_and_simplex_rows(corpus) -> None:
    assert corpus.counts.shape == (600, 150) and corpus.counts.dtype == np.int64
    assert corpus.tf.shape == (600, 150)
    assert corpus.topics.shape == (5, 150) and corpus.weights.shape == (600, 5)
    for rows in (corpus.tf, corpus.topics, corpus.weights):
        assert rows.min() >= 0.0
        np.testing.assert_allclose(rows.sum(axis=1), 1.0, atol=1e-12)
    lengths = corpus.counts.sum(axis=1)
    assert lengths.min() >= 1
    np.testing.assert_allclose(corpus.tf * lengths[:, None], corpus.counts, atol=1e-9)
    # mean length 200: Poisson sd of the mean over 600 docs is ~0.58
    assert abs(lengths.mean() - 200.0) < 3.0


def test_corpus_tf_expectation_is_weights_times_topics(corpus) -> None:
    # E[tf] = W T; averaged over all documents the deviation shrinks like 1/sqrt(n · length)
    np.testing.assert_allclose(
        corpus.tf.mean(axis=0), (corpus.weights @ corpus.topics).mean(axis=0), atol=5e-3
    )


def test_planted_topics_dominate_their_documents(corpus) -> None:
    for t in range(5):
        dominated = corpus.weights[:, t] > 0.9
        assert dominated.sum() >= 20
        empirical = corpus.counts[dominated].sum(axis=0).astype(float)
        assert _cosines(empirical[None], corpus.topics[t][None])[0, 0] > 0.95
        top_true = set(np.argsort(-corpus.topics[t])[:3].tolist())
        top_seen = set(np.argsort(-empirical)[:5].tolist())
        assert top_true <= top_seen


def test_planted_topics_recovered_by_nmf(corpus) -> None:
    decomposition = pytest.importorskip("sklearn.decomposition")
    model = decomposition.NMF(5, init="nndsvda", max_iter=500, random_state=0)
    model.fit(corpus.tf)
    found = model.components_ / model.components_.sum(axis=1, keepdims=True)
    cos = _cosines(found, corpus.topics)
    rows, cols = linear_sum_assignment(-cos)
    assert cos[rows, cols].min() > 0.95
    for i, j in zip(rows, cols, strict=True):
        overlap = set(np.argsort(-found[i])[:10]) & set(np.argsort(-corpus.topics[j])[:10])
        assert len(overlap) >= 7


def test_corpus_is_deterministic_from_the_generator() -> None:
    a = synthetic_topic_corpus(30, 20, 3, doc_length=40, rng=np.random.default_rng(7))
    b = synthetic_topic_corpus(30, 20, 3, doc_length=40, rng=np.random.default_rng(7))
    c = synthetic_topic_corpus(30, 20, 3, doc_length=40, rng=np.random.default_rng(8))
    for field in ("counts", "tf", "topics", "weights"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.counts, c.counts)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"k": 0}, "k = 0 must be ≥ 1"),
        ({"n_words": 1}, "n_words = 1 must be ≥ 2"),
        ({"alpha": 0.0}, "alpha = 0.0 must lie in (0"),
        ({"beta": float("nan")}, "beta = nan must be a finite number"),
        ({"doc_length": 2.5}, "doc_length = 2.5 must be a whole number"),
    ],
)
def test_corpus_arguments_validated(kwargs: dict, needle: str) -> None:
    args = {"n_docs": 10, "n_words": 8, "k": 2, "rng": np.random.default_rng(0)} | kwargs
    with pytest.raises(ScenarioError) as exc:
        synthetic_topic_corpus(**args)
    assert needle in _one_line(exc)


def test_tf_rows_dense_sparse_and_empty() -> None:
    counts = np.array([[1, 3, 0], [0, 0, 2]])
    expected = np.array([[0.25, 0.75, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(tf_rows(counts), expected)
    got = tf_rows(sp.csr_array(counts))
    assert sp.issparse(got)
    np.testing.assert_array_equal(got.toarray(), expected)
    with pytest.raises(DataError, match=r"document \(row\) 1 has no words"):
        tf_rows(np.array([[1, 0], [0, 0]]))


# --------------------------------------------------------------------------------------------
# synthetic ratings


def test_ratings_range_density_and_coverage() -> None:
    data = synthetic_ratings(300, 200, 4, density=0.1, noise=0.5, rng=np.random.default_rng(2))
    R = data.ratings
    observed = ~np.isnan(R)
    assert R.shape == (300, 200)
    assert set(np.unique(R[observed]).tolist()) <= {1.0, 2.0, 3.0, 4.0, 5.0}
    assert abs(observed.mean() - 0.1) < 0.01  # binomial sd ≈ 0.0012
    assert observed.any(axis=1).all() and observed.any(axis=0).all()
    assert data.truth.min() >= 1.0 and data.truth.max() <= 5.0
    np.testing.assert_allclose(data.truth, data.user_factors @ data.item_factors)
    assert data.user_factors.min() >= 0 and data.item_factors.min() >= 0
    assert np.linalg.matrix_rank(data.truth) == 4
    rmse = np.sqrt(np.mean((R[observed] - data.truth[observed]) ** 2))
    # N(0, 0.25) noise plus rounding (variance 1/12), reduced a little by clipping: ≈ 0.58
    assert 0.45 < rmse < 0.65


def test_ratings_without_noise_are_rounded_truth() -> None:
    data = synthetic_ratings(20, 15, 2, density=0.5, noise=0.0, rng=np.random.default_rng(5))
    observed = ~np.isnan(data.ratings)
    np.testing.assert_array_equal(data.ratings[observed], np.rint(data.truth[observed]))


def test_ratings_minimum_density_covers_everyone() -> None:
    data = synthetic_ratings(12, 30, 2, density=30 / 360, noise=0.1, rng=np.random.default_rng(1))
    observed = ~np.isnan(data.ratings)
    assert observed.sum() == 30
    assert observed.any(axis=1).all() and observed.any(axis=0).all()
    with pytest.raises(ScenarioError, match=r"must be at least 0\.0833333"):
        synthetic_ratings(12, 30, 2, density=0.05, noise=0.1, rng=np.random.default_rng(1))


def test_ratings_deterministic_and_validated() -> None:
    a = synthetic_ratings(40, 30, 3, density=0.2, noise=0.3, rng=np.random.default_rng(9))
    b = synthetic_ratings(40, 30, 3, density=0.2, noise=0.3, rng=np.random.default_rng(9))
    np.testing.assert_array_equal(a.ratings, b.ratings)
    np.testing.assert_array_equal(a.truth, b.truth)
    with pytest.raises(ScenarioError, match=r"density = 1.5 must lie in \(0, 1\]"):
        synthetic_ratings(4, 4, 1, density=1.5, noise=0.1, rng=np.random.default_rng(0))
    with pytest.raises(ScenarioError, match="noise = -1"):
        synthetic_ratings(4, 4, 1, density=0.5, noise=-1, rng=np.random.default_rng(0))
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        synthetic_ratings(4, 4, 1, density=0.5, noise=0.1, rng=0)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# UCI bag of words

DOCWORD = "3\n5\n6\n1 1 2\n1 3 1\n2 2 4\n3 1 1\n3 4 3\n3 5 1\n"
VOCAB = "apple\nbanana\ncherry\ndate\nelder\n"
COUNTS = np.array(
    [
        [2, 0, 1, 0, 0],
        [0, 4, 0, 0, 0],
        [1, 0, 0, 3, 1],
    ]
)


def test_read_uci_bow_literal(tmp_path: Path) -> None:
    (tmp_path / "docword.toy.txt").write_text(DOCWORD)
    (tmp_path / "vocab.toy.txt").write_text(VOCAB)
    bow = read_uci_bow(tmp_path / "docword.toy.txt", tmp_path / "vocab.toy.txt")
    assert isinstance(bow.counts, sp.csr_array) and bow.counts.dtype == np.int64
    np.testing.assert_array_equal(bow.counts.toarray(), COUNTS)
    assert bow.vocabulary == ("apple", "banana", "cherry", "date", "elder")
    assert read_uci_bow(tmp_path / "docword.toy.txt").vocabulary is None


def test_write_uci_bow_literal_and_round_trip(tmp_path: Path) -> None:
    words = ["apple", "banana", "cherry", "date", "elder"]
    doc, voc = write_uci_bow(tmp_path / "docword.toy.txt", COUNTS, words)
    assert voc == tmp_path / "vocab.toy.txt"
    assert doc.read_text() == DOCWORD
    assert voc.read_text() == VOCAB
    write_uci_bow(tmp_path / "docword.sparse.txt", sp.csr_array(COUNTS.astype(float)))
    assert (tmp_path / "docword.sparse.txt").read_text() == DOCWORD
    back = read_uci_bow(doc, voc)
    np.testing.assert_array_equal(back.counts.toarray(), COUNTS)


def test_uci_empty_corpus(tmp_path: Path) -> None:
    (tmp_path / "docword.e.txt").write_text("2\n3\n0\n")
    bow = read_uci_bow(tmp_path / "docword.e.txt")
    assert bow.counts.shape == (2, 3) and bow.counts.nnz == 0


def test_uci_vocab_path_convention() -> None:
    assert uci_vocab_path("data/docword.enron.txt") == Path("data/vocab.enron.txt")
    with pytest.raises(DataError, match="give vocab_path"):
        uci_vocab_path("data/enron.txt")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("3\n5\n", "ends after 2 line(s)"),
        ("3\nfive\n1\n1 1 1\n", "line 2 should hold the header W"),
        ("3\n5\n-1\n", "line 3 should hold the header NNZ"),
        ("0\n5\n0\n", "D = 0"),
        ("3\n5\n2\n1 1 1\n", "NNZ = 2 but the file holds 1 entry line(s)"),
        ("3\n5\n2\n1 1 1\n4 2 1\n", "line 5: docID 4 is outside 1..D = 1..3"),
        ("3\n5\n2\n1 1 1\n2 0 1\n", "line 5: wordID 0 is outside 1..W = 1..5"),
        ("3\n5\n2\n1 1 1\n2 6 1\n", "line 5: wordID 6 is outside"),
        ("3\n5\n2\n1 1 0\n2 2 1\n", "line 4: count 0 must be a positive integer"),
        ("3\n5\n2\n1 1 1.5\n2 2 1\n", "line 4: count 1.5 must be a positive integer"),
        ("3\n5\n2\n1 1 1\n2 2\n", "line 5 has 2 fields, expected 3"),
        ("3\n5\n2\n1 1 1\n\n2 x 1\n", "line 6, field 2 is 'x'"),
        (
            "3\n5\n3\n1 1 1\n2 2 1\n1 1 4\n",
            "line 6 repeats (docID 1, wordID 1) first given on line 4",
        ),
    ],
)
def test_uci_errors_name_the_line(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "docword.bad.txt").write_text(text)
    with pytest.raises(DataError) as exc:
        read_uci_bow(tmp_path / "docword.bad.txt")
    message = _one_line(exc)
    assert needle in message and "docword.bad.txt" in message


def test_uci_missing_and_vocab_errors(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="no such file"):
        read_uci_bow(tmp_path / "docword.none.txt")
    (tmp_path / "docword.toy.txt").write_text(DOCWORD)
    (tmp_path / "short.txt").write_text("apple\nbanana\n")
    with pytest.raises(DataError, match="holds 2 words but the docword header says W = 5"):
        read_uci_bow(tmp_path / "docword.toy.txt", tmp_path / "short.txt")
    (tmp_path / "gap.txt").write_text("a\nb\n\nd\ne\n")
    with pytest.raises(DataError, match="line 3 is empty"):
        read_uci_bow(tmp_path / "docword.toy.txt", tmp_path / "gap.txt")


def test_write_uci_bow_validates(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"counts\[0, 1\] = 1.5"):
        write_uci_bow(tmp_path / "docword.x.txt", np.array([[1.0, 1.5]]))
    with pytest.raises(DataError, match="vocab has 1 words"):
        write_uci_bow(tmp_path / "docword.x.txt", np.array([[1, 2]]), ["a"])
    with pytest.raises(DataError, match="cannot be written one word a line"):
        write_uci_bow(tmp_path / "docword.x.txt", np.array([[1, 2]]), ["a", "b c\n"])


# --------------------------------------------------------------------------------------------
# MovieLens

RATINGS_DAT = "1::10::5::978300760\n1::20::3::978302109\n3::10::4::978301968\n"


def test_read_movielens_literal(tmp_path: Path) -> None:
    (tmp_path / "ratings.dat").write_text(RATINGS_DAT)
    ml = read_movielens(tmp_path / "ratings.dat")
    np.testing.assert_array_equal(ml.ratings, [[5.0, 3.0], [4.0, np.nan]])
    np.testing.assert_array_equal(ml.user_ids, [1, 3])
    np.testing.assert_array_equal(ml.movie_ids, [10, 20])
    assert ml.user_ids.dtype == np.int64


def test_write_movielens_literal_and_round_trip(tmp_path: Path) -> None:
    ratings = np.array([[5.0, 3.0], [4.0, np.nan]])
    stamps = np.array([[978300760, 978302109], [978301968, 0]])
    path = write_movielens(tmp_path / "r.dat", ratings, [1, 3], [10, 20], stamps)
    assert path.read_text() == RATINGS_DAT
    write_movielens(tmp_path / "d.dat", np.array([[np.nan, 2.5]]))
    assert (tmp_path / "d.dat").read_text() == "1::2::2.5::0\n"
    back = read_movielens(path)
    np.testing.assert_array_equal(back.ratings, ratings)


def test_movielens_larger_file_fast_path(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    users, movies = np.divmod(rng.choice(500 * 400, size=20_000, replace=False), 400)
    stars = rng.integers(1, 6, size=users.size)
    lines = [
        f"{u + 1}::{m + 1}::{r}::{7 * u}\n" for u, m, r in zip(users, movies, stars, strict=True)
    ]
    (tmp_path / "big.dat").write_text("".join(lines))
    ml = read_movielens(tmp_path / "big.dat")
    rows = np.searchsorted(ml.user_ids, users + 1)
    cols = np.searchsorted(ml.movie_ids, movies + 1)
    np.testing.assert_array_equal(ml.ratings[rows, cols], stars)
    assert np.count_nonzero(~np.isnan(ml.ratings)) == users.size


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("1::10::5::1\n1::20::3\n", "line 2 has 3 fields, expected 4"),
        ("1::10::5::1\n1::20::3::1::9\n", "line 2 has 5 fields"),
        ("1::10::5::1\n\n2::20::6::1\n", "line 3: rating 6 is outside 1..5"),
        ("1::10::0::1\n", "line 1: rating 0 is outside 1..5"),
        ("1::10::5::1\n2::10::4::1\n1::10::3::1\n", "line 3: user 1 rates movie 10 again"),
        ("1.5::10::5::1\n", "line 1: UserID 1.5 is not a positive integer"),
        ("1::0::5::1\n", "line 1: MovieID 0 is not a positive integer"),
        ("1::abc::5::1\n", "line 1, field 2 is 'abc'"),
        ("1::10::5::-4\n", "line 1: Timestamp -4"),
        ("\n\n", "holds no ratings"),
    ],
)
def test_movielens_errors_name_the_line(tmp_path: Path, text: str, needle: str) -> None:
    (tmp_path / "ratings.dat").write_text(text)
    with pytest.raises(DataError) as exc:
        read_movielens(tmp_path / "ratings.dat")
    message = _one_line(exc)
    assert needle in message and "ratings.dat" in message


def test_movielens_duplicate_names_first_line(tmp_path: Path) -> None:
    (tmp_path / "ratings.dat").write_text("1::10::5::1\n2::10::4::1\n1::10::3::1\n")
    with pytest.raises(DataError, match=r"first on line 1"):
        read_movielens(tmp_path / "ratings.dat")


def test_write_movielens_validates(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"ratings\[0, 1\] = 0.5 is outside 1..5"):
        write_movielens(tmp_path / "r.dat", np.array([[1.0, 0.5]]))
    with pytest.raises(DataError, match="user_ids must be distinct"):
        write_movielens(tmp_path / "r.dat", np.ones((2, 1)), user_ids=[4, 4])
    with pytest.raises(DataError, match="movie_ids must be 1 integers"):
        write_movielens(tmp_path / "r.dat", np.ones((2, 1)), movie_ids=[1, 2])
    with pytest.raises(DataError, match="timestamps must be non-negative integers"):
        write_movielens(tmp_path / "r.dat", np.ones((1, 1)), timestamps=np.array([[-1]]))


# --------------------------------------------------------------------------------------------
# held-out splits


def test_holdout_rows_dense() -> None:
    X = np.arange(30.0).reshape(10, 3)
    split = holdout_rows(X, 0.3, np.random.default_rng(0))
    assert split.test_rows.size == 3 and split.train_rows.size == 7
    assert np.array_equal(
        np.sort(np.concatenate([split.train_rows, split.test_rows])), np.arange(10)
    )
    np.testing.assert_array_equal(split.train, X[split.train_rows])
    np.testing.assert_array_equal(split.test, X[split.test_rows])
    again = holdout_rows(X, 0.3, np.random.default_rng(0))
    np.testing.assert_array_equal(split.test_rows, again.test_rows)


def test_holdout_rows_sparse_and_clipping() -> None:
    X = sp.csr_array(np.eye(3))
    split = holdout_rows(X, 0.01, np.random.default_rng(1))
    assert split.test_rows.size == 1  # at least one row is held out
    np.testing.assert_array_equal(split.test.toarray(), np.eye(3)[split.test_rows])
    assert holdout_rows(X, 0.99, np.random.default_rng(1)).train_rows.size == 1
    with pytest.raises(ScenarioError, match=r"fraction = 1.0 must lie in \(0, 1\)"):
        holdout_rows(X, 1.0, np.random.default_rng(1))
    with pytest.raises(ScenarioError, match="at least 2 rows"):
        holdout_rows(np.ones((1, 3)), 0.5, np.random.default_rng(1))


def test_holdout_entries_per_user_counts() -> None:
    n = np.nan
    R = np.array(
        [
            [5, 4, 3, 2, 1, 5, 4, 3, 2, 1],  # 10 observed → round(2.5) = 3 held out
            [1, n, n, n, n, n, n, n, n, n],  # 1 observed → keeps it
            [2, 3, n, n, n, n, n, n, n, n],  # 2 observed → round(0.5) = 1 held out
            [n, n, n, n, n, n, n, n, n, n],  # no ratings
            [4, 4, 4, 4, n, n, n, n, n, n],  # 4 observed → round(1.0) = 1 held out
        ],
        dtype=float,
    )
    split = holdout_entries(R, 0.25, np.random.default_rng(3))
    np.testing.assert_array_equal(split.test_mask.sum(axis=1), [3, 0, 1, 0, 1])
    observed = ~np.isnan(R)
    assert not (split.test_mask & ~observed).any()
    np.testing.assert_array_equal(~np.isnan(split.test), split.test_mask)
    np.testing.assert_array_equal(~np.isnan(split.train), observed & ~split.test_mask)
    np.testing.assert_array_equal(np.where(split.test_mask, split.test, split.train), R)
    again = holdout_entries(R, 0.25, np.random.default_rng(3))
    np.testing.assert_array_equal(split.test_mask, again.test_mask)


def test_holdout_entries_fraction_on_generated_ratings() -> None:
    R = synthetic_ratings(200, 100, 3, density=0.2, noise=0.5, rng=np.random.default_rng(4)).ratings
    split = holdout_entries(R, 0.2, np.random.default_rng(5))
    assert abs(split.test_mask.sum() / np.count_nonzero(~np.isnan(R)) - 0.2) < 0.02
    assert (~np.isnan(split.train)).any(axis=1).all()  # every user keeps a training rating
