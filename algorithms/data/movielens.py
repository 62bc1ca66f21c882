"""MovieLens ``ratings.dat`` files (``UserID::MovieID::Rating::Timestamp``, the ML-1M layout).

The thesis (Tsikhanovich, seed 001, §2.4 and §3.3.1) evaluates NMF as a recommender on
MovieLens-1M. Rows are the users and columns the movies *that occur in the file*, in increasing
id order; timestamps are validated and dropped by the reader. Ratings may be any real in [1, 5]
(ML-1M uses whole stars). Ids must be positive integers.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from algorithms.data.checks import show
from algorithms.data.text_files import (
    first_duplicate,
    first_failure,
    fmt,
    nonblank,
    parse_numeric_lines,
    read_lines,
)
from protocols.errors import DataError

__all__ = ["RATING_MAX", "RATING_MIN", "MovieLensRatings", "ratings_matrix", "read_movielens",
           "write_movielens"]

logger = logging.getLogger(__name__)

RATING_MIN = 1.0
RATING_MAX = 5.0


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
    lines, numbers = nonblank(read_lines(path))
    if not lines:
        raise DataError(f"{path}: holds no ratings; expected UserID::MovieID::Rating::Timestamp")
    layout = "UserID::MovieID::Rating::Timestamp"
    table = parse_numeric_lines(
        lines, numbers, delimiter="::", n_fields=4, path=path, layout=layout
    )
    for col, label in ((0, "UserID"), (1, "MovieID")):
        ids = table[:, col]
        bad = ~((ids >= 1) & (ids == np.floor(ids)))
        if np.any(bad):
            i = first_failure(bad)
            raise DataError(
                f"{path}: line {numbers[i]}: {label} {fmt(ids[i])} is not a positive integer"
            )
    stamps = table[:, 3]
    bad = ~((stamps >= 0) & (stamps == np.floor(stamps)))
    if np.any(bad):
        i = first_failure(bad)
        raise DataError(
            f"{path}: line {numbers[i]}: Timestamp {fmt(stamps[i])} is not a non-negative integer"
        )
    values = table[:, 2]
    bad = ~((values >= RATING_MIN) & (values <= RATING_MAX))
    if np.any(bad):
        i = first_failure(bad)
        raise DataError(f"{path}: line {numbers[i]}: rating {fmt(values[i])} is outside 1..5")
    ratings = ratings_matrix(table, numbers, path, item="movie")
    logger.debug("read %s: %d ratings", path, len(lines))
    return ratings


def ratings_matrix(table: np.ndarray, numbers: np.ndarray, path: Path,
                   item: str = "item") -> MovieLensRatings:
    """The users × items matrix of validated (user, item, rating, ...) rows.

    Rows and columns are the ids that occur, increasing; a user rating the same item twice is a
    :class:`DataError` naming both lines (``numbers`` are the rows' line numbers in ``path``).
    """
    user_ids, rows = np.unique(table[:, 0].astype(np.int64), return_inverse=True)
    item_ids, cols = np.unique(table[:, 1].astype(np.int64), return_inverse=True)
    dup = first_duplicate(rows.astype(np.int64) * item_ids.size + cols)
    if dup is not None:
        first, later = dup
        raise DataError(
            f"{path}: line {numbers[later]}: user {user_ids[rows[later]]} rates {item} "
            f"{item_ids[cols[later]]} again (first on line {numbers[first]}); keep one rating"
        )
    ratings = np.full((user_ids.size, item_ids.size), np.nan)
    ratings[rows, cols] = table[:, 2]
    return MovieLensRatings(ratings=ratings, user_ids=user_ids, movie_ids=item_ids)


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
        i = first_failure(bad)
        raise DataError(f"ratings[{rows[i]}, {cols[i]}] = {show(values[i])} is outside 1..5")
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
