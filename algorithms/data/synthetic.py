"""Synthetic data sets: the inputs of the runnable scenarios.

The thesis (Tsikhanovich, seed 001) evaluates NMF as a topic model on bag-of-words corpora
(§1.5: NIPS, 20 Newsgroups, Reuters; Ch. 2–3: 20NG and Enron) and as a recommender system on
MovieLens-1M and Yelp (§2.4, §3.3.1). None of these is shipped; the scenarios use:

* :func:`synthetic_topic_corpus` — an LDA-style corpus with planted topics. Documents are word
  counts and, as the thesis uses them (digest §1.1), term-frequency rows on the simplex Δ_d, so
  that ``X ≈ W @ T`` with the rows of ``W`` on Δ_k and the rows of ``T`` on Δ_d.
* :func:`synthetic_ratings` — a users × items matrix of 1..5 ratings from a non-negative low-rank
  model plus noise, NaN where unobserved (the ML-1M stand-in; digest §7.1 item 32).
* uniform data in [0, high) — the quickstart's SecureSum input.
* MNIST-shaped sparse images (:mod:`algorithms.data.mnist_like`), seed 004's sparse data.

:func:`synthetic_dataset` is what a scenario's ``[data] source = "synthetic"`` turns into.

Choices the thesis leaves open (digest §7.1 item 34: sizes and constructions are not given)
-------------------------------------------------------------------------------------------
* Topic corpus: topics ``T_t ~ Dirichlet(beta·1_d)`` and document mixtures
  ``W_i ~ Dirichlet(alpha·1_k)`` (symmetric priors; defaults ``alpha = 0.1``, ``beta = 0.05``
  so that topics are sparse and distinguishable and most documents are dominated by one or two
  topics); document lengths ``1 + Poisson(doc_length − 1)`` (mean ``doc_length``, never empty);
  counts ``~ Multinomial(length_i, W_i T)``; TF rows are ``counts_i / length_i``.
* Ratings: user tastes ``W_u ~ Dirichlet(0.5·1_k)`` (rows on Δ_k) and archetype profiles
  ``H_tj ~ U[1, 5]``, so the noiseless ratings ``W @ H`` are an exactly rank-k non-negative matrix
  with every entry in [1, 5]; observed ratings add ``N(0, noise²)``, round half to even and clip
  to 1..5. The observation pattern first covers every user and every item once (a random pairing
  of max(n_users, n_items) cells) and then observes each remaining cell independently with the
  probability that makes the *expected* density equal ``density``.
* Uniform data lies in [0, high) with ``high = 1`` by default, and ``rows · high`` must not
  exceed :data:`UNIFORM_SUM_LIMIT` = 2^28: with p = 2^61 − 1 and 24 fractional bits the field's
  signed range is 2^36, so every column sum — and each party's partial sum encoded for up to
  256 parties — stays at least 2^8-fold inside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np

from algorithms.data.checks import Matrix, check_rng, int_arg, ratings_args, real_arg, show, whole
from algorithms.data.dataset import Dataset
from algorithms.data.latent import synthetic_mog, synthetic_spiked, synthetic_stm
from algorithms.data.mnist_like import MNIST_DENSITY, synthetic_mnist
from algorithms.data.movielens import RATING_MAX, RATING_MIN
from algorithms.data.movielens_like import synthetic_movielens
from algorithms.vocabulary import SYNTHETIC_KINDS
from protocols.errors import ScenarioError

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "DEFAULT_DOC_LENGTH",
    "DEFAULT_USER_CONCENTRATION",
    "SYNTHETIC_KINDS",
    "UNIFORM_SUM_LIMIT",
    "SyntheticCorpus",
    "SyntheticRatings",
    "synthetic_dataset",
    "synthetic_matrix",
    "synthetic_ratings",
    "synthetic_topic_corpus",
]

DEFAULT_DOC_LENGTH = 200
"""Mean number of words per synthetic document."""
DEFAULT_ALPHA = 0.1
"""Symmetric Dirichlet concentration of the synthetic document-topic mixtures."""
DEFAULT_BETA = 0.05
"""Symmetric Dirichlet concentration of the synthetic topic-word distributions."""
DEFAULT_USER_CONCENTRATION = 0.5
"""Symmetric Dirichlet concentration of the synthetic users' tastes over the k archetypes."""

UNIFORM_SUM_LIMIT = float(2**28)
"""Largest ``rows · high`` allowed for synthetic uniform data (see the module docstring)."""


