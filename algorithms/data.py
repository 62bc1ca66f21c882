"""Data for a scenario: load a matrix, check it, partition its rows among the parties.

This is what a scenario's ``[data]`` table turns into (DESIGN.md, "Data flow"): a matrix ``X``
of shape (n, d) whose **rows are samples** — documents for topic models (thesis, seed 001,
§1.2.2: rows of X lie on the simplex Δ_d), users for recommender systems — split into one
contiguous block of rows per party, ``X = vstack_m X^(m)`` (digest §0.1).

* :func:`load_matrix` reads ``.npy``, ``.npz`` (dense, or CSR written by
  :func:`scipy.sparse.save_npz`) and ``.csv``; :func:`load_dataset` also reads the UCI
  bag-of-words and MovieLens formats of :mod:`algorithms.datasets` and wraps the result in a
  :class:`Dataset`.
* :func:`check_finite` and :func:`check_nonnegative` are the checks an algorithm applies at its
  entry. Loading keeps NaN: NaN means "unobserved" for ratings and is an error for plain
  SecureSum or NMF, so the caller decides.
* :func:`partition_rows` and :func:`split_rows` turn a ``partition`` value into one private
  shard per party.
* :func:`synthetic_matrix` / :func:`synthetic_dataset` generate the inputs of the runnable
  scenarios (thesis §2.4 and §3.3.1 use 20NG, Enron, ML-1M and Yelp, which are not shipped).

Choices the thesis leaves open (digest §7.1 item 34)
-----------------------------------------------------
* Dense matrices are returned as float64 and sparse ones as :class:`scipy.sparse.csr_array` of
  float64 (``save_npz`` files in CSC/COO/BSR/DIA formats are converted to CSR).
* A CSV header is recognised when *no* cell of the first non-blank line parses as a number;
  blank lines are skipped; an empty cell is an error (write ``nan`` for an unobserved value).
* ``"equal"`` partitions give the first ``n_rows % n_parties`` parties one extra row.
  Shards are copies, so no party holds a view into another party's rows.
* Synthetic ``"uniform"`` data lies in [0, high) with ``high = 1`` by default, and
  ``rows · high`` must not exceed :data:`UNIFORM_SUM_LIMIT` = 2^28: with p = 2^61 − 1 and 24
  fractional bits the field's signed range is 2^36, so every column sum — and each party's
  partial sum encoded for up to 256 parties — stays at least 2^8-fold inside it.
* Synthetic ``"topics"`` data is the TF matrix of :func:`algorithms.datasets.synthetic_topic_corpus`
  and ``"ratings"`` the NaN-masked matrix of :func:`algorithms.datasets.synthetic_ratings`; see
  that module for their generative choices.
"""

from __future__ import annotations

import logging
import math
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from algorithms.datasets import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_DOC_LENGTH,
    _nonblank,
    _parse_numeric_lines,
    _read_lines,
    _require_file,
    _show,
    _split_fields,
    load_digits,
    read_movielens,
    read_uci_bow,
    synthetic_mog,
    synthetic_ratings,
    synthetic_spiked,
    synthetic_stm,
    synthetic_topic_corpus,
    tf_rows,
)
from protocols.errors import DataError, ScenarioError

__all__ = [
    "SYNTHETIC_KINDS",
    "UNIFORM_SUM_LIMIT",
    "Dataset",
    "Matrix",
    "check_finite",
    "check_nonnegative",
    "load_dataset",
    "load_matrix",
    "partition_rows",
    "split_rows",
    "synthetic_dataset",
    "synthetic_matrix",
]

logger = logging.getLogger(__name__)

Matrix = np.ndarray | sp.csr_array
"""A data matrix: a dense float array or a CSR sparse array, shape (n_samples, n_features)."""

MATRIX_SUFFIXES = (".npy", ".npz", ".csv")
SYNTHETIC_KINDS = ("uniform", "topics", "ratings", "spiked", "mog", "stm")
BUNDLED = ("digits",)
UNIFORM_SUM_LIMIT = float(2**28)
"""Largest ``rows · high`` allowed for synthetic uniform data (see the module docstring)."""

_NPZ_KEYS = ("X", "data")


# --------------------------------------------------------------------------------------------
# loading


def _reason(exc: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split()) or type(exc).__name__


