"""Synthetic generators, real-world file formats and held-out splits for the experiments.

The thesis (Tsikhanovich, seed 001) evaluates NMF as a topic model on bag-of-words corpora
(§1.5: NIPS, 20 Newsgroups, Reuters; Ch. 2–3: 20NG and Enron) and as a recommender system on
MovieLens-1M and Yelp (§2.4, §3.3.1). This module provides what those experiments need without
shipping any data:

* :func:`synthetic_topic_corpus` — an LDA-style corpus with planted topics. Documents are word
  counts and, as the thesis uses them (digest §1.1), term-frequency rows on the simplex Δ_d, so
  that ``X ≈ W @ T`` with the rows of ``W`` on Δ_k and the rows of ``T`` on Δ_d.
* :func:`synthetic_ratings` — a users × items matrix of 1..5 ratings from a non-negative low-rank
  model plus noise, NaN where unobserved (the ML-1M stand-in; digest §7.1 item 32).
* :func:`read_uci_bow` / :func:`write_uci_bow` — the UCI "Bag of Words" format (``docword.*.txt``
  and ``vocab.*.txt``) in which Enron, NIPS, KOS, NYTimes and PubMed are distributed.
* :func:`read_movielens` / :func:`write_movielens` — MovieLens ``ratings.dat``
  (``UserID::MovieID::Rating::Timestamp``, the ML-1M layout).
* :func:`holdout_rows` / :func:`holdout_entries` — the held-out splits of the learning-uplift
  experiment (thesis §3.3.1): held-out local documents for topic models, a held-out part of each
  local user's ratings for recommenders.

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
* MovieLens: rows are the users and columns the movies *that occur in the file*, in increasing
  id order; timestamps are validated and dropped by the reader. Ratings may be any real in
  [1, 5] (ML-1M uses whole stars). Ids must be positive integers.
* UCI bag of words: a duplicated (docID, wordID) pair is an error, not summed. The vocabulary is
  read only when its path is given (:func:`uci_vocab_path` gives the conventional sibling).
* Held-out splits: ``round(fraction · n)`` documents, at least one and at most n − 1; per user,
  ``round(fraction · n_u)`` of the n_u observed ratings, always leaving at least one rating in
  training (users with a single rating keep it). Rounding is half-up.
"""

from __future__ import annotations

import io
import logging
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from protocols.errors import DataError, ScenarioError

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "DEFAULT_DOC_LENGTH",
    "DEFAULT_USER_CONCENTRATION",
    "BagOfWords",
    "EntryHoldout",
    "MovieLensRatings",
    "RowHoldout",
    "SyntheticCorpus",
    "SyntheticLatent",
    "SyntheticRatings",
    "holdout_entries",
    "holdout_rows",
    "load_digits",
    "read_movielens",
    "read_uci_bow",
    "synthetic_mog",
    "synthetic_ratings",
    "synthetic_spiked",
    "synthetic_stm",
    "synthetic_topic_corpus",
    "tf_rows",
    "uci_vocab_path",
    "write_movielens",
    "write_uci_bow",
]

logger = logging.getLogger(__name__)

DEFAULT_DOC_LENGTH = 200
"""Mean number of words per synthetic document."""
DEFAULT_ALPHA = 0.1
"""Symmetric Dirichlet concentration of the synthetic document-topic mixtures."""
DEFAULT_BETA = 0.05
"""Symmetric Dirichlet concentration of the synthetic topic-word distributions."""
DEFAULT_USER_CONCENTRATION = 0.5
"""Symmetric Dirichlet concentration of the synthetic users' tastes over the k archetypes."""

RATING_MIN = 1.0
RATING_MAX = 5.0

SparseOrDense = np.ndarray | sp.csr_array


# --------------------------------------------------------------------------------------------
# records


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


@dataclass(frozen=True)
class BagOfWords:
    """A UCI bag-of-words corpus.

    Attributes
    ----------
    counts : scipy.sparse.csr_array of int64, shape (D, W)
        Word counts; row ``i`` is docID ``i + 1`` and column ``j`` is wordID ``j + 1``.
    vocabulary : tuple of str of length W, or None
        The words, when a vocabulary file was read.
    """

    counts: sp.csr_array
    vocabulary: tuple[str, ...] | None = None


@dataclass(frozen=True)
class MovieLensRatings:
    """A MovieLens ratings file as a dense matrix.

    Attributes
    ----------
    ratings : ndarray of float64, shape (n_users, n_movies)
        Ratings in [1, 5]; NaN where the user did not rate the movie.
    user_ids : ndarray of int64, shape (n_users,)
        The file's UserID of each row, increasing.
    movie_ids : ndarray of int64, shape (n_movies,)
        The file's MovieID of each column, increasing.
    """

    ratings: np.ndarray
    user_ids: np.ndarray
    movie_ids: np.ndarray


