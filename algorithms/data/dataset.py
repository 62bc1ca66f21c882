"""Data sets: what a scenario's ``[data]`` table turns into (DESIGN.md, "Data flow").

A :class:`Dataset` is a matrix ``X`` of shape (n, d) whose **rows are samples** — documents for
topic models (thesis, seed 001, §1.2.2: rows of X lie on the simplex Δ_d), users for recommender
systems — with what is known about it: its kind, its source, row and column ids, a vocabulary,
and the planted truth of synthetic data. :func:`load_dataset` reads any supported file: the
matrix files of :mod:`algorithms.data.matrix_files`, UCI bag-of-words corpora
(:mod:`algorithms.data.uci`) and MovieLens ratings (:mod:`algorithms.data.movielens`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Literal

import numpy as np
import scipy.sparse as sp

from algorithms.data.checks import Matrix
from algorithms.data.matrix_files import as_path, load_csv, load_matrix
from algorithms.data.movielens import read_movielens
from algorithms.data.text_files import require_file
from algorithms.data.uci import read_uci_bow, tf_rows
from protocols.errors import DataError

__all__ = ["Dataset", "DatasetKind", "load_dataset"]


DatasetKind = Literal["matrix", "topics", "ratings"]


@dataclass(frozen=True)
class Dataset:
    """A loaded or generated data matrix with what is known about it.

    Attributes
    ----------
    X : ndarray or csr_array of float64, shape (n_samples, n_features)
        The data; rows are samples (documents or users).
    kind : {"matrix", "topics", "ratings"}
        ``"topics"``: rows are TF (or count) vectors of documents; ``"ratings"``: NaN marks
        unobserved ratings; ``"matrix"``: anything else (NaN is an error downstream).
    source : str
        Where it came from: a path, or ``"synthetic:<kind>"``.
    row_ids : ndarray of shape (n_samples,), optional
        Identifiers of the rows in the source (MovieLens UserIDs, UCI docIDs).
    col_ids : ndarray of shape (n_features,), optional
        Identifiers of the columns (MovieLens MovieIDs, UCI wordIDs).
    vocabulary : tuple of str of length n_features, optional
        Column names (words of a corpus, or a CSV header).
    truth : mapping of str to ndarray
        Planted ground truth of synthetic data: ``"topics"`` (k, d) and ``"weights"`` (n, k)
        for topic corpora; ``"ratings"`` (n, d), ``"user_factors"`` (n, k) and
        ``"item_factors"`` (k, d) for ratings; empty for real data.
    """

    X: Matrix
    kind: DatasetKind = "matrix"
    source: str = ""
    row_ids: np.ndarray | None = None
    col_ids: np.ndarray | None = None
    vocabulary: tuple[str, ...] | None = None
    truth: Mapping[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if getattr(self.X, "ndim", None) != 2:
            raise DataError(f"{self.source or 'dataset'}: X must be a 2-D matrix")
        if self.kind not in ("matrix", "topics", "ratings"):
            raise DataError(f"dataset kind {self.kind!r} must be matrix, topics or ratings")
        n, d = self.X.shape
        for name, value, size in (
            ("row_ids", self.row_ids, n),
            ("col_ids", self.col_ids, d),
            ("vocabulary", self.vocabulary, d),
        ):
            if value is not None and len(value) != size:
                raise DataError(
                    f"{self.source or 'dataset'}: {name} has {len(value)} entries, expected {size}"
                )
        object.__setattr__(self, "truth", MappingProxyType(dict(self.truth)))

    @property
    def n_samples(self) -> int:
        """Number of rows n."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns d."""
        return int(self.X.shape[1])


def load_dataset(
    path: str | Path,
    *,
    file_format: Literal["npy", "npz", "csv", "uci", "movielens"] | None = None,
    key: str | None = None,
    vocab_path: str | Path | None = None,
    tf: bool = True,
) -> Dataset:
    """Load any supported data file into a :class:`Dataset`.

    Parameters
    ----------
    path : str or Path
        The file.
    file_format : {"npy", "npz", "csv", "uci", "movielens"}, optional
        Overrides detection by name: ``docword.*.txt`` is ``"uci"``, ``*.dat`` is
        ``"movielens"``, otherwise the suffix.
    key : str, optional
        For ``.npz`` archives holding several arrays.
    vocab_path : str or Path, optional
        For UCI corpora: the vocabulary file.
    tf : bool
        For UCI corpora: return TF rows on the simplex (the thesis's input, default) rather
        than raw counts.

    Returns
    -------
    Dataset
        ``kind`` is ``"topics"`` for UCI corpora, ``"ratings"`` for MovieLens, else
        ``"matrix"``.

    Raises
    ------
    DataError
        As :func:`load_matrix`, :func:`~algorithms.data.uci.read_uci_bow` and
        :func:`~algorithms.data.movielens.read_movielens`.
    """
    p = as_path(path)
    fmt = file_format
    if fmt is None:
        name = p.name.lower()
        if name.startswith("docword.") and name.endswith(".txt"):
            fmt = "uci"
        elif p.suffix.lower() == ".dat":
            fmt = "movielens"
        else:
            fmt = p.suffix.lower().lstrip(".")  # type: ignore[assignment]
    if fmt == "uci":
        bow = read_uci_bow(p, vocab_path)
        X = tf_rows(bow.counts) if tf else sp.csr_array(bow.counts, dtype=np.float64)
        ids = np.arange(1, X.shape[0] + 1)
        return Dataset(X, "topics", str(p), ids, np.arange(1, X.shape[1] + 1), bow.vocabulary)
    if fmt == "movielens":
        ml = read_movielens(p)
        return Dataset(ml.ratings, "ratings", str(p), ml.user_ids, ml.movie_ids)
    if fmt == "csv":
        require_file(p)
        X, header = load_csv(p)
        return Dataset(X, "matrix", str(p), vocabulary=header)
    if fmt in ("npy", "npz"):
        if p.suffix.lower() != "." + fmt:
            raise DataError(f"{p}: file_format = {fmt!r} needs a .{fmt} file")
        return Dataset(load_matrix(p, key=key), "matrix", str(p))
    raise DataError(
        f"{p}: unsupported data format {fmt!r}; use .npy, .npz, .csv, a UCI docword.*.txt "
        "file or a MovieLens .dat file"
    )