def _numeric_dtype(dtype: np.dtype, path: Path) -> None:
    if dtype.kind not in "biuf":
        kind = {"c": "complex numbers", "O": "Python objects", "U": "strings", "S": "bytes"}
        raise DataError(
            f"{path}: holds {kind.get(dtype.kind, f'values of dtype {dtype}')}; "
            "save a real-valued numeric matrix"
        )


def _check_shape(shape: tuple[int, ...], path: Path) -> None:
    if len(shape) != 2:
        raise DataError(
            f"{path}: holds a {len(shape)}-D array of shape {shape}; save a 2-D matrix with "
            "one row per sample"
        )
    if 0 in shape:
        raise DataError(
            f"{path}: holds an empty matrix of shape {shape}; it needs at least one row and "
            "one column"
        )


def _load_sparse_npz(path: Path) -> sp.csr_array:
    try:
        mat = sp.load_npz(path)
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise DataError(
            f"{path}: looks like a scipy.sparse .npz file but cannot be loaded ({_reason(exc)}); "
            "re-save it with scipy.sparse.save_npz"
        ) from None
    _check_shape(tuple(mat.shape), path)
    _numeric_dtype(mat.dtype, path)
    return sp.csr_array(mat, dtype=np.float64)


def _load_npz(path: Path, key: str | None) -> Matrix:
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        reason = "not a zip archive" if "pickled" in str(exc) else _reason(exc)
        raise DataError(
            f"{path}: is not a readable .npz archive ({reason}); save it with numpy.savez "
            "or scipy.sparse.save_npz"
        ) from None
    if isinstance(archive, np.ndarray):
        raise DataError(f"{path}: is a .npy array saved under a .npz name; rename it to .npy")
    with archive:
        keys = list(archive.files)
        if key is None and {"format", "shape"} <= set(keys):
            return _load_sparse_npz(path)
        if not keys:
            raise DataError(f"{path}: the archive holds no arrays; save the matrix into it")
        if key is not None:
            if key not in keys:
                raise DataError(
                    f"{path}: has no array {key!r}; it holds {', '.join(map(repr, keys))}"
                )
            chosen = key
        elif len(keys) == 1:
            chosen = keys[0]
        else:
            named = [k for k in _NPZ_KEYS if k in keys]
            if len(named) != 1:
                raise DataError(
                    f"{path}: holds arrays {', '.join(map(repr, keys))}; cannot tell which is "
                    "the matrix — keep one array, name it 'X' or 'data' (not both), "
                    "or pass key=..."
                )
            chosen = named[0]
        try:
            arr = archive[chosen]
        except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
            raise DataError(f"{path}: array {chosen!r} cannot be read ({_reason(exc)})") from None
    return _dense_matrix(arr, path)


def _dense_matrix(arr: np.ndarray, path: Path) -> np.ndarray:
    _numeric_dtype(arr.dtype, path)
    _check_shape(arr.shape, path)
    return np.asarray(arr, dtype=np.float64)


def _load_npy(path: Path) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "Object arrays" in str(exc):
            raise DataError(
                f"{path}: holds Python objects (pickled); save a numeric array instead"
            ) from None
        if "pickled" in str(exc):
            raise DataError(
                f"{path}: is not a readable .npy file (no NumPy array header); save the "
                "matrix with numpy.save"
            ) from None
        raise DataError(
            f"{path}: is not a readable .npy file ({_reason(exc)}); re-save it"
        ) from None
    except (OSError, EOFError) as exc:
        raise DataError(
            f"{path}: is not a readable .npy file ({_reason(exc)}); re-save it"
        ) from None
    if not isinstance(arr, np.ndarray):
        arr.close()
        raise DataError(f"{path}: is an .npz archive saved under a .npy name; rename it")
    return _dense_matrix(arr, path)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _load_csv(path: Path) -> tuple[np.ndarray, tuple[str, ...] | None]:
    lines, numbers = _nonblank(_read_lines(path))
    if not lines:
        raise DataError(f"{path}: is empty; a CSV matrix needs at least one row of numbers")
    header: tuple[str, ...] | None = None
    first = _split_fields(lines[0], ",")
    if not any(_is_number(cell) for cell in first):
        header = tuple(cell.strip('"') for cell in first)
        lines, numbers = lines[1:], numbers[1:]
        if not lines:
            raise DataError(
                f"{path}: has a header row but no data rows; add one row of numbers per sample"
            )
    n_fields = len(first)
    layout = f"{n_fields} comma-separated numbers per row"
    table = _parse_numeric_lines(
        lines, numbers, delimiter=",", n_fields=n_fields, path=path, layout=layout
    )
    return table, header