@dataclass(frozen=True)
class RowHoldout:
    """Held-out rows (documents).

    Attributes
    ----------
    train, test : ndarray or csr_array, shapes (n - n_test, d) and (n_test, d)
        The kept and the held-out rows, in their original order.
    train_rows, test_rows : ndarray of int64
        The row indices of ``train`` and ``test`` in the input (increasing, disjoint, covering).
    """

    train: SparseOrDense
    test: SparseOrDense
    train_rows: np.ndarray
    test_rows: np.ndarray


@dataclass(frozen=True)
class EntryHoldout:
    """Held-out observed entries of a ratings matrix.

    Attributes
    ----------
    train : ndarray of float64, shape (n_users, n_items)
        The input with the held-out entries replaced by NaN.
    test : ndarray of float64, shape (n_users, n_items)
        NaN everywhere except the held-out entries, which keep their ratings.
    test_mask : ndarray of bool, shape (n_users, n_items)
        True exactly at the held-out entries.
    """

    train: np.ndarray
    test: np.ndarray
    test_mask: np.ndarray


# --------------------------------------------------------------------------------------------
# argument validation (scenario values)


def _show(value: object) -> str:
    """repr of a value, with numpy scalars shown as the Python numbers they hold."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def _int_arg(value: object, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise ScenarioError(f"{name} = {_show(value)} must be a whole number ≥ {minimum}")
    if int(value) < minimum:
        raise ScenarioError(f"{name} = {_show(value)} must be ≥ {minimum}")
    return int(value)


def _real_arg(
    value: object,
    name: str,
    *,
    low: float,
    high: float = math.inf,
    low_open: bool = False,
    high_open: bool = False,
) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ScenarioError(f"{name} = {_show(value)} must be a finite number")
    x = float(value)
    too_low = x <= low if low_open else x < low
    too_high = x >= high if high_open else x > high
    if too_low or too_high:
        left = "(" if low_open else "["
        right = ")" if high_open or math.isinf(high) else "]"
        raise ScenarioError(f"{name} = {_show(value)} must lie in {left}{low:g}, {high:g}{right}")
    return x


def _check_rng(rng: object) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# --------------------------------------------------------------------------------------------
# text files: shared by the readers here and by algorithms.data's CSV reader


def _require_file(path: Path) -> None:
    """Raise :class:`DataError` unless ``path`` names an existing regular file."""
    if not path.exists():
        raise DataError(f"{path}: no such file; check the path")
    if not path.is_file():
        raise DataError(f"{path}: is a directory or special file, not a data file")


def _read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file, without line terminators."""
    _require_file(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"{path}: is not UTF-8 text (undecodable byte at offset {exc.start}); "
            "save it as plain UTF-8 text"
        ) from None
    except OSError as exc:
        raise DataError(
            f"{path}: cannot be read ({exc.strerror or exc}); check the file's permissions"
        ) from None
    return text.splitlines()


def _nonblank(lines: Sequence[str], first_line: int = 1) -> tuple[list[str], np.ndarray]:
    """Drop blank lines; return the kept lines and their 1-based line numbers in the file."""
    numbers = [i for i, line in enumerate(lines) if line.strip()]
    kept = [lines[i] for i in numbers]
    return kept, np.asarray(numbers, dtype=np.int64) + first_line


def _split_fields(line: str, delimiter: str | None) -> list[str]:
    return [f.strip() for f in (line.split(delimiter) if delimiter else line.split())]


