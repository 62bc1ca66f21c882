"""Matrix files: ``.npy``, ``.npz`` (dense, or CSR written by :func:`scipy.sparse.save_npz`) and
``.csv``, one row per sample.

numpy reads the files (:func:`numpy.load`, :func:`numpy.loadtxt` through
:func:`algorithms.data.text_files.parse_numeric_lines`); what is kept here is the validation that
turns a library's exception into one line naming the path, the problem and the fix.

Choices (digest §7.1 item 34)
------------------------------
* Dense matrices are returned as float64 and sparse ones as :class:`scipy.sparse.csr_array` of
  float64 (``save_npz`` files in CSC/COO/BSR/DIA formats are converted to CSR).
* A CSV header is recognised when *no* cell of the first non-blank line parses as a number;
  blank lines are skipped; an empty cell is an error (write ``nan`` for an unobserved value).
* An ``.npz`` archive with several arrays must name the matrix ``X`` or ``data`` (or the caller
  passes ``key``).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from algorithms.data.checks import Matrix
from algorithms.data.text_files import (
    is_number,
    nonblank,
    parse_numeric_lines,
    read_lines,
    reason,
    require_file,
    split_fields,
)
from protocols.errors import DataError

__all__ = ["MATRIX_SUFFIXES", "as_path", "load_csv", "load_matrix"]

MATRIX_SUFFIXES = (".npy", ".npz", ".csv")

_NPZ_KEYS = ("X", "data")


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
            f"{path}: looks like a scipy.sparse .npz file but cannot be loaded ({reason(exc)}); "
            "re-save it with scipy.sparse.save_npz"
        ) from None
    _check_shape(tuple(mat.shape), path)
    _numeric_dtype(mat.dtype, path)
    return sp.csr_array(mat, dtype=np.float64)


def _load_npz(path: Path, key: str | None) -> Matrix:
    try:
        archive = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
        why = "not a zip archive" if "pickled" in str(exc) else reason(exc)
        raise DataError(
            f"{path}: is not a readable .npz archive ({why}); save it with numpy.savez "
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
            raise DataError(f"{path}: array {chosen!r} cannot be read ({reason(exc)})") from None
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
            f"{path}: is not a readable .npy file ({reason(exc)}); re-save it"
        ) from None
    except (OSError, EOFError) as exc:
        raise DataError(
            f"{path}: is not a readable .npy file ({reason(exc)}); re-save it"
        ) from None
    if not isinstance(arr, np.ndarray):
        arr.close()
        raise DataError(f"{path}: is an .npz archive saved under a .npy name; rename it")
    return _dense_matrix(arr, path)


def load_csv(path: Path) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """A CSV matrix and its header row (None without one); ``path`` must exist.

    Returns
    -------
    ndarray of float64, shape (n_rows, n_columns)
        NaN cells are kept.
    tuple of str of length n_columns, or None
        The column names of a header row.
    """
    lines, numbers = nonblank(read_lines(path))
    if not lines:
        raise DataError(f"{path}: is empty; a CSV matrix needs at least one row of numbers")
    header: tuple[str, ...] | None = None
    first = split_fields(lines[0], ",")
    if not any(is_number(cell) for cell in first):
        header = tuple(cell.strip('"') for cell in first)
        lines, numbers = lines[1:], numbers[1:]
        if not lines:
            raise DataError(
                f"{path}: has a header row but no data rows; add one row of numbers per sample"
            )
    n_fields = len(first)
    layout = f"{n_fields} comma-separated numbers per row"
    table = parse_numeric_lines(
        lines, numbers, delimiter=",", n_fields=n_fields, path=path, layout=layout
    )
    return table, header


def as_path(path: str | Path) -> Path:
    """``path`` as a Path, or a DataError when it is not a string or a Path."""
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
    p = as_path(path)
    suffix = p.suffix.lower()
    if suffix not in MATRIX_SUFFIXES:
        raise DataError(
            f"{p}: unsupported file type {p.suffix or '(no suffix)'!r}; load_matrix reads "
            ".npy, .npz and .csv (UCI docword.*.txt and MovieLens .dat files go through "
            "load_dataset)"
        )
    require_file(p)
    if suffix == ".npy":
        return _load_npy(p)
    if suffix == ".npz":
        return _load_npz(p, key)
    return load_csv(p)[0]