def _as_path(path: str | Path) -> Path:
    if not isinstance(path, str | Path):
        raise DataError(f"a data path must be a string, got {path!r}")
    return Path(path)


def load_matrix(path: str | Path, *, key: str | None = None) -> Matrix:
    """Load a data matrix (rows are samples) from ``.npy``, ``.npz`` or ``.csv``.

    Parameters
    ----------
    path : str or Path
        The file. ``.npy``: one 2-D numeric array. ``.npz``: a single array, or the array named
        ``X`` or ``data``, or a scipy.sparse matrix written by :func:`scipy.sparse.save_npz`.
        ``.csv``: comma-separated numbers, one row per sample, with an optional header row of
        non-numeric column names; ``nan`` cells are allowed.
    key : str, optional
        For ``.npz``: the name of the array to use when the archive holds several.

    Returns
    -------
    ndarray of float64 or scipy.sparse.csr_array of float64, shape (n_samples, n_features)
        NaN and infinities are kept; see :func:`check_finite`.

    Raises
    ------
    DataError
        One line naming the path, the problem and the fix: missing or unreadable file,
        unsupported suffix, non-numeric values, ragged CSV rows, an array that is not 2-D or
        has no rows or no columns, an ambiguous ``.npz`` archive.
    """
    p = _as_path(path)
    suffix = p.suffix.lower()
    if suffix not in MATRIX_SUFFIXES:
        raise DataError(
            f"{p}: unsupported file type {p.suffix or '(no suffix)'!r}; load_matrix reads "
            ".npy, .npz and .csv (UCI docword.*.txt and MovieLens .dat files go through "
            "load_dataset)"
        )
    _require_file(p)
    if suffix == ".npy":
        return _load_npy(p)
    if suffix == ".npz":
        return _load_npz(p, key)
    return _load_csv(p)[0]


# --------------------------------------------------------------------------------------------
# checks


def _entries(X: object) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[int, int]]:
    """(rows, cols, values) of the stored entries, and the shape."""
    if sp.issparse(X):
        coo = sp.coo_array(X)
        return coo.row, coo.col, np.asarray(coo.data), tuple(coo.shape)  # type: ignore[return-value]
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise DataError(f"expected a 2-D matrix, got shape {arr.shape}")
    return np.empty(0), np.empty(0), arr, arr.shape  # dense: values is the whole array


def _first_bad(X: object, bad_of: Any) -> tuple[int, int, float, int] | None:
    """(row, column, value, count) of the first entry (row-major) where ``bad_of`` is True."""
    rows, cols, values, _ = _entries(X)
    bad = bad_of(values)
    count = int(np.count_nonzero(bad))
    if count == 0:
        return None
    if values.ndim == 2:
        r, c = np.argwhere(bad)[0]
        return int(r), int(c), float(values[r, c]), count
    idx = np.flatnonzero(bad)
    first = idx[np.lexsort((cols[idx], rows[idx]))[0]]
    return int(rows[first]), int(cols[first]), float(values[first]), count


def check_finite(X: Matrix, what: str = "X") -> None:
    """Raise :class:`DataError` if ``X`` holds NaN or ±infinity.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The matrix (for sparse matrices, only stored entries are checked).
    what : str
        Name of the matrix for the message (e.g. ``"party 2's data"``).

    Raises
    ------
    DataError
        Naming the first offending row and column (row-major order), its value and how many
        entries are affected.
    """
    found = _first_bad(X, lambda v: ~np.isfinite(v))
    if found is not None:
        r, c, v, count = found
        raise DataError(
            f"{what}: row {r}, column {c} holds {v!r} ({count} non-finite entries); this "
            "algorithm needs finite values — remove or impute them (NaN means 'unobserved' "
            "only for algorithms that accept missing ratings)"
        )