def _parse_numeric_lines(
    lines: list[str],
    line_numbers: np.ndarray,
    *,
    delimiter: str | None,
    n_fields: int | None,
    path: Path,
    layout: str,
) -> np.ndarray:
    """Parse lines of ``n_fields`` numbers each into a float64 table.

    The fast path is numpy's C parser; if it fails (or disagrees with ``n_fields``) the lines are
    scanned in Python to report the first bad line by its number in the file.

    Parameters
    ----------
    lines : list of str, length n
        Non-blank lines.
    line_numbers : ndarray of int64, shape (n,)
        Their 1-based line numbers in the file, for messages.
    delimiter : str or None
        Field separator (any string); None means runs of whitespace.
    n_fields : int or None
        Expected fields per line; None takes the first line's count.
    path : Path
        The file, for messages.
    layout : str
        The expected line layout, for messages (e.g. ``"docID wordID count"``).

    Returns
    -------
    ndarray of float64, shape (n, n_fields)
    """
    if n_fields is None:
        n_fields = len(_split_fields(lines[0], delimiter))
    body = "\n".join(lines)
    fast_delim = delimiter
    if delimiter is not None and len(delimiter) > 1:
        body = body.replace(delimiter, "\t")
        fast_delim = "\t"
    table: np.ndarray | None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = np.loadtxt(
                io.StringIO(body),
                delimiter=fast_delim,
                dtype=np.float64,
                ndmin=2,
                comments=None,
                quotechar=None,
            )
    except ValueError:
        table = None
    if table is not None and table.shape == (len(lines), n_fields):
        return table
    for line, number in zip(lines, line_numbers.tolist(), strict=True):
        fields = _split_fields(line, delimiter)
        if len(fields) != n_fields:
            raise DataError(
                f"{path}: line {number} has {len(fields)} fields, expected {n_fields} "
                f"({layout}); fix or remove that line"
            )
        for j, field in enumerate(fields, start=1):
            try:
                float(field)
            except ValueError:
                shown = "an empty field" if field == "" else f"{field!r}"
                raise DataError(
                    f"{path}: line {number}, field {j} is {shown}, not a number ({layout})"
                ) from None
    raise DataError(f"{path}: cannot be parsed as lines of {n_fields} numbers ({layout})")


