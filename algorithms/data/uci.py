"""The UCI "Bag of Words" format, in which Enron, NIPS, KOS, NYTimes and PubMed are distributed.

A corpus is a ``docword.NAME.txt`` file — three header lines D (documents), W (words), NNZ
(entries), then NNZ lines ``docID wordID count`` with 1-based ids — and optionally a
``vocab.NAME.txt`` file with one word a line. The thesis (Tsikhanovich, seed 001) uses such
corpora as term-frequency rows on the simplex Δ_d (digest §1.1): :func:`tf_rows`.

Choices the thesis leaves open: a duplicated (docID, wordID) pair is an error, not summed; the
vocabulary is read only when its path is given (:func:`uci_vocab_path` gives the conventional
sibling).
"""

from __future__ import annotations

import io
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from algorithms.data.checks import Matrix, show
from algorithms.data.text_files import (
    first_duplicate,
    first_failure,
    fmt,
    nonblank,
    parse_numeric_lines,
    read_lines,
)
from protocols.errors import DataError

__all__ = ["BagOfWords", "read_uci_bow", "tf_rows", "uci_vocab_path", "write_uci_bow"]

logger = logging.getLogger(__name__)


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


def tf_rows(counts: Matrix) -> Matrix:
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
            f"document (row) {first_failure(empty)} has no words, so its TF row is undefined; "
            f"drop the {int(empty.sum())} empty document(s) first"
        )
    if csr is not None:
        scaled = sp.csr_array(sp.diags_array(1.0 / lengths) @ csr)
        return scaled
    return dense / lengths[:, None]


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
    lines = read_lines(path)
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
    lines = read_lines(path)
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
    body, numbers = nonblank(lines[3:], first_line=4)
    if len(body) != nnz:
        raise DataError(
            f"{path}: header line 3 says NNZ = {nnz} but the file holds {len(body)} entry "
            "line(s); fix the header or the entries"
        )
    if nnz == 0:
        counts = sp.csr_array((n_docs, n_words), dtype=np.int64)
    else:
        layout = "docID wordID count"
        table = parse_numeric_lines(
            body, numbers, delimiter=None, n_fields=3, path=path, layout=layout
        )
        for col, (label, bound) in enumerate((("docID", n_docs), ("wordID", n_words))):
            ids = table[:, col]
            bad = ~((ids >= 1) & (ids <= bound) & (ids == np.floor(ids)))
            if np.any(bad):
                i = first_failure(bad)
                head = "D" if col == 0 else "W"
                raise DataError(
                    f"{path}: line {numbers[i]}: {label} {fmt(ids[i])} is outside "
                    f"1..{head} = 1..{bound}"
                )
        values = table[:, 2]
        bad = ~((values >= 1) & (values == np.floor(values)))
        if np.any(bad):
            i = first_failure(bad)
            raise DataError(
                f"{path}: line {numbers[i]}: count {fmt(values[i])} must be a positive integer"
            )
        rows = table[:, 0].astype(np.int64) - 1
        cols = table[:, 1].astype(np.int64) - 1
        dup = first_duplicate(rows * n_words + cols)
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
    counts: Matrix,
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
        i = first_failure(bad)
        raise DataError(
            f"counts[{coo.row[i]}, {coo.col[i]}] = {show(values[i])}; counts must be non-negative "
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