@dataclass(frozen=True)
class SyntheticCorpus:
    """An LDA-style corpus with its planted truth.

    Attributes
    ----------
    counts : ndarray of int64, shape (n_docs, n_words)
        Word counts per document.
    tf : ndarray of float64, shape (n_docs, n_words)
        Term-frequency rows ``counts / counts.sum(axis=1)``; every row lies on the simplex.
    topics : ndarray of float64, shape (k, n_words)
        The true topics ``T``; every row lies on the simplex.
    weights : ndarray of float64, shape (n_docs, k)
        The true document-topic weights ``W``; every row lies on the simplex, and
        ``E[tf] = weights @ topics``.
    """

    counts: np.ndarray
    tf: np.ndarray
    topics: np.ndarray
    weights: np.ndarray


@dataclass(frozen=True)
class SyntheticRatings:
    """A synthetic ratings matrix with its noiseless low-rank truth.

    Attributes
    ----------
    ratings : ndarray of float64, shape (n_users, n_items)
        Observed ratings in {1, 2, 3, 4, 5}; NaN where unobserved.
    truth : ndarray of float64, shape (n_users, n_items)
        Noiseless ratings ``user_factors @ item_factors`` (every entry in [1, 5]), for all cells.
    user_factors : ndarray of float64, shape (n_users, k)
        Non-negative user tastes; every row lies on the simplex Δ_k.
    item_factors : ndarray of float64, shape (k, n_items)
        Non-negative archetype ratings, every entry in [1, 5].
    """

    ratings: np.ndarray
    truth: np.ndarray
    user_factors: np.ndarray
    item_factors: np.ndarray


def synthetic_topic_corpus(
    n_docs: int,
    n_words: int,
    k: int,
    *,
    doc_length: int = DEFAULT_DOC_LENGTH,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    rng: np.random.Generator,
) -> SyntheticCorpus:
    """Generate an LDA-style corpus with ``k`` planted topics.

    ``T_t ~ Dirichlet(beta·1_d)`` for each topic, ``W_i ~ Dirichlet(alpha·1_k)`` for each
    document, length ``L_i = 1 + Poisson(doc_length − 1)``, counts ``~ Multinomial(L_i, W_i T)``.

    Parameters
    ----------
    n_docs : int
        Number of documents n (rows).
    n_words : int
        Vocabulary size d (columns); at least 2.
    k : int
        Number of topics.
    doc_length : int
        Mean document length in words (≥ 1).
    alpha : float
        Concentration of the document-topic Dirichlet (> 0; small ⇒ few topics per document).
    beta : float
        Concentration of the topic-word Dirichlet (> 0; small ⇒ sparse, distinguishable topics).
    rng : numpy.random.Generator
        The only source of randomness; the same generator state gives the same corpus.

    Returns
    -------
    SyntheticCorpus
        ``counts`` and ``tf`` of shape (n_docs, n_words), ``topics`` (k, n_words),
        ``weights`` (n_docs, k).

    Raises
    ------
    ScenarioError
        If a size or concentration is out of range.
    """
    rng = check_rng(rng)
    n = int_arg(n_docs, "n_docs")
    d = int_arg(n_words, "n_words", minimum=2)
    k = int_arg(k, "k")
    length = int_arg(doc_length, "doc_length")
    a = real_arg(alpha, "alpha", low=0.0, low_open=True)
    b = real_arg(beta, "beta", low=0.0, low_open=True)

    topics = rng.dirichlet(np.full(d, b), size=k)
    weights = rng.dirichlet(np.full(k, a), size=n)
    lengths = 1 + rng.poisson(length - 1, size=n)
    probs = weights @ topics
    probs /= probs.sum(axis=1, keepdims=True)
    counts = rng.multinomial(lengths, probs).astype(np.int64)
    tf = counts / lengths[:, None].astype(np.float64)
    return SyntheticCorpus(counts=counts, tf=tf, topics=topics, weights=weights)