def check_nonnegative(X: Matrix, what: str = "X") -> None:
    """Raise :class:`DataError` if ``X`` holds a negative value (NaN is not checked here).

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The matrix.
    what : str
        Name of the matrix for the message.

    Raises
    ------
    DataError
        Naming the first negative entry (row-major order), its value and how many there are.
    """
    found = _first_bad(X, lambda v: v < 0)
    if found is not None:
        r, c, v, count = found
        raise DataError(
            f"{what}: row {r}, column {c} holds {v!r} ({count} negative entries); NMF needs "
            "non-negative data — shift, clip or drop those values"
        )


# --------------------------------------------------------------------------------------------
# partitioning


def _whole(value: object) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool)


def partition_rows(
    n_rows: int, n_parties: int, partition: str | Sequence[int] = "equal"
) -> list[tuple[int, int]]:
    """Assign contiguous blocks of rows to parties.

    Parameters
    ----------
    n_rows : int
        Number of rows of the data (≥ n_parties).
    n_parties : int
        Number of data-holding parties (≥ 1).
    partition : "equal" or sequence of int
        ``"equal"``: sizes differ by at most one, the first ``n_rows % n_parties`` parties get
        the extra row. A sequence: one positive row count per party, summing to ``n_rows``.

    Returns
    -------
    list of (int, int), length n_parties
        Half-open row ranges ``(start, stop)``, consecutive and covering ``0..n_rows``.

    Raises
    ------
    ScenarioError
        Naming the offending value and what it must be.
    """
    if not _whole(n_parties) or n_parties < 1:
        raise ScenarioError(f"n_parties = {_show(n_parties)} must be a whole number ≥ 1")
    if not _whole(n_rows) or n_rows < 1:
        raise ScenarioError(f"the data's row count {_show(n_rows)} must be a whole number ≥ 1")
    if n_rows < n_parties:
        raise ScenarioError(
            f"the data has {n_rows} rows but n_parties = {n_parties}; every party needs at "
            "least one row — use fewer parties or more data"
        )
    if isinstance(partition, str):
        if partition != "equal":
            raise ScenarioError(
                f'partition = {partition!r} is not recognised; use "equal" or a list of '
                f"{n_parties} row counts"
            )
        base, extra = divmod(int(n_rows), int(n_parties))
        sizes = [base + (1 if m < extra else 0) for m in range(n_parties)]
    else:
        if not isinstance(partition, Sequence | np.ndarray):
            raise ScenarioError(
                f'partition = {partition!r} must be "equal" or a list of {n_parties} row counts'
            )
        counts = list(partition)
        if len(counts) != n_parties:
            raise ScenarioError(
                f"partition lists {len(counts)} row counts but n_parties = {n_parties}; give "
                "one count per party"
            )
        for m, count in enumerate(counts):
            if not _whole(count):
                raise ScenarioError(
                    f"partition[{m}] = {_show(count)} must be a whole number of rows"
                )
            if count < 1:
                raise ScenarioError(
                    f"partition[{m}] = {_show(count)}; every party needs at least 1 row"
                )
        sizes = [int(c) for c in counts]
        if sum(sizes) != n_rows:
            raise ScenarioError(
                f"partition row counts sum to {sum(sizes)} but the data has {n_rows} rows; "
                "the counts must add up to the number of rows"
            )
    stops = np.cumsum(sizes).tolist()
    starts = [0, *stops[:-1]]
    return list(zip(starts, stops, strict=True))


def split_rows(X: Matrix, ranges: Sequence[tuple[int, int]]) -> list[Matrix]:
    """Cut ``X`` into per-party row blocks.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix, shape (n, d)
        The data.
    ranges : sequence of (int, int)
        Half-open row ranges, e.g. from :func:`partition_rows`.

    Returns
    -------
    list of ndarray or sparse matrix
        ``X[start:stop]`` for each range, shape (stop − start, d); dense shards are copies,
        sparse shards keep the input's sparse type (CSR).

    Raises
    ------
    ScenarioError
        If a range is not ``0 ≤ start ≤ stop ≤ n``.
    """
    n = X.shape[0]
    shards: list[Matrix] = []
    rows = X.tocsr() if sp.issparse(X) else np.asarray(X)
    for m, rng_ in enumerate(ranges):
        try:
            start, stop = rng_
        except (TypeError, ValueError):
            raise ScenarioError(f"ranges[{m}] = {rng_!r} must be a (start, stop) pair") from None
        if not (_whole(start) and _whole(stop) and 0 <= start <= stop <= n):
            raise ScenarioError(
                f"ranges[{m}] = ({_show(start)}, {_show(stop)}) must satisfy 0 ≤ start ≤ stop ≤ {n}"
            )
        block = rows[int(start) : int(stop)]
        shards.append(block.copy() if isinstance(block, np.ndarray) else block)
    return shards


