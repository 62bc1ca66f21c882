"""Plain-text data files: reading lines and parsing numeric tables with line-numbered errors.

The readers of :mod:`algorithms.data.matrix_files` (CSV), :mod:`algorithms.data.uci` and
:mod:`algorithms.data.movielens` share these. Parsing goes through numpy's C parser
(:func:`numpy.loadtxt`); only when it fails are the lines scanned in Python, to name the first
bad line by its number in the file, its field and what was expected. pandas would parse the same
layouts but costs a heavy dependency and a slow import for no gain in the messages.
"""

from __future__ import annotations

import errno
import io
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from protocols.errors import DataError

__all__ = [
    "first_duplicate",
    "first_failure",
    "fmt",
    "is_number",
    "nonblank",
    "parse_numeric_lines",
    "read_lines",
    "reason",
    "require_file",
    "split_fields",
]


def reason(exc: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split()) or type(exc).__name__


def require_file(path: Path) -> None:
    """Raise :class:`DataError` unless ``path`` names an existing regular file."""
    try:
        path.stat()
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise DataError(f"{path}: is a symbolic link that leads back to itself (a symlink "
                            "loop); point it at the data file") from None
    if not path.exists():
        raise DataError(f"{path}: no such file; check the path")
    if not path.is_file():
        raise DataError(f"{path}: is a directory or special file, not a data file")


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file, without line terminators.

    A leading byte-order mark (``U+FEFF``, which spreadsheet programs write when they save "CSV
    UTF-8") is dropped: it marks the encoding and is not part of the first field.
    """
    require_file(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
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


def nonblank(lines: Sequence[str], first_line: int = 1) -> tuple[list[str], np.ndarray]:
    """Drop blank lines; return the kept lines and their 1-based line numbers in the file."""
    numbers = [i for i, line in enumerate(lines) if line.strip()]
    kept = [lines[i] for i in numbers]
    return kept, np.asarray(numbers, dtype=np.int64) + first_line


def split_fields(line: str, delimiter: str | None) -> list[str]:
    return [f.strip() for f in (line.split(delimiter) if delimiter else line.split())]


def parse_numeric_lines(
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
        n_fields = len(split_fields(lines[0], delimiter))
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
        fields = split_fields(line, delimiter)
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


def is_number(text: str) -> bool:
    """True if ``text`` parses as a float."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def first_failure(bad: np.ndarray) -> int:
    """Index of the first True entry of a boolean vector."""
    return int(np.flatnonzero(bad)[0])


def fmt(x: float) -> str:
    """A number as written in a data file: whole numbers without a decimal point."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def first_duplicate(keys: np.ndarray) -> tuple[int, int] | None:
    """(earlier, later) positions of the first repeated key in input order, or None."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    dup = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    if dup.size == 0:
        return None
    later = order[dup + 1]
    pick = int(np.argmin(later))
    return int(order[dup[pick]]), int(later[pick])

