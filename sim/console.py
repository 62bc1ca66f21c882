"""Plain-text tables for the console: numbers right-aligned, text left-aligned.

Used by the report (:mod:`sim.report`), the experiments' extra tables and ``mpcsim list``; it
imports nothing heavy, so that ``mpcsim list`` answers at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["table"]


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> str:
    """A plain-text table: a column of numbers is right-aligned, any other column left-aligned.

    Parameters
    ----------
    headers : sequence of str
        Column names.
    rows : sequence of sequences
        One value per column; floats are shown with 4 significant digits, integers with
        thousands separators.
    title : str
        A line above the table.
    """
    cells = [[_cell(v) for v in row] for row in rows]
    numeric = [bool(rows) and all(_is_number(row[i]) for row in rows)
               for i in range(len(headers))]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h)
              for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(values, widths, numeric, strict=True)).rstrip()

    lines = [title] if title else []
    lines.append(line(headers))
    lines.append("  ".join("-" * w for w in widths))
    lines.extend(line(row) for row in cells)
    return "\n".join(lines)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return str(v)