def _first_failure(bad: np.ndarray) -> int:
    """Index of the first True entry of a boolean vector."""
    return int(np.flatnonzero(bad)[0])


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _first_duplicate(keys: np.ndarray) -> tuple[int, int] | None:
    """(earlier, later) positions of the first repeated key in input order, or None."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if dup.size == 0:
        return None
    later = order[dup + 1]
    pick = int(np.argmin(later))
    return int(order[dup[pick]]), int(later[pick])


# --------------------------------------------------------------------------------------------
# synthetic generators


def tf_rows(counts: SparseOrDense) -> SparseOrDense:
    """Term-frequency rows: each document's counts divided by its length.

    Parameters
    ----------
    counts : ndarray or scipy.sparse matrix, shape (n_docs, n_words)
        Non-negative word counts.

    Returns
    -------
    ndarray or csr_array of float64, shape (n_docs, n_words)
        Rows on the simplex Δ_d (dense in, dense out; sparse in, CSR out).

    Raises
    ------
    DataError
        If a document has no words (its TF row is undefined), naming the first such row.
    """
    if sp.issparse(counts):
        csr = sp.csr_array(counts, dtype=np.float64)
        lengths = np.asarray(csr.sum(axis=1)).ravel()
    else:
        csr = None
        dense = np.asarray(counts, dtype=np.float64)
        lengths = dense.sum(axis=1)
    empty = ~(lengths > 0)
    if np.any(empty):
        raise DataError(
            f"document (row) {_first_failure(empty)} has no words, so its TF row is undefined; "
            f"drop the {int(empty.sum())} empty document(s) first"
        )
    if csr is not None:
        scaled = sp.csr_array(sp.diags_array(1.0 / lengths) @ csr)
        return scaled
    return dense / lengths[:, None]


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
    rng = _check_rng(rng)
    n = _int_arg(n_docs, "n_docs")
    d = _int_arg(n_words, "n_words", minimum=2)
    k = _int_arg(k, "k")
    length = _int_arg(doc_length, "doc_length")
    a = _real_arg(alpha, "alpha", low=0.0, low_open=True)
    b = _real_arg(beta, "beta", low=0.0, low_open=True)

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
    rng = _check_rng(rng)
    n = _int_arg(n_users, "n_users")
    m = _int_arg(n_items, "n_items")
    k = _int_arg(k, "k")
    rho = _real_arg(density, "density", low=0.0, high=1.0, low_open=True)
    sd = _real_arg(noise, "noise", low=0.0)
    cells = n * m
    cover = max(n, m)
    if rho * cells < cover:
        raise ScenarioError(
            f"density = {_show(density)} is too low for {n} users × {m} items: every user and item "
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


# --------------------------------------------------------------------------------------------
# UCI bag of words


def uci_vocab_path(docword_path: str | Path) -> Path:
    """The conventional vocabulary file of a UCI corpus: ``docword.NAME.txt`` → ``vocab.NAME.txt``.

    Raises
    ------
    DataError
        If the file name does not follow the ``docword.NAME.txt`` convention.
    """
    path = Path(docword_path)
    name = path.name
    if not (name.startswith("docword.") and name.endswith(".txt") and len(name) > 12):
        raise DataError(
            f"{path}: is not named docword.NAME.txt, so its vocabulary file cannot be inferred; "
            "give vocab_path explicitly"
        )
    return path.with_name("vocab." + name[len("docword.") :])


def _read_vocab(path: Path, n_words: int) -> tuple[str, ...]:
    lines = _read_lines(path)
    while lines and not lines[-1].strip():
        lines.pop()
    words = [line.strip() for line in lines]
    for number, word in enumerate(words, start=1):
        if not word:
            raise DataError(f"{path}: line {number} is empty; a vocabulary holds one word a line")
    if len(words) != n_words:
        raise DataError(
            f"{path}: holds {len(words)} words but the docword header says W = {n_words}; "
            "use the vocabulary that belongs to this corpus"
        )
    return tuple(words)


def read_uci_bow(path: str | Path, vocab_path: str | Path | None = None) -> BagOfWords:
    """Read a UCI bag-of-words corpus (``docword.*.txt``, optionally ``vocab.*.txt``).

    The docword file holds three header lines — D (documents), W (words), NNZ (entries) — and
    then NNZ lines ``docID wordID count`` with 1-based ids.

    Parameters
    ----------
    path : str or Path
        The docword file.
    vocab_path : str or Path, optional
        The vocabulary file (one word a line, W lines); not read when omitted.

    Returns
    -------
    BagOfWords
        ``counts`` as a (D, W) CSR array of int64, and the vocabulary or None.

    Raises
    ------
    DataError
        Missing or unreadable file, malformed header, a header count that disagrees with the
        body, an id out of range, a count that is not a positive integer or a duplicated
        (docID, wordID) pair — each naming the line.
    """
    path = Path(path)
    lines = _read_lines(path)
    header: list[int] = []
    names = ("D (number of documents)", "W (number of words)", "NNZ (number of entries)")
    for i, name in enumerate(names):
        if i >= len(lines):
            raise DataError(
                f"{path}: ends after {len(lines)} line(s); a docword file starts with three "
                "header lines D, W, NNZ"
            )
        text = lines[i].strip()
        if not (text.isascii() and text.isdigit()):
            raise DataError(
                f"{path}: line {i + 1} should hold the header {name} as a non-negative "
                f"integer, found {text!r}"
            )
        header.append(int(text))
    n_docs, n_words, nnz = header
    if n_docs < 1 or n_words < 1:
        raise DataError(f"{path}: header says D = {n_docs}, W = {n_words}; both must be ≥ 1")
    body, numbers = _nonblank(lines[3:], first_line=4)
    if len(body) != nnz:
        raise DataError(
            f"{path}: header line 3 says NNZ = {nnz} but the file holds {len(body)} entry "
            "line(s); fix the header or the entries"
        )
    if nnz == 0:
        counts = sp.csr_array((n_docs, n_words), dtype=np.int64)
    else:
        layout = "docID wordID count"
        table = _parse_numeric_lines(
            body, numbers, delimiter=None, n_fields=3, path=path, layout=layout
        )
        for col, (label, bound) in enumerate((("docID", n_docs), ("wordID", n_words))):
            ids = table[:, col]
            bad = ~((ids >= 1) & (ids <= bound) & (ids == np.floor(ids)))
            if np.any(bad):
                i = _first_failure(bad)
                head = "D" if col == 0 else "W"
                raise DataError(
                    f"{path}: line {numbers[i]}: {label} {_fmt(ids[i])} is outside "
                    f"1..{head} = 1..{bound}"
                )
        values = table[:, 2]
        bad = ~((values >= 1) & (values == np.floor(values)))
        if np.any(bad):
            i = _first_failure(bad)
            raise DataError(
                f"{path}: line {numbers[i]}: count {_fmt(values[i])} must be a positive integer"
            )
        rows = table[:, 0].astype(np.int64) - 1
        cols = table[:, 1].astype(np.int64) - 1
        dup = _first_duplicate(rows * n_words + cols)
        if dup is not None:
            first, later = dup
            raise DataError(
                f"{path}: line {numbers[later]} repeats (docID {rows[later] + 1}, wordID "
                f"{cols[later] + 1}) first given on line {numbers[first]}; merge the two lines"
            )
        counts = sp.csr_array(
            (values.astype(np.int64), (rows, cols)), shape=(n_docs, n_words), dtype=np.int64
        )
        counts.sort_indices()
    vocabulary = None if vocab_path is None else _read_vocab(Path(vocab_path), n_words)
    logger.debug("read %s: %d docs, %d words, %d entries", path, n_docs, n_words, nnz)
    return BagOfWords(counts=counts, vocabulary=vocabulary)


def write_uci_bow(
    path: str | Path,
    counts: SparseOrDense,
    vocab: Sequence[str] | None = None,
    *,
    vocab_path: str | Path | None = None,
) -> tuple[Path, Path | None]:
    """Write a corpus in the UCI bag-of-words format.

    Parameters
    ----------
    path : str or Path
        The docword file to write.
    counts : ndarray or scipy.sparse matrix, shape (D, W)
        Non-negative integer counts (integral floats are accepted); zeros are not written.
    vocab : sequence of str of length W, optional
        Words to write one a line; each must be non-empty, without line breaks or surrounding
        whitespace.
    vocab_path : str or Path, optional
        Where to write ``vocab``; by default :func:`uci_vocab_path` of ``path``.

    Returns
    -------
    (Path, Path or None)
        The docword file and the vocabulary file (None without ``vocab``).

    Raises
    ------
    DataError
        If ``counts`` is not a non-empty 2-D array of non-negative integers, or ``vocab`` does
        not fit it.
    """
    path = Path(path)
    coo = sp.coo_array(counts) if sp.issparse(counts) else sp.coo_array(np.asarray(counts))
    if coo.ndim != 2 or 0 in coo.shape:
        raise DataError(f"counts has shape {coo.shape}; a corpus needs D ≥ 1 documents, W ≥ 1")
    coo.sum_duplicates()
    values = np.asarray(coo.data, dtype=np.float64)
    bad = ~((values >= 0) & (values == np.floor(values)))
    if np.any(bad):
        i = _first_failure(bad)
        raise DataError(
            f"counts[{coo.row[i]}, {coo.col[i]}] = {_show(values[i])}; counts must be non-negative "
            "integers"
        )
    keep = values > 0
    rows, cols, vals = coo.row[keep], coo.col[keep], values[keep].astype(np.int64)
    order = np.lexsort((cols, rows))
    table = np.column_stack((rows[order] + 1, cols[order] + 1, vals[order]))
    n_docs, n_words = coo.shape
    written_vocab: Path | None = None
    if vocab is not None:
        words = [str(w) for w in vocab]
        if len(words) != n_words:
            raise DataError(f"vocab has {len(words)} words but counts has W = {n_words} columns")
        for j, word in enumerate(words):
            if not word or word != word.strip() or len(word.splitlines()) != 1:
                raise DataError(
                    f"vocab[{j}] = {word!r} cannot be written one word a line; words must be "
                    "non-empty, without line breaks or surrounding whitespace"
                )
        written_vocab = Path(vocab_path) if vocab_path is not None else uci_vocab_path(path)
    buffer = io.StringIO()
    buffer.write(f"{n_docs}\n{n_words}\n{table.shape[0]}\n")
    if table.shape[0]:
        np.savetxt(buffer, table, fmt="%d", delimiter=" ")
    path.write_text(buffer.getvalue(), encoding="utf-8")
    if written_vocab is not None:
        written_vocab.write_text("".join(w + "\n" for w in words), encoding="utf-8")
    return path, written_vocab


# --------------------------------------------------------------------------------------------
# MovieLens ratings.dat


def read_movielens(path: str | Path) -> MovieLensRatings:
    """Read a MovieLens ``ratings.dat`` file (``UserID::MovieID::Rating::Timestamp``).

    Parameters
    ----------
    path : str or Path
        The ratings file (ML-1M layout; blank lines are ignored).

    Returns
    -------
    MovieLensRatings
        A dense (n_users, n_movies) float64 matrix with NaN for unrated cells, and the user
        and movie ids of its rows and columns (the ids occurring in the file, increasing).

    Raises
    ------
    DataError
        Missing or unreadable file, no ratings, a malformed line, a non-integer or
        non-positive id or timestamp, a rating outside [1, 5], or a user rating the same movie
        twice — each naming the line.
    """
    path = Path(path)
    lines, numbers = _nonblank(_read_lines(path))
    if not lines:
        raise DataError(f"{path}: holds no ratings; expected UserID::MovieID::Rating::Timestamp")
    layout = "UserID::MovieID::Rating::Timestamp"
    table = _parse_numeric_lines(
        lines, numbers, delimiter="::", n_fields=4, path=path, layout=layout
    )
    for col, label in ((0, "UserID"), (1, "MovieID")):
        ids = table[:, col]
        bad = ~((ids >= 1) & (ids == np.floor(ids)))
        if np.any(bad):
            i = _first_failure(bad)
            raise DataError(
                f"{path}: line {numbers[i]}: {label} {_fmt(ids[i])} is not a positive integer"
            )
    stamps = table[:, 3]
    bad = ~((stamps >= 0) & (stamps == np.floor(stamps)))
    if np.any(bad):
        i = _first_failure(bad)
        raise DataError(
            f"{path}: line {numbers[i]}: Timestamp {_fmt(stamps[i])} is not a non-negative integer"
        )
    values = table[:, 2]
    bad = ~((values >= RATING_MIN) & (values <= RATING_MAX))
    if np.any(bad):
        i = _first_failure(bad)
        raise DataError(f"{path}: line {numbers[i]}: rating {_fmt(values[i])} is outside 1..5")
    user_ids, rows = np.unique(table[:, 0].astype(np.int64), return_inverse=True)
    movie_ids, cols = np.unique(table[:, 1].astype(np.int64), return_inverse=True)
    dup = _first_duplicate(rows.astype(np.int64) * movie_ids.size + cols)
    if dup is not None:
        first, later = dup
        raise DataError(
            f"{path}: line {numbers[later]}: user {user_ids[rows[later]]} rates movie "
            f"{movie_ids[cols[later]]} again (first on line {numbers[first]}); keep one rating"
        )
    ratings = np.full((user_ids.size, movie_ids.size), np.nan)
    ratings[rows, cols] = values
    logger.debug("read %s: %d ratings", path, len(lines))
    return MovieLensRatings(ratings=ratings, user_ids=user_ids, movie_ids=movie_ids)


def _ids_arg(ids: object, size: int, name: str) -> np.ndarray:
    if ids is None:
        return np.arange(1, size + 1, dtype=np.int64)
    arr = np.asarray(ids)
    if arr.shape != (size,) or arr.dtype.kind not in "iu":
        raise DataError(
            f"{name} must be {size} integers (one per row/column), got dtype {arr.dtype} "
            f"and shape {arr.shape}"
        )
    if np.any(arr < 1) or np.unique(arr).size != size:
        raise DataError(f"{name} must be distinct positive integers")
    return arr.astype(np.int64)


def write_movielens(
    path: str | Path,
    ratings: np.ndarray,
    user_ids: Sequence[int] | np.ndarray | None = None,
    movie_ids: Sequence[int] | np.ndarray | None = None,
    timestamps: np.ndarray | None = None,
) -> Path:
    """Write observed ratings as a MovieLens ``ratings.dat`` file.

    Parameters
    ----------
    path : str or Path
        The file to write.
    ratings : ndarray of float, shape (n_users, n_movies)
        Ratings in [1, 5]; NaN cells are not written. Whole numbers are written without a
        decimal point.
    user_ids : sequence of int of length n_users, optional
        Distinct positive UserIDs of the rows; default 1..n_users.
    movie_ids : sequence of int of length n_movies, optional
        Distinct positive MovieIDs of the columns; default 1..n_movies.
    timestamps : ndarray of int, shape (n_users, n_movies), optional
        Non-negative timestamps of the cells; default 0.

    Returns
    -------
    Path
        The file written; lines are ordered by row, then column.

    Raises
    ------
    DataError
        If the ratings are not a 2-D matrix with values in [1, 5] (or NaN), or the ids or
        timestamps do not fit it.
    """
    path = Path(path)
    arr = np.asarray(ratings, dtype=np.float64)
    if arr.ndim != 2:
        raise DataError(f"ratings must be a 2-D users × movies matrix, got shape {arr.shape}")
    users = _ids_arg(user_ids, arr.shape[0], "user_ids")
    movies = _ids_arg(movie_ids, arr.shape[1], "movie_ids")
    rows, cols = np.nonzero(~np.isnan(arr))
    values = arr[rows, cols]
    bad = ~((values >= RATING_MIN) & (values <= RATING_MAX))
    if np.any(bad):
        i = _first_failure(bad)
        raise DataError(f"ratings[{rows[i]}, {cols[i]}] = {_show(values[i])} is outside 1..5")
    if timestamps is None:
        stamps = np.zeros(rows.size, dtype=np.int64)
    else:
        ts = np.asarray(timestamps)
        if ts.shape != arr.shape or ts.dtype.kind not in "iu" or np.any(ts < 0):
            raise DataError(
                f"timestamps must be non-negative integers of shape {arr.shape}, "
                f"got dtype {ts.dtype} and shape {ts.shape}"
            )
        stamps = ts[rows, cols].astype(np.int64)
    whole = values == np.floor(values)
    shown = np.where(whole, values.astype(np.int64).astype(str), values.astype(str))
    text = "".join(
        f"{u}::{m}::{r}::{t}\n"
        for u, m, r, t in zip(
            users[rows].tolist(),
            movies[cols].tolist(),
            shown.tolist(),
            stamps.tolist(),
            strict=True,
        )
    )
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------
# held-out splits (thesis §3.3.1)


def _fraction(value: object) -> float:
    return _real_arg(value, "fraction", low=0.0, high=1.0, low_open=True, high_open=True)


def holdout_rows(X: SparseOrDense, fraction: float, rng: np.random.Generator) -> RowHoldout:
    """Hold out a random ``fraction`` of the rows (documents) as a test set.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The rows to split; n ≥ 2.
    fraction : float
        Fraction of rows to hold out, in (0, 1); ``round(fraction · n)`` rows, clipped to
        [1, n − 1].
    rng : numpy.random.Generator
        Chooses the rows.

    Returns
    -------
    RowHoldout
        ``train`` (n − n_test, d), ``test`` (n_test, d) and their row indices, in input order.

    Raises
    ------
    ScenarioError
        If ``fraction`` is outside (0, 1) or X has fewer than 2 rows.
    """
    rng = _check_rng(rng)
    frac = _fraction(fraction)
    n = X.shape[0]
    if n < 2:
        raise ScenarioError(f"holding out rows needs at least 2 rows, the data has {n}")
    n_test = min(max(math.floor(frac * n + 0.5), 1), n - 1)
    chosen = np.zeros(n, dtype=bool)
    chosen[rng.permutation(n)[:n_test]] = True
    test_rows = np.flatnonzero(chosen)
    train_rows = np.flatnonzero(~chosen)
    if sp.issparse(X):
        csr = sp.csr_array(X)
        return RowHoldout(csr[train_rows], csr[test_rows], train_rows, test_rows)
    dense = np.asarray(X)
    return RowHoldout(dense[train_rows], dense[test_rows], train_rows, test_rows)


def holdout_entries(R: np.ndarray, fraction: float, rng: np.random.Generator) -> EntryHoldout:
    """Hold out a random ``fraction`` of each user's observed ratings.

    Parameters
    ----------
    R : ndarray of float, shape (n_users, n_items)
        Ratings with NaN for unobserved cells.
    fraction : float
        Fraction of each user's n_u observed ratings to hold out, in (0, 1):
        ``min(round(fraction · n_u), n_u − 1)`` of them, so every user keeps at least one
        training rating.
    rng : numpy.random.Generator
        Chooses the entries.

    Returns
    -------
    EntryHoldout
        NaN-masked ``train`` and ``test`` matrices of shape (n_users, n_items) and the
        boolean ``test_mask``.

    Raises
    ------
    ScenarioError
        If ``fraction`` is outside (0, 1).
    DataError
        If ``R`` is not a 2-D matrix.
    """
    rng = _check_rng(rng)
    frac = _fraction(fraction)
    arr = np.asarray(R, dtype=np.float64)
    if arr.ndim != 2:
        raise DataError(f"ratings must be a 2-D users × items matrix, got shape {arr.shape}")
    rows, cols = np.nonzero(~np.isnan(arr))
    keys = rng.random(rows.size)
    order = np.lexsort((keys, rows))  # by user, then by random key
    per_user = np.bincount(rows, minlength=arr.shape[0])
    starts = np.concatenate(([0], np.cumsum(per_user)[:-1]))
    rank = np.arange(rows.size) - starts[rows[order]]
    n_test = np.minimum(np.floor(frac * per_user + 0.5).astype(np.int64), per_user - 1)
    held = rank < n_test[rows[order]]
    test_mask = np.zeros(arr.shape, dtype=bool)
    test_mask[rows[order][held], cols[order][held]] = True
    train = np.where(test_mask, np.nan, arr)
    test = np.where(test_mask, arr, np.nan)
    return EntryHoldout(train=train, test=test, test_mask=test_mask)


# --------------------------------------------------------------------------------------------
# the data of seed 003's experiments (Imtiaz & Sarwate: capePCA and capeAGN; spec cape.md §7)


@dataclass(frozen=True)
class SyntheticLatent:
    """Samples of a latent-variable model with its planted parameters.

    Attributes
    ----------
    X : ndarray, shape (n, D)
        The samples (rows): unit-ball vectors (``spiked``, ``mog``) or word counts (``stm``).
    covariance : ndarray, shape (D, D), optional
        The covariance of the scaled samples (``spiked``).
    means : ndarray, shape (k, D), optional
        The components μ_k as rows: unit vectors (``mog``) or word distributions (``stm``).
    weights : ndarray, shape (k,), optional
        The mixing weights w_k.
    sigma2 : float
        The spherical noise variance of the scaled samples (``mog``).
    """

    X: np.ndarray
    covariance: np.ndarray | None = None
    means: np.ndarray | None = None
    weights: np.ndarray | None = None
    sigma2: float = 0.0


def _mixing_weights(k: int) -> np.ndarray:
    """Weights evenly spaced from 1 to 10k, normalised (seed 003 §6.2)."""
    w = np.linspace(1.0, 10.0 * k, k)
    return w / w.sum()


def synthetic_spiked(n: int, dim: int, rank: int, rng: np.random.Generator) -> SyntheticLatent:
    """Seed 003's synthetic PCA data: x ~ N(0, A), A = diag(linspace(10, 1, r), 0.5·U(0,1)^{D−r}),
    every sample divided by the largest norm so that ‖x‖₂ ≤ 1 (§6.1; spec §7.1: D = 200, r = 50).
    """
    rng = _check_rng(rng)
    n, dim, rank = _int_arg(n, "rows"), _int_arg(dim, "cols"), _int_arg(rank, "k")
    if rank > dim:
        raise ScenarioError(f"k = {rank} (the signal rank) must be ≤ cols = {dim}")
    spectrum = np.concatenate([np.linspace(10.0, 1.0, rank), 0.5 * rng.random(dim - rank)])
    X = rng.normal(size=(n, dim)) * np.sqrt(spectrum)
    scale = float(np.linalg.norm(X, axis=1).max())
    return SyntheticLatent(X / scale, covariance=np.diag(spectrum) / scale**2)


def synthetic_mog(n: int, dim: int, k: int, rng: np.random.Generator,
                  variance: float = 0.05) -> SyntheticLatent:
    """Seed 003's spherical mixture: μ_k the first k columns of a random orthogonal matrix,
    weights from 1 to 10k, x = μ_h + z with z ~ N(0, variance·I), all samples divided by the
    largest norm (one public bound for every site; the authors' code scales per site, spec §10
    Q2). ``means`` stay unit vectors; ``sigma2`` is the variance after scaling.
    """
    rng = _check_rng(rng)
    n, dim, k = _int_arg(n, "rows"), _int_arg(dim, "cols"), _int_arg(k, "k")
    var = _real_arg(variance, "noise", low=0.0, low_open=True)
    if k >= dim:
        raise ScenarioError(f"k = {k} components need k < cols = {dim} for a mixture")
    means = np.linalg.qr(rng.normal(size=(dim, dim)))[0][:, :k].T
    weights = _mixing_weights(k)
    h = rng.choice(k, size=n, p=weights)
    X = means[h] + rng.normal(0.0, math.sqrt(var), size=(n, dim))
    scale = float(np.linalg.norm(X, axis=1).max())
    return SyntheticLatent(X / scale, means=means, weights=weights, sigma2=var / scale**2)


def synthetic_stm(n: int, dim: int, k: int, rng: np.random.Generator,
                  doc_length: int = 3) -> SyntheticLatent:
    """Seed 003's single topic model: topics are the first k columns of a random orthogonal
    matrix with negatives set to 0, normalised to sum 1; weights from 1 to 10k; each document
    has ``doc_length`` words (3 in the paper) from one topic. ``X`` holds word counts.
    """
    rng = _check_rng(rng)
    n, dim, k = _int_arg(n, "rows"), _int_arg(dim, "cols"), _int_arg(k, "k")
    length = _int_arg(doc_length, "doc_length", minimum=3)
    if k > dim:
        raise ScenarioError(f"k = {k} topics need k ≤ cols = {dim}")
    basis = np.maximum(np.linalg.qr(rng.normal(size=(dim, dim)))[0][:, :k], 0.0)
    empty = basis.sum(axis=0) == 0
    basis[:, empty] = 1.0  # a column with no positive entry becomes uniform
    topics = (basis / basis.sum(axis=0)).T
    weights = _mixing_weights(k)
    h = rng.choice(k, size=n, p=weights)
    X = np.zeros((n, dim))
    for t in range(k):
        rows = np.nonzero(h == t)[0]
        X[rows] = rng.multinomial(length, topics[t], size=len(rows))
    return SyntheticLatent(X, means=topics, weights=weights)


def load_digits() -> np.ndarray:
    """scikit-learn's bundled 8×8 digits (1,797 samples, D = 64, values 0..16), as float64.

    scikit-learn is an optional dependency (extra ``datasets``); without it, a DataError says
    how to install it.
    """
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError as exc:
        raise DataError(
            "data.source = 'digits' needs scikit-learn, which is not installed; install it "
            "with `pip install 'mpcsim[datasets]'` (or use synthetic or file data)"
        ) from exc
    return np.asarray(sklearn_digits().data, dtype=np.float64)