# --------------------------------------------------------------------------------------------
# datasets


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
        As :func:`load_matrix`, :func:`algorithms.datasets.read_uci_bow` and
        :func:`algorithms.datasets.read_movielens`.
    """
    p = _as_path(path)
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
        _require_file(p)
        X, header = _load_csv(p)
        return Dataset(X, "matrix", str(p), vocabulary=header)
    if fmt in ("npy", "npz"):
        if p.suffix.lower() != "." + fmt:
            raise DataError(f"{p}: file_format = {fmt!r} needs a .{fmt} file")
        return Dataset(load_matrix(p, key=key), "matrix", str(p))
    raise DataError(
        f"{p}: unsupported data format {fmt!r}; use .npy, .npz, .csv, a UCI docword.*.txt "
        "file or a MovieLens .dat file"
    )


# --------------------------------------------------------------------------------------------
# synthetic data


_SYNTHETIC_PARAMS: dict[str, tuple[str, ...]] = {
    "uniform": ("high",),
    "topics": ("k", "doc_length", "alpha", "beta"),
    "ratings": ("k", "density", "noise"),
    "spiked": ("k",),
    "mog": ("k", "noise"),
    "stm": ("k", "doc_length"),
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
    kind : {"uniform", "topics", "ratings", "spiked", "mog", "stm"}
        ``"spiked"``, ``"mog"``, ``"stm"``: seed 003's synthetic PCA data (parameter ``k``, the
        signal rank, default 5), spherical Gaussian mixture (``k``, ``noise`` = the variance
        before scaling, default 0.05) and single topic model (``k``, ``doc_length`` default 3),
        from :mod:`algorithms.datasets`; their truth holds ``covariance`` / ``means``,
        ``weights`` and ``sigma2``. ``"uniform"``: i.i.d. U[0, high) entries (the
        quickstart's SecureSum input; parameter ``high``, default 1). ``"topics"``: TF rows
        of an LDA corpus (parameters ``k`` default 5, ``doc_length``, ``alpha``, ``beta``).
        ``"ratings"``: 1..5 ratings with NaN where unobserved (parameters ``k`` default 5,
        ``density`` default 0.1, ``noise`` default 0.5).
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
        if not _whole(value) or value < 1:
            raise ScenarioError(f"synthetic {name} = {_show(value)} must be a whole number ≥ 1")
    source = f"synthetic:{kind}"
    if kind == "uniform":
        high = params.get("high", 1.0)
        if (
            isinstance(high, bool)
            or not isinstance(high, Real)
            or not math.isfinite(float(high))
            or high <= 0
        ):
            raise ScenarioError(f"synthetic high = {_show(high)} must be a finite number > 0")
        if rows * float(high) > UNIFORM_SUM_LIMIT:
            raise ScenarioError(
                f"synthetic uniform data with rows = {rows} and high = {_show(high)} can have "
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
                    params: Mapping[str, Any]) -> Dataset:
    """Seed 003's synthetic data: ``spiked`` (PCA), ``mog`` and ``stm`` (tensor decomposition)."""
    source = f"synthetic:{kind}"
    if kind == "spiked":
        data = synthetic_spiked(rows, cols, k, rng)
        return Dataset(data.X, "matrix", source, truth={"covariance": data.covariance})
    if kind == "mog":
        data = synthetic_mog(rows, cols, k, rng, variance=params.get("noise", 0.05))
        truth = {"means": data.means, "weights": data.weights,
                 "sigma2": np.array(data.sigma2)}
        return Dataset(data.X, "matrix", source, truth=truth)
    data = synthetic_stm(rows, cols, k, rng, doc_length=params.get("doc_length", 3))
    return Dataset(data.X, "topics", source, truth={"means": data.means, "weights": data.weights})


def bundled_dataset(name: str) -> Dataset:
    """A data set shipped with a dependency: ``"digits"`` (scikit-learn's 8×8 digits)."""
    if name not in BUNDLED:
        raise ScenarioError(f"bundled data set {name!r} is unknown; use one of {BUNDLED}")
    return Dataset(load_digits(), "matrix", name)


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
