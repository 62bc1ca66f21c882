"""Ratings as ``user,item,rating`` CSV files (optionally a fourth ``timestamp`` column).

The recommender experiments of seed 002 (Ballen, §3) take raw (user, item, rating) tuples and
turn them into a users × items matrix with missing entries (Algorithm 1, first line). This
reader accepts the common CSV layouts — ``user,item,rating`` and MovieLens's
``userId,movieId,rating,timestamp`` — with or without a header line; MovieLens ``ratings.dat``
files are read by :mod:`algorithms.data.movielens`. :func:`load_ratings` picks the reader.

Choices
-------
* A header is recognised when no field of the first non-blank line parses as a number; its
  first three names must start with ``user``, ``item`` or ``movie``, and ``rating``.
* Ids are non-negative integers (so that a scenario can name items in TOML); rows and columns
  are the ids that occur, in increasing order. Ratings are finite numbers on any scale.
* A user rating the same item twice is an error naming both lines, as in ``ratings.dat``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from algorithms.data.dataset import Dataset
from algorithms.data.movielens import MovieLensRatings, ratings_matrix, read_movielens
from algorithms.data.text_files import (
    first_failure,
    fmt,
    is_number,
    nonblank,
    parse_numeric_lines,
    read_lines,
    split_fields,
)
from protocols.errors import DataError

__all__ = ["load_ratings", "read_ratings_csv"]

_LAYOUT = "user,item,rating[,timestamp]"
_HEADER_NAMES = (("user",), ("item", "movie"), ("rating",))


def _check_header(fields: list[str], path: Path) -> None:
    names = [f.strip().strip('"').lower() for f in fields]
    ok = len(names) in (3, 4) and all(
        name.startswith(prefixes) for name, prefixes in zip(names, _HEADER_NAMES, strict=False))
    if not ok:
        raise DataError(
            f"{path}: line 1 is a header {','.join(fields)!r}, but a ratings CSV has the columns "
            f"{_LAYOUT}; rename the header or remove it"
        )


def read_ratings_csv(path: str | Path) -> MovieLensRatings:
    """Read a ``user,item,rating[,timestamp]`` CSV file into a users × items matrix.

    Parameters
    ----------
    path : str or Path
        The CSV file (comma-separated; blank lines are ignored).

    Returns
    -------
    MovieLensRatings
        ``ratings`` (n_users, n_items) with NaN where unrated, ``user_ids`` and ``movie_ids``
        (the item ids), increasing.

    Raises
    ------
    DataError
        Missing or unreadable file, no ratings, a malformed line or header, a negative or
        non-integer id, a non-finite rating, or a user rating the same item twice — each naming
        the line.
    """
    path = Path(path)
    lines, numbers = nonblank(read_lines(path))
    if lines and not any(is_number(f) for f in split_fields(lines[0], ",")):
        _check_header(split_fields(lines[0], ","), path)
        lines, numbers = lines[1:], numbers[1:]
    if not lines:
        raise DataError(f"{path}: holds no ratings; expected lines {_LAYOUT}")
    n_fields = len(split_fields(lines[0], ","))
    if n_fields not in (3, 4):
        raise DataError(
            f"{path}: line {numbers[0]} has {n_fields} fields, expected 3 or 4 ({_LAYOUT})")
    table = parse_numeric_lines(lines, numbers, delimiter=",", n_fields=n_fields, path=path,
                                layout=_LAYOUT)
    for col, label in ((0, "user"), (1, "item")):
        ids = table[:, col]
        bad = ~((ids >= 0) & (ids == np.floor(ids)))
        if np.any(bad):
            i = first_failure(bad)
            raise DataError(
                f"{path}: line {numbers[i]}: {label} id {fmt(ids[i])} is not a non-negative "
                "integer"
            )
    values = table[:, 2]
    bad = ~np.isfinite(values)
    if np.any(bad):
        i = first_failure(bad)
        raise DataError(
            f"{path}: line {numbers[i]}: rating {fmt(values[i])} is not a finite number"
        )
    return ratings_matrix(table, numbers, path)


def load_ratings(path: str | Path) -> Dataset:
    """A ratings :class:`Dataset` from a MovieLens ``.dat`` file or a ratings CSV.

    ``*.dat`` is read as MovieLens ``UserID::MovieID::Rating::Timestamp``; anything else as a
    ``user,item,rating`` CSV. ``row_ids`` and ``col_ids`` are the file's user and item ids.
    """
    p = Path(path)
    table = read_movielens(p) if p.suffix.lower() == ".dat" else read_ratings_csv(p)
    return Dataset(table.ratings, "ratings", str(p), table.user_ids, table.movie_ids)