def synthetic_ratings(
    n_users: int,
    n_items: int,
    k: int,
    *,
    density: float = 0.1,
    noise: float = 0.5,
    rng: np.random.Generator,
) -> SyntheticRatings:
    """Generate 1..5 ratings from a non-negative rank-k model plus noise, with missing entries.

    Parameters
    ----------
    n_users : int
        Number of users (rows).
    n_items : int
        Number of items (columns).
    k : int
        Rank of the noiseless model.
    density : float
        Expected fraction of observed cells, in (0, 1]; it must be at least
        ``max(n_users, n_items) / (n_users · n_items)`` so that every user and every item
        can hold a rating.
    noise : float
        Standard deviation of the Gaussian noise added before rounding (≥ 0).
    rng : numpy.random.Generator
        The only source of randomness.

    Returns
    -------
    SyntheticRatings
        ``ratings`` (n_users, n_items) in {1..5} with NaN where unobserved; ``truth``
        (n_users, n_items) = ``user_factors @ item_factors``; ``user_factors`` (n_users, k);
        ``item_factors`` (k, n_items).

    Raises
    ------
    ScenarioError
        If a size, the density or the noise level is out of range.
    """
    rng = check_rng(rng)
    n, m, k, rho, sd = ratings_args(n_users, n_items, k, density, noise)
    cells = n * m
    cover = max(n, m)
    if rho * cells < cover:
        raise ScenarioError(
            f"density = {show(density)} is too low for {n} users × {m} items: every user and item "
            f"needs a rating, so density must be at least {cover / cells:.6g}"
        )

    user_factors = rng.dirichlet(np.full(k, DEFAULT_USER_CONCENTRATION), size=n)
    item_factors = rng.uniform(RATING_MIN, RATING_MAX, size=(k, m))
    truth = user_factors @ item_factors

    # Cover every user and every item once: pair the i-th user of a random order with the
    # i-th item of another, cycling the shorter list; these max(n, m) cells are distinct.
    idx = np.arange(cover)
    cover_rows = rng.permutation(n)[idx % n]
    cover_cols = rng.permutation(m)[idx % m]
    mask = np.zeros((n, m), dtype=bool)
    mask[cover_rows, cover_cols] = True
    rest = cells - cover
    if rest > 0:
        p_rest = (rho * cells - cover) / rest
        mask |= rng.random((n, m)) < p_rest

    noisy = truth + (rng.normal(0.0, sd, size=(n, m)) if sd > 0 else 0.0)
    ratings = np.clip(np.rint(noisy), RATING_MIN, RATING_MAX)
    ratings[~mask] = np.nan
    return SyntheticRatings(
        ratings=ratings, truth=truth, user_factors=user_factors, item_factors=item_factors
    )


_SYNTHETIC_PARAMS: dict[str, tuple[str, ...]] = {
    "uniform": ("high",),
    "topics": ("k", "doc_length", "alpha", "beta"),
    "ratings": ("k", "density", "noise"),
    "movielens": ("k", "density", "noise"),
    "spiked": ("k",),
    "mog": ("k", "noise"),
    "stm": ("k", "doc_length"),
    "mnist": ("k", "density", "noise"),
}


def synthetic_dataset(
    rows: int,
    cols: int,
    rng: np.random.Generator,
    kind: str = "uniform",
    **params: Any,
) -> Dataset:
    """Generate a synthetic :class:`Dataset` for a scenario.

    Parameters
    ----------
    rows, cols : int
        Shape (n_samples, n_features) of the matrix.
    rng : numpy.random.Generator
        The only source of randomness.
    kind : {"uniform", "topics", "ratings", "movielens", "spiked", "mog", "stm", "mnist"}
        ``"spiked"``, ``"mog"``, ``"stm"``: seed 003's data (:mod:`algorithms.data.latent`;
        parameters ``k``, default 5, the signal rank or number of components; ``noise`` for
        ``mog``, the variance before scaling, default 0.05; ``doc_length`` for ``stm``,
        default 3), with ``covariance`` or ``means``, ``weights``, ``sigma2`` as truth.
        ``"uniform"``: i.i.d. U[0, high) entries (the quickstart's SecureSum input; parameter
        ``high``, default 1). ``"topics"``: TF rows of an LDA corpus (parameters ``k`` default
        5, ``doc_length``, ``alpha``, ``beta``). ``"ratings"``: 1..5 ratings with NaN where
        unobserved (parameters ``k`` default 5, ``density`` default 0.1, ``noise`` default 0.5).
        ``"movielens"``: ML-1M-shaped 1..5 ratings with biases, heavy-tailed activity and
        popularity (:mod:`algorithms.data.movielens_like`; ``k`` default 20, ``density`` default
        0.05, ``noise`` default 0.9). ``"mnist"``: MNIST-shaped sparse images in [0, 1], one
        image per *column* (``rows`` pixels × ``cols`` images, as seed 004 partitions MNIST's
        pixel columns; :mod:`algorithms.data.mnist_like`; ``k`` default 10, ``density``
        default 0.1914, MNIST's, ``noise`` default 0.1), with ``prototypes`` and ``weights``
        as truth.
    **params
        The kind's parameters, as listed above.

    Returns
    -------
    Dataset
        With the planted truth for ``"topics"`` and ``"ratings"``.

    Raises
    ------
    ScenarioError
        Unknown kind or parameter, or a value out of range.
    """
    if kind not in _SYNTHETIC_PARAMS:
        raise ScenarioError(
            f"synthetic kind = {kind!r} is not recognised; use one of {', '.join(SYNTHETIC_KINDS)}"
        )
    unknown = sorted(set(params) - set(_SYNTHETIC_PARAMS[kind]))
    if unknown:
        allowed = ", ".join(_SYNTHETIC_PARAMS[kind]) or "none"
        raise ScenarioError(
            f"synthetic kind {kind!r} has no parameter {unknown[0]!r}; its parameters are {allowed}"
        )
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    for name, value in (("rows", rows), ("cols", cols)):
        if not whole(value) or value < 1:
            raise ScenarioError(f"synthetic {name} = {show(value)} must be a whole number ≥ 1")
    source = f"synthetic:{kind}"
    if kind == "uniform":
        high = params.get("high", 1.0)
        if (
            isinstance(high, bool)
            or not isinstance(high, Real)
            or not math.isfinite(float(high))
            or high <= 0
        ):
            raise ScenarioError(f"synthetic high = {show(high)} must be a finite number > 0")
        if rows * float(high) > UNIFORM_SUM_LIMIT:
            raise ScenarioError(
                f"synthetic uniform data with rows = {rows} and high = {show(high)} can have "
                f"column sums up to {rows * float(high):.6g}, beyond the limit 2^28 "
                "that keeps SecureSum well inside a 61-bit field with 24 fractional bits; "
                "lower rows or high"
            )
        return Dataset(rng.random((rows, cols)) * float(high), "matrix", source)
    k = params.get("k", 5)
    if kind in ("spiked", "mog", "stm"):
        return _latent_dataset(rows, cols, rng, kind, k, params)
    if kind == "topics":
        corpus = synthetic_topic_corpus(
            rows,
            cols,
            k,
            doc_length=params.get("doc_length", DEFAULT_DOC_LENGTH),
            alpha=params.get("alpha", DEFAULT_ALPHA),
            beta=params.get("beta", DEFAULT_BETA),
            rng=rng,
        )
        truth = {"topics": corpus.topics, "weights": corpus.weights}
        return Dataset(corpus.tf, "topics", source, truth=truth)
    if kind == "mnist":
        images = synthetic_mnist(rows, cols, params.get("k", 10),
                                 density=params.get("density", MNIST_DENSITY),
                                 noise=params.get("noise", 0.1), rng=rng)
        return Dataset(images.X, "matrix", source,
                       truth={"prototypes": images.prototypes, "weights": images.weights})
    if kind == "movielens":
        like = synthetic_movielens(rows, cols, params.get("k", 20),
                                   density=params.get("density", 0.05),
                                   noise=params.get("noise", 0.9), rng=rng)
        return Dataset(like.ratings, "ratings", source, truth={"ratings": like.truth})
    data = synthetic_ratings(
        rows,
        cols,
        k,
        density=params.get("density", 0.1),
        noise=params.get("noise", 0.5),
        rng=rng,
    )
    truth = {
        "ratings": data.truth,
        "user_factors": data.user_factors,
        "item_factors": data.item_factors,
    }
    return Dataset(data.ratings, "ratings", source, truth=truth)


def _latent_dataset(rows: int, cols: int, rng: np.random.Generator, kind: str, k: Any,
                    params: dict[str, Any]) -> Dataset:
    """Seed 003's synthetic data (:mod:`algorithms.data.latent`) as a :class:`Dataset`."""
    source = f"synthetic:{kind}"
    if kind == "spiked":
        data = synthetic_spiked(rows, cols, k, rng)
        return Dataset(data.X, "matrix", source, truth={"covariance": data.covariance})
    if kind == "mog":
        data = synthetic_mog(rows, cols, k, rng, variance=params.get("noise", 0.05))
        truth = {"means": data.means, "weights": data.weights, "sigma2": np.array(data.sigma2)}
        return Dataset(data.X, "matrix", source, truth=truth)
    data = synthetic_stm(rows, cols, k, rng, doc_length=params.get("doc_length", 3))
    return Dataset(data.X, "topics", source, truth={"means": data.means, "weights": data.weights})


def synthetic_matrix(
    rows: int,
    cols: int,
    rng: np.random.Generator,
    kind: str = "uniform",
    **params: Any,
) -> Matrix:
    """The matrix of :func:`synthetic_dataset` (same arguments), shape (rows, cols).

    ``"uniform"``: non-negative values in [0, high); ``"topics"``: rows on the simplex;
    ``"ratings"``: values in {1, ..., 5} and NaN where unobserved.
    """
    return synthetic_dataset(rows, cols, rng, kind, **params).X
